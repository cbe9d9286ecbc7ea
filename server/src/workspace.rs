//! Which files `xeforge check PATH...` looks at: named files always; directories walked with the
//! `ignore` crate (`.gitignore`, hidden files skipped), keeping `*.py`/`*.pyi` and Jupyter notebooks
//! (`*.ipynb`, on by default as in ruff 0.6+; `exclude = ["*.ipynb"]` leaves them out) not excluded by
//! the config that governs them. Sorted and deduplicated so output order never depends on the walk.

use crate::config::ConfigResolver;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A path the walk could not read (reported as `error: path: reason`, exit status 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkError {
    pub path: PathBuf,
    pub message: String,
}

#[derive(Debug, Default)]
pub struct Discovered {
    pub files: Vec<PathBuf>,
    pub errors: Vec<WalkError>,
}

pub fn is_python(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "py" || e == "pyi")
}

/// A Jupyter notebook: its code cells are checked as one Python file (`notebook`).
pub fn is_notebook(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "ipynb")
}

/// Expand `paths` into the files to check. `resolver` supplies each directory's `exclude` patterns.
pub fn discover_files(paths: &[PathBuf], resolver: &Arc<ConfigResolver>) -> Discovered {
    let mut out = Discovered::default();
    for p in paths {
        match std::fs::metadata(p) {
            Err(e) => out.errors.push(WalkError { path: p.clone(), message: io_reason(&e) }),
            Ok(m) if !m.is_dir() => out.files.push(p.clone()),
            Ok(_) => walk(p, resolver, &mut out),
        }
    }
    out.files.sort();
    out.files.dedup();
    out
}

fn walk(root: &Path, resolver: &Arc<ConfigResolver>, out: &mut Discovered) {
    // The walker's filter must be 'static: it holds its own handle on the shared resolver.
    let resolver = Arc::clone(resolver);
    let excluded = move |path: &Path| match resolver.resolve(path) {
        Ok(Some(cfg)) => cfg.settings.is_excluded(path),
        // A broken config is reported when its files are checked; walking goes on.
        _ => false,
    };
    let walker = ignore::WalkBuilder::new(root).require_git(false).filter_entry(move |e| e.depth() == 0 || !excluded(e.path())).build();
    for entry in walker {
        match entry {
            Ok(e) => {
                if e.file_type().is_some_and(|t| t.is_file()) && (is_python(e.path()) || is_notebook(e.path())) {
                    out.files.push(e.into_path());
                }
            }
            Err(err) => {
                let path = err_path(&err).unwrap_or_else(|| root.to_path_buf());
                out.errors.push(WalkError { path, message: walk_reason(&err) });
            }
        }
    }
}

fn err_path(e: &ignore::Error) -> Option<PathBuf> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => err_path(err),
        _ => None,
    }
}

fn walk_reason(e: &ignore::Error) -> String {
    match e {
        ignore::Error::WithPath { err, .. } | ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_reason(err)
        }
        ignore::Error::Io(io) => io_reason(io),
        other => other.to_string(),
    }
}

/// The OS message without Rust's " (os error N)" suffix, lower-cased like other CLI tools print it.
pub fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    let s = match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    };
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn walks_python_files_honouring_gitignore_hidden_and_exclude() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        for f in ["a.py", "b.pyi", "c.txt", "sub/d.py", ".hidden/e.py", "built/f.py", "vendor/g.py", "nb/h.ipynb", "vendor/i.ipynb"] {
            let p = r.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "").unwrap();
        }
        fs::write(r.join(".gitignore"), "built/\n").unwrap();
        fs::write(r.join("xeforge.toml"), "exclude = [\"vendor\"]\n").unwrap();
        let d = discover_files(&[r.to_path_buf(), r.join("c.txt")], &Arc::new(ConfigResolver::new()));
        let names: Vec<String> = d.files.iter().map(|p| p.strip_prefix(r).unwrap().to_string_lossy().replace('\\', "/")).collect();
        assert_eq!(names, ["a.py", "b.pyi", "c.txt", "nb/h.ipynb", "sub/d.py"]);
        assert!(d.errors.is_empty());
    }

    #[test]
    fn missing_paths_are_errors() {
        let d = discover_files(&[PathBuf::from("/definitely/not/here.py")], &Arc::new(ConfigResolver::new()));
        assert_eq!(d.errors[0].message, "no such file or directory");
    }
}
