//! The Python the integration tests run the real harness with: `$XEFORGE_PYTHON`, else the
//! repository's `.venv` (what `tests/harness/install_deps.sh` makes), if it imports what is needed.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The first candidate interpreter that imports `modules` (a Python import list, e.g. "torch, triton").
pub fn with(modules: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [std::env::var_os("XEFORGE_PYTHON").map(PathBuf::from), Some(root.join(".venv/bin/python"))];
    let import = format!("import {modules}");
    candidates.into_iter().flatten().find(|p| Command::new(p).args(["-c", &import]).output().is_ok_and(|o| o.status.success()))
}

/// A Python that can run the harness (torch and triton).
pub fn harness() -> Option<PathBuf> {
    with("torch, triton")
}
