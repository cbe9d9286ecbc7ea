//! The one entry point from text to findings: parse → model → lint.
//! Used by `xeforge check`, the language server and the stage guard alike, so all three agree.

use crate::knowledge::{Knowledge, Target, TargetKind, UnknownTarget};
use crate::lint::{self, Diagnostic, LintOptions};
use crate::model::FileModel;
use tree_sitter::Tree;

/// What one analysis hands the next of an edited version of the same text: the model's reusable
/// parts and the rules' findings per kernel.
#[derive(Debug)]
pub struct Reuse {
    pub model: crate::model::Reuse,
    pub lint: Option<lint::Memo>,
}

impl Reuse {
    /// Kernels whose findings were carried over from the previous analysis.
    pub fn findings_reused(&self) -> usize {
        self.lint.as_ref().map_or(0, |m| m.reused)
    }
}

/// Everything known about one text for one target.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub model: FileModel,
    pub diagnostics: Vec<Diagnostic>,
    /// The resolved target ids (defaults filled in).
    pub device: String,
    pub toolchain: String,
}

/// The options name a target the knowledge base does not have. Callers report it as a usage error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    #[error("unknown device `{id}`{}; known devices: {}", did_you_mean(.suggestion), .known.join(", "))]
    UnknownDevice { id: String, suggestion: Option<String>, known: Vec<String> },
    #[error("unknown toolchain `{id}`{}; known toolchains: {}", did_you_mean(.suggestion), .known.join(", "))]
    UnknownToolchain { id: String, suggestion: Option<String>, known: Vec<String> },
}

fn did_you_mean(s: &Option<String>) -> String {
    s.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default()
}

/// Parse, build the model and run the rules.
pub fn analyze(text: &str, kb: &Knowledge, opts: &LintOptions) -> Result<Analysis, AnalysisError> {
    let target = resolve_target(kb, opts)?;
    if !looks_like_triton(text) {
        return Ok(empty(target));
    }
    let tree = crate::syntax::parse(text);
    Ok(run(text, &tree, target, kb, opts))
}

/// Same as [`analyze`] over a tree the caller keeps (the language server parses incrementally).
pub fn analyze_with_tree(text: &str, tree: &Tree, kb: &Knowledge, opts: &LintOptions) -> Result<Analysis, AnalysisError> {
    analyze_reusing(text, tree, None, kb, opts).map(|(a, _)| a)
}

/// Same as [`analyze_with_tree`], reusing what is unchanged since `prev` (what this function
/// returned for `prev_text`: statements' syntax, the kernels they define), and returning this
/// version's for the next call. The result is the same as without `prev`; only faster after small edits.
pub fn analyze_reusing(
    text: &str,
    tree: &Tree,
    prev: Option<(&Reuse, &str)>,
    kb: &Knowledge,
    opts: &LintOptions,
) -> Result<(Analysis, Option<Reuse>), AnalysisError> {
    let target = resolve_target(kb, opts)?;
    if !looks_like_triton(text) {
        return Ok((empty(target), None));
    }
    let (model, reuse) = crate::model::build_reusing(text, tree, prev.map(|(r, t)| (&r.model, t)));
    let Some(reuse) = reuse else {
        return Ok((lint_model(text, model, target, kb, opts), None));
    };
    let moved_from = |k: &std::sync::Arc<crate::model::Kernel>| reuse.moved_from(k).cloned();
    let reusing = lint::Reusing {
        prev: prev.and_then(|(r, t)| Some(lint::Previous { memo: r.lint.as_ref()?, text: t })),
        tops: reuse.flat.top_ranges(),
        moved_from: &moved_from,
    };
    let (diagnostics, memo) = lint::check_reusing(&model, text, target, kb, opts, Some(reusing));
    let analysis = Analysis { model, diagnostics, device: target.device.id.clone(), toolchain: target.toolchain.id.clone() };
    Ok((analysis, Some(Reuse { model: reuse, lint: memo })))
}

fn run(text: &str, tree: &Tree, target: Target, kb: &Knowledge, opts: &LintOptions) -> Analysis {
    lint_model(text, crate::model::build(text, tree), target, kb, opts)
}

fn lint_model(text: &str, model: FileModel, target: Target, kb: &Knowledge, opts: &LintOptions) -> Analysis {
    let diagnostics = lint::check(&model, text, target, kb, opts);
    Analysis { model, diagnostics, device: target.device.id.clone(), toolchain: target.toolchain.id.clone() }
}

fn empty(target: Target) -> Analysis {
    Analysis {
        model: FileModel::default(),
        diagnostics: Vec::new(),
        device: target.device.id.clone(),
        toolchain: target.toolchain.id.clone(),
    }
}

/// A file that cannot hold a kernel has no findings; it is skipped unparsed.
fn looks_like_triton(text: &str) -> bool {
    crate::model::may_have_kernels(text)
}

/// The device and toolchain the options name, or the knowledge base defaults.
pub fn resolve_target<'k>(kb: &'k Knowledge, opts: &LintOptions) -> Result<Target<'k>, AnalysisError> {
    Target::resolve(kb, opts.device.trim(), opts.toolchain.trim()).map_err(|e| {
        let UnknownTarget { kind, given, suggestion, known } = e;
        match kind {
            TargetKind::Device => AnalysisError::UnknownDevice { id: given, suggestion, known },
            TargetKind::Toolchain => AnalysisError::UnknownToolchain { id: given, suggestion, known },
        }
    })
}
