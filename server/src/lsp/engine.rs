//! The bridge from a document snapshot to the checker's results, converted once to LSP form.
//! The only place the server calls the analyser, so `xeforge check` and the editor agree.

use ropey::Rope;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tower_lsp::lsp_types::{self as lsp, Url};
use tree_sitter::Tree;

use super::convert;
use super::encoding::Encoding;
use crate::analysis::{Place, Reuse};
use crate::knowledge::Knowledge;
use crate::lint::{Diagnostic, LintOptions};
use crate::model::FileModel;
use crate::package::Deps;

/// One version of a document, analysed. Everything a handler needs, immutable and shareable.
#[derive(Debug)]
pub struct Computed {
    pub version: i32,
    /// Bumped by configuration changes; a result from an older generation is re-linted.
    pub config_gen: u64,
    pub rope: Rope,
    pub text: String,
    /// The tree the result was built from; `None` once [`Computed::slim`] let it go.
    tree: Mutex<Option<Tree>>,
    /// `tree` is certainly what a fresh parse gives (see `documents::SnapshotTree`); when not, the
    /// worker checks it once the document is idle, and a handler before it answers ([`reverified`]).
    tree_trusted: AtomicBool,
    pub model: FileModel,
    /// What the next version's build reuses (the flat copy of `tree`, the kernels); `None` once slim.
    reuse: Mutex<Option<Reuse>>,
    /// The static findings with the compiled facts that hold for this text (`lsp::compiled`).
    pub diagnostics: Vec<Diagnostic>,
    /// The document's compiled facts this result was built with; a result of an older `generation` is
    /// analysed again.
    pub compiled: super::compiled::Snapshot,
    /// The target the analysis resolved (device, toolchain); empty when it could not run.
    pub target: (String, String),
    /// `diagnostics` in LSP form, converted on first use (publishing writes JSON directly).
    lsp: OnceLock<Vec<lsp::Diagnostic>>,
    pub uri: Url,
    pub encoding: Encoding,
    pub kb: Arc<Knowledge>,
    pub options: LintOptions,
    /// Why there are no diagnostics when the analysis could not run (unknown device, ...).
    pub error: Option<String>,
    /// The other files the analysis read through imports, with their stamps then: the result is
    /// out of date once one of them changes.
    pub deps: Deps,
}

pub struct Inputs<'a> {
    pub uri: &'a Url,
    pub version: i32,
    pub config_gen: u64,
    pub rope: Rope,
    pub tree: Tree,
    pub tree_trusted: bool,
    pub encoding: Encoding,
    pub kb: Arc<Knowledge>,
    pub options: LintOptions,
    /// The previous result of this document, if any: its unchanged statements are reused.
    pub prev: Option<Arc<Computed>>,
    /// The document's file and where the files it imports are read: helpers' `tl.dot` counts.
    pub place: Option<Place<'a>>,
    pub compiled: super::compiled::Snapshot,
}

pub fn compute(inp: Inputs<'_>) -> Computed {
    let text = inp.rope.to_string();
    let held = inp.prev.as_deref().map(|p| (p.reuse.lock().unwrap_or_else(|e| e.into_inner()), p.text.as_str()));
    let prev = held.as_ref().and_then(|(reuse, text)| Some((reuse.as_ref()?, *text)));
    let (model, reuse, statics, target, deps, error) =
        match crate::analysis::analyze_reusing(&text, &inp.tree, prev, inp.place, &inp.kb, &inp.options) {
            Ok((a, reuse)) => (a.model, reuse, a.diagnostics, (a.device, a.toolchain), a.deps, None),
            Err(e) => (FileModel::default(), None, Vec::new(), Default::default(), Vec::new(), Some(e.to_string())),
        };
    drop(held);
    let diagnostics = super::compiled::apply(&inp.compiled, &model, &text, (&target.0, &target.1), &inp.options, statics);
    Computed {
        version: inp.version,
        config_gen: inp.config_gen,
        rope: inp.rope,
        text,
        tree: Mutex::new(Some(inp.tree)),
        tree_trusted: AtomicBool::new(inp.tree_trusted),
        model,
        reuse: Mutex::new(reuse),
        diagnostics,
        compiled: inp.compiled,
        target,
        lsp: OnceLock::new(),
        uri: inp.uri.clone(),
        encoding: inp.encoding,
        kb: inp.kb,
        options: inp.options,
        error,
        deps,
    }
}

impl Computed {
    /// The tree this result was built from (a cheap shared copy), unless [`Computed::slim`] dropped it.
    pub fn tree(&self) -> Option<Tree> {
        self.tree.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The tree, or a fresh parse of the text when the result is slim.
    pub fn tree_or_parse(&self) -> Tree {
        self.tree().unwrap_or_else(|| crate::syntax::parse(&self.text))
    }

    /// Let go of what only the next edit's incremental work needs (the tree and the reuse data):
    /// for a large document left idle, most of the server's memory. Diagnostics, model and text
    /// stay; the next version is parsed and analysed from scratch.
    pub fn slim(&self) {
        self.tree.lock().unwrap_or_else(|e| e.into_inner()).take();
        self.reuse.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    pub fn tree_trusted(&self) -> bool {
        self.tree_trusted.load(Ordering::SeqCst)
    }

    /// A fresh parse confirmed the tree.
    pub fn mark_trusted(&self) {
        self.tree_trusted.store(true, Ordering::SeqCst);
    }

    /// The diagnostics in LSP form, stamped with this version.
    pub fn lsp(&self) -> &[lsp::Diagnostic] {
        self.lsp.get_or_init(|| {
            self.diagnostics.iter().map(|d| convert::diagnostic(d, &self.uri, &self.rope, self.encoding, self.version)).collect()
        })
    }

    /// Names these diagnostics for pull clients (`previousResultId`): the version, the settings and
    /// compiled-facts generations and, when imports were followed, the files read, which change
    /// results too.
    pub fn result_id(&self) -> String {
        let id = format!("{}:{}:{}", self.version, self.config_gen, self.compiled.generation);
        if self.deps.is_empty() {
            return id;
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(&self.deps, &mut h);
        format!("{id}:{:x}", std::hash::Hasher::finish(&h))
    }

    /// The `publishDiagnostics` notification body for this result.
    pub fn publish_json(&self) -> String {
        super::wire::publish_diagnostics(&self.uri, &self.diagnostics, &self.text, self.encoding, self.version, true)
    }
}

/// `c` again from a fresh parse of its text, when its tree turns out not to be that parse; None
/// when it is (or when `cancelled` stops the parse). The result reuses nothing from `c`.
pub fn reverified(c: &Computed, place: Option<Place<'_>>, cancelled: &dyn Fn() -> bool) -> Option<Computed> {
    // A slim result was confirmed before it let its tree go.
    let tree = c.tree()?;
    let fresh = super::documents::parse_rope(&c.rope, None, cancelled)?;
    if crate::syntax::same_shape(&fresh, &tree) {
        return None;
    }
    Some(compute(Inputs {
        uri: &c.uri,
        version: c.version,
        config_gen: c.config_gen,
        rope: c.rope.clone(),
        tree: fresh,
        tree_trusted: true,
        encoding: c.encoding,
        kb: c.kb.clone(),
        options: c.options.clone(),
        prev: None,
        place,
        compiled: c.compiled.clone(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn computed(text: &str, tree: Tree) -> Computed {
        compute(Inputs {
            uri: &Url::parse("file:///k.py").unwrap(),
            version: 3,
            config_gen: 0,
            rope: Rope::from_str(text),
            tree,
            tree_trusted: false,
            encoding: Encoding::Utf16,
            kb: Arc::new(Knowledge::embedded().clone()),
            options: LintOptions::default(),
            prev: None,
            place: None,
            compiled: Default::default(),
        })
    }

    #[test]
    fn reverify_replaces_a_result_built_on_a_tree_that_is_not_the_fresh_parse() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules");
        let text = std::fs::read_to_string(dir.join("XF104_xpu37_fix.py")).unwrap();
        // The right tree: nothing to redo.
        let right = computed(&text, crate::syntax::parse(&text));
        assert!(reverified(&right, None, &|| false).is_none());
        // A tree of the text with a syntax error in it stands in for a diverging incremental parse.
        let broken = text.replacen("def ", "def (", 1);
        let wrong = computed(&text, crate::syntax::parse(&broken));
        let fixed = reverified(&wrong, None, &|| false).expect("the tree differs from a fresh parse");
        assert_eq!(fixed.version, 3);
        assert!(fixed.tree_trusted());
        let check = crate::analysis::analyze(&text, Knowledge::embedded(), &LintOptions::default()).unwrap();
        assert_eq!(fixed.diagnostics, check.diagnostics);
        assert_ne!(wrong.diagnostics, check.diagnostics, "the wrong tree must have mattered");
    }
}
