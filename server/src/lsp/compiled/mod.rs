//! Compiled facts in the editor: what compiling a document's text on the harness said (registers,
//! spills, shared memory per config; `cover::compiled`), shown beside the static findings under the
//! source `xeforge (compiled)`. They come only from `xeforge.verifyCompiled` ([`command`]), never
//! from typing: compiling needs the harness.
//!
//! Each document keeps them per kernel, keyed by the hash of the kernel's text (decorators to the
//! end of the body) on the version that was compiled. Every analysed version places them anew on its
//! own model ([`CompiledFacts::findings`]) when the kernel's text hashes the same and the target is the
//! same, so they follow edits elsewhere; a kernel whose text changed gets none, and its facts are
//! dropped. A static finding that a compiled one settles is replaced as `xeforge verify` replaces it
//! (`lint::compiled`).

pub mod command;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::config::Settings;
use crate::knowledge::Knowledge;
use crate::lint::{Diagnostic, LintOptions};
use crate::model::FileModel;
use crate::text::TextRange;

/// What compiling one text said, able to place itself on a later version of that text.
pub trait CompiledFacts: Send + Sync {
    /// The compiled findings about `kernel`, placed on `model` (a text in which that kernel's text is
    /// the one compiled).
    fn findings(&self, model: &FileModel, kernel: &str) -> Vec<Diagnostic>;
}

/// A verification the server asks of the provider: the text of the version the command was run on.
#[derive(Clone)]
pub struct VerifyRun {
    pub path: PathBuf,
    pub text: String,
    pub settings: Settings,
    /// The document's knowledge base (overlays included) and resolved target (device, toolchain).
    pub kb: Arc<Knowledge>,
    pub target: (String, String),
    /// Ask the harness again even when the cache has this text's result.
    pub refresh: bool,
}

/// A finished verification.
pub struct VerifyOutcome {
    /// `None` when the harness gave no compile metadata ([`VerifyOutcome::note`] says why).
    pub facts: Option<Arc<dyn CompiledFacts>>,
    /// The kernels the harness compiled.
    pub kernels: Vec<String>,
    /// One line for the user: the verdict, the device, whether it came from the cache.
    pub summary: String,
    /// Why there are no facts: "no compile metadata on this device (cpu …): …".
    pub note: Option<String>,
}

fn kernel_hash(text: &str, range: TextRange) -> [u8; 32] {
    let r = range.start.min(text.len())..range.end.min(text.len());
    Sha256::digest(text.get(r).unwrap_or("").as_bytes()).into()
}

/// One kernel's compiled facts: valid while the kernel's text hashes to `hash` and the target is `target`.
#[derive(Clone)]
struct KernelFacts {
    kernel: String,
    hash: [u8; 32],
    target: (String, String),
    /// The document version that was compiled.
    version: i32,
    facts: Arc<dyn CompiledFacts>,
}

/// A document's compiled facts as one analysis reads them. `generation` changes whenever facts are added,
/// so a result analysed before is analysed again (a result records the `generation` it was built with).
#[derive(Clone, Default)]
pub struct Snapshot {
    pub generation: u64,
    kernels: Arc<Vec<KernelFacts>>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kernels: Vec<&str> = self.kernels.iter().map(|k| k.kernel.as_str()).collect();
        f.debug_struct("Snapshot").field("generation", &self.generation).field("kernels", &kernels).finish()
    }
}

/// The compiled facts of one open document (in its `DocEntry`, so they go when it closes).
#[derive(Default)]
pub struct Store(Mutex<Snapshot>);

impl Store {
    pub fn snapshot(&self) -> Snapshot {
        super::session::lock(&self.0).clone()
    }

    /// Keep `facts` for the `kernels` of the compiled version (`text`, `model`), in place of any
    /// earlier facts of the document: one verification covers the whole file.
    pub fn put(
        &self,
        version: i32,
        text: &str,
        model: &FileModel,
        target: &(String, String),
        kernels: &[String],
        facts: Arc<dyn CompiledFacts>,
    ) {
        let fresh: Vec<KernelFacts> = model
            .kernels
            .iter()
            .filter(|k| kernels.contains(&k.name))
            .map(|k| KernelFacts {
                kernel: k.name.clone(),
                hash: kernel_hash(text, k.range),
                target: target.clone(),
                version,
                facts: facts.clone(),
            })
            .collect();
        let mut s = super::session::lock(&self.0);
        s.generation += 1;
        s.kernels = Arc::new(fresh);
    }

    /// Drop the facts of kernels whose text is no longer the compiled one in a later version: they
    /// are never shown again, even if the text comes back. Not a change of what any later version
    /// shows (those facts no longer apply to it), so `generation` stays.
    pub fn prune(&self, version: i32, text: &str, model: &FileModel) {
        let mut s = super::session::lock(&self.0);
        // A kernel missing from the model (a syntax error above it can hide it) is not a changed one.
        let changed = |f: &KernelFacts| {
            let mut named = model.kernels.iter().filter(|k| k.name == f.kernel).peekable();
            f.version < version && named.peek().is_some() && named.all(|k| kernel_hash(text, k.range) != f.hash)
        };
        if s.kernels.iter().any(changed) {
            let kept: Vec<KernelFacts> = s.kernels.iter().filter(|f| !changed(f)).cloned().collect();
            s.kernels = Arc::new(kept);
        }
    }
}

/// The kernels among `kernels` whose text in `now` (a model and its text) is not their text in `then`.
pub fn edited_kernels(kernels: &[String], then: (&FileModel, &str), now: (&FileModel, &str)) -> Vec<String> {
    let hash_in =
        |(model, text): (&FileModel, &str), name: &str| model.kernels.iter().find(|k| k.name == name).map(|k| kernel_hash(text, k.range));
    kernels
        .iter()
        .filter(|k| match (hash_in(then, k), hash_in(now, k)) {
            (Some(a), Some(b)) => a != b,
            _ => false,
        })
        .cloned()
        .collect()
}

/// The findings of one analysed version: the static ones with the compiled facts that still hold for
/// it (same kernel text, same target), merged as `xeforge verify` merges them.
pub fn apply(
    snap: &Snapshot,
    model: &FileModel,
    text: &str,
    target: (&str, &str),
    opts: &LintOptions,
    statics: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    if snap.kernels.is_empty() {
        return statics;
    }
    let mut compiled = Vec::new();
    let mut placed: Vec<&str> = Vec::new();
    for k in &model.kernels {
        let holds = |f: &&KernelFacts| f.kernel == k.name && f.target.0 == target.0 && f.target.1 == target.1;
        if placed.contains(&k.name.as_str()) || !snap.kernels.iter().any(|f| holds(&f)) {
            continue;
        }
        let hash = kernel_hash(text, k.range);
        if let Some(f) = snap.kernels.iter().filter(holds).find(|f| f.hash == hash) {
            compiled.extend(f.facts.findings(model, &k.name));
            placed.push(&k.name);
        }
    }
    crate::lint::compiled::with_compiled(statics, compiled, model, text, opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::{Knowledge, Severity};
    use crate::lint::Origin;

    const TEXT: &str = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n\n@triton.jit\ndef other(x):\n    pass\n";

    /// One finding on the kernel's name, wherever the model has it.
    struct OnName;
    impl CompiledFacts for OnName {
        fn findings(&self, model: &FileModel, kernel: &str) -> Vec<Diagnostic> {
            let k = model.kernels.iter().find(|k| k.name == kernel).unwrap();
            vec![Diagnostic {
                code: "XF202",
                name: "grf-pressure",
                severity: Severity::Info,
                message: format!("compiled {kernel}"),
                range: k.name_range,
                kernel: Some(kernel.into()),
                device: String::new(),
                toolchain: String::new(),
                related: Vec::new(),
                fix: None,
                origin: Origin::Compiled,
            }]
        }
    }

    fn model(text: &str) -> FileModel {
        crate::analysis::analyze(text, Knowledge::embedded(), &Default::default()).unwrap().model
    }

    fn shown(store: &Store, text: &str, target: (&str, &str)) -> Vec<String> {
        let found = apply(&store.snapshot(), &model(text), text, target, &LintOptions::default(), Vec::new());
        found.iter().map(|d| format!("{}@{}", d.message, &text[d.range.start..d.range.end])).collect()
    }

    #[test]
    fn facts_hold_while_the_kernel_text_and_the_target_are_the_compiled_ones() {
        let store = Store::default();
        let target = ("arc-pro-b70".to_string(), "xpu-3.7".to_string());
        store.put(1, TEXT, &model(TEXT), &target, &["k".into(), "other".into()], Arc::new(OnName));
        let on = ("arc-pro-b70", "xpu-3.7");
        assert_eq!(shown(&store, TEXT, on), ["compiled k@k", "compiled other@other"]);
        // Above both kernels: both move with it.
        let above = format!("# note\n{TEXT}");
        assert_eq!(shown(&store, &above, on), ["compiled k@k", "compiled other@other"]);
        // Another target: the facts were not about it.
        assert!(shown(&store, TEXT, ("max-1550", "xpu-3.7")).is_empty());
        // One kernel edited: only the other keeps its facts; a prune of that version drops them for good.
        let edited = TEXT.replacen("def k(x):\n    pass", "def k(x):\n    x = 1", 1);
        assert_eq!(shown(&store, &edited, on), ["compiled other@other"]);
        assert_eq!(edited_kernels(&["k".into(), "other".into()], (&model(TEXT), TEXT), (&model(&edited), &edited)), ["k"]);
        store.prune(2, &edited, &model(&edited));
        assert_eq!(shown(&store, TEXT, on), ["compiled other@other"], "not back when the text comes back");
        // A version that lost the kernel (hidden by a syntax error) is not an edit of it.
        let hidden = "import triton\n\n@triton.jit\ndef other(x):\n    pass\n";
        store.prune(3, hidden, &model(hidden));
        assert_eq!(shown(&store, TEXT, on), ["compiled other@other"]);
        // A prune of the compiled version itself, or an older one, drops nothing.
        store.put(4, &edited, &model(&edited), &target, &["k".into()], Arc::new(OnName));
        store.prune(3, TEXT, &model(TEXT));
        store.prune(4, TEXT, &model(TEXT));
        assert_eq!(shown(&store, &edited, on), ["compiled k@k"]);
    }
}
