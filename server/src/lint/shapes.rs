//! XF108, XF110: tensor shapes that the front end or the Intel backend rejects, evaluated for
//! every binding set (each config × launch) so a single bad config is found.

use super::context::{Ctx, is_power_of_two, join};
use super::registry::{XF108, XF110};
use crate::knowledge::Severity;
use crate::lint::{Diagnostic, Related};
use crate::model::{BindingSet, Expr, TlOpKind, Value};

/// XF108: `tl.arange(start, end)` whose extent is not a (positive) power of two.
pub fn arange_power_of_two(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (ki, k) in ctx.kernels() {
        for op in &k.ops {
            let TlOpKind::Arange { start, end } = &op.kind else { continue };
            for set in ctx.binding_sets(ki) {
                let (Some(s), Some(e)) = (set.eval(start).as_int(), set.eval(end).as_int()) else { continue };
                let extent = e - s;
                if is_power_of_two(extent) {
                    continue;
                }
                let why = if extent <= 0 { "is empty (end must exceed start)" } else { "is not a power of two" };
                let bound = bound_names(set, &[start, end]);
                let mut d = ctx.diag(
                    XF108,
                    Severity::Error,
                    op.range,
                    Some(ki),
                    format!("tl.arange({s}, {e}) spans {extent} elements{}, which {why}: Triton requires \"arange's range must be a power of 2\"", bound.0),
                );
                d.related = bound.1;
                d.related.extend(ctx.set_related(ki, set, ""));
                out.push(d);
            }
        }
    }
}

/// " (BLOCK=48)" for the names of `exprs` the set binds, and where each was bound.
fn bound_names(set: &BindingSet, exprs: &[&Expr]) -> (String, Vec<Related>) {
    let mut names = Vec::new();
    for e in exprs {
        collect_names(e, &mut names);
    }
    names.sort();
    names.dedup();
    let mut shown = Vec::new();
    let mut related = Vec::new();
    for n in names {
        if let Some(b) = set.get(&n)
            && let Some(v) = b.value.as_int()
        {
            shown.push(format!("{n}={v}"));
            related.push(Related { range: b.range, message: format!("{n}={v} comes from here") });
        }
    }
    let text = if shown.is_empty() { String::new() } else { format!(" ({})", shown.join(", ")) };
    (text, related)
}

fn collect_names(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Name(n) => out.push(n.clone()),
        Expr::BinOp(_, a, b) => {
            collect_names(a, out);
            collect_names(b, out);
        }
        Expr::Neg(a) => collect_names(a, out),
        Expr::Call(_, args) => args.iter().for_each(|a| collect_names(a, out)),
        Expr::Const(_) | Expr::Unknown => {}
    }
}

/// XF110: `tl.dot` whose static M, N or K is below the Intel backend's `min_dot_size`:
/// M ≥ the toolchain's DPAS repeat count (8 on 3.3, 1 later), N ≥ the device's smallest
/// sub-group, K ≥ the toolchain's minimum for the operand width (fp16/bf16 16, 8-bit 32, fp32 8).
/// With an unknown operand dtype K is held to the smallest minimum of any width, so an unknown
/// dtype never causes a false report.
pub fn dot_min_shape(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    if !ctx.is_xpu() {
        return;
    }
    let tc = ctx.toolchain();
    let Some(sizes) = super::context::known(&ctx.device().sub_group_sizes) else { return };
    let Some(n_min) = ctx.device().dot_min_n().map(i64::from) else { return };
    let Some(k_floor) = tc.dot_min_k.iter().map(|(_, k)| i64::from(*k)).min() else { return };
    let m_min = i64::from(tc.dot_min_m);
    for (ki, k) in ctx.kernels() {
        for op in &k.ops {
            let TlOpKind::Dot { a_shape: Some(a), b_shape: Some(b), a_dtype, .. } = &op.kind else { continue };
            if a.len() < 2 || b.len() < 2 {
                continue;
            }
            let (m_e, k_e, n_e) = (&a[a.len() - 2], &a[a.len() - 1], &b[b.len() - 1]);
            let bits = a_dtype.as_deref().and_then(super::context::dtype_bytes).map(|b| (b * 8) as u32);
            let k_min = match bits {
                Some(bits) => match tc.dot_min_k(bits) {
                    Some(k) => i64::from(k),
                    None => continue, // a width the backend has no DPAS shape for (fp64): not this rule
                },
                None => k_floor,
            };
            for set in ctx.binding_sets(ki) {
                let dims = [("M", set.eval(m_e), m_min), ("N", set.eval(n_e), n_min), ("K", set.eval(k_e), k_min)];
                let low: Vec<String> = dims
                    .iter()
                    .filter_map(|(name, v, min)| match v {
                        Value::Int(x) if x < min => Some(format!("{name}={x} < {min}")),
                        _ => None,
                    })
                    .collect();
                if low.is_empty() {
                    continue;
                }
                let bound = bound_names(set, &[m_e, n_e, k_e]);
                let dtype = a_dtype.as_deref().map(|d| format!(" for {d} operands")).unwrap_or_default();
                let mut d = ctx.diag(
                    XF110,
                    sizes.severity(Severity::Error),
                    op.range,
                    Some(ki),
                    format!(
                        "tl.dot shape below the minimum of {}{dtype}: {}{} (the backend asserts \
                         \"Input shapes should have M >= {m_min}, N >= {n_min} and K >= {k_min}\"){}",
                        ctx.target_label(),
                        join(&low),
                        bound.0,
                        sizes.caveat()
                    ),
                );
                d.related = bound.1;
                d.related.extend(ctx.set_related(ki, set, ""));
                out.push(d);
            }
        }
    }
}
