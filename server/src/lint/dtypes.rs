//! XF301–XF304: data types and the matrix engine (fp64 support, the DPAS path of `tl.dot`).

use super::context::{Ctx, known};
use super::registry::{XF301, XF302, XF303, XF304};
use crate::knowledge::Severity;
use crate::lint::Diagnostic;
use crate::model::{TlOpKind, Value};

/// XF301: fp64 in a kernel on a device without fp64 (the module fails to build).
pub fn fp64_unsupported(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let Some(fp64) = known(&ctx.device().has_fp64) else { return };
    if fp64.value {
        return;
    }
    for (ki, k) in ctx.kernels() {
        for op in k.ops.iter().filter(|o| matches!(o.kind, TlOpKind::Float64)) {
            out.push(ctx.diag(
                XF301,
                fp64.severity(Severity::Error),
                op.range,
                Some(ki),
                format!(
                    "fp64 is not supported on {}: the module fails to build (\"Double type is not supported on this platform\"); \
                     use tl.float32{}",
                    ctx.target_label(),
                    fp64.caveat()
                ),
            ));
        }
    }
}

/// XF302: fp64 in a kernel on an Intel device that has it, at a fraction of the fp32 rate.
pub fn fp64_slow(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    if !ctx.is_intel() {
        return;
    }
    let Some(fp64) = known(&ctx.device().has_fp64) else { return };
    if !fp64.value {
        return;
    }
    for (ki, k) in ctx.kernels() {
        for op in k.ops.iter().filter(|o| matches!(o.kind, TlOpKind::Float64)) {
            out.push(ctx.diag(
                XF302,
                Severity::Warning,
                op.range,
                Some(ki),
                format!(
                    "fp64 on {} runs on the vector units at a fraction of the fp32 rate and never on the matrix engine; \
                     keep fp64 only where the precision is needed{}",
                    ctx.target_label(),
                    fp64.note("fp64 support")
                ),
            ));
        }
    }
}

/// XF303: fp32 `tl.dot` forced to IEEE precision, which the DPAS engine cannot do: it falls back to FMA.
/// Only where an operand is known to be fp32 (and neither is known to be anything else): a rule that
/// cannot tell says nothing (fp16 operands loaded through pointers of unknown type are common).
pub fn dot_ieee_fallback(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    if !ctx.is_xpu() || ctx.device().has_dpas.get() != Some(&true) {
        return;
    }
    for (ki, k) in ctx.kernels() {
        for op in &k.ops {
            let TlOpKind::Dot { a_dtype, b_dtype, input_precision, allow_tf32, .. } = &op.kind else { continue };
            let not_fp32 = |d: &Option<String>| d.as_deref().is_some_and(|d| d != "float32");
            if not_fp32(a_dtype) || not_fp32(b_dtype) {
                continue;
            }
            // `allow_tf32=False` reaches the model as input_precision "ieee": quote what was written.
            let site = match (input_precision, allow_tf32) {
                (Some(p), _) if p.value.as_str() == Some("ieee") => p.site,
                (_, Some(t)) if t.value == Value::Bool(false) => t.site,
                _ => continue,
            };
            if a_dtype.as_deref() != Some("float32") && b_dtype.as_deref() != Some("float32") {
                continue;
            }
            let range = site;
            let spelled = ctx.text.get(site.start..site.end).unwrap_or("input_precision=\"ieee\"").to_string();
            out.push(ctx.diag(
                XF303,
                Severity::Warning,
                range,
                Some(ki),
                format!(
                    "tl.dot with {spelled}: DPAS on {} multiplies fp32 only as tf32, so an fp32 dot in IEEE precision falls back to \
                     FMA loops (much slower, and large K can overflow the 256 KiB scratch space); use the default \"tf32\" or \"tf32x3\" \
                     if its precision is enough",
                    ctx.target_label()
                ),
            ));
        }
    }
}

/// XF304: `tl.dot` on an Intel device whose Triton backend has no DPAS lowering (FMA instead).
pub fn dot_without_dpas(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    if !ctx.is_intel() {
        return;
    }
    let Some(dpas) = known(&ctx.device().has_dpas) else { return };
    if dpas.value {
        return;
    }
    for (ki, k) in ctx.kernels() {
        for op in k.ops.iter().filter(|o| matches!(o.kind, TlOpKind::Dot { .. })) {
            out.push(ctx.diag(
                XF304,
                Severity::Warning,
                op.callee_range,
                Some(ki),
                format!(
                    "tl.dot on {} does not use the XMX matrix engine: the Triton backend lowers tl.dot to DPAS only for \
                     16-wide sub-groups, so it becomes unrolled FMA loops (about 0.3 TFLOPS measured on an A770){}",
                    ctx.target_label(),
                    dpas.note("DPAS support")
                ),
            ));
        }
    }
}
