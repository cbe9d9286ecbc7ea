//! The stage evidence records an inline suggestion comes from: `.xeforge/runs/*.json` of the
//! document's workspace (where `xeforge stage` and the editor's runs write them), read again only
//! when a file there changed.
//!
//! A record is offered for a kernel when it names the document and the kernel, carries a verified
//! change (`diff`), was computed for the kernel text the document has now (`kernel_sha256_before`),
//! and its change still fits the document: every hunk's old lines are there, and the kernel it makes
//! hashes to the verified one (`kernel_sha256_after`). Only the newest such record of each stage counts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::Suggestion;
use crate::cover::evidence::{StoredRecord, apply_diff, kernel_sha256};
use crate::lsp::session::lock;

/// What was read from one record file, and the file's state when it was read.
struct Read {
    modified: Option<SystemTime>,
    len: u64,
    record: Option<Arc<StoredRecord>>,
}

/// The records of each runs directory seen so far, by file.
#[derive(Default)]
pub struct Records(Mutex<HashMap<PathBuf, HashMap<PathBuf, Read>>>);

impl Records {
    /// The records under `dir` (`…/.xeforge/runs`); a file is read again when its size or time changed.
    pub fn load(&self, dir: &Path) -> Vec<(PathBuf, Arc<StoredRecord>)> {
        let Ok(listing) = std::fs::read_dir(dir) else {
            lock(&self.0).remove(dir);
            return Vec::new();
        };
        let files: Vec<(PathBuf, std::fs::Metadata)> = listing
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .filter_map(|p| std::fs::metadata(&p).ok().filter(|m| m.is_file()).map(|m| (p, m)))
            .collect();
        let mut all = lock(&self.0);
        let known = all.entry(dir.to_path_buf()).or_default();
        known.retain(|p, _| files.iter().any(|(f, _)| f == p));
        let mut out = Vec::new();
        for (path, meta) in files {
            let (modified, len) = (meta.modified().ok(), meta.len());
            let fresh = known.get(&path).is_some_and(|r| r.modified == modified && r.len == len);
            if !fresh {
                // A record being written is read again once its size or time settles.
                let record = StoredRecord::read(&path).map(Arc::new);
                known.insert(path.clone(), Read { modified, len, record });
            }
            if let Some(r) = known.get(&path).and_then(|r| r.record.clone()) {
                out.push((path, r));
            }
        }
        out
    }

    /// The verified stage results for `kernel` of the document at `path` whose text is `text`.
    pub fn suggestions(&self, text: &str, path: &Path, kernel: &str) -> Vec<Suggestion> {
        let workspace = crate::cover::settings::workspace_root(path);
        let mut candidates: Vec<(PathBuf, Arc<StoredRecord>)> = self
            .load(&workspace.join(".xeforge").join("runs"))
            .into_iter()
            .filter(|(_, r)| r.kernel == kernel && r.diff.is_some() && names(&r.file, &workspace, path))
            .collect();
        if candidates.is_empty() {
            return Vec::new();
        }
        let Some(now) = kernel_sha256(text, kernel) else { return Vec::new() };
        candidates.retain(|(_, r)| r.kernel_sha256_before == now);
        // Newest first (the file name breaks ties: it starts with the run's start time).
        candidates.sort_by(|(pa, a), (pb, b)| b.started_unix.cmp(&a.started_unix).then_with(|| pb.cmp(pa)));
        let mut stages: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for (record_path, r) in &candidates {
            // The last run of each stage only: an older one's result was superseded by it.
            if stages.contains(&r.stage.as_str()) {
                continue;
            }
            stages.push(&r.stage);
            let Some(edits) = r.diff.as_deref().and_then(|d| apply_diff(text, d)) else { continue };
            if !makes_verified_kernel(text, &edits, kernel, r) {
                continue;
            }
            out.push(Suggestion { edits, title: r.summary.clone(), evidence: Some((r.summary.clone(), record_path.clone())) });
        }
        out
    }
}

/// The record's `file` (as the run was given it: absolute, or relative to where it ran) is `doc`.
fn names(file: &str, workspace: &Path, doc: &Path) -> bool {
    let f = Path::new(file);
    let same = |a: &Path| match (a.canonicalize(), doc.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => std::path::absolute(a).is_ok_and(|a| a == doc),
    };
    if f.is_absolute() { same(f) } else { same(&workspace.join(f)) || doc.ends_with(f) }
}

/// The change applied to `text` gives the kernel the run verified (when the record says which).
fn makes_verified_kernel(text: &str, edits: &[crate::lint::Edit], kernel: &str, r: &StoredRecord) -> bool {
    let Some(after) = &r.kernel_sha256_after else { return true };
    let mut new = text.to_string();
    for e in edits.iter().rev() {
        new.replace_range(e.range.start..e.range.end, &e.content);
    }
    kernel_sha256(&new, kernel).as_ref() == Some(after)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cover::evidence::{sha256, unified_diff};

    const BEFORE: &str = "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x, B: tl.constexpr):\n    pass\n\n\ndef run(x):\n    k[(1,)](x, B=64)\n";

    fn record(dir: &Path, name: &str, stage: &str, started: u64, before: &str, after: &str) {
        let runs = dir.join(".xeforge/runs");
        std::fs::create_dir_all(&runs).unwrap();
        let r = serde_json::json!({
            "stage": stage, "file": "k.py", "kernel": "k", "started_unix": started,
            "kernel_sha256_before": kernel_sha256(before, "k").unwrap(),
            "kernel_sha256_after": kernel_sha256(after, "k"),
            "outcome": "accepted", "summary": format!("{stage}: verified"),
            "diff": unified_diff("k.py", before, after), "file_sha256_before": sha256(before),
        });
        std::fs::write(runs.join(name), r.to_string()).unwrap();
    }

    #[test]
    fn newest_matching_record_per_stage_while_the_kernel_is_the_verified_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pyproject.toml"), "").unwrap();
        let doc = dir.path().join("k.py");
        std::fs::write(&doc, BEFORE).unwrap();
        let tuned = BEFORE.replace("@triton.jit", "@triton.autotune(configs=[], key=[])\n@triton.jit").replace(", B=64)", ")");
        let older = BEFORE.replace("@triton.jit", "@triton.autotune(configs=[1], key=[])\n@triton.jit");
        record(dir.path(), "1-autotune-k.json", "autotune", 1, BEFORE, &older);
        record(dir.path(), "2-autotune-k.json", "autotune", 2, BEFORE, &tuned);
        // Another kernel text, another file, a record without a change: never offered.
        record(dir.path(), "3-autotune-k.json", "autotune", 3, &BEFORE.replace("pass", "return"), &tuned);
        std::fs::write(dir.path().join(".xeforge/runs/4-x.json"), "{not json").unwrap();
        let recs = Records::default();
        let got = recs.suggestions(BEFORE, &doc, "k");
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].title, "autotune: verified");
        let mut applied = BEFORE.to_string();
        for e in got[0].edits.iter().rev() {
            applied.replace_range(e.range.start..e.range.end, &e.content);
        }
        assert_eq!(applied, tuned, "the newest run's change");
        // The kernel edited: nothing; the verified text itself (already applied): nothing.
        assert!(recs.suggestions(&BEFORE.replace("pass", "pass  # x"), &doc, "k").is_empty());
        assert!(recs.suggestions(&tuned, &doc, "k").is_empty());
        // Another document with the same kernel text is not the file the run verified.
        assert!(recs.suggestions(BEFORE, &dir.path().join("other.py"), "k").is_empty());
        // The launch the change rewrites was edited: the change no longer fits.
        assert!(recs.suggestions(&BEFORE.replace("B=64)", "B=64, )"), &doc, "k").is_empty());
    }
}
