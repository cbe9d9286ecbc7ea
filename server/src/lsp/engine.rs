//! The bridge from a document snapshot to the checker's results, converted once to LSP form.
//! The only place the server calls the analyser, so `xeforge check` and the editor agree.

use ropey::Rope;
use std::sync::{Arc, OnceLock};
use tower_lsp::lsp_types::{self as lsp, Url};
use tree_sitter::Tree;

use super::convert;
use super::encoding::Encoding;
use crate::knowledge::Knowledge;
use crate::lint::{Diagnostic, LintOptions};
use crate::model::{FileModel, Reuse};

/// One version of a document, analysed. Everything a handler needs, immutable and shareable.
#[derive(Debug)]
pub struct Computed {
    pub version: i32,
    /// Bumped by configuration changes; a result from an older generation is re-linted.
    pub config_gen: u64,
    pub rope: Rope,
    pub text: String,
    pub tree: Tree,
    pub model: FileModel,
    /// What the next version's build reuses (the flat copy of `tree`, the kernels).
    pub reuse: Option<Reuse>,
    pub diagnostics: Vec<Diagnostic>,
    /// `diagnostics` in LSP form, converted on first use (publishing writes JSON directly).
    lsp: OnceLock<Vec<lsp::Diagnostic>>,
    pub uri: Url,
    pub encoding: Encoding,
    pub kb: Arc<Knowledge>,
    pub options: LintOptions,
    /// Why there are no diagnostics when the analysis could not run (unknown device, ...).
    pub error: Option<String>,
}

pub struct Inputs<'a> {
    pub uri: &'a Url,
    pub version: i32,
    pub config_gen: u64,
    pub rope: Rope,
    pub tree: Tree,
    pub encoding: Encoding,
    pub kb: Arc<Knowledge>,
    pub options: LintOptions,
    /// The previous result of this document, if any: its unchanged statements are reused.
    pub prev: Option<Arc<Computed>>,
}

pub fn compute(inp: Inputs<'_>) -> Computed {
    let text = inp.rope.to_string();
    let prev = inp.prev.as_deref().and_then(|p| Some((p.reuse.as_ref()?, p.text.as_str())));
    let (model, reuse, diagnostics, error) =
        match crate::analysis::analyze_reusing(&text, &inp.tree, prev, &inp.kb, &inp.options) {
            Ok((a, reuse)) => (a.model, reuse, a.diagnostics, None),
            Err(e) => (FileModel::default(), None, Vec::new(), Some(e.to_string())),
        };
    Computed {
        version: inp.version,
        config_gen: inp.config_gen,
        rope: inp.rope,
        text,
        tree: inp.tree,
        model,
        reuse,
        diagnostics,
        lsp: OnceLock::new(),
        uri: inp.uri.clone(),
        encoding: inp.encoding,
        kb: inp.kb,
        options: inp.options,
        error,
    }
}

impl Computed {
    /// The diagnostics in LSP form, stamped with this version.
    pub fn lsp(&self) -> &[lsp::Diagnostic] {
        self.lsp.get_or_init(|| {
            self.diagnostics
                .iter()
                .map(|d| convert::diagnostic(d, &self.uri, &self.rope, self.encoding, self.version))
                .collect()
        })
    }

    /// The `publishDiagnostics` notification body for this result.
    pub fn publish_json(&self) -> String {
        super::wire::publish_diagnostics(&self.uri, &self.diagnostics, &self.text, self.encoding, self.version, true)
    }
}
