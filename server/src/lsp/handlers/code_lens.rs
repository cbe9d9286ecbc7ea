//! A code lens over each kernel: its verdict on the configured device and toolchain, then one lens
//! per stage the [`StageActionProvider`] offers for it.

use tower_lsp::lsp_types::{CodeLens, Command, Url};

use super::super::encoding::range_to_lsp;
use super::super::engine::Computed;
use super::super::stage::{StageActionProvider, StageContext};
use super::code_actions::stage_command;
use super::target;
use crate::config::Settings;
use crate::knowledge::Severity;
use crate::text::TextRange;

pub fn code_lenses(c: &Computed, uri: &Url, settings: &Settings, stage: Option<&dyn StageActionProvider>) -> Vec<CodeLens> {
    let Some(t) = target::target(c) else { return Vec::new() };
    let label = target::label(&t);
    let mut out = Vec::new();
    for k in &c.model.kernels {
        let at = range_to_lsp(&c.rope, TextRange::empty(k.def_range.start), c.encoding);
        let mine = c
            .diagnostics
            .iter()
            .filter(|d| d.kernel.as_deref() == Some(k.name.as_str()) || (d.kernel.is_none() && k.range.contains_range(d.range)));
        let (mut e, mut w, mut i) = (0, 0, 0);
        for d in mine {
            match d.severity {
                Severity::Error => e += 1,
                Severity::Warning => w += 1,
                Severity::Info => i += 1,
            }
        }
        let verdict = if e + w + i == 0 {
            format!("✓ {label}: no findings")
        } else {
            let mut parts = Vec::new();
            for (n, what) in [(e, "error"), (w, "warning"), (i, "note")] {
                if n > 0 {
                    parts.push(format!("{n} {what}{}", if n == 1 { "" } else { "s" }));
                }
            }
            format!("{} {label}: {}", if e > 0 { "✗" } else { "⚠" }, parts.join(", "))
        };
        // An empty command id renders as plain text in VS Code and Neovim.
        out.push(CodeLens { range: at, command: Some(Command { title: verdict, command: String::new(), arguments: None }), data: None });
    }
    if let Some(p) = stage {
        let ctx = StageContext { uri: uri.as_str(), path: None, text: &c.text, model: &c.model, diagnostics: &c.diagnostics, settings };
        for a in p.actions(&ctx).into_iter().filter(|a| a.lens) {
            let Some(k) = c.model.kernels.get(a.kernel) else { continue };
            out.push(CodeLens {
                range: range_to_lsp(&c.rope, TextRange::empty(k.def_range.start), c.encoding),
                command: Some(stage_command(uri, c.version, &a.title, &a.stage, &k.name)),
                data: None,
            });
        }
    }
    out
}
