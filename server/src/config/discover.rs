//! Finding the config that applies to a path: the nearest `xeforge.toml` or `pyproject.toml` with a
//! `[tool.xeforge]` table, walking up from the path's directory.

use super::error::ConfigError;
use super::file::load_file;
use super::settings::Settings;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub const XEFORGE_TOML: &str = "xeforge.toml";
pub const PYPROJECT: &str = "pyproject.toml";

/// A config file and what it says.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigFile {
    pub path: PathBuf,
    pub settings: Settings,
}

impl ConfigFile {
    pub fn load(path: &Path) -> Result<ConfigFile, ConfigError> {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        // A pyproject named explicitly (`--config`) without the table is an empty config, not an error.
        let settings = load_file(&path)?.unwrap_or_default();
        Ok(ConfigFile { path, settings })
    }

    /// The directory the file's relative paths and globs are anchored at.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("/"))
    }
}

/// The config for `start` (a file or directory), uncached. `Ok(None)`: no config up to the filesystem root.
pub fn discover(start: &Path) -> Result<Option<ConfigFile>, ConfigError> {
    let start = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
    let dir = if start.is_dir() { start.as_path() } else { start.parent().unwrap_or(Path::new("/")) };
    for d in dir.ancestors() {
        if let Some(found) = config_in(d)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// The config file that lives directly in `dir`, if any (xeforge.toml first).
fn config_in(dir: &Path) -> Result<Option<ConfigFile>, ConfigError> {
    let x = dir.join(XEFORGE_TOML);
    if x.is_file() {
        return ConfigFile::load(&x).map(Some);
    }
    let p = dir.join(PYPROJECT);
    if p.is_file() {
        return Ok(load_file(&p)?.map(|settings| ConfigFile { path: p, settings }));
    }
    Ok(None)
}

type Found = Result<Option<Arc<ConfigFile>>, Arc<ConfigError>>;

/// Cached discovery for many paths (`xeforge check` over a tree, the language server over a workspace).
/// Thread-safe: rayon workers share one. Call [`invalidate`](Self::invalidate) when a config file changes.
#[derive(Debug, Default)]
pub struct ConfigResolver {
    /// `--config FILE`: used for every path instead of discovery.
    fixed: Option<Arc<ConfigFile>>,
    by_dir: Mutex<HashMap<PathBuf, Found>>,
}

impl ConfigResolver {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every path gets `file`'s settings (the CLI's `--config`).
    pub fn fixed(file: ConfigFile) -> Self {
        Self { fixed: Some(Arc::new(file)), by_dir: Mutex::default() }
    }

    /// The config for a file (or directory) path.
    pub fn resolve(&self, path: &Path) -> Found {
        if let Some(f) = &self.fixed {
            return Ok(Some(f.clone()));
        }
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let dir = if abs.is_dir() { abs } else { abs.parent().map(Path::to_path_buf).unwrap_or_default() };
        self.resolve_dir(&dir)
    }

    fn resolve_dir(&self, dir: &Path) -> Found {
        if let Some(hit) = self.lock().get(dir) {
            return hit.clone();
        }
        // Not holding the lock while reading files: two threads may both read a file once, which is harmless.
        let found: Found = match config_in(dir) {
            Err(e) => Err(Arc::new(e)),
            Ok(Some(f)) => Ok(Some(Arc::new(f))),
            Ok(None) => match dir.parent() {
                Some(parent) if parent != dir => self.resolve_dir(parent),
                _ => Ok(None),
            },
        };
        self.lock().insert(dir.to_path_buf(), found.clone());
        found
    }

    /// Forget everything discovered (a config file was created, changed or deleted).
    pub fn invalidate(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Found>> {
        // A panic elsewhere while holding the lock leaves a plain cache behind: still usable.
        self.by_dir.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn nearest_wins_and_xeforge_toml_beats_pyproject() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        fs::write(root.join(PYPROJECT), "[tool.xeforge]\ndevice = \"max-1550\"\n").unwrap();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/pyproject.toml"), "[project]\nname='no table here'\n").unwrap();
        fs::create_dir_all(root.join("c")).unwrap();
        fs::write(root.join("c/pyproject.toml"), "[tool.xeforge]\ndevice = \"arc-a770\"\n").unwrap();
        fs::write(root.join("c/xeforge.toml"), "device = \"arc-b580\"\n").unwrap();

        let r = ConfigResolver::new();
        let dev = |p: &str| r.resolve(&root.join(p)).unwrap().and_then(|c| c.settings.device.clone());
        assert_eq!(dev("a/b/k.py").as_deref(), Some("max-1550"), "pyproject without the table is skipped");
        assert_eq!(dev("c/k.py").as_deref(), Some("arc-b580"));
        assert_eq!(discover(&root.join("c/k.py")).unwrap().unwrap().settings.device.as_deref(), Some("arc-b580"));
    }

    #[test]
    fn a_broken_config_is_an_error_for_the_paths_under_it() {
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join(XEFORGE_TOML), "bogus = 1\n").unwrap();
        let r = ConfigResolver::new();
        let e = r.resolve(&t.path().join("k.py")).unwrap_err();
        assert!(e.to_string().contains("xeforge.toml:1:1: unknown key `bogus`"), "{e}");
    }

    #[test]
    fn invalidate_rereads_files() {
        let t = tempfile::tempdir().unwrap();
        let r = ConfigResolver::new();
        let k = t.path().join("k.py");
        let before = r.resolve(&k).unwrap().and_then(|c| c.settings.device.clone());
        fs::write(t.path().join(XEFORGE_TOML), "device = \"arc-b580\"\n").unwrap();
        assert_eq!(r.resolve(&k).unwrap().and_then(|c| c.settings.device.clone()), before);
        r.invalidate();
        assert_eq!(r.resolve(&k).unwrap().unwrap().settings.device.as_deref(), Some("arc-b580"));
    }
}
