//! The one entry point from text to findings: parse → model → (imports followed) → lint.
//! Used by `xeforge check`, the language server and the stage guard alike, so all three agree.
//! Given the text's [`Place`] (`check` and the language server), `tl.dot` is seen through
//! `@triton.jit` helpers imported from other files of the package (`package`); without one (the
//! stage guard, a text with no file) the text is read alone.

use crate::knowledge::{Knowledge, Target, TargetKind, UnknownTarget};
use crate::lint::{self, Diagnostic, LintOptions};
use crate::model::FileModel;
use crate::package::{self, Deps, Files, Modules};
use std::path::Path;
use tree_sitter::Tree;

/// Where a text lives: the file it is the content of, where other files are read from, and the
/// models of those already built.
#[derive(Clone, Copy)]
pub struct Place<'a> {
    pub path: &'a Path,
    pub files: &'a dyn Files,
    pub modules: &'a Modules,
}

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
    /// The other files the model read through imports, with their stamps then.
    pub deps: Deps,
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

/// Same as [`analyze`] for the content of a file: helpers imported from other files count.
/// The model comes from `place.modules` when that file was built from the same text already.
pub fn analyze_at(text: &str, place: Place<'_>, kb: &Knowledge, opts: &LintOptions) -> Result<Analysis, AnalysisError> {
    let target = resolve_target(kb, opts)?;
    if !looks_like_triton(text) {
        return Ok(empty(target));
    }
    let mut model = place.modules.model_of_text(place.files, place.path, text);
    let deps = {
        let _t = crate::timings::span(crate::timings::Phase::Imports);
        package::see_through_imports(place.modules, place.files, place.path, &mut model)
    };
    let mut analysis = lint_model(text, model, target, kb, opts);
    analysis.deps = deps;
    Ok(analysis)
}

/// [`analyze_at`] for one file read from disk, outside a `check` run (`verify`, `optimize`), so
/// that they see what `check` sees.
pub fn analyze_file(path: &Path, text: &str, kb: &Knowledge, opts: &LintOptions) -> Result<Analysis, AnalysisError> {
    let modules = Modules::new();
    analyze_at(text, Place { path, files: &package::Disk, modules: &modules }, kb, opts)
}

/// Same as [`analyze`] over a tree the caller keeps (the language server parses incrementally).
pub fn analyze_with_tree(text: &str, tree: &Tree, kb: &Knowledge, opts: &LintOptions) -> Result<Analysis, AnalysisError> {
    analyze_reusing(text, tree, None, None, kb, opts).map(|(a, _)| a)
}

/// Same as [`analyze_with_tree`], reusing what is unchanged since `prev` (what this function
/// returned for `prev_text`: statements' syntax, the kernels they define), and returning this
/// version's for the next call. The result is the same as without `prev`; only faster after small edits.
/// With a `place`, imported helpers count as in [`analyze_at`].
pub fn analyze_reusing(
    text: &str,
    tree: &Tree,
    prev: Option<(&Reuse, &str)>,
    place: Option<Place<'_>>,
    kb: &Knowledge,
    opts: &LintOptions,
) -> Result<(Analysis, Option<Reuse>), AnalysisError> {
    let target = resolve_target(kb, opts)?;
    if !looks_like_triton(text) {
        return Ok((empty(target), None));
    }
    let (mut model, reuse) = crate::model::build_reusing(text, tree, prev.map(|(r, t)| (&r.model, t)));
    // After the build, so a reused kernel is judged by today's helpers; a kernel this changes is a
    // new `Arc`, so the lint memo cannot carry its earlier findings over.
    let deps = place.map(|p| package::see_through_imports(p.modules, p.files, p.path, &mut model)).unwrap_or_default();
    let Some(reuse) = reuse else {
        let mut analysis = lint_model(text, model, target, kb, opts);
        analysis.deps = deps;
        return Ok((analysis, None));
    };
    let moved_from = |k: &std::sync::Arc<crate::model::Kernel>| reuse.moved_from(k).cloned();
    let reusing = lint::Reusing {
        prev: prev.and_then(|(r, t)| Some(lint::Previous { memo: r.lint.as_ref()?, text: t })),
        tops: reuse.flat.top_ranges(),
        moved_from: &moved_from,
    };
    let (diagnostics, memo) = lint::check_reusing(&model, text, target, kb, opts, Some(reusing));
    let analysis = Analysis { model, diagnostics, device: target.device.id.clone(), toolchain: target.toolchain.id.clone(), deps };
    Ok((analysis, Some(Reuse { model: reuse, lint: memo })))
}

fn run(text: &str, tree: &Tree, target: Target, kb: &Knowledge, opts: &LintOptions) -> Analysis {
    lint_model(text, crate::model::build(text, tree), target, kb, opts)
}

fn lint_model(text: &str, model: FileModel, target: Target, kb: &Knowledge, opts: &LintOptions) -> Analysis {
    let diagnostics = {
        let _t = crate::timings::span(crate::timings::Phase::Lint);
        lint::check(&model, text, target, kb, opts)
    };
    Analysis { model, diagnostics, device: target.device.id.clone(), toolchain: target.toolchain.id.clone(), deps: Vec::new() }
}

fn empty(target: Target) -> Analysis {
    Analysis {
        model: FileModel::default(),
        diagnostics: Vec::new(),
        device: target.device.id.clone(),
        toolchain: target.toolchain.id.clone(),
        deps: Vec::new(),
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
