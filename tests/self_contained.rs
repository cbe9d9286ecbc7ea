//! The repository stands on its own: no file refers to a path of the machine it was developed on or
//! to documents outside the repository (a user's clone has neither).

use std::path::{Path, PathBuf};

/// Build outputs, installed environments and downloads: not part of the repository.
const SKIP_DIRS: &[&str] = &[
    "target",
    ".venv",
    ".ruff_cache",
    ".pytest_cache",
    "node_modules",
    ".cache",
    ".git",
    ".whl",
    ".bench-before",
    ".xeforge",
    "__pycache__",
    ".work",
];

/// Every file of the repository: what `.gitignore` leaves (build outputs, packaged binaries, local
/// environments are not the repository), and never the directories above.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let walk = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| !SKIP_DIRS.iter().any(|s| e.file_name() == *s))
        .build();
    out.extend(walk.flatten().filter(|e| e.file_type().is_some_and(|t| t.is_file())).map(|e| e.into_path()));
}

#[test]
fn no_file_refers_to_the_development_machine_or_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Spelled in pieces so that this file does not match itself.
    let forbidden = [
        ["/work", "/shared"].concat(),
        ["/work", "/main"].concat(),
        ["..", "/shared/"].concat(),
        ["/work", "/.library"].concat(),
        ["/work", "/.device"].concat(),
        // The team's research notes by name: a clone has none of them.
        ["intel", "-kb"].concat(),
        ["lsp", "-anchors"].concat(),
        ["peers", ".md"].concat(),
        ["corpus", ".md §"].concat(),
        ["research", "/intel"].concat(),
        // Who wrote what is no business of the code.
        ["helper ", "G"].concat(),
        ["helper ", "H"].concat(),
    ];
    let mut all = Vec::new();
    files(root, &mut all);
    assert!(all.len() > 100, "walked only {} files under {}", all.len(), root.display());
    let mut found = Vec::new();
    for path in all {
        let Ok(text) = std::fs::read(&path) else { continue };
        let text = String::from_utf8_lossy(&text);
        for (n, line) in text.lines().enumerate() {
            if let Some(f) = forbidden.iter().find(|f| line.contains(f.as_str())) {
                found.push(format!("{}:{}: {f}", path.strip_prefix(root).unwrap_or(&path).display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "references outside the repository:\n{}", found.join("\n"));
}
