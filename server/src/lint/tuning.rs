//! XF501–XF505: tuning advice — fixed launch configurations, autotune spaces that miss the Intel
//! register-file mode, default differences between `triton.Config` and a plain launch, and
//! persistent kernels sized for another GPU.

use super::context::{Ctx, grf_text, known};
use super::edits::fix;
use super::registry::{XF501, XF502, XF503, XF505};
use crate::knowledge::Severity;
use crate::lint::{Applicability, Diagnostic, Edit, Related};
use crate::model::{Expr, Value};

/// Launch keywords that are tuning knobs: backend options plus constexpr tile sizes.
fn is_tuning_knob(ctx: &Ctx, ki: usize, name: &str) -> bool {
    if matches!(name, "num_warps" | "num_stages" | "grf_mode" | "warp_size" | "threads_per_warp") {
        return true;
    }
    let upper = name.to_ascii_uppercase();
    let is_tile = upper.contains("BLOCK") || upper.contains("TILE") || matches!(upper.as_str(), "BM" | "BN" | "BK");
    is_tile && ctx.model.kernels.get(ki).and_then(|k| k.param(name)).is_some_and(|p| p.is_constexpr)
}

/// XF501: a kernel without autotune launched with fixed tuning values.
pub fn hardcoded_launch_config(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (ki, k) in ctx.kernels() {
        if k.autotune.is_some() {
            continue;
        }
        for (_, launch) in ctx.launches_of(ki) {
            let fixed: Vec<_> = launch
                .kwargs
                .iter()
                .filter(|b| is_tuning_knob(ctx, ki, &b.name) && !b.value.is_unknown() && b.value != Value::None)
                .collect();
            if fixed.is_empty() {
                continue;
            }
            let shown: Vec<String> = fixed.iter().map(|b| format!("{}={}", b.name, show(&b.value))).collect();
            let mut d = ctx.diag(
                XF501,
                Severity::Info,
                launch.target_range,
                Some(ki),
                format!(
                    "{} is launched with fixed {} and no @triton.autotune: the best values differ between Intel GPUs and \
                     toolchains; the `autotune` stage can sweep them for {}",
                    k.name,
                    shown.join(", "),
                    ctx.target_label()
                ),
            );
            d.related = fixed.iter().map(|b| Related { range: b.site, message: format!("fixed {}", b.name) }).collect();
            out.push(d);
        }
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Str(s) => format!("'{s}'"),
        Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Value::Float(f) => f.to_string(),
        _ => "…".to_string(),
    }
}

/// XF502: an autotuned `tl.dot` kernel whose 32-warp configs never try the 256/large GRF mode,
/// on a device that has it (Intel's own 32-warp GEMM and attention configs all set it).
pub fn grf_mode_not_swept(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let dev = ctx.device();
    if !ctx.is_xpu() || dev.has_large_grf.get() != Some(&true) || dev.has_dpas.get() != Some(&true) {
        return;
    }
    let large = &ctx.toolchain().grf_large_values;
    let Some(suggest) = large.first() else { return };
    for (ki, k) in ctx.kernels() {
        let Some(at) = &k.autotune else { continue };
        if !k.has_dot() || !at.configs_complete || at.configs.iter().any(|c| c.opaque) {
            continue;
        }
        let warps32: Vec<_> = at.configs.iter().filter(|c| c.get("num_warps").and_then(|b| b.value.as_int()) == Some(32)).collect();
        let Some(first) = warps32.first() else { continue };
        let swept = warps32
            .iter()
            .any(|c| c.get("grf_mode").is_some_and(|g| g.value.is_unknown() || grf_text(&g.value).is_some_and(|v| large.contains(&v))));
        if swept {
            continue;
        }
        let mut d = ctx.diag(
            XF502,
            Severity::Info,
            first.range,
            Some(ki),
            format!(
                "{} of the autotune configs of {} use num_warps=32 but none sets grf_mode='{suggest}': on {} 32-warp tl.dot \
                 tiles usually need the 256-register mode (every Intel-tuned 32-warp GEMM/attention config sets it); add \
                 configs with 'grf_mode': '{suggest}'",
                warps32.len(),
                k.name,
                ctx.target_label()
            ),
        );
        d.related = warps32.iter().skip(1).map(|c| Related { range: c.range, message: "another 32-warp config".to_string() }).collect();
        out.push(d);
    }
}

/// XF503: `triton.Config` without `num_stages` on XPU: 3 there, 2 at a plain launch.
/// The fix makes the value in effect explicit (safe: nothing changes).
pub fn config_num_stages_default(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    if !ctx.is_xpu() {
        return;
    }
    let tc = ctx.toolchain();
    if tc.config_num_stages_default == tc.launch_num_stages_default {
        return;
    }
    for (ki, k) in ctx.kernels() {
        let Some(at) = &k.autotune else { continue };
        for c in &at.configs {
            if c.opaque || c.get("num_stages").is_some() {
                continue;
            }
            let mut d = ctx.diag(
                XF503,
                Severity::Info,
                c.range,
                Some(ki),
                format!(
                    "triton.Config without num_stages uses {} on {}, while a plain launch uses {}: the tuned and untuned \
                     kernels differ silently; set num_stages explicitly",
                    tc.config_num_stages_default, tc.id, tc.launch_num_stages_default
                ),
            );
            d.fix = add_keyword(ctx.text, c.range, &format!("num_stages={}", tc.config_num_stages_default))
                .map(|e| fix(Applicability::Safe, format!("make num_stages={} explicit", tc.config_num_stages_default), vec![e]));
            out.push(d);
        }
    }
}

/// Insert `kw` as the last argument of the call spanning `call`.
fn add_keyword(text: &str, call: crate::text::TextRange, kw: &str) -> Option<Edit> {
    let s = super::edits::slice(text, call)?;
    if !s.ends_with(')') {
        return None;
    }
    let inner_end = call.end - 1;
    let before = text[call.start..inner_end].trim_end();
    let at = call.start + before.len();
    let content = if before.ends_with('(') {
        kw.to_string()
    } else if before.ends_with(',') {
        format!(" {kw}")
    } else {
        format!(", {kw}")
    };
    Some(Edit { range: crate::text::TextRange::empty(at), content })
}

/// XF505: a persistent kernel launched with a literal or CUDA-derived program count.
pub fn hardcoded_program_count(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let cores = known(&ctx.device().xe_cores);
    for (ki, k) in ctx.kernels() {
        if !k.is_persistent {
            continue;
        }
        // A warmup's grid is a placeholder the call requires; the program count is the compiled
        // kernel's launch, elsewhere (Intel's fused-softmax tutorial sizes it from the device).
        for (_, launch) in ctx.launches_of(ki).filter(|(_, l)| !l.warmup) {
            let literal = launch.grid.as_ref().is_some_and(|g| !g.is_empty() && g.iter().all(|e| matches!(e, Expr::Const(Value::Int(_)))));
            if !launch.grid_uses_device_count && !literal {
                continue;
            }
            let what = match (&launch.grid, literal) {
                (Some(g), true) => format!(
                    "a fixed program count ({})",
                    g.iter()
                        .map(|e| match e {
                            Expr::Const(Value::Int(i)) => i.to_string(),
                            _ => "?".to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                _ => "a CUDA-derived program count".to_string(),
            };
            let (advice, note) = if ctx.is_intel() {
                let here = cores.as_ref().map(|c| format!(", {} here", c.value)).unwrap_or_default();
                (
                    format!(
                        "size it from the Xe-core count{here}: torch.xpu.get_device_capability(dev)['gpu_subslice_count'] or \
                         triton.runtime.driver.active.utils.get_device_properties(dev)[\"multiprocessor_count\"]"
                    ),
                    cores.as_ref().map(|c| c.note("Xe-core count")).unwrap_or_default(),
                )
            } else {
                ("size it from the device's multiprocessor count".to_string(), String::new())
            };
            out.push(ctx.diag(
                XF505,
                Severity::Info,
                launch.grid_range,
                Some(ki),
                format!("persistent kernel {} is launched with {what}; on {} {advice}{note}", k.name, ctx.target_label()),
            ));
        }
    }
}
