//! The rule engine: model × target → diagnostics.
//!
//! `check` runs every enabled rule of the registry (one module per rule family), then makes the
//! result deterministic: sorted by range then code, the same finding reached through several
//! binding sets merged into one (the other configs/launches become related locations), and
//! suppression comments applied.

mod context;
mod diagnostic;
mod dtypes;
pub mod edits;
mod memory;
mod options;
pub mod registry;
mod resources;
mod security;
pub mod select;
mod shapes;
mod suppress;
mod tuning;
mod warps;

pub use diagnostic::*;
pub use registry::{RULES, Rule, RuleId, rule};
pub use select::{Selection, unknown_selectors};

use crate::knowledge::{Knowledge, Target};
use crate::model::FileModel;
use context::Ctx;

/// What to check for, after config files, CLI flags and editor settings were merged.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LintOptions {
    /// Device id ("arc-pro-b70"); empty = the knowledge base default.
    pub device: String,
    /// Toolchain id ("xpu-3.7"); empty = the knowledge base default.
    pub toolchain: String,
    /// Rule codes or prefixes to enable ("XF1", "XF203"); empty = all.
    pub select: Vec<String>,
    /// Rule codes or prefixes to disable.
    pub ignore: Vec<String>,
}

/// Every enabled rule over one file's model, for one target.
pub fn check(model: &FileModel, text: &str, target: Target, kb: &Knowledge, opts: &LintOptions) -> Vec<Diagnostic> {
    if !model.is_triton() {
        return Vec::new();
    }
    let selection = Selection::new(&opts.select, &opts.ignore);
    let ctx = Ctx::new(model, text, target, kb);
    let mut out = Vec::new();
    for rule in RULES.iter().filter(|r| selection.is_enabled(r.id)) {
        (rule.check)(&ctx, &mut out);
    }
    let sup = suppress::Suppressions::new(model, &ctx.lines);
    if !sup.is_empty() {
        out.retain(|d| !sup.suppresses(d, &ctx.lines));
    }
    finalize(out)
}

/// Sort by (start, end, code) and merge duplicates: same code, same range and same kernel means
/// the same literal reached through another binding set. The first one (in source order of its
/// related locations) keeps its message; the others' related locations are added to it.
fn finalize(mut diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diags.sort_by(|a, b| {
        (a.range.start, a.range.end, a.code, &a.kernel)
            .cmp(&(b.range.start, b.range.end, b.code, &b.kernel))
            .then_with(|| first_related(a).cmp(&first_related(b)))
            .then_with(|| a.message.cmp(&b.message))
    });
    let mut out: Vec<Diagnostic> = Vec::with_capacity(diags.len());
    for d in diags {
        if let Some(last) = out.last_mut()
            && last.range == d.range
            && last.code == d.code
            && last.kernel == d.kernel
        {
            for r in d.related {
                if !last.related.iter().any(|x| x.range == r.range) {
                    last.related.push(r);
                }
            }
            // The strongest severity among the merged binding sets is the honest one.
            last.severity = last.severity.max(d.severity);
            continue;
        }
        out.push(d);
    }
    for d in &mut out {
        d.related.sort_by_key(|r| (r.range.start, r.range.end));
    }
    out
}

fn first_related(d: &Diagnostic) -> (usize, usize) {
    d.related.iter().map(|r| (r.range.start, r.range.end)).min().unwrap_or((usize::MAX, usize::MAX))
}
