//! XF405: a Triton API call the target toolchain's Triton lacks, has removed or deprecates, read
//! from `knowledge/api` (the names each release exports and their keyword parameters).

use super::context::Ctx;
use super::edits::{fix, rename_token};
use super::registry::XF405;
use crate::knowledge::{ApiStatus, Severity};
use crate::lint::{Applicability, Diagnostic};
use crate::model::TlOpKind;

pub fn api_availability(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let tc = ctx.toolchain();
    let api = &ctx.kb.api;
    let Some(release) = api.release_for(&tc.id) else { return };
    let on = format!("{} (Triton {})", tc.id, release.version);
    for (ki, k) in ctx.kernels() {
        for op in &k.api_calls {
            let TlOpKind::Call { keywords } = &op.kind else { continue };
            let Some((_, name, sym)) = api.lookup(&op.callee) else { continue };
            let instead = sym.replacement.as_deref().map(|r| format!("; use {}{r}", op.callee.trim_end_matches(name)));
            let (severity, what) = match api.status(sym, &tc.id) {
                // Another rule owns this name's availability (its message knows more).
                _ if sym.rule.is_some() => continue,
                ApiStatus::Absent => (Severity::Error, format!("{} does not exist on {on} (AttributeError)", op.callee)),
                ApiStatus::Removed => (Severity::Error, format!("{} is removed on {on}: calling it fails", op.callee)),
                ApiStatus::Deprecated => (Severity::Warning, format!("{} is deprecated on {on}", op.callee)),
                ApiStatus::Unknown => continue,
                ApiStatus::Present => {
                    unknown_keywords(ctx, ki, op, keywords, sym, &on, out);
                    continue;
                }
            };
            let note = sym.note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
            let message = format!("{what}{}{note}", instead.unwrap_or_default());
            let mut d = ctx.diag(XF405, severity, op.callee_range, Some(ki), message);
            if let (Some(r), Some(f)) = (&sym.replacement, &sym.fix) {
                let applicability = if f == "safe" { Applicability::Safe } else { Applicability::Unsafe };
                d.fix = rename_token(ctx.text, op.callee_range, name, r).map(|e| fix(applicability, format!("use {r}"), vec![e]));
            }
            out.push(d);
        }
    }
}

/// Keywords the call passes that another release's signature has and this one's does not
/// (`tl.load(..., boundary_check=...)` after block pointers went): a TypeError at compile time.
/// A keyword no release knows is left alone: the data cannot tell it from a wrapper's `**kwargs`.
fn unknown_keywords(
    ctx: &Ctx,
    ki: usize,
    op: &crate::model::TlOp,
    keywords: &[(String, crate::text::TextRange)],
    sym: &crate::knowledge::ApiSymbol,
    on: &str,
    out: &mut Vec<Diagnostic>,
) {
    let here = ctx.kb.api.params_on(sym, &ctx.toolchain().id);
    if here.iter().any(|p| p.kind == "kwargs") {
        return;
    }
    for (kw, range) in keywords {
        let elsewhere = sym.params.iter().any(|p| &p.name == kw);
        if elsewhere && !here.iter().any(|p| &p.name == kw) {
            let message = format!("{} takes no keyword `{kw}` on {on} (TypeError); other releases have it", op.callee);
            out.push(ctx.diag(XF405, Severity::Error, *range, Some(ki), message));
        }
    }
}
