//! The other files of a file's package, as far as a kernel's `tl.dot` is concerned.
//!
//! The compiler inlines every `@triton.jit` function a kernel calls, wherever it is defined, before
//! it picks the sub-group size and the DPAS lowering; so a helper imported from another file
//! (`from .utils import mac_loop`, `import pkg.helpers as h; h.inner(...)`) counts like one of the
//! file. Imports resolve to files as Python finds them: relative ones from the file's package,
//! absolute ones from the directory above the file's top-level package or from the project root
//! (the nearest directory with `pyproject.toml`, `setup.py`, `setup.cfg`, `xeforge.toml` or `.git`),
//! following re-exports (`__init__.py` doing `from .inner import mac_loop` or `from .inner import *`;
//! a star import binds public names only, as in Python). An import that names
//! no file, or no `@triton.jit` function, adds nothing: the kernel is read as before.
//!
//! [`Modules`] keeps what each imported file exports, rebuilt only when the file changes ([`Stamp`]);
//! [`Files`] says where texts come from: the disk for `xeforge check`, open documents first in the
//! language server.

use crate::model::{self, FileModel, Imports, ModuleImport};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

/// Re-exports followed at most this deep (`a` re-exports from `b`, which re-exports from `c`...):
/// a cycle of re-exports ends here.
const MAX_REEXPORTS: usize = 16;

/// Files whose directory is taken as the project root for absolute imports.
const PROJECT_MARKERS: &[&str] = &["pyproject.toml", "setup.py", "setup.cfg", "xeforge.toml", ".git"];

/// What a file's content is now: while the stamp is equal, so is the text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Stamp {
    Disk {
        len: u64,
        modified: Option<SystemTime>,
    },
    /// An editor's open document: which opening of it (`id`), and its version.
    Open {
        id: u64,
        version: i32,
    },
}

/// Where the texts of files come from.
pub trait Files: Send + Sync {
    /// The stamp of `path` now; None when there is no such file.
    fn stamp(&self, path: &Path) -> Option<Stamp>;
    /// The text of `path` with its stamp, read together.
    fn read(&self, path: &Path) -> Option<(Stamp, String)>;
    /// Whether `path` is a directory now.
    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }
    /// Whether anything (file or directory) is at `path` now.
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
}

/// Files as they are on disk.
pub struct Disk;

impl Files for Disk {
    fn stamp(&self, path: &Path) -> Option<Stamp> {
        disk_stamp(path)
    }
    fn read(&self, path: &Path) -> Option<(Stamp, String)> {
        let stamp = disk_stamp(path)?;
        let text = std::fs::read_to_string(path).ok()?;
        Some((stamp, text))
    }
}

/// Files on disk as one run sees them: each path's stamp, directory test and existence are
/// asked of the file system once. For a one-shot `check`, which reads every file once and looks up
/// the same packages from every file (about thirty lookups a file, most of them misses).
#[derive(Default)]
pub struct RunDisk {
    stamps: std::sync::Mutex<HashMap<PathBuf, Option<Stamp>>>,
    dirs: std::sync::Mutex<HashMap<PathBuf, bool>>,
    present: std::sync::Mutex<HashMap<PathBuf, bool>>,
}

fn memo<T: Clone>(map: &std::sync::Mutex<HashMap<PathBuf, T>>, path: &Path, ask: impl FnOnce() -> T) -> T {
    if let Some(v) = map.lock().unwrap_or_else(|e| e.into_inner()).get(path) {
        return v.clone();
    }
    let v = ask();
    map.lock().unwrap_or_else(|e| e.into_inner()).insert(path.to_path_buf(), v.clone());
    v
}

impl Files for RunDisk {
    fn stamp(&self, path: &Path) -> Option<Stamp> {
        memo(&self.stamps, path, || disk_stamp(path))
    }
    fn read(&self, path: &Path) -> Option<(Stamp, String)> {
        let stamp = self.stamp(path)?;
        let text = std::fs::read_to_string(path).ok()?;
        Some((stamp, text))
    }
    fn is_dir(&self, path: &Path) -> bool {
        memo(&self.dirs, path, || path.is_dir())
    }
    fn exists(&self, path: &Path) -> bool {
        memo(&self.present, path, || path.exists())
    }
}

/// The stamp of a regular file on disk.
pub fn disk_stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
    Some(Stamp::Disk { len: m.len(), modified: m.modified().ok() })
}

/// The files one analysis read through its imports, with the stamps they had: while every stamp
/// is the same, the analysis would read the same.
pub type Deps = Vec<(PathBuf, Stamp)>;

/// Whether every file in `deps` still has the stamp it had.
pub fn deps_current(files: &dyn Files, deps: &Deps) -> bool {
    deps.iter().all(|(path, stamp)| files.stamp(path).as_ref() == Some(stamp))
}

/// What the files that import a file read of it: the names its imports bind, and its module-level
/// `@triton.jit` functions. Small beside the model it is taken from, so a `check` run can keep one
/// for every file it has seen.
#[derive(Debug, Default)]
pub struct Exports {
    /// Only `modules`: Triton's own names lead to no other file.
    imports: Imports,
    functions: Vec<JitFunction>,
}

#[derive(Debug)]
struct JitFunction {
    name: String,
    /// Uses `tl.dot` itself or through a `@triton.jit` function of its file.
    dot: bool,
    /// The names it calls, itself or through functions of its file, that go through an import.
    imported_calls: Vec<String>,
}

impl Exports {
    pub fn of(model: &FileModel) -> Exports {
        let graph = model::CallGraph::new(&model.kernels);
        let functions = model
            .kernels
            .iter()
            .enumerate()
            .filter(|(_, k)| k.qualified_name == k.name)
            .map(|(i, k)| JitFunction { name: k.name.clone(), dot: k.has_dot(), imported_calls: imported_calls(&graph, i, &model.imports) })
            .collect();
        Exports { imports: Imports { modules: model.imports.modules.clone(), ..Imports::default() }, functions }
    }

    fn functions<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a JitFunction> + 'a {
        self.functions.iter().filter(move |f| f.name == name)
    }
}

struct Loaded {
    stamp: Stamp,
    /// Of the text the exports were taken from.
    hash: u64,
    exports: Arc<Exports>,
    /// The whole model, kept (by a `check` run) from when another file imported this one until
    /// this file's own analysis takes it: then each file is parsed once.
    model: Option<Arc<FileModel>>,
}

/// What other files export, by absolute path, each read and built once per content (its
/// [`Stamp`]): shared by the threads of a `check` run and by every analysis of a language-server
/// session.
#[derive(Default)]
pub struct Modules {
    /// One slot per file, locked while its model is built, so that two threads wanting the same
    /// file build it once.
    slots: Mutex<HashMap<PathBuf, Arc<Mutex<Option<Loaded>>>>>,
    /// Keep an imported file's model for its own analysis ([`Modules::model_of_text`]).
    keep_models: bool,
    /// Models built so far (what "parsed once" is measured by).
    builds: AtomicUsize,
}

impl std::fmt::Debug for Modules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Modules").field("files", &lock(&self.slots).len()).field("builds", &self.builds()).finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere leaves a plain cache behind: still usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn text_hash(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl Modules {
    /// For the language server: keeps exports only (its documents are analysed from their trees).
    pub fn new() -> Modules {
        Modules::default()
    }

    /// For a `check` run, which analyses the files it imports too: an imported file's model waits
    /// for its own analysis, so no file is parsed twice.
    pub fn for_check() -> Modules {
        Modules { keep_models: true, ..Modules::default() }
    }

    /// How many models were built.
    pub fn builds(&self) -> usize {
        self.builds.load(Ordering::Relaxed)
    }

    fn build(&self, text: &str) -> FileModel {
        self.builds.fetch_add(1, Ordering::Relaxed);
        model::build_module(text)
    }

    fn slot(&self, path: &Path) -> Arc<Mutex<Option<Loaded>>> {
        lock(&self.slots).entry(path.to_path_buf()).or_default().clone()
    }

    /// The exports of `path` as `files` has it now, with its stamp; None when there is no such file.
    fn exports(&self, files: &dyn Files, path: &Path) -> Option<(Stamp, Arc<Exports>)> {
        let stamp = files.stamp(path)?;
        let slot = self.slot(path);
        let mut held = lock(&slot);
        if let Some(l) = held.as_ref().filter(|l| l.stamp == stamp) {
            return Some((stamp, l.exports.clone()));
        }
        let (stamp, text) = files.read(path)?;
        let model = self.build(&text);
        let exports = Arc::new(Exports::of(&model));
        let model = self.keep_models.then(|| Arc::new(model));
        *held = Some(Loaded { stamp: stamp.clone(), hash: text_hash(&text), exports: exports.clone(), model });
        Some((stamp, exports))
    }

    /// The model of `text`, which the caller read as the content of `path`: the one built when
    /// another file imported it, if from the same text. Its exports are kept for files that import
    /// it later, only while nothing is cached for `path` yet, so that a text that is not the file's
    /// (a `--fix` round) never stands in for it.
    pub fn model_of_text(&self, files: &dyn Files, path: &Path, text: &str) -> FileModel {
        let path = absolute(path);
        let hash = text_hash(text);
        let slot = self.slot(&path);
        let mut held = lock(&slot);
        if let Some(l) = held.as_mut().filter(|l| l.hash == hash)
            && let Some(model) = l.model.take()
        {
            return Arc::try_unwrap(model).unwrap_or_else(|shared| shared.as_ref().clone());
        }
        let model = self.build(text);
        if held.is_none()
            && let Some(stamp) = files.stamp(&path)
        {
            *held = Some(Loaded { stamp, hash, exports: Arc::new(Exports::of(&model)), model: None });
        }
        model
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Sets `dot_in_callees` on each kernel of `model` (built from the text of `path`) that calls,
/// through the file's imports, a `@triton.jit` function of another file that uses `tl.dot`
/// itself or in a function it calls (of its file or imported again, transitively).
/// Returns the files read, for a caller that keeps the result to notice when one changes.
pub fn see_through_imports(modules: &Modules, files: &dyn Files, path: &Path, model: &mut FileModel) -> Deps {
    if model.imports.modules.is_empty() {
        return Vec::new();
    }
    let path = absolute(path);
    let mut walk = Walk { modules, files, deps: Vec::new(), clean: HashSet::new() };
    let calls: Vec<Vec<String>> = {
        let graph = model::CallGraph::new(&model.kernels);
        (0..model.kernels.len())
            .map(|k| if model.kernels[k].has_dot() { Vec::new() } else { imported_calls(&graph, k, &model.imports) })
            .collect()
    };
    for (k, names) in calls.iter().enumerate() {
        if model.kernels[k].has_dot() {
            continue;
        }
        let starts: Vec<Function> = names.iter().filter_map(|name| walk.lookup(&path, &model.imports, name, 0)).collect();
        if !starts.is_empty() && walk.reaches_dot(starts) {
            Arc::make_mut(&mut model.kernels[k]).dot_in_callees = true;
        }
    }
    walk.deps
}

/// The names kernel `k` calls, itself or through the file's `@triton.jit` functions it calls,
/// that go through an import: no function of the file has that name, and the first part of the
/// name is bound by an import.
fn imported_calls(graph: &model::CallGraph, k: usize, imports: &Imports) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let through = std::iter::once(k).chain(graph.callees(k));
    for c in through {
        for name in graph.calls_of(c) {
            let root = name.split('.').next().unwrap_or_default();
            let bound = imports.module_binding(root).is_some() || (!name.contains('.') && starred(imports, root));
            let imported = !graph.defines(name) && bound;
            if imported && !out.contains(name) {
                out.push(name.clone());
            }
        }
    }
    out
}

/// Whether `name` may come from a `from m import *` of the file: it has one, and the name is public
/// (a star import binds no `_name`; `__all__` could list one, but is not read: a miss, not a guess).
fn starred(imports: &Imports, name: &str) -> bool {
    !name.starts_with('_') && imports.star_imports().next().is_some()
}

/// A `@triton.jit` function: the file that defines it at module level, and its name.
type Function = (PathBuf, String);

/// What a name denotes once its import is followed.
enum Named {
    /// A module: its file (`__init__.py` for a package), or the directory of a namespace package.
    Module(PathBuf),
    Function(Function),
}

struct Walk<'a> {
    modules: &'a Modules,
    files: &'a dyn Files,
    deps: Deps,
    /// Functions known to reach no `tl.dot`: every function they reach was searched.
    clean: HashSet<Function>,
}

impl Walk<'_> {
    fn exports(&mut self, path: &Path) -> Option<Arc<Exports>> {
        let (stamp, exports) = self.modules.exports(self.files, path)?;
        if !self.deps.iter().any(|(p, _)| p == path) {
            self.deps.push((path.to_path_buf(), stamp));
        }
        Some(exports)
    }

    fn exists(&self, path: &Path) -> bool {
        self.files.stamp(path).is_some()
    }

    /// Whether any of `starts`, or a function they call (in their file or imported), uses `tl.dot`.
    /// Each function is visited once, so import cycles end.
    fn reaches_dot(&mut self, starts: Vec<Function>) -> bool {
        let mut seen: HashSet<Function> = HashSet::new();
        let mut stack = starts;
        while let Some(f) = stack.pop() {
            if self.clean.contains(&f) || !seen.insert(f.clone()) {
                continue;
            }
            let Some(m) = self.exports(&f.0) else { continue };
            for function in m.functions(&f.1) {
                if function.dot {
                    return true;
                }
                for name in &function.imported_calls {
                    if let Some(next) = self.lookup(&f.0, &m.imports, name, 0) {
                        stack.push(next);
                    }
                }
            }
        }
        // The search went through everything these reach: none of it reaches a dot.
        self.clean.extend(seen);
        false
    }

    /// The `@triton.jit` function a (dotted) name called in `file` denotes through `imports`.
    fn lookup(&mut self, file: &Path, imports: &Imports, dotted: &str, depth: usize) -> Option<Function> {
        let mut parts = dotted.split('.');
        let root = parts.next()?;
        let mut named = match imports.module_binding(root) {
            Some(imp) => self.bound(file, imp, depth)?,
            None => self.through_stars(file, imports, root, depth)?,
        };
        for part in parts {
            named = match named {
                Named::Module(m) => self.member(&m, part, depth + 1)?,
                Named::Function(_) => return None,
            };
        }
        match named {
            Named::Function(f) => Some(f),
            Named::Module(_) => None,
        }
    }

    /// `name` as the star imports of `file` bind it, the last import that has it.
    fn through_stars(&mut self, file: &Path, imports: &Imports, name: &str, depth: usize) -> Option<Named> {
        if depth > MAX_REEXPORTS || !starred(imports, name) {
            return None;
        }
        imports.star_imports().find_map(|imp| {
            let module = self.module_path(file, imp.level, &imp.module)?;
            // A star import binds a module's names, never its submodules not yet imported.
            match self.member(&module, name, depth + 1)? {
                Named::Function(f) => Some(Named::Function(f)),
                Named::Module(_) => None,
            }
        })
    }

    /// What import `imp` of `file` binds.
    fn bound(&mut self, file: &Path, imp: &ModuleImport, depth: usize) -> Option<Named> {
        if depth > MAX_REEXPORTS {
            return None;
        }
        let module = self.module_path(file, imp.level, &imp.module)?;
        match &imp.name {
            None => Some(Named::Module(module)),
            Some(name) => self.member(&module, name, depth + 1),
        }
    }

    /// `name` in `module`: a `@triton.jit` function it defines, a name it imports (followed), or,
    /// in a package, a submodule (Python's order for `from pkg import name`).
    fn member(&mut self, module: &Path, name: &str, depth: usize) -> Option<Named> {
        if depth > MAX_REEXPORTS {
            return None;
        }
        let dir = if self.files.is_dir(module) {
            Some(module.to_path_buf())
        } else {
            if let Some(m) = self.exports(module) {
                if m.functions(name).next().is_some() {
                    return Some(Named::Function((module.to_path_buf(), name.to_string())));
                }
                if let Some(imp) = m.imports.module_binding(name) {
                    let imp = imp.clone();
                    return self.bound(module, &imp, depth + 1);
                }
                // A re-export through `from .inner import *` (an `__init__.py`'s usual spelling).
                if let Some(found) = self.through_stars(module, &m.imports, name, depth + 1) {
                    return Some(found);
                }
            }
            module.parent().filter(|_| module.file_name().is_some_and(|n| n == "__init__.py")).map(Path::to_path_buf)
        };
        self.module_in(&dir?, name).map(Named::Module)
    }

    /// The file (or namespace directory) of module `dotted` imported from `file` with `level` dots.
    fn module_path(&mut self, file: &Path, level: usize, dotted: &str) -> Option<PathBuf> {
        if level > 0 {
            let mut base = file.parent()?;
            for _ in 1..level {
                base = base.parent()?;
            }
            if dotted.is_empty() {
                let init = base.join("__init__.py");
                return Some(if self.exists(&init) { init } else { base.to_path_buf() });
            }
            return self.resolve_in(base, dotted);
        }
        roots(self.files, file).iter().find_map(|root| self.resolve_in(root, dotted))
    }

    /// Module `dotted` under directory `base`.
    fn resolve_in(&self, base: &Path, dotted: &str) -> Option<PathBuf> {
        let mut dir = base.to_path_buf();
        let mut parts = dotted.split('.').peekable();
        while let Some(part) = parts.next() {
            if part.is_empty() {
                return None;
            }
            if parts.peek().is_none() {
                return self.module_in(&dir, part);
            }
            dir.push(part);
            if !self.files.is_dir(&dir) {
                return None;
            }
        }
        None
    }

    /// Module `name` directly in directory `dir`, in the order Python's finder tries: a package,
    /// a module file, a namespace directory.
    fn module_in(&self, dir: &Path, name: &str) -> Option<PathBuf> {
        let package = dir.join(name).join("__init__.py");
        if self.exists(&package) {
            return Some(package);
        }
        let file = dir.join(format!("{name}.py"));
        if self.exists(&file) {
            return Some(file);
        }
        let namespace = dir.join(name);
        self.files.is_dir(&namespace).then_some(namespace)
    }
}

/// Where absolute imports of `file` are looked for: the directory above its top-level package
/// (its own directory when it is in none), then the project root.
fn roots(files: &dyn Files, file: &Path) -> Vec<PathBuf> {
    let Some(dir) = file.parent() else { return Vec::new() };
    let mut top = dir;
    while files.stamp(&top.join("__init__.py")).is_some()
        && let Some(up) = top.parent()
    {
        top = up;
    }
    let mut out = vec![top.to_path_buf()];
    let project = dir.ancestors().find(|d| PROJECT_MARKERS.iter().any(|m| files.exists(&d.join(m))));
    if let Some(p) = project
        && p != top
    {
        out.push(p.to_path_buf());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    const HEAD: &str = "import triton\nimport triton.language as tl\n\n";

    fn helper(name: &str, dot: bool) -> String {
        let body = if dot { "    return tl.dot(a, b, acc)\n" } else { "    return acc + a\n" };
        format!("@triton.jit\ndef {name}(a, b, acc):\n{body}\n")
    }

    fn kernel(call: &str) -> String {
        format!("@triton.jit\ndef kern(a, b, acc):\n    acc = {call}(a, b, acc)\n\n")
    }

    /// Whether `kern` of `rel` uses tl.dot through its imports, and the files that took.
    fn see(root: &Path, rel: &str) -> (bool, Deps) {
        let path = root.join(rel);
        let text = fs::read_to_string(&path).unwrap();
        let modules = Modules::new();
        let mut m = modules.model_of_text(&Disk, &path, &text);
        let deps = see_through_imports(&modules, &Disk, &path, &mut m);
        let k = m.kernels.iter().find(|k| k.name == "kern").expect("kern");
        (k.dot_in_callees, deps)
    }

    #[test]
    fn every_import_spelling_reaches_the_helper() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        write(r, "pkg/__init__.py", "");
        write(r, "pkg/helpers.py", &format!("{HEAD}{}", helper("inner", true)));
        write(r, "pkg/sub/__init__.py", "");
        let cases = [
            ("pkg/rel.py", "from .helpers import inner\n", "inner"),
            ("pkg/alias.py", "from .helpers import inner as mac\n", "mac"),
            ("pkg/sub/up.py", "from ..helpers import inner\n", "inner"),
            ("pkg/abs.py", "from pkg.helpers import inner\n", "inner"),
            ("pkg/sub/abs.py", "from pkg.helpers import inner\n", "inner"),
            ("pkg/mod_alias.py", "import pkg.helpers as h\n", "h.inner"),
            ("pkg/mod_plain.py", "import pkg.helpers\n", "pkg.helpers.inner"),
            ("pkg/from_pkg.py", "from . import helpers\n", "helpers.inner"),
            ("pkg/from_abs_pkg.py", "from pkg import helpers\n", "helpers.inner"),
            ("pkg/star.py", "from .helpers import *\n", "inner"),
            ("pkg/sub/star_abs.py", "from pkg.helpers import *\nfrom os.path import *\n", "inner"),
        ];
        for (file, import, call) in cases {
            write(r, file, &format!("{HEAD}{import}\n\n{}", kernel(call)));
            let (dot, deps) = see(r, file);
            assert!(dot, "{file}: {import} then {call}(...) does not reach the tl.dot");
            assert!(deps.iter().any(|(p, _)| p.ends_with("pkg/helpers.py")), "{file}: {deps:?}");
        }
    }

    #[test]
    fn re_exports_and_transitive_helpers_are_followed() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        // The package re-exports from a module that names neither triton nor jit itself.
        write(r, "pkg/__init__.py", "from .api import mac_loop\n");
        write(r, "pkg/api.py", "from .impl.core import mac_loop  # noqa\n");
        write(r, "pkg/impl/__init__.py", "");
        // mac_loop has no dot itself: it calls a helper of its file, which calls one of another.
        write(
            r,
            "pkg/impl/core.py",
            &format!(
                "{HEAD}from .deep import leaf\n\n@triton.jit\ndef step(a, b, acc):\n    return leaf(a, b, acc)\n\n\
                 @triton.jit\ndef mac_loop(a, b, acc):\n    return step(a, b, acc)\n"
            ),
        );
        write(r, "pkg/impl/deep.py", &format!("{HEAD}{}", helper("leaf", true)));
        write(r, "app/kern.py", &format!("{HEAD}from pkg import mac_loop\n\n{}", kernel("mac_loop")));
        write(r, "pyproject.toml", "");
        assert!(see(r, "app/kern.py").0, "through the project root, two re-exports and two helpers");
    }

    #[test]
    fn star_imports_bind_public_names_and_re_export_them() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        // The package's `__init__` re-exports its implementation module with a star.
        write(r, "ops/__init__.py", "from .impl import *\n");
        write(r, "ops/impl.py", &format!("{HEAD}{}{}", helper("mac_loop", true), helper("_private_mac", true)));
        write(r, "ops/kern.py", &format!("{HEAD}from ops import *\n\n{}", kernel("mac_loop")));
        assert!(see(r, "ops/kern.py").0, "through `from ops import *` and the package's `from .impl import *`");
        // A star import binds no `_name`: Python would not, so neither does the checker.
        write(r, "ops/private.py", &format!("{HEAD}from .impl import *\n\n{}", kernel("_private_mac")));
        assert!(!see(r, "ops/private.py").0);
        // A name the file defines itself wins over the star import's.
        write(r, "ops/own.py", &format!("{HEAD}from .impl import *\n\n{}{}", helper("mac_loop", false), kernel("mac_loop")));
        assert!(!see(r, "ops/own.py").0);
    }

    #[test]
    fn no_dot_unresolved_and_cyclic_imports_add_nothing() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        write(r, "pkg/__init__.py", "");
        write(r, "pkg/plain.py", &format!("{HEAD}{}", helper("inner", false)));
        write(r, "pkg/no_dot.py", &format!("{HEAD}from .plain import inner\n\n{}", kernel("inner")));
        assert!(!see(r, "pkg/no_dot.py").0);
        write(r, "pkg/missing.py", &format!("{HEAD}from .nowhere import inner\nfrom other_pkg import x\n\n{}", kernel("inner")));
        let (dot, deps) = see(r, "pkg/missing.py");
        assert!(!dot && deps.is_empty(), "{deps:?}");
        // a imports b imports a; neither has a dot; b's helper calls back into a.
        write(
            r,
            "pkg/a.py",
            &format!("{HEAD}from .b import ping\n\n@triton.jit\ndef pong(a, b, acc):\n    return ping(a, b, acc)\n\n{}", kernel("ping")),
        );
        write(r, "pkg/b.py", &format!("{HEAD}from .a import pong\n\n@triton.jit\ndef ping(a, b, acc):\n    return pong(a, b, acc)\n"));
        let (dot, deps) = see(r, "pkg/a.py");
        assert!(!dot);
        assert_eq!(deps.len(), 2, "{deps:?}");
        // Re-exports in a circle end too.
        write(r, "pkg/c.py", "from .d import inner\n");
        write(r, "pkg/d.py", "from .c import inner\n");
        write(r, "pkg/circle.py", &format!("{HEAD}from .c import inner\n\n{}", kernel("inner")));
        assert!(!see(r, "pkg/circle.py").0);
        // The same cycle with a dot at the far end is found.
        write(
            r,
            "pkg/b.py",
            &format!("{HEAD}from .a import pong\n\n@triton.jit\ndef ping(a, b, acc):\n    return tl.dot(a, b, pong(a, b, acc))\n"),
        );
        assert!(see(r, "pkg/a.py").0);
    }

    #[test]
    fn a_file_is_built_once_per_content_and_again_when_it_changes() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        write(r, "pkg/__init__.py", "");
        write(r, "pkg/helpers.py", &format!("{HEAD}{}", helper("inner", true)));
        write(r, "pkg/k.py", &format!("{HEAD}from .helpers import inner\n\n{}", kernel("inner")));
        let helpers = r.join("pkg/helpers.py");
        let text = fs::read_to_string(&helpers).unwrap();
        let check = |modules: &Modules, rel: &str| {
            let path = r.join(rel);
            let mut m = modules.model_of_text(&Disk, &path, &fs::read_to_string(&path).unwrap());
            see_through_imports(modules, &Disk, &path, &mut m);
            m
        };

        // Checked, then imported: the import reads what the check built.
        let modules = Modules::for_check();
        check(&modules, "pkg/helpers.py");
        assert!(check(&modules, "pkg/k.py").kernels[0].dot_in_callees);
        assert_eq!(modules.builds(), 2);

        // Imported, then checked: the check takes the model the import built.
        let modules = Modules::for_check();
        check(&modules, "pkg/k.py");
        assert_eq!(modules.builds(), 2);
        let m = check(&modules, "pkg/helpers.py");
        assert_eq!(modules.builds(), 2, "helpers.py parsed twice");
        assert!(m.kernels[0].has_dot());

        // A text that is not the file's (a --fix round) is built apart and does not stand for it.
        let modules = Modules::for_check();
        check(&modules, "pkg/helpers.py");
        let fixed = modules.model_of_text(&Disk, &helpers, &text.replace("tl.dot(a, b, acc)", "acc"));
        assert!(!fixed.kernels[0].has_dot());
        assert!(check(&modules, "pkg/k.py").kernels[0].dot_in_callees);

        // A change on disk is seen; an unchanged file is not built again.
        let before = modules.builds();
        check(&modules, "pkg/k.py");
        assert_eq!(modules.builds(), before + 1, "only k.py itself");
        write(r, "pkg/helpers.py", &format!("{HEAD}{}", helper("inner", false)));
        assert!(!check(&modules, "pkg/k.py").kernels[0].dot_in_callees);
        assert_eq!(modules.builds(), before + 3);
    }

    #[test]
    fn deps_go_stale_when_a_file_changes() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        write(r, "pkg/__init__.py", "");
        write(r, "pkg/helpers.py", &format!("{HEAD}{}", helper("inner", true)));
        write(r, "pkg/k.py", &format!("{HEAD}from .helpers import inner\n\n{}", kernel("inner")));
        let (_, deps) = see(r, "pkg/k.py");
        assert!(deps_current(&Disk, &deps));
        write(r, "pkg/helpers.py", &format!("{HEAD}{}\n# longer now\n", helper("inner", true)));
        assert!(!deps_current(&Disk, &deps));
    }
}
