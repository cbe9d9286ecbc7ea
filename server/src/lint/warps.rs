//! XF101–XF103: how many sub-groups (warps) a work-group may have.
//!
//! The backend checks, in order: `num_warps` is a power of two (`XPUOptions.__post_init__`), the
//! work-group `num_warps × sub-group size` fits the device (`OutOfResources(..., "threads")`), and
//! 256/large GRF is not combined with more than 32 warps (`make_spv`). Source:
//! `third_party/intel/backend/compiler.py` and `python/triton/compiler/compiler.py` at tag v3.7.2 of
//! <https://github.com/intel/intel-xpu-backend-for-triton>.

use super::context::{Ctx, OptionSite, Origin, is_power_of_two, known};
use super::edits::{fix, is_int_literal};
use super::registry::{XF101, XF102, XF103};
use crate::knowledge::Severity;
use crate::lint::{Applicability, Diagnostic, Edit};

/// XF101: `num_warps` not a power of two, or < 1.
pub fn num_warps_power_of_two(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let backend = if ctx.is_xpu() { "the Intel backend" } else { "the CUDA backend" };
    for (ki, _) in ctx.kernels() {
        for site in ctx.sites(ki, "num_warps") {
            let Some(n) = site.binding.value.as_int() else { continue };
            if is_power_of_two(n) {
                continue;
            }
            let why = if n < 1 { "is not a positive power of two" } else { "is not a power of two" };
            let mut d = ctx.diag(
                XF101,
                Severity::Error,
                site.binding.range,
                Some(ki),
                format!("num_warps={n} {why} ({backend} asserts it on {})", ctx.toolchain().id),
            );
            d.related.push(ctx.origin_related(ki, site.origin));
            if is_int_literal(ctx.text, site.binding.range) {
                let to = nearest_power_of_two(n, max_warps(ctx));
                d.fix = Some(fix(
                    Applicability::Unsafe,
                    format!("use num_warps={to}"),
                    vec![Edit { range: site.binding.range, content: to.to_string() }],
                ));
            }
            out.push(d);
        }
    }
}

/// The most warps any sub-group size allows on the device (max work-group / smallest sub-group).
fn max_warps(ctx: &Ctx) -> Option<i64> {
    let wg = *ctx.device().max_work_group_size.get()?;
    let sg = *ctx.device().sub_group_sizes.get()?.iter().min()?;
    (sg > 0).then(|| i64::from(wg / sg))
}

/// Nearest power of two (ties round up, as `triton.next_power_of_2` would), never above `cap`.
pub fn nearest_power_of_two(n: i64, cap: Option<i64>) -> i64 {
    if n <= 1 {
        return 1;
    }
    let upper = (n as u64).next_power_of_two() as i64;
    let lower = upper / 2;
    let pick = if n - lower < upper - n { lower } else { upper };
    match cap {
        Some(c) if pick > c && is_power_of_two(c) => c.max(1),
        _ => pick,
    }
}

/// XF102: `num_warps × sub-group size` above the device's maximum work-group size.
pub fn work_group_too_large(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let dev = ctx.device();
    let Some(max_wg) = known(&dev.max_work_group_size) else { return };
    for (ki, _) in ctx.kernels() {
        for set in ctx.binding_sets(ki) {
            let Some(site) = ctx.option(ki, set, "num_warps") else { continue };
            let Some(n) = site.binding.value.as_int() else { continue };
            if n < 1 {
                continue;
            }
            let large = ctx.large_grf(ki, set);
            // 256/large GRF with > 32 warps is XF103's finding; the halved limit would only repeat it.
            if large.is_some() && ctx.toolchain().grf_large_max_warps.is_some_and(|max| n > max) {
                continue;
            }
            let Some((sg, sg_why)) = ctx.sub_group(ki, set) else { continue };
            if sg < 1 {
                continue;
            }
            let (limit, limit_why) = match &large {
                Some(g) => {
                    let grf = super::context::grf_text(&g.binding.value).unwrap_or_default();
                    match known(&dev.max_work_group_size_large_grf) {
                        Some(l) => (l, format!(" under grf_mode='{grf}'")),
                        None => (
                            super::context::Known { value: max_wg.value / 2, ..max_wg.clone() },
                            format!(" under grf_mode='{grf}' (half of {}: 256-GRF halves the threads per XVE)", max_wg.value),
                        ),
                    }
                }
                None => (max_wg.clone(), String::new()),
            };
            let items = n.saturating_mul(sg);
            if items <= i64::from(limit.value) {
                continue;
            }
            let mut d = ctx.diag(
                XF102,
                limit.severity(Severity::Error),
                site.binding.range,
                Some(ki),
                format!(
                    "num_warps={n} × sub-group {sg} = {items} work-items exceeds the {} maximum work-group size{limit_why} of {} ({sg_why}){}",
                    limit.value,
                    ctx.target_label(),
                    limit.caveat()
                ),
            );
            d.related = ctx.set_related(ki, set, "");
            push_origin(ctx, ki, &mut d, site);
            out.push(d);
        }
    }
}

/// XF103: 256/large (or 512) GRF together with more than 32 warps.
pub fn large_grf_warp_limit(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    if !ctx.is_xpu() {
        return;
    }
    for (ki, _) in ctx.kernels() {
        for set in ctx.binding_sets(ki) {
            let Some(grf) = ctx.large_grf(ki, set) else { continue };
            let Some(site) = ctx.option(ki, set, "num_warps") else { continue };
            let Some(n) = site.binding.value.as_int() else { continue };
            let Some(max) = ctx.toolchain().grf_large_max_warps else { return };
            if n <= max {
                continue;
            }
            let mode = super::context::grf_text(&grf.binding.value).unwrap_or_default();
            let mut d = ctx.diag(
                XF103,
                Severity::Error,
                site.binding.range,
                Some(ki),
                format!(
                    "num_warps={n} with grf_mode='{mode}': large GRF allows at most {max} warps on {} \
                     (the backend raises \"grf_mode = {mode} cannot be used with num_warps > {max}\")",
                    ctx.target_label()
                ),
            );
            d.related.push(ctx.grf_related(ki, grf));
            push_origin(ctx, ki, &mut d, site);
            out.push(d);
        }
    }
}

fn push_origin(ctx: &Ctx, ki: usize, d: &mut Diagnostic, site: OptionSite) {
    let r = ctx.origin_related(ki, site.origin);
    if !d.related.iter().any(|x| x.range == r.range) {
        d.related.push(r);
    }
}

impl Ctx<'_> {
    fn grf_related(&self, _ki: usize, grf: OptionSite) -> crate::lint::Related {
        let what = match grf.origin {
            Origin::Config { index, .. } => format!("grf_mode set by config {}", index + 1),
            Origin::Launch { .. } => "grf_mode passed by this launch".to_string(),
        };
        crate::lint::Related { range: grf.binding.site, message: what }
    }
}

#[cfg(test)]
mod tests {
    use super::nearest_power_of_two;

    #[test]
    fn nearest_power_of_two_rounds_ties_up_and_respects_the_cap() {
        assert_eq!(nearest_power_of_two(6, None), 8);
        assert_eq!(nearest_power_of_two(5, None), 4);
        assert_eq!(nearest_power_of_two(0, None), 1);
        assert_eq!(nearest_power_of_two(-3, None), 1);
        assert_eq!(nearest_power_of_two(96, Some(64)), 64);
        assert_eq!(nearest_power_of_two(24, Some(64)), 32);
    }
}
