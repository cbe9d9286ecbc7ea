//! XF201–XF203: per-work-group resources (shared local memory, registers) and address width.
//!
//! ## XF201 — SLM estimate
//! Shared local memory is allocated by the compiler, so only an estimate is possible (hence a
//! warning). The estimate counts the one big user a source file reveals: the `tl.dot` operand
//! tiles staged through SLM while their layout is converted for the matrix engine,
//!
//! ```text
//! SLM ≈ max over tl.dot of (M·K·bytes(a) + K·N·bytes(b)) × stages
//! ```
//!
//! * `M, K, N` are the dot's operand shapes evaluated in the binding set (config × launch);
//! * `bytes(x)` is the operand's element size, or 1 byte when the dtype is not known (the estimate
//!   is then a lower bound and the message says "at least");
//! * `stages` is 1 on XPU (the Intel pipeliner prefetches into registers, it does not multi-buffer
//!   SLM) and `num_stages` on CUDA (the software pipeliner keeps that many copies);
//! * a kernel that loads through block pointers or tensor descriptors on a device with 2D block IO
//!   reads its operands straight into DPAS registers, so its dots count 0.
//!
//! The sum is compared with the device's maximum SLM per work-group (Triton's `max_shared_mem`).
//!
//! ## XF202 — GRF pressure
//! The `tl.dot` accumulator lives in registers, spread over the work-group's work-items:
//!
//! ```text
//! bytes per work-item = M·N·bytes(acc) / (num_warps · sub_group)
//! registers per hardware thread = M·N·bytes(acc) / (num_warps · register_bytes)
//! ```
//!
//! `bytes(acc)` is the accumulator dtype (fp32, 4 bytes, when `tl.dot` has no other out dtype),
//! `num_warps` the option in effect (4 by default), `register_bytes` the device's register width.
//! Reported when the accumulator alone needs more than half of the registers of the GRF mode in
//! effect (128 by default, 256 under `grf_mode` 256/large): the rest of the kernel (operand tiles,
//! pointers, masks) then spills. `grf_mode='auto'` lets the compiler choose and is not reported.

use super::context::{Ctx, Known, dtype_bytes, known};
use super::registry::{XF201, XF202, XF203};
use crate::knowledge::{Backend, Severity};
use crate::lint::{Diagnostic, Related};
use crate::model::{TlOpKind, Value};

/// XF201: estimated SLM per work-group above the device limit.
pub fn slm_capacity(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let Some(limit) = known(&ctx.device().slm_bytes) else { return };
    let block_io = ctx.device().has_2d_block_io.get() == Some(&true);
    for (ki, k) in ctx.kernels() {
        let uses_block_loads = k.ops.iter().any(|o| matches!(o.kind, TlOpKind::MakeBlockPtr | TlOpKind::MakeTensorDescriptor { .. }));
        if ctx.is_xpu() && block_io && uses_block_loads {
            continue;
        }
        for op in &k.ops {
            let TlOpKind::Dot { a_shape: Some(a), b_shape: Some(b), a_dtype, b_dtype, .. } = &op.kind else { continue };
            if a.len() < 2 || b.len() < 2 {
                continue;
            }
            let (bytes_a, bytes_b) = (a_dtype.as_deref().and_then(dtype_bytes), b_dtype.as_deref().and_then(dtype_bytes));
            let exact = bytes_a.is_some() && bytes_b.is_some();
            for set in ctx.binding_sets(ki) {
                let dim = |e| set.eval(e).as_int().filter(|v| *v > 0).map(|v| v as u64);
                let (Some(m), Some(kk), Some(n)) = (dim(&a[a.len() - 2]), dim(&a[a.len() - 1]), dim(&b[b.len() - 1])) else {
                    continue;
                };
                let stages = if ctx.toolchain().backend == Backend::Cuda { num_stages(ctx, ki, set) } else { 1 };
                let (ba, bb) = (bytes_a.unwrap_or(1), bytes_b.unwrap_or(1));
                let estimate = (m * kk * ba + kk * n * bb).saturating_mul(stages);
                if estimate <= limit.value {
                    continue;
                }
                let stage_term = if stages > 1 { format!(") × {stages} stages") } else { ")".to_string() };
                let mut d = ctx.diag(
                    XF201,
                    Severity::Warning,
                    op.range,
                    Some(ki),
                    format!(
                        "estimated shared local memory {}{} exceeds the {} per work-group of {}: tl.dot operand tiles \
                         (A {m}×{kk} × {ba} B + B {kk}×{n} × {bb} B{stage_term}{}{}",
                        if exact { "" } else { "of at least " },
                        kib(estimate),
                        kib(limit.value),
                        ctx.target_label(),
                        if exact { "" } else { "; unknown dtypes counted as 1 byte" },
                        limit.note("limit"),
                    ),
                );
                d.related = ctx.set_related(ki, set, "");
                out.push(d);
            }
        }
    }
}

fn num_stages(ctx: &Ctx, ki: usize, set: &crate::model::BindingSet) -> u64 {
    if let Some(v) = ctx.option(ki, set, "num_stages").and_then(|s| s.binding.value.as_int()) {
        return v.max(1) as u64;
    }
    let tc = ctx.toolchain();
    u64::from(if set.config.is_some() { tc.config_num_stages_default } else { tc.launch_num_stages_default }).max(1)
}

fn kib(bytes: u64) -> String {
    if bytes.is_multiple_of(1024) { format!("{} KiB", bytes / 1024) } else { format!("{:.1} KiB", bytes as f64 / 1024.0) }
}

/// XF202: the accumulator alone needs more than half of the registers of the GRF mode in effect.
pub fn grf_pressure(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    if !ctx.is_xpu() {
        return;
    }
    let dev = ctx.device();
    let (Some(reg_bytes), Some(regs_default)) = (known(&dev.grf_bytes), known(&dev.grf_regs_default)) else { return };
    let regs_large = known(&dev.grf_regs_large);
    let large_available = dev.has_large_grf.get() == Some(&true) && regs_large.is_some();
    for (ki, k) in ctx.kernels() {
        for op in &k.ops {
            let TlOpKind::Dot { a_shape: Some(a), b_shape: Some(b), acc_dtype, .. } = &op.kind else { continue };
            if a.is_empty() || b.is_empty() {
                continue;
            }
            let (m_e, n_e) = (&a[a.len().saturating_sub(2)], &b[b.len() - 1]);
            let acc_type = acc_dtype.clone().unwrap_or_else(|| "float32".to_string());
            let Some(acc_bytes) = dtype_bytes(&acc_type) else { continue };
            for set in ctx.binding_sets(ki) {
                let (Some(m), Some(n)) = (pos(set.eval(m_e)), pos(set.eval(n_e))) else { continue };
                let grf = ctx.option(ki, set, "grf_mode");
                let grf_value = grf.and_then(|g| super::context::grf_text(&g.binding.value));
                if grf.is_some() && grf_value.is_none() {
                    continue; // grf_mode given but not statically known
                }
                if grf_value.as_deref() == Some("auto") {
                    continue;
                }
                let large = ctx.large_grf(ki, set).is_some();
                let regs: &Known<u32> = match (&regs_large, large) {
                    (Some(l), true) => l,
                    (None, true) => continue,
                    _ => &regs_default,
                };
                let warps = match ctx.option(ki, set, "num_warps") {
                    Some(s) => match pos(s.binding.value.clone()) {
                        Some(w) => w,
                        None => continue,
                    },
                    None => 4,
                };
                let Some((sg, _)) = ctx.sub_group(ki, set) else { continue };
                let Some(sg) = u64::try_from(sg).ok().filter(|s| *s > 0) else { continue };
                let acc_total = m * n * acc_bytes;
                let per_item = acc_total / (warps * sg);
                let regs_needed = acc_total.div_ceil(warps * u64::from(reg_bytes.value));
                if regs_needed * 2 <= u64::from(regs.value) {
                    continue;
                }
                let mode = if large {
                    format!("grf_mode='{}'", grf_value.clone().unwrap_or_default())
                } else {
                    "the default GRF mode".to_string()
                };
                let advice = match (large, large_available) {
                    (false, true) => format!(
                        "use grf_mode='{}' (256 registers) or smaller BLOCK sizes",
                        ctx.toolchain().grf_large_values.first().map(String::as_str).unwrap_or("256")
                    ),
                    _ => "use smaller BLOCK sizes or more warps".to_string(),
                };
                let mut d = ctx.diag(
                    XF202,
                    Severity::Warning,
                    op.range,
                    Some(ki),
                    format!(
                        "tl.dot accumulator {m}×{n} {acc_type} ({}) over {warps} warps × sub-group {sg} = {per_item} B per work-item: \
                         {regs_needed} of the {} registers ({} B) per hardware thread in {mode} on {}, more than half; {advice}{}",
                        kib(acc_total),
                        regs.value,
                        reg_bytes.value,
                        ctx.target_label(),
                        reg_bytes.note("register width"),
                    ),
                );
                d.related = ctx.set_related(ki, set, "");
                out.push(d);
            }
        }
    }
}

fn pos(v: Value) -> Option<u64> {
    v.as_int().filter(|x| *x > 0).map(|x| x as u64)
}

/// XF203: `tl.program_id(..) * stride` computed in int32 and used as a pointer offset.
pub fn int32_offset_overflow(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (ki, k) in ctx.kernels() {
        for op in &k.ops {
            let TlOpKind::Int32Offset { stride } = &op.kind else { continue };
            let mut d = ctx.diag(
                XF203,
                Severity::Info,
                op.range,
                Some(ki),
                format!(
                    "tl.program_id(..) * {stride} is computed in int32: past 2^31 elements the offset wraps and the \
                     kernel reads or writes the wrong memory; cast first, e.g. tl.program_id(0).to(tl.int64) * {stride}"
                ),
            );
            if let Some(p) = k.param(stride) {
                d.related.push(Related { range: p.range, message: format!("`{stride}` is a runtime (int32) parameter") });
            }
            out.push(d);
        }
    }
}
