//! Glob patterns from config files, anchored at the directory of the file that declared them.
//!
//! A pattern with a `/` matches the path relative to that directory (`tests/**/*.py`); one without
//! matches any single path component too (`build`, `*_test.py`), as in ruff and .gitignore.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use std::path::{Component, Path, PathBuf};

/// Build one glob the way config files mean it (`*` does not cross `/`, `**` does).
pub(crate) fn compile(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern.trim_start_matches("./")).literal_separator(true).build()
}

/// A compiled set of patterns plus their source text (kept for equality, debugging and `Debug`).
#[derive(Clone, Default)]
pub struct PathPatterns {
    root: PathBuf,
    patterns: Vec<String>,
    anchored: GlobSet,
    /// Index into `patterns` for each glob of `anchored` / `component`.
    anchored_ix: Vec<usize>,
    component: GlobSet,
    component_ix: Vec<usize>,
}

impl PathPatterns {
    /// `patterns` must already be valid globs (the TOML loader validates them with their position).
    pub fn new(root: &Path, patterns: Vec<String>) -> Result<Self, globset::Error> {
        let mut anchored = GlobSetBuilder::new();
        let mut component = GlobSetBuilder::new();
        let (mut anchored_ix, mut component_ix) = (Vec::new(), Vec::new());
        for (i, p) in patterns.iter().enumerate() {
            let glob = compile(p)?;
            if p.trim_end_matches('/').contains('/') {
                anchored.add(glob);
                anchored_ix.push(i);
            } else {
                component.add(compile(p.trim_end_matches('/'))?);
                component_ix.push(i);
            }
        }
        Ok(Self {
            root: root.to_path_buf(),
            patterns,
            anchored: anchored.build()?,
            anchored_ix,
            component: component.build()?,
            component_ix,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn is_match(&self, path: &Path) -> bool {
        !self.matches(path).is_empty()
    }

    /// Indices (into [`patterns`](Self::patterns)) of the patterns that match `path`.
    pub fn matches(&self, path: &Path) -> Vec<usize> {
        if self.patterns.is_empty() {
            return Vec::new();
        }
        let Some(rel) = relative(&self.root, path) else { return Vec::new() };
        let mut hits: Vec<usize> = self.anchored.matches(&rel).into_iter().map(|i| self.anchored_ix[i]).collect();
        for comp in rel.components() {
            if let Component::Normal(name) = comp {
                hits.extend(self.component.matches(Path::new(name)).into_iter().map(|i| self.component_ix[i]));
            }
        }
        hits.sort_unstable();
        hits.dedup();
        hits
    }
}

/// `path` relative to `root`, or `None` when it lies outside (a pattern never matches outside its file's tree).
fn relative(root: &Path, path: &Path) -> Option<PathBuf> {
    if root.as_os_str().is_empty() {
        return Some(path.to_path_buf());
    }
    let abs = if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().ok()?.join(path) };
    let abs = normalize(&abs);
    abs.strip_prefix(normalize(root)).ok().map(Path::to_path_buf)
}

/// Lexical `.`/`..` removal (no symlink resolution: the walker reports paths as the user wrote them).
pub(crate) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

impl PartialEq for PathPatterns {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root && self.patterns == other.patterns
    }
}

impl std::fmt::Debug for PathPatterns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PathPatterns").field("root", &self.root).field("patterns", &self.patterns).finish()
    }
}

/// `per-file-ignores`: glob → rule codes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerFileIgnores {
    globs: PathPatterns,
    codes: Vec<Vec<String>>,
}

impl PerFileIgnores {
    pub fn new(root: &Path, entries: Vec<(String, Vec<String>)>) -> Result<Self, globset::Error> {
        let (patterns, codes): (Vec<_>, Vec<_>) = entries.into_iter().unzip();
        Ok(Self { globs: PathPatterns::new(root, patterns)?, codes })
    }

    pub fn is_empty(&self) -> bool {
        self.globs.is_empty()
    }

    /// Codes ignored for `file`, from every matching pattern.
    pub fn codes_for(&self, file: &Path) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for i in self.globs.matches(file) {
            out.extend(self.codes[i].iter().map(String::as_str));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_patterns_are_anchored_bare_ones_match_any_component() {
        let p = PathPatterns::new(Path::new("/proj"), vec!["tests/**".into(), "build".into(), "*_gen.py".into()]).unwrap();
        assert!(p.is_match(Path::new("/proj/tests/a/b.py")));
        assert!(!p.is_match(Path::new("/proj/src/tests.py")));
        assert!(p.is_match(Path::new("/proj/src/build/x.py")));
        assert!(p.is_match(Path::new("/proj/src/k_gen.py")));
        assert!(!p.is_match(Path::new("/other/tests/a.py")));
    }

    #[test]
    fn per_file_ignores_collect_codes_of_every_matching_glob() {
        let p =
            PerFileIgnores::new(Path::new("/p"), vec![("*.py".into(), vec!["XF501".into()]), ("legacy/*.py".into(), vec!["XF401".into()])])
                .unwrap();
        assert_eq!(p.codes_for(Path::new("/p/legacy/a.py")), vec!["XF501", "XF401"]);
        assert_eq!(p.codes_for(Path::new("/p/new/a.py")), vec!["XF501"]);
        assert!(p.codes_for(Path::new("/p/new/a.pyi")).is_empty());
    }
}
