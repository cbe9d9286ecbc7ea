//! Code actions: the fix of each diagnostic under the cursor (preferred when safe), "ignore XFnnn for
//! this line", "Re-verify on the harness" over compiled facts and the estimates they settle (XF201,
//! XF202), `source.fixAll.xeforge`, and the stage actions of a [`StageActionProvider`].
//! Every edit is a `TextDocumentEdit` stamped with the version it was computed for.

use std::cell::OnceCell;

use serde_json::json;
use tower_lsp::lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand, Command, Range, TextEdit, Url};
use tree_sitter::Tree;

use super::super::compiled::command::{VERIFY_COMPILED_COMMAND, VerifyCommand};
use super::super::encoding::{range_from_lsp, range_to_lsp};
use super::super::engine::Computed;
use super::super::stage::{RUN_STAGE_COMMAND, StageActionProvider, StageCommand, StageContext};
use crate::config::Settings;
use crate::lint::{Applicability, Diagnostic, Origin};
use crate::lsp::edit::{minimal_replacement, versioned_edit};
use crate::text::TextRange;

pub const FIX_ALL_KIND: &str = "source.fixAll.xeforge";
pub const STAGE_KIND: &str = "refactor.rewrite.xeforge.stage";

pub fn kinds() -> Vec<CodeActionKind> {
    vec![CodeActionKind::QUICKFIX, CodeActionKind::new(FIX_ALL_KIND), CodeActionKind::new(STAGE_KIND)]
}

pub struct Request<'a> {
    pub uri: &'a Url,
    pub range: Range,
    pub only: Option<&'a [CodeActionKind]>,
    pub settings: &'a Settings,
    pub stage: Option<&'a dyn StageActionProvider>,
}

fn wanted(only: Option<&[CodeActionKind]>, kind: &str) -> bool {
    only.is_none_or(|o| {
        o.iter().any(|k| {
            let k = k.as_str();
            kind == k || kind.strip_prefix(k).is_some_and(|rest| rest.starts_with('.'))
        })
    })
}

pub fn code_actions(c: &Computed, req: &Request<'_>) -> Vec<CodeActionOrCommand> {
    let at = range_from_lsp(&c.rope, req.range, c.encoding);
    // Read only where a suppression comment is weighed, and then once per request: a slim result
    // (a large idle document) has no tree and would be parsed again for every diagnostic.
    let tree = OnceCell::new();
    let mut out = Vec::new();
    if wanted(req.only, CodeActionKind::QUICKFIX.as_str()) {
        // The compiled facts under the cursor, and the static estimates they would settle.
        let mut verify_on = Vec::new();
        for (d, lsp_diag) in c.diagnostics.iter().zip(c.lsp()) {
            let hit = d.range.intersects(at) || d.range.contains(at.start) || d.range.end == at.start || at.contains_range(d.range);
            if !hit {
                continue;
            }
            if d.origin == Origin::Compiled || matches!(d.code, "XF201" | "XF202") {
                verify_on.push((d.origin, lsp_diag.clone()));
            }
            if let Some(fix) = &d.fix {
                let edits = fix
                    .edits
                    .iter()
                    .map(|e| TextEdit { range: range_to_lsp(&c.rope, e.range, c.encoding), new_text: e.content.clone() })
                    .collect();
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("{} ({})", fix.message, d.code),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![lsp_diag.clone()]),
                    edit: Some(versioned_edit(req.uri, c.version, edits)),
                    is_preferred: Some(fix.applicability == Applicability::Safe),
                    ..CodeAction::default()
                }));
            }
            if let Some(edit) = ignore_edit(c, d, &tree) {
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Ignore {} for this line", d.code),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![lsp_diag.clone()]),
                    edit: Some(versioned_edit(req.uri, c.version, vec![edit])),
                    is_preferred: Some(false),
                    ..CodeAction::default()
                }));
            }
        }
        if req.stage.is_some() && !verify_on.is_empty() {
            out.push(CodeActionOrCommand::CodeAction(reverify_action(req.uri, c.version, verify_on)));
        }
    }
    if wanted(req.only, FIX_ALL_KIND)
        && let Some(a) = fix_all(c, req.uri)
    {
        out.push(CodeActionOrCommand::CodeAction(a));
    }
    if wanted(req.only, STAGE_KIND)
        && let Some(p) = req.stage
    {
        out.extend(stage_actions(c, req, p, at).into_iter().map(CodeActionOrCommand::CodeAction));
    }
    out
}

/// "Re-verify on the harness" (`xeforge.verifyCompiled`), one for all the diagnostics under the
/// cursor it concerns. Over a compiled fact it asks the harness again rather than read the cache:
/// the user doubts a fact the cache would only repeat.
fn reverify_action(uri: &Url, version: i32, on: Vec<(Origin, tower_lsp::lsp_types::Diagnostic)>) -> CodeAction {
    let refresh = on.iter().any(|(o, _)| *o == Origin::Compiled);
    let arg = VerifyCommand { uri: uri.to_string(), version: Some(version), refresh };
    let title = "Re-verify on the harness".to_string();
    CodeAction {
        title: title.clone(),
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: Some(on.into_iter().map(|(_, d)| d).collect()),
        command: Some(Command {
            title,
            command: VERIFY_COMPILED_COMMAND.to_string(),
            arguments: Some(vec![serde_json::to_value(arg).unwrap_or_else(|_| json!({}))]),
        }),
        is_preferred: Some(false),
        ..CodeAction::default()
    }
}

/// All safe fixes of the document as one minimal edit; `None` when there is nothing safe to fix.
pub fn fix_all(c: &Computed, uri: &Url) -> Option<CodeAction> {
    let safe: Vec<Diagnostic> =
        c.diagnostics.iter().filter(|d| d.fix.as_ref().is_some_and(|f| f.applicability == Applicability::Safe)).cloned().collect();
    if safe.is_empty() {
        return None;
    }
    let fixed = crate::fix::apply(&c.text, &safe, false);
    let (start, end, new) = minimal_replacement(&c.text, &fixed.text)?;
    let edit = TextEdit { range: range_to_lsp(&c.rope, TextRange::new(start, end), c.encoding), new_text: new.to_string() };
    Some(CodeAction {
        title: "Fix all safe xeforge problems".into(),
        kind: Some(CodeActionKind::new(FIX_ALL_KIND)),
        edit: Some(versioned_edit(uri, c.version, vec![edit])),
        ..CodeAction::default()
    })
}

/// `# xeforge: ignore[CODE]` on the diagnostic's first line: appended, or the code added to an
/// existing list. Not offered where a comment cannot go (the line ends inside a string or with a
/// backslash continuation) or where a bare `# xeforge: ignore` already covers every code.
fn ignore_edit(c: &Computed, d: &Diagnostic, tree: &OnceCell<Tree>) -> Option<TextEdit> {
    let line = c.rope.byte_to_line(d.range.start.min(c.rope.len_bytes()));
    let line_start = c.rope.line_to_byte(line);
    let line_text = c.rope.line(line).to_string();
    let content = line_text.trim_end_matches(['\n', '\r']);
    let line_end = line_start + content.len();
    if let Some(pos) = content.find("# xeforge: ignore") {
        let rest = &content[pos + "# xeforge: ignore".len()..];
        let open = rest.strip_prefix('[')?;
        let close = open.find(']')?;
        if open[..close].split(',').any(|code| code.trim().eq_ignore_ascii_case(d.code)) {
            return None;
        }
        let insert_at = line_start + pos + "# xeforge: ignore[".len() + close;
        let text = if open[..close].trim().is_empty() { d.code.to_string() } else { format!(", {}", d.code) };
        let r = TextRange::empty(insert_at);
        return Some(TextEdit { range: range_to_lsp(&c.rope, r, c.encoding), new_text: text });
    }
    if content.trim_end().ends_with('\\') || ends_inside_string(tree.get_or_init(|| c.tree_or_parse()), line_end) {
        return None;
    }
    let r = TextRange::empty(line_end);
    Some(TextEdit { range: range_to_lsp(&c.rope, r, c.encoding), new_text: format!("  # xeforge: ignore[{}]", d.code) })
}

fn ends_inside_string(tree: &Tree, line_end: usize) -> bool {
    if line_end == 0 {
        return false;
    }
    let Some(mut node) = tree.root_node().descendant_for_byte_range(line_end - 1, line_end) else {
        return false;
    };
    loop {
        if matches!(node.kind(), "string" | "string_content" | "concatenated_string") && node.end_byte() > line_end {
            return true;
        }
        match node.parent() {
            Some(p) => node = p,
            None => return false,
        }
    }
}

fn stage_actions(c: &Computed, req: &Request<'_>, p: &dyn StageActionProvider, at: TextRange) -> Vec<CodeAction> {
    let ctx = StageContext {
        uri: req.uri.as_str(),
        path: None,
        text: &c.text,
        model: &c.model,
        diagnostics: &c.diagnostics,
        settings: req.settings,
    };
    p.actions(&ctx)
        .into_iter()
        .filter_map(|a| {
            let k = c.model.kernels.get(a.kernel)?;
            if !(k.range.intersects(at) || k.range.contains(at.start)) {
                return None;
            }
            Some(CodeAction {
                title: a.title.clone(),
                kind: Some(CodeActionKind::new(STAGE_KIND)),
                command: Some(stage_command(req.uri, c.version, &a.title, &a.stage, &k.name)),
                ..CodeAction::default()
            })
        })
        .collect()
}

pub fn stage_command(uri: &Url, version: i32, title: &str, stage: &str, kernel: &str) -> Command {
    let arg = StageCommand { uri: uri.to_string(), version: Some(version), stage: stage.to_string(), kernel: kernel.to_string() };
    Command {
        title: title.to_string(),
        command: RUN_STAGE_COMMAND.to_string(),
        arguments: Some(vec![serde_json::to_value(arg).unwrap_or_else(|_| json!({}))]),
    }
}
