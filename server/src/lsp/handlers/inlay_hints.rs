//! Inlay hints after each `triton.Config(...)` and each launch: the work-group size it produces
//! against the device's limit, and the GRF mode in effect.

use tower_lsp::lsp_types::{InlayHint, InlayHintKind, InlayHintLabel, InlayHintTooltip, MarkupContent, MarkupKind, Range};

use super::super::encoding::{byte_to_position, range_from_lsp};
use super::super::engine::Computed;
use super::target::{self, Site};
use crate::knowledge::Target;
use crate::model::Kernel;
use crate::text::TextRange;

pub fn inlay_hints(c: &Computed, range: Range) -> Vec<InlayHint> {
    let Some(t) = target::target(c) else { return Vec::new() };
    let visible = range_from_lsp(&c.rope, range, c.encoding);
    let mut out = Vec::new();
    for k in &c.model.kernels {
        let configs = k.autotune.iter().flat_map(|a| &a.configs).collect::<Vec<_>>();
        for cfg in &configs {
            // A comprehension expands into several instances sharing one call: no single answer there.
            let shared = configs.iter().filter(|o| o.range == cfg.range).count() > 1;
            if shared || !overlaps(visible, cfg.range) {
                continue;
            }
            if let Some(h) = hint(c, &t, k, Site::Config(cfg), cfg.range) {
                out.push(h);
            }
        }
    }
    for l in &c.model.launches {
        let Some(k) = c.model.kernels.get(l.kernel) else { continue };
        // Autotuned kernels take their options from the configs, which carry their own hints.
        if k.autotune.is_some() || !overlaps(visible, l.range) {
            continue;
        }
        if let Some(h) = hint(c, &t, k, Site::Launch(l), l.range) {
            out.push(h);
        }
    }
    out
}

fn overlaps(a: TextRange, b: TextRange) -> bool {
    a.start <= b.end && b.start <= a.end
}

fn hint(c: &Computed, t: &Target<'_>, k: &Kernel, site: Site<'_>, at: TextRange) -> Option<InlayHint> {
    let (warps, _) = target::num_warps(site)?;
    let (sg, why) = target::sub_group(t, k, site)?;
    let (grf, large) = target::grf_mode(t, site);
    let wg = warps * sg;
    let max = if large { t.device.max_work_group_size_large_grf.get() } else { t.device.max_work_group_size.get() };
    let mut label = format!("wg {wg}");
    if let Some(max) = max {
        label.push_str(&format!("/{max}"));
    }
    if !t.toolchain.grf_mode_values.is_empty() {
        label.push_str(&format!(" · grf {grf}"));
    }
    let mut tip = format!("Work-group: {warps} warps × sub-group {sg} ({why}) = {wg} work-items on {}.", target::label(t));
    if let Some(max) = max {
        tip.push_str(&format!(" Limit: {max}{}.", if large { " under the large GRF mode" } else { "" }));
    }
    Some(InlayHint {
        position: byte_to_position(&c.rope, at.end, c.encoding),
        label: InlayHintLabel::String(label),
        kind: Some(InlayHintKind::TYPE),
        text_edits: None,
        tooltip: Some(InlayHintTooltip::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value: tip })),
        padding_left: Some(true),
        padding_right: None,
        data: None,
    })
}
