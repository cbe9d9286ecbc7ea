//! Hover: what a rule, an option or a `tl.*` call means on the configured device and toolchain,
//! with the limit and where the number comes from, in markdown.

use tower_lsp::lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

use super::super::encoding::{position_to_byte, range_to_lsp};
use super::super::engine::Computed;
use super::target::{self, Site, fact_line, label};
use crate::knowledge::{Availability, Target};
use crate::model::{Binding, Kernel, TlOpKind};
use crate::text::TextRange;

const OPTIONS: [&str; 5] = ["num_warps", "num_stages", "grf_mode", "warp_size", "threads_per_warp"];

pub fn hover(c: &Computed, pos: Position) -> Option<Hover> {
    let at = position_to_byte(&c.rope, pos, c.encoding);
    let touches = |r: TextRange| r.start <= at && at <= r.end && !(r.is_empty() && at != r.start);
    let (md, range) = rule_hover(c, at, &touches).or_else(|| option_hover(c, at)).or_else(|| tl_hover(c, &touches))?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: md }),
        range: Some(range_to_lsp(&c.rope, range, c.encoding)),
    })
}

fn rule_hover(c: &Computed, _at: usize, touches: &dyn Fn(TextRange) -> bool) -> Option<(String, TextRange)> {
    let hits: Vec<_> = c.diagnostics.iter().filter(|d| touches(d.range)).collect();
    let first = hits.first()?;
    let mut md = String::new();
    for d in &hits {
        md.push_str(&format!("**{}** `{}` — {}\n\n", d.code, d.name, d.message));
        if let Some(rule) = c.kb.rule(d.code) {
            md.push_str(&format!("{}\n\n", rule.summary));
        }
        if let Some(f) = &d.fix {
            md.push_str(&format!("Fix ({}): {}\n\n", super::super::convert::applicability(f.applicability), f.message));
        }
        md.push_str(&format!("[{} documentation]({})\n\n---\n\n", d.code, super::super::convert::rule_url(d.code)));
    }
    Some((md.trim_end_matches(['\n', '-', ' ']).to_string(), first.range))
}

/// The binding of a backend option under the cursor: its key or value, in a Config or a launch.
fn option_at(c: &Computed, at: usize) -> Option<(&Kernel, Site<'_>, &Binding)> {
    let on = |b: &Binding| OPTIONS.contains(&b.name.as_str()) && (b.site.contains(at) || b.site.end == at);
    for k in &c.model.kernels {
        for cfg in k.autotune.iter().flat_map(|a| &a.configs) {
            if let Some(b) = cfg.options.iter().chain(&cfg.kwargs).find(|b| on(b)) {
                return Some((k, Site::Config(cfg), b));
            }
        }
    }
    for l in &c.model.launches {
        if let Some(b) = l.kwargs.iter().find(|b| on(b)) {
            let k = c.model.kernels.get(l.kernel)?;
            return Some((k, Site::Launch(l), b));
        }
    }
    None
}

fn option_hover(c: &Computed, at: usize) -> Option<(String, TextRange)> {
    let (kernel, site, b) = option_at(c, at)?;
    let t = target::target(c)?;
    let dev = t.device;
    let tc = t.toolchain;
    let mut md = format!("**`{}`** on {}\n\n", b.name, label(&t));
    match b.name.as_str() {
        "num_warps" => {
            md.push_str("Sub-groups (warps) per work-group; must be a power of two. Work-group size = num_warps × sub-group size.\n\n");
            if let (Some((w, _)), Some((sg, why))) = (target::num_warps(site), target::sub_group(&t, kernel, site)) {
                let (_, large) = target::grf_mode(&t, site);
                md.push_str(&format!("Here: {w} × {sg} ({why}) = **{}** work-items", w * sg));
                let max = if large { dev.max_work_group_size_large_grf.get() } else { dev.max_work_group_size.get() };
                if let Some(max) = max {
                    md.push_str(&format!(" of at most {max}{}", if large { " under the large GRF mode" } else { "" }));
                }
                md.push_str(".\n\n");
            }
            lines(
                &mut md,
                [
                    fact_line("max work-group size", &dev.max_work_group_size),
                    fact_line("max work-group size, large GRF", &dev.max_work_group_size_large_grf),
                    fact_line("max sub-groups per work-group", &dev.max_num_sub_groups),
                ],
            );
        }
        "num_stages" => {
            md.push_str(&format!(
                "Software-pipelining depth of loads in loops. On {}, the default is {} at a plain launch and {} in a `triton.Config`; each stage keeps another tile in shared local memory.\n\n",
                tc.id, tc.launch_num_stages_default, tc.config_num_stages_default
            ));
            lines(&mut md, [fact_line("shared local memory per work-group (bytes)", &dev.slm_bytes)]);
        }
        "grf_mode" => {
            if tc.grf_mode_values.is_empty() {
                md.push_str(&format!("`grf_mode` is an Intel XPU option; {} does not accept it.\n\n", tc.id));
            } else {
                md.push_str(&format!(
                    "Register file mode per hardware thread. Valid on {}: {}. Large mode: {}. {}\n\n",
                    tc.id,
                    code_list(&tc.grf_mode_values),
                    code_list(&tc.grf_large_values),
                    if tc.grf_invalid_is_error { "An invalid value is an error." } else { "An invalid value is silently ignored." }
                ));
            }
            lines(
                &mut md,
                [
                    fact_line("large GRF supported", &dev.has_large_grf),
                    fact_line("registers per thread, default", &dev.grf_regs_default),
                    fact_line("registers per thread, large", &dev.grf_regs_large),
                    fact_line("max work-group size, large GRF", &dev.max_work_group_size_large_grf),
                ],
            );
        }
        _ => {
            match (&tc.subgroup_option, &tc.subgroup_option_wrong) {
                (Some(ok), Some(wrong)) => {
                    md.push_str(&format!("Sub-group size option. {} spells it `{ok}` and rejects `{wrong}`.\n\n", tc.id))
                }
                (Some(ok), None) => md.push_str(&format!("Sub-group size option; {} spells it `{ok}`.\n\n", tc.id)),
                _ => md.push_str(&format!("{} has no sub-group size option.\n\n", tc.id)),
            }
            lines(&mut md, [fact_line("supported sub-group sizes", &fact_list(&dev.sub_group_sizes))]);
        }
    }
    Some((md.trim_end().to_string(), b.site))
}

fn tl_hover(c: &Computed, touches: &dyn Fn(TextRange) -> bool) -> Option<(String, TextRange)> {
    let op = c.model.kernels.iter().flat_map(|k| &k.ops).find(|o| touches(o.callee_range))?;
    let t: Target = target::target(c)?;
    let dev = t.device;
    let tc = t.toolchain;
    let mut md = format!("**`{}`** on {}\n\n", op.callee, label(&t));
    match &op.kind {
        TlOpKind::Dot { .. } => {
            md.push_str(&format!(
                "Matrix multiply-accumulate. The minimum M is {} on {}; N and K depend on the device and dtype.\n\n",
                tc.dot_min_m, tc.id
            ));
            lines(&mut md, [fact_line("lowered to DPAS (XMX)", &dev.has_dpas), fact_line("peak fp16 TFLOPS", &dev.peak_fp16_tflops)]);
        }
        TlOpKind::MakeBlockPtr | TlOpKind::Advance => {
            md.push_str(&format!("Block pointers on {}: {}.\n", tc.id, availability(tc.block_pointers)));
        }
        TlOpKind::MakeTensorDescriptor { .. } => {
            md.push_str(&format!("Tensor descriptors on {}: {}.\n", tc.id, availability(tc.tensor_descriptors)));
        }
        TlOpKind::Float64 => {
            lines(&mut md, [fact_line("native fp64", &dev.has_fp64)]);
        }
        _ => {
            md.push_str(&format!("Triton language operation, compiled by the {} backend.\n", tc.id));
        }
    }
    Some((md.trim_end().to_string(), op.callee_range))
}

fn lines<const N: usize>(md: &mut String, ls: [Option<String>; N]) {
    for l in ls.into_iter().flatten() {
        md.push_str(&l);
        md.push('\n');
    }
}

fn code_list(v: &[String]) -> String {
    v.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
}

fn fact_list(f: &crate::knowledge::Fact<Vec<u32>>) -> crate::knowledge::Fact<String> {
    crate::knowledge::Fact {
        value: f.value.as_ref().map(|v| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")),
        verified: f.verified,
        source: f.source.clone(),
    }
}

fn availability(a: Availability) -> &'static str {
    match a {
        Availability::Supported => "supported",
        Availability::Deprecated => "deprecated",
        Availability::Removed => "removed",
        Availability::Experimental => "only the experimental spelling exists",
        Availability::Absent => "not available",
    }
}
