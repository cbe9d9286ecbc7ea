//! XF104–XF107, XF109: backend options given to a kernel (launch keywords, `triton.Config` keywords
//! and kwargs-dict entries) that the toolchain rejects, ignores or that collide with autotuning.
//!
//! A keyword that names a kernel parameter binds to that parameter (Triton binds launch keywords to parameters first: triton/runtime/jit.py), so the
//! name checks (XF105, XF107) leave it alone.

use super::context::{Ctx, OptionSite, grf_text, join, known};
use super::edits::{fix, remove_list_item, rename_token, slice};
use super::registry::{XF104, XF105, XF106, XF107, XF109};
use crate::knowledge::{Backend, Severity};
use crate::lint::{Applicability, Diagnostic, Edit, Related};
use crate::model::Value;

/// XF104: a `grf_mode` value the toolchain does not know.
pub fn grf_mode_value(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let tc = ctx.toolchain();
    if tc.backend != Backend::Xpu || tc.grf_mode_values.is_empty() {
        return;
    }
    for (ki, _) in ctx.kernels() {
        for site in ctx.sites(ki, "grf_mode") {
            let Some(value) = grf_text(&site.binding.value) else { continue };
            let is_str = matches!(site.binding.value, Value::Str(_));
            if is_str && tc.grf_mode_values.contains(&value) {
                continue;
            }
            let shown = if is_str { format!("'{value}'") } else { value.clone() };
            let valid = tc.grf_mode_values.iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(", ");
            let (severity, consequence) = if tc.grf_invalid_is_error {
                (Severity::Error, format!("the backend raises RuntimeError(\"Unknown grf_mode: {value}\")"))
            } else {
                (Severity::Warning, "it is silently ignored and the kernel compiles with the default register file".to_string())
            };
            let mut d = ctx.diag(
                XF104,
                severity,
                site.binding.range,
                Some(ki),
                format!("grf_mode={shown} is not a grf_mode of {} (valid: {valid}): {consequence}", tc.id),
            );
            d.related.push(ctx.origin_related(ki, site.origin));
            d.fix = grf_fix(ctx, &site, &value, is_str);
            out.push(d);
        }
    }
}

/// Rename to this toolchain's spelling (`large` ↔ `256`, `small` ↔ `128`), or quote an int the
/// backend would accept as a string. Both keep the meaning the author intended: safe.
fn grf_fix(ctx: &Ctx, site: &OptionSite, value: &str, is_str: bool) -> Option<crate::lint::Fix> {
    let tc = ctx.toolchain();
    let target = if is_str {
        tc.grf_renames.iter().find(|(old, _)| old == value).map(|(_, new)| new.clone())?
    } else if tc.grf_mode_values.iter().any(|v| v == value) {
        value.to_string()
    } else {
        return None;
    };
    let range = site.binding.range;
    let old = slice(ctx.text, range)?;
    let content = if is_str {
        // Keep the author's quote style and any prefix; only the content changes.
        let at = old.find(value)?;
        format!("{}{}{}", &old[..at], target, &old[at + value.len()..])
    } else {
        format!("'{target}'")
    };
    Some(fix(Applicability::Safe, format!("use grf_mode='{target}'"), vec![Edit { range, content }]))
}

/// XF105: the other toolchain generation's spelling of the sub-group size option.
pub fn subgroup_option_name(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let tc = ctx.toolchain();
    let (Some(wrong), Some(right)) = (&tc.subgroup_option_wrong, &tc.subgroup_option) else { return };
    for (ki, _) in ctx.kernels() {
        if ctx.is_param(ki, wrong) {
            continue;
        }
        for site in ctx.sites(ki, wrong) {
            let mut d = ctx.diag(
                XF105,
                Severity::Error,
                site.binding.key_range,
                Some(ki),
                format!(
                    "`{wrong}` is not an option on {}: the sub-group size option is `{right}` there \
                     (Triton raises KeyError \"Keyword argument {wrong} was specified but unrecognised\")",
                    tc.id
                ),
            );
            d.related.push(ctx.origin_related(ki, site.origin));
            if let Some(edit) = rename_token(ctx.text, site.binding.key_range, wrong, right) {
                d.fix = Some(fix(Applicability::Safe, format!("rename to `{right}`"), vec![edit]));
            }
            out.push(d);
        }
    }
}

/// XF106: a sub-group size the device does not have.
pub fn subgroup_size_value(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let Some(sizes) = known(&ctx.device().sub_group_sizes) else { return };
    let foreign = &ctx.toolchain().foreign_options;
    for (ki, _) in ctx.kernels() {
        for name in ["warp_size", "threads_per_warp"] {
            if foreign.iter().any(|f| f == name) || ctx.is_param(ki, name) {
                continue;
            }
            for site in ctx.sites(ki, name) {
                let Some(v) = site.binding.value.as_int() else { continue };
                if sizes.value.iter().any(|s| i64::from(*s) == v) {
                    continue;
                }
                let mut d = ctx.diag(
                    XF106,
                    sizes.severity(Severity::Error),
                    site.binding.range,
                    Some(ki),
                    format!(
                        "{name}={v} is not a sub-group size of {} (supported: {}){}",
                        ctx.target_label(),
                        join(&sizes.value),
                        sizes.caveat()
                    ),
                );
                d.related.push(ctx.origin_related(ki, site.origin));
                out.push(d);
            }
        }
    }
}

/// XF107: an option of the other backend (`maxnreg` on XPU; `grf_mode`, `threads_per_warp`, ... on CUDA).
pub fn foreign_backend_option(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let tc = ctx.toolchain();
    if tc.foreign_options.is_empty() {
        return;
    }
    let other_gpu = if tc.backend == Backend::Xpu { "CUDA" } else { "Intel XPU" };
    for (ki, _) in ctx.kernels() {
        for site in ctx.all_sites(ki) {
            let name = site.binding.name.as_str();
            if !tc.foreign_options.iter().any(|f| f == name) || ctx.is_param(ki, name) {
                continue;
            }
            // `maxnreg=None` is triton.Config's own default: nothing reaches the backend.
            if site.binding.value == Value::None {
                continue;
            }
            let other = if tc.hip_options.iter().any(|h| h == name) { "AMD HIP" } else { other_gpu };
            let mut d = ctx.diag(
                XF107,
                Severity::Error,
                site.binding.key_range,
                Some(ki),
                format!(
                    "`{name}` is an option of the {other} backend only; {} on {} rejects it \
                     (Triton raises KeyError \"Keyword argument {name} was specified but unrecognised\")",
                    tc.id,
                    ctx.device().name
                ),
            );
            d.related.push(ctx.origin_related(ki, site.origin));
            if let Some(edit) = remove_list_item(ctx.text, site.binding.site) {
                d.fix = Some(fix(Applicability::Unsafe, format!("remove `{name}`"), vec![edit]));
            }
            out.push(d);
        }
    }
}

/// XF109: a launch keyword that the kernel's autotune configs also set in their kwargs dict.
/// The autotuner raises "Conflicting meta-parameters" for those (`meta.keys() & config.kwargs.keys()`);
/// call keywords such as `num_warps` are silently overridden by the config instead, so they are not flagged.
pub fn autotune_conflicting_launch_arg(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (ki, k) in ctx.kernels() {
        let Some(at) = &k.autotune else { continue };
        // `k.fn[grid](...)` runs past the autotuner: its keywords cannot conflict with configs.
        for (_, launch) in ctx.launches_of(ki).filter(|(_, l)| k.autotunes(l)) {
            for b in &launch.kwargs {
                let Some((ci, cb)) =
                    at.configs.iter().enumerate().find_map(|(i, c)| c.kwargs.iter().find(|x| x.name == b.name).map(|x| (i, x)))
                else {
                    continue;
                };
                let mut d = ctx.diag(
                    XF109,
                    Severity::Error,
                    b.key_range,
                    Some(ki),
                    format!(
                        "`{}` is also set by the autotune configs of {}: the autotuner raises \
                         \"Conflicting meta-parameters: {}. Make sure that you don't re-define auto-tuned symbols.\"",
                        b.name, k.name, b.name
                    ),
                );
                d.related.push(Related { range: cb.site, message: format!("set by config {} of {}", ci + 1, at.configs.len()) });
                if let Some(edit) = remove_list_item(ctx.text, b.site) {
                    d.fix = Some(fix(Applicability::Unsafe, format!("remove `{}` from the launch", b.name), vec![edit]));
                }
                out.push(d);
            }
        }
    }
}
