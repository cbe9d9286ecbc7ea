//! Signature help for `tl.*`/`triton.*` calls (parameters of the target toolchain's release, from
//! `knowledge/api`) and for kernel launches `k[grid](...)`: the kernel's parameters, constexpr ones
//! marked, and those the autotuner or heuristics set flagged as such.

use tower_lsp::lsp_types::{
    Documentation, MarkupContent, MarkupKind, ParameterInformation, ParameterLabel, Position, SignatureHelp, SignatureInformation,
};

use super::super::encoding::position_to_byte;
use super::super::engine::Computed;
use super::completion::{canonical, docs, kernel_named, param_detail};
use super::cursor;
use super::target;

pub fn signature_help(c: &Computed, pos: Position) -> Option<SignatureHelp> {
    let at = position_to_byte(&c.rope, pos, c.encoding);
    let cur = cursor::at(&c.text, at);
    let call = cur.call.as_ref()?;
    if cur.dict.is_some() {
        // Inside `triton.Config({...})`: still the call's first parameter.
    }
    let (label, params, doc) = if call.launch {
        let k = kernel_named(c, call.callee)?;
        let params: Vec<(String, String, Option<String>)> = k
            .params
            .iter()
            .map(|p| {
                let label = if p.is_constexpr { format!("{}: tl.constexpr", p.name) } else { p.name.clone() };
                let detail = param_detail(k, p);
                let doc = detail.split_once(": ").map(|(_, d)| d.to_string());
                (p.name.clone(), label, doc)
            })
            .collect();
        (format!("{}[grid]", k.name), params, format!("Launch of the `@triton.jit` kernel `{}`.", k.name))
    } else {
        let t = target::target(c)?;
        let canon = canonical(c, call.callee)?;
        let (m, name, sym) = c.kb.api.lookup(&canon)?;
        let ps = c.kb.api.params_on(sym, &t.toolchain.id);
        let params = ps.iter().map(|p| (p.name.clone(), p.label(), p.doc.clone())).collect();
        (format!("{}.{name}", m.alias), params, docs(&c.kb, &m.alias, name, sym, &t.toolchain.id))
    };
    let mut text = format!("{label}(");
    let mut infos = Vec::new();
    for (i, (_, plabel, pdoc)) in params.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        let start = utf16_len(&text);
        text.push_str(plabel);
        infos.push(ParameterInformation {
            label: ParameterLabel::LabelOffsets([start, utf16_len(&text)]),
            documentation: pdoc.clone().map(Documentation::String),
        });
    }
    text.push(')');
    let active = match call.keyword {
        Some(kw) => params.iter().position(|(n, _, _)| n == kw),
        None => Some(call.positional).filter(|i| *i < params.len()),
    };
    Some(SignatureHelp {
        signatures: vec![SignatureInformation {
            label: text,
            documentation: Some(Documentation::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value: doc })),
            parameters: Some(infos),
            active_parameter: active.map(|a| a as u32),
        }],
        active_signature: Some(0),
        active_parameter: active.map(|a| a as u32),
    })
}

/// Label offsets are UTF-16 code units (the LSP default for strings).
fn utf16_len(s: &str) -> u32 {
    s.encode_utf16().count() as u32
}
