//! XF401–XF404: the block-memory APIs that moved between toolchains, and `tl.dot` accumulation.

use super::context::Ctx;
use super::edits::{fix, is_keyword_arg, rename_token, slice, split_args};
use super::registry::{XF401, XF402, XF403, XF404};
use crate::knowledge::{Availability, Severity};
use crate::lint::{Applicability, Diagnostic, Edit, Fix};
use crate::model::{TlOp, TlOpKind, Value};
use crate::text::TextRange;

/// XF401: `tl.make_block_ptr` / `tl.advance` where block pointers are removed (E) or deprecated (I).
pub fn block_pointer_removed(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let tc = ctx.toolchain();
    let severity = match tc.block_pointers {
        Availability::Removed | Availability::Absent => Severity::Error,
        Availability::Deprecated => Severity::Info,
        Availability::Supported | Availability::Experimental => return,
    };
    for (ki, k) in ctx.kernels() {
        for op in k.ops.iter().filter(|o| matches!(o.kind, TlOpKind::MakeBlockPtr | TlOpKind::Advance)) {
            let message = if severity == Severity::Error {
                format!(
                    "{} is removed on {}: it raises NotImplementedError(\"Block pointers have been removed in favor of the \
                     tensor descriptor API\"); use tl.make_tensor_descriptor",
                    op.callee, tc.id
                )
            } else {
                format!(
                    "{} is deprecated on {} and removed from the backend's main branch; migrate to tl.make_tensor_descriptor",
                    op.callee, tc.id
                )
            };
            out.push(ctx.diag(XF401, severity, op.callee_range, Some(ki), message));
        }
    }
}

/// XF402: `tl.make_tensor_descriptor` on a toolchain that only has the experimental spelling.
pub fn tensor_descriptor_unavailable(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let tc = ctx.toolchain();
    if !matches!(tc.tensor_descriptors, Availability::Experimental | Availability::Absent | Availability::Removed) {
        return;
    }
    for (ki, k) in ctx.kernels() {
        for op in &k.ops {
            let TlOpKind::MakeTensorDescriptor { experimental } = op.kind else { continue };
            if experimental && tc.tensor_descriptors == Availability::Experimental {
                continue;
            }
            let mut d = ctx.diag(
                XF402,
                Severity::Error,
                op.callee_range,
                Some(ki),
                if tc.tensor_descriptors == Availability::Experimental {
                    format!(
                        "{} does not exist on {} (AttributeError): only tl._experimental_make_tensor_descriptor is available there",
                        op.callee, tc.id
                    )
                } else {
                    format!("tensor descriptors are not available on {}", tc.id)
                },
            );
            if tc.tensor_descriptors == Availability::Experimental && !experimental {
                d.fix = rename_token(ctx.text, op.callee_range, "make_tensor_descriptor", "_experimental_make_tensor_descriptor")
                    .map(|e| fix(Applicability::Safe, "use tl._experimental_make_tensor_descriptor", vec![e]));
            }
            out.push(d);
        }
    }
}

/// XF403: `boundary_check=(True, ...)`: Triton reads the entries as dimension indices, so `True`
/// means dimension 1 and `False` dimension 0. The fix lists the dimensions marked `True`.
pub fn boundary_check_bools(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (ki, k) in ctx.kernels() {
        for op in &k.ops {
            let TlOpKind::BoundaryCheck { value } = &op.kind else { continue };
            let (items, is_list) = match &value.value {
                Value::Tuple(v) => (v, false),
                Value::List(v) => (v, true),
                Value::Bool(_) => {
                    out.push(ctx.diag(
                        XF403,
                        Severity::Error,
                        value.range,
                        Some(ki),
                        "boundary_check takes a tuple of dimension indices, not a bool: e.g. boundary_check=(0, 1)".to_string(),
                    ));
                    continue;
                }
                _ => continue,
            };
            if !items.iter().any(|v| matches!(v, Value::Bool(_))) {
                continue;
            }
            // Python bools are ints: True is dimension 1, False dimension 0.
            let mut read: Vec<i64> = items.iter().filter_map(Value::as_int).collect();
            read.sort_unstable();
            read.dedup();
            let written = slice(ctx.text, value.range).unwrap_or("(...)").split_whitespace().collect::<Vec<_>>().join(" ");
            let mut d = ctx.diag(
                XF403,
                Severity::Error,
                value.range,
                Some(ki),
                format!(
                    "boundary_check={written} lists bools, but Triton reads its entries as dimension indices (False = 0, \
                     True = 1): this checks dimension{} {}",
                    if read.len() == 1 { "" } else { "s" },
                    read.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(" and ")
                ),
            );
            if items.iter().all(|v| matches!(v, Value::Bool(_))) {
                let dims: Vec<String> =
                    items.iter().enumerate().filter(|(_, v)| **v == Value::Bool(true)).map(|(i, _)| i.to_string()).collect();
                let content = match (is_list, dims.len()) {
                    (true, _) => format!("[{}]", dims.join(", ")),
                    (false, 1) => format!("({},)", dims[0]),
                    (false, _) => format!("({})", dims.join(", ")),
                };
                if slice(ctx.text, value.range).is_some() {
                    d.fix =
                        Some(fix(Applicability::Safe, format!("check dimensions {content}"), vec![Edit { range: value.range, content }]));
                }
            }
            out.push(d);
        }
    }
}

/// XF404: `acc += tl.dot(a, b)` instead of passing the accumulator to `tl.dot`.
pub fn dot_accumulate_inplace(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (ki, k) in ctx.kernels() {
        for op in &k.ops {
            let TlOpKind::Dot { inplace_accumulate: Some(stmt), has_acc_arg, .. } = &op.kind else { continue };
            let mut d = ctx.diag(
                XF404,
                Severity::Warning,
                *stmt,
                Some(ki),
                "`+=` on a tl.dot result relies on the compiler fusing the add into the dot (CombineOps), which can fail and \
                 leave a separate add; pass the accumulator: acc = tl.dot(a, b, acc)"
                    .to_string(),
            );
            if !has_acc_arg {
                d.fix = accumulate_fix(ctx.text, *stmt, op);
            }
            out.push(d);
        }
    }
}

/// `acc += tl.dot(a, b)` → `acc = tl.dot(a, b, acc)` (or `acc=acc` after keyword arguments).
/// Only when the right-hand side is exactly the dot call. Unsafe: rounding may differ.
fn accumulate_fix(text: &str, stmt: TextRange, op: &TlOp) -> Option<Fix> {
    let s = slice(text, stmt)?;
    let plus = s.find("+=")?;
    let lhs = s[..plus].trim();
    let rhs = s[plus + 2..].trim();
    let call = slice(text, op.range)?;
    if lhs.is_empty() || lhs.contains('\n') || rhs != call || !stmt.contains_range(op.range) {
        return None;
    }
    let open = call.find('(')?;
    if !call.ends_with(')') {
        return None;
    }
    let inner = &call[open + 1..call.len() - 1];
    let args = split_args(inner);
    let keyword = args.iter().any(|(_, a)| is_keyword_arg(a));
    let new_inner = if !keyword && args.len() == 2 {
        let (at, last) = args[1];
        let end = at + last.trim_end().len();
        format!("{}, {lhs}{}", &inner[..end], &inner[end..])
    } else {
        let trimmed = inner.trim_end();
        let trimmed = trimmed.strip_suffix(',').unwrap_or(trimmed).trim_end();
        format!("{trimmed}, acc={lhs}{}", &inner[inner.trim_end().len()..])
    };
    let content = format!("{lhs} = {}({new_inner})", &call[..open]);
    Some(fix(Applicability::Unsafe, format!("pass the accumulator: {lhs} = tl.dot(..., {lhs})"), vec![Edit { range: stmt, content }]))
}
