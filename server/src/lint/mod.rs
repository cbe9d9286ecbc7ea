//! The rule engine: model × target → diagnostics.
//!
//! `check` runs every enabled rule of the registry (one module per rule family), then makes the
//! result deterministic: sorted by range then code, the same finding reached through several
//! binding sets merged into one (the other configs/launches become related locations), and
//! suppression comments applied.

mod api;
pub mod compiled;
mod context;
mod diagnostic;
mod dtypes;
pub mod edits;
mod memo;
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
pub use memo::{Memo, Previous};
pub use registry::{RULES, Rule, RuleId, Scope, rule};
pub use select::{Selection, unknown_selectors};

use crate::knowledge::{Knowledge, Target};
use crate::model::{FileModel, Kernel, Launch};
use crate::text::TextRange;
use context::Ctx;
use std::sync::Arc;

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
    check_reusing(model, text, target, kb, opts, None).0
}

/// What a check may reuse: the previous check's memo and text, this text's top-level statement
/// ranges, and which kernels of this model are earlier ones moved (see `model::Reuse::moved_from`).
pub struct Reusing<'p> {
    pub prev: Option<Previous<'p>>,
    pub tops: Vec<TextRange>,
    pub moved_from: &'p dyn Fn(&Arc<Kernel>) -> Option<Arc<Kernel>>,
}

/// [`check`], carrying over the findings of kernels an edit did not touch when `reusing` is
/// given, and then also returning the memo for the next check. The result is the same as
/// [`check`]'s.
pub fn check_reusing(
    model: &FileModel,
    text: &str,
    target: Target,
    kb: &Knowledge,
    opts: &LintOptions,
    reusing: Option<Reusing>,
) -> (Vec<Diagnostic>, Option<Memo>) {
    if !model.is_triton() {
        return (Vec::new(), None);
    }
    let selection = Selection::new(&opts.select, &opts.ignore);
    let enabled: Vec<&Rule> = RULES.iter().filter(|r| selection.is_enabled(r.id)).collect();
    let ctx = Ctx::new(model, text, target, kb);
    // What carries over from the previous check (and how to tell moved kernels), and the memo for the next.
    let (carry, mut memo) = match reusing {
        Some(Reusing { prev, tops, moved_from }) => {
            let carry = prev.as_ref().and_then(|p| memo::Carry::new(p, model, text, &tops, target, kb, opts));
            (carry.map(|c| (c, moved_from)), Some(memo::MemoBuilder::new(model, tops, target, kb, opts)))
        }
        None => (None, None),
    };
    let mut out = Vec::new();
    for ki in 0..model.kernels.len() {
        let launches: Vec<&Launch> = match memo {
            Some(_) => ctx.launches_of(ki).map(|(_, l)| l).collect(),
            None => Vec::new(),
        };
        if let (Some((carry, moved_from)), Some(memo)) = (&carry, memo.as_mut())
            && let Some(c) = carry.findings(model, ki, &launches, *moved_from)
        {
            out.extend(c.diagnostics.iter().cloned());
            memo.carried(model, ki, &launches, c);
            continue;
        }
        ctx.set_scope(Some(ki));
        let mut found = Vec::new();
        for rule in enabled.iter().filter(|r| r.scope == Scope::Kernel) {
            (rule.check)(&ctx, &mut found);
        }
        match memo.as_mut() {
            Some(memo) => {
                out.extend(found.iter().cloned());
                memo.checked(model, ki, &launches, found);
            }
            None => out.append(&mut found),
        }
    }
    ctx.set_scope(None);
    for rule in enabled.iter().filter(|r| r.scope == Scope::File) {
        (rule.check)(&ctx, &mut out);
    }
    if !model.suppressions.is_empty() {
        let sup = suppress::Suppressions::new(model, ctx.lines());
        if !sup.is_empty() {
            out.retain(|d| !sup.suppresses(d, ctx.lines()));
        }
    }
    (finalize(out), memo.map(memo::MemoBuilder::finish))
}

/// Every enabled rule over the whole model at once, kernel-scoped rules included: what [`check`]
/// finds if no kernel-scoped rule reads outside its kernel (the rule author's obligation, see
/// [`Scope::Kernel`]). For the tests and `XF_SCOPE_FILES` in `tests/bench/edit_pipeline.rs`, which
/// compare the two over the fixtures and over the corpus.
pub fn check_all_at_once(model: &FileModel, text: &str, target: Target, kb: &Knowledge, opts: &LintOptions) -> Vec<Diagnostic> {
    if !model.is_triton() {
        return Vec::new();
    }
    let selection = Selection::new(&opts.select, &opts.ignore);
    let ctx = Ctx::new(model, text, target, kb);
    let mut out = Vec::new();
    for rule in RULES.iter().filter(|r| selection.is_enabled(r.id)) {
        (rule.check)(&ctx, &mut out);
    }
    let sup = suppress::Suppressions::new(model, ctx.lines());
    out.retain(|d| !sup.suppresses(d, ctx.lines()));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis;

    /// Fixture files with the target their header names (`# xeforge-test: device=... toolchain=...`).
    pub(crate) fn fixtures() -> Vec<(std::path::PathBuf, String, LintOptions)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut out = Vec::new();
        for dir in ["rules", "model"] {
            let mut paths: Vec<_> = std::fs::read_dir(root.join(dir)).unwrap().flatten().map(|e| e.path()).collect();
            paths.sort();
            for p in paths.into_iter().filter(|p| p.extension().is_some_and(|x| x == "py")) {
                let Ok(text) = std::fs::read_to_string(&p) else { continue };
                let mut opts = LintOptions::default();
                if let Some(header) = text.lines().next().and_then(|l| l.strip_prefix("# xeforge-test:")) {
                    for kv in header.split_whitespace() {
                        match kv.split_once('=') {
                            Some(("device", v)) => opts.device = v.into(),
                            Some(("toolchain", v)) => opts.toolchain = v.into(),
                            _ => {}
                        }
                    }
                }
                out.push((p, text, opts));
            }
        }
        out
    }

    /// Kernel-scoped rules checked one kernel at a time find what they find over all kernels at
    /// once: none of them looks at another kernel.
    #[test]
    fn kernel_scoped_rules_see_only_their_kernel() {
        let kb = Knowledge::embedded();
        let mut compared = 0;
        for (path, text, opts) in fixtures() {
            let a = analysis::analyze(&text, kb, &opts).unwrap();
            let target = analysis::resolve_target(kb, &opts).unwrap();
            assert_eq!(a.diagnostics, check_all_at_once(&a.model, &text, target, kb, &opts), "{}", path.display());
            compared += a.diagnostics.len();
        }
        assert!(compared > 100, "only {compared} findings compared");
    }

    /// Every fixture, edited at spread positions (typing, breaking, lines above, digits that
    /// constants, configs and launches hold, removals), each version analysed reusing the previous
    /// one: the findings equal a fresh check of the same text, and most kernels' carry over.
    #[test]
    fn carried_findings_equal_a_fresh_check_after_every_edit() {
        let kb = Knowledge::embedded();
        let (mut carried, mut checked) = (0, 0);
        for (path, mut text, opts) in fixtures() {
            let (_, mut prev) = analysis::analyze_reusing(&text, &crate::syntax::parse(&text), None, None, kb, &opts).unwrap();
            for i in 0..14 {
                let cut = text.len() * (i * 5 % 14 + 1) / 15;
                let Some(cut) = (cut..text.len()).find(|c| text.is_char_boundary(*c)) else { continue };
                let mut next = text.clone();
                match i % 7 {
                    0 => next.insert(cut, 'x'),
                    1 => next.insert(cut, '('),
                    2 => next.insert_str(text[..cut].rfind('\n').map_or(0, |n| n + 1), "\n\n"),
                    3 | 6 => {
                        // What the kernel's own statement does not show: a launch gets
                        // `num_warps=3` (3), a module constant becomes 3 (6); else a digit changes.
                        let m = &analysis::analyze(&text, kb, &opts).unwrap().model;
                        let launch = m.launches.get((i / 7) % m.launches.len().max(1)).filter(|_| i % 7 == 3);
                        let constant = m.constants.get((i / 7) % m.constants.len().max(1)).filter(|_| i % 7 == 6);
                        if let Some(l) = launch {
                            next.insert_str(l.range.end - 1, ", num_warps=3");
                        } else if let Some(c) = constant {
                            next.replace_range(c.range.start..c.range.end, "3");
                        } else if let Some(d) = text[cut..].find(|c: char| c.is_ascii_digit()) {
                            let at = cut + d;
                            let v = if &text[at..at + 1] == "1" { "3" } else { "1" };
                            next.replace_range(at..at + 1, v);
                        }
                    }
                    4 => {
                        // A whole line goes (a launch keyword, a config, a constant...).
                        let start = text[..cut].rfind('\n').map_or(0, |n| n + 1);
                        let end = text[cut..].find('\n').map_or(text.len(), |n| cut + n + 1);
                        next.replace_range(start..end, "");
                    }
                    _ => next = next.replacen("(", "", usize::from(i == 5)),
                }
                let tree = crate::syntax::parse(&next);
                let (a, r) = analysis::analyze_reusing(&next, &tree, prev.as_ref().map(|p| (p, text.as_str())), None, kb, &opts).unwrap();
                let fresh = analysis::analyze(&next, kb, &opts).unwrap();
                assert_eq!(a.diagnostics, fresh.diagnostics, "{} after edit {i} at {cut}", path.display());
                carried += r.as_ref().map_or(0, |r| r.findings_reused());
                checked += a.model.kernels.len();
                prev = r;
                text = next;
            }
        }
        // Most fixtures hold one or two kernels, and most edits here change what they read.
        assert!(carried * 10 > checked, "only {carried} of {checked} kernels' findings carried over");
    }

    fn module(kernels: usize, block: &str) -> String {
        let mut s = format!("import triton\nimport triton.language as tl\n\nBLOCK = {block}\n");
        for i in 0..kernels {
            s.push_str(&format!(
                "\n\n@triton.jit\ndef k{i}(x_ptr, n):\n    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, offs)\n\n\n\
                 def run{i}(x, n):\n    k{i}[(1,)](x, n, num_warps=3)\n"
            ));
        }
        s
    }

    fn reanalyse(prev: &(String, Option<analysis::Reuse>), text: &str) -> (Vec<Diagnostic>, Option<analysis::Reuse>) {
        let kb = Knowledge::embedded();
        let (a, r) = analysis::analyze_reusing(
            text,
            &crate::syntax::parse(text),
            prev.1.as_ref().map(|r| (r, prev.0.as_str())),
            None,
            kb,
            &LintOptions::default(),
        )
        .unwrap();
        assert_eq!(a.diagnostics, analysis::analyze(text, kb, &LintOptions::default()).unwrap().diagnostics);
        (a.diagnostics, r)
    }

    /// Typing in one of twenty kernels re-checks only that one; the others' findings move along.
    #[test]
    fn an_edit_in_one_kernel_rechecks_only_that_kernel() {
        let text = module(20, "64");
        let first = reanalyse(&(String::new(), None), &text);
        assert_eq!(first.1.as_ref().unwrap().findings_reused(), 0);
        let typed = text.replacen("offs)\n\n\ndef run3", "offs)  # x\n\n\ndef run3", 1);
        assert_ne!(typed, text);
        let (diags, r) = reanalyse(&(text, first.1), &typed);
        assert_eq!(r.unwrap().findings_reused(), 19);
        assert_eq!(diags.iter().filter(|d| d.code == "XF101").count(), 20);
    }

    /// A module constant that rules read through the binding sets (not the kernel's build)
    /// changes: nothing is carried over, and the new value's finding appears.
    #[test]
    fn a_changed_module_constant_rechecks_every_kernel() {
        let text = module(3, "64");
        let first = reanalyse(&(String::new(), None), &text);
        let changed = module(3, "48");
        let (diags, r) = reanalyse(&(text, first.1), &changed);
        assert_eq!(r.unwrap().findings_reused(), 0);
        assert_eq!(diags.iter().filter(|d| d.code == "XF108").count(), 3, "{diags:#?}");
    }
}
