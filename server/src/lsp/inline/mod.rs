//! Inline suggestions: LSP 3.18 `textDocument/inlineCompletion`, ghost text the editor inserts with
//! one key. lsp-types 0.94 (tower-lsp 0.20) predates the request, so it and its types are ours, in
//! the spec's wire shape, routed as a custom method; the capability is added to the `initialize`
//! result by the transport (its item 11).
//!
//! At the `@triton.autotune` config list or the launch the cursor is in, two kinds of suggestion:
//! - the fix of a finding there: exactly the edits its quick fix makes;
//! - the verified result of the last stage run on that kernel, from its evidence record under
//!   `.xeforge/runs/` ([`records`]), only while the kernel's text hashes to the text the run verified.
//!
//! The spec wants an item's range on one line. A suggestion that changes more (the autotune stage
//! adds a decorator and rewrites the launch) becomes the part on the cursor's line as the item, and
//! the rest as the item's command, [`accept::ACCEPT_INLINE_COMMAND`], which the editor runs after
//! inserting: it applies the rest only to the text the insertion leaves, identified by its hash.
//! Every item is computed on the version the client had when it asked (stamped by the transport) and
//! is not offered once the document moved on.

pub mod accept;
pub mod records;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::{Command, Position, Range, TextDocumentIdentifier, Url};

use super::encoding::{position_to_byte, range_to_lsp};
use super::engine::Computed;
use super::session::Session;
use crate::cover::evidence::sha256;
use crate::lint::{Applicability, Edit};
use crate::model::FileModel;
use crate::text::TextRange;
use accept::{ACCEPT_INLINE_COMMAND, AcceptArgs, RestEdit};

pub const METHOD: &str = "textDocument/inlineCompletion";
/// Where the transport puts the version the document had when the request arrived (its item 12).
pub const VERSION_STAMP: &str = "$xeforgeVersion";

/// `InlineCompletionParams` (LSP 3.18): a text document position and the trigger's context.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InlineCompletionParams {
    pub text_document: TextDocumentIdentifier,
    pub position: Position,
    /// Read leniently: the proposed protocol numbered the trigger kinds from 0, the final spec from 1.
    #[serde(default)]
    pub context: Option<InlineCompletionContext>,
    /// Set by the transport (a client's own value is replaced); `None` for a document not open.
    #[serde(default, rename = "$xeforgeVersion")]
    pub asked_at: Option<i32>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InlineCompletionContext {
    #[serde(default)]
    pub trigger_kind: Value,
    #[serde(default)]
    pub selected_completion_info: Option<SelectedCompletionInfo>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SelectedCompletionInfo {
    pub range: Range,
    pub text: String,
}

/// `InlineCompletionList` (LSP 3.18).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InlineCompletionList {
    pub items: Vec<InlineCompletionItem>,
}

/// `InlineCompletionItem` (LSP 3.18); `insertText` is always plain text here, never a snippet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InlineCompletionItem {
    pub insert_text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter_text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Command>,
}

/// The request: the suggestions at the cursor of the current version, or none when the document
/// changed while they were computed.
pub async fn inline_completion(session: &Arc<Session>, p: InlineCompletionParams) -> Result<InlineCompletionList> {
    let uri = p.text_document.uri;
    let Some(entry) = session.entry(&uri) else { return Ok(InlineCompletionList::default()) };
    let Some(c) = super::handlers::current_for_typing(session, &uri).await else { return Ok(InlineCompletionList::default()) };
    // Asked about a version that is gone already: what it would get is another version's.
    if p.asked_at.is_some_and(|v| v != c.version) {
        return Err(Error::content_modified());
    }
    let s = session.clone();
    let path = entry.path.clone();
    let computed = c.clone();
    let items = tokio::task::spawn_blocking(move || suggest(&s, &computed, path.as_deref(), p.position)).await;
    let items = match items {
        Ok(items) => items,
        Err(e) => {
            session.log(tower_lsp::lsp_types::MessageType::ERROR, format!("xeforge: inline suggestions for {uri} failed: {e}"));
            Vec::new()
        }
    };
    // Never a suggestion for another version than the one asked about: the client would place it on
    // text it was not made for. Content modified tells it to ask again.
    if entry.latest.load(Ordering::SeqCst) != c.version || entry.closed.load(Ordering::SeqCst) {
        return Err(Error::content_modified());
    }
    Ok(InlineCompletionList { items })
}

/// Where suggestions are offered: the autotune decorator and config list of a kernel, or one launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    pub ranges: Vec<TextRange>,
    /// Index into `FileModel::kernels`.
    pub kernel: usize,
}

impl Site {
    fn holds(&self, r: TextRange) -> bool {
        self.ranges.iter().any(|s| s.contains_range(r))
    }
}

/// The innermost launch around `at`, else the autotune decorator or config list around it. A cursor
/// just after the closing bracket is still in it.
pub fn site_at(model: &FileModel, at: usize) -> Option<Site> {
    let around = |r: TextRange| r.start <= at && at <= r.end;
    let launch = model.launches.iter().filter(|l| around(l.range)).min_by_key(|l| l.range.len());
    if let Some(l) = launch
        && l.kernel < model.kernels.len()
    {
        return Some(Site { ranges: vec![l.range], kernel: l.kernel });
    }
    model.kernels.iter().enumerate().find_map(|(i, k)| {
        let a = k.autotune.as_ref()?;
        let ranges: Vec<TextRange> = std::iter::once(a.range).chain(a.configs_range).collect();
        ranges.iter().any(|r| around(*r)).then_some(Site { ranges, kernel: i })
    })
}

/// One change offered at the cursor, before it is cut to the spec's one-line item.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    /// Edits of the analysed text, sorted, not overlapping.
    pub edits: Vec<Edit>,
    /// The command's title: the fix's message, or the evidence summary.
    pub title: String,
    /// For a stage result: the summary and the record, said to the user once it is accepted.
    pub evidence: Option<(String, std::path::PathBuf)>,
}

fn suggest(s: &Session, c: &Computed, path: Option<&Path>, pos: Position) -> Vec<InlineCompletionItem> {
    let at = position_to_byte(&c.rope, pos, c.encoding);
    let Some(site) = site_at(&c.model, at) else { return Vec::new() };
    let mut all = fixes(c, &site, at);
    if let Some(path) = path
        && let Some(k) = c.model.kernels.get(site.kernel)
    {
        all.extend(s.records.suggestions(&c.text, path, &k.name));
    }
    all.iter().filter_map(|sg| item(c, &c.uri, at, sg)).collect()
}

/// The fixes of the findings at the site (a finding there, or a fix that edits there): safe ones
/// first, then by how near the finding is to the cursor; one item per distinct fix.
fn fixes(c: &Computed, site: &Site, at: usize) -> Vec<Suggestion> {
    let mut found: Vec<(bool, usize, Suggestion)> = Vec::new();
    for d in &c.diagnostics {
        let Some(fix) = &d.fix else { continue };
        if !(site.holds(d.range) || fix.edits.iter().any(|e| site.holds(e.range))) {
            continue;
        }
        if found.iter().any(|(_, _, s)| s.edits == fix.edits) {
            continue;
        }
        let distance = if d.range.start <= at && at <= d.range.end { 0 } else { d.range.start.abs_diff(at).min(d.range.end.abs_diff(at)) };
        let title = format!("{} ({})", fix.message, d.code);
        found.push((fix.applicability != Applicability::Safe, distance, Suggestion { edits: fix.edits.clone(), title, evidence: None }));
    }
    found.sort_by_key(|(unsafe_, distance, _)| (*unsafe_, *distance));
    found.into_iter().map(|(_, _, s)| s).collect()
}

/// The smallest form of each edit: a line diff inside it, lines that stay left out, and a change
/// within one line cut to the characters that change. A no-op disappears; an edit outside the text,
/// off a character boundary or overlapping the one before makes the whole suggestion invalid.
pub fn minimize(text: &str, edits: &[Edit]) -> Option<Vec<Edit>> {
    let mut out = Vec::new();
    let mut end_of_last = 0;
    for e in edits {
        let old = text.get(e.range.start..e.range.end)?;
        if e.range.start < end_of_last {
            return None;
        }
        end_of_last = e.range.end;
        let diff = similar::TextDiff::from_lines(old, e.content.as_str());
        let offsets = |slices: &[&str]| -> Vec<usize> {
            std::iter::once(0)
                .chain(slices.iter().scan(0, |n, s| {
                    *n += s.len();
                    Some(*n)
                }))
                .collect()
        };
        let (old_at, new_at) = (offsets(diff.old_slices()), offsets(diff.new_slices()));
        for op in diff.ops() {
            if op.tag() == similar::DiffTag::Equal {
                continue;
            }
            let (o, n) = (op.old_range(), op.new_range());
            let mut start = e.range.start + old_at[o.start];
            let mut old_mid = &old[old_at[o.start]..old_at[o.end]];
            let mut new_mid = &e.content[new_at[n.start]..new_at[n.end]];
            // Whole lines on both sides: the shared line break stays, so the range ends on its line.
            if let (Some(a), Some(b)) = (old_mid.strip_suffix('\n'), new_mid.strip_suffix('\n')) {
                old_mid = a;
                new_mid = b;
            }
            if !old_mid.contains('\n') && !new_mid.contains('\n') {
                let Some((a, b, new)) = super::edit::minimal_replacement(old_mid, new_mid) else { continue };
                start += a;
                out.push(Edit { range: TextRange::new(start, start + (b - a)), content: new.to_string() });
            } else {
                out.push(Edit { range: TextRange::new(start, start + old_mid.len()), content: new_mid.to_string() });
            }
        }
    }
    Some(out)
}

/// The item for a suggestion: its edit on the cursor's line (else the nearest one), cut to that line;
/// everything else goes into the command, as edits of the text the item leaves.
fn item(c: &Computed, uri: &Url, at: usize, s: &Suggestion) -> Option<InlineCompletionItem> {
    let (item_range, insert, rest) = split(&c.text, at, &minimize(&c.text, &s.edits)?)?;
    let mut after = c.text.clone();
    after.replace_range(item_range.start..item_range.end, &insert);
    let command = (!rest.is_empty() || s.evidence.is_some()).then(|| {
        let args = AcceptArgs {
            uri: uri.clone(),
            expect: sha256(&after),
            edits: rest.iter().map(|e| RestEdit { start: e.range.start, end: e.range.end, text: e.content.clone() }).collect(),
            summary: s.evidence.as_ref().map(|(summary, _)| summary.clone()),
            record: s.evidence.as_ref().map(|(_, record)| record.clone()),
        };
        Command {
            title: s.title.clone(),
            command: ACCEPT_INLINE_COMMAND.into(),
            arguments: Some(vec![serde_json::to_value(args).unwrap_or(Value::Null)]),
        }
    });
    Some(InlineCompletionItem {
        insert_text: insert,
        filter_text: None,
        range: Some(range_to_lsp(&c.rope, item_range, c.encoding)),
        command,
    })
}

/// Cut minimal `edits` of `text` into the one-line item (range, text) and the rest, as edits of the
/// text the item leaves. `None` when there is nothing to change.
pub fn split(text: &str, at: usize, edits: &[Edit]) -> Option<(TextRange, String, Vec<Edit>)> {
    let line_of = |b: usize| text[..b.min(text.len())].matches('\n').count();
    let cursor_line = line_of(at);
    let primary = edits
        .iter()
        .position(|e| line_of(e.range.start) == cursor_line)
        .or_else(|| (0..edits.len()).min_by_key(|&i| edits[i].range.start.abs_diff(at).min(edits[i].range.end.abs_diff(at))))?;
    let e = &edits[primary];
    let line_end = text[e.range.start..].find(['\n', '\r']).map_or(text.len(), |i| e.range.start + i);
    let item_range = TextRange::new(e.range.start, e.range.end.min(line_end));
    let delta = e.content.len() as isize - item_range.len() as isize;
    let shift = |x: usize| if x >= item_range.end { x.saturating_add_signed(delta) } else { x };
    let mut rest = Vec::new();
    for (i, o) in edits.iter().enumerate() {
        if i != primary {
            rest.push(Edit { range: TextRange::new(shift(o.range.start), shift(o.range.end)), content: o.content.clone() });
        } else if e.range.end > line_end {
            // The lines past the item's line that the edit replaces, now after the inserted text.
            let from = item_range.start + e.content.len();
            rest.push(Edit { range: TextRange::new(from, from + (e.range.end - line_end)), content: String::new() });
        }
    }
    rest.sort_by_key(|e| (e.range.start, e.range.end));
    Some((item_range, e.content.clone(), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(start: usize, end: usize, content: &str) -> Edit {
        Edit { range: TextRange::new(start, end), content: content.into() }
    }

    fn apply(text: &str, edits: &[Edit]) -> String {
        let mut out = text.to_string();
        for e in edits.iter().rev() {
            out.replace_range(e.range.start..e.range.end, &e.content);
        }
        out
    }

    /// The item applied, then the rest on the text it leaves: always the suggestion's text.
    fn accepted(text: &str, at: usize, edits: &[Edit]) -> (String, TextRange, String) {
        let (range, insert, rest) = split(text, at, &minimize(text, edits).unwrap()).unwrap();
        let mut after = text.to_string();
        after.replace_range(range.start..range.end, &insert);
        (apply(&after, &rest), range, insert)
    }

    const TEXT: &str = "@triton.jit\ndef k(x, B: tl.constexpr):\n    pass\n\n\ndef run(x):\n    k[(1,)](x, B=64, num_warps=6)\n";

    #[test]
    fn a_change_within_a_line_is_cut_to_the_characters_that_change() {
        let at = TEXT.find("num_warps").unwrap();
        let six = TEXT.find("=6)").unwrap() + 1;
        let m = minimize(TEXT, &[edit(at, six + 1, "num_warps=8")]).unwrap();
        assert_eq!(m, [edit(six, six + 1, "8")]);
        let whole = TEXT.find("    k[").unwrap();
        let line = &TEXT[whole..];
        let m = minimize(TEXT, &[edit(whole, TEXT.len(), &line.replace("num_warps=6", "num_warps=8"))]).unwrap();
        assert_eq!(m, [edit(six, six + 1, "8")], "whole lines that stay are dropped");
        assert_eq!(minimize(TEXT, &[edit(at, at + 3, "num")]).unwrap(), []);
        assert_eq!(minimize(TEXT, &[edit(0, TEXT.len() + 1, "")]), None, "outside the text");
    }

    #[test]
    fn a_many_line_change_becomes_the_cursor_lines_item_and_the_rest() {
        let after = "@triton.autotune(configs=[\n    triton.Config({'B': 64}, num_warps=8),\n], key=[])\n@triton.jit\ndef k(x, B: tl.constexpr):\n    pass\n\n\ndef run(x):\n    k[(1,)](x)\n";
        let diff = crate::cover::evidence::unified_diff("k.py", TEXT, after);
        let edits = crate::cover::evidence::apply_diff(TEXT, &diff).unwrap();
        // Cursor at the launch: the item is the launch's change, the decorator comes with the command.
        let at = TEXT.find("k[(1,)]").unwrap();
        let (text, range, insert) = accepted(TEXT, at, &edits);
        assert_eq!(text, after);
        assert_eq!(&TEXT[range.start..range.end], ", B=64, num_warps=6");
        assert_eq!(insert, "");
        // Cursor on the kernel's first line: the inserted decorator is the item (one empty range).
        let (text, range, insert) = accepted(TEXT, 3, &edits);
        assert_eq!(text, after);
        assert!(range.is_empty() && range.start == 0, "{range:?}");
        assert_eq!(insert, "@triton.autotune(configs=[\n    triton.Config({'B': 64}, num_warps=8),\n], key=[])\n");
    }

    #[test]
    fn a_replaced_block_of_lines_keeps_its_item_on_one_line() {
        let text = "a = [\n    1,\n    2,\n]\nb = 3\n";
        let start = text.find("    1").unwrap();
        let end = text.find("]\n").unwrap();
        let edits = [edit(start, end, "    4,\n"), edit(text.find("3").unwrap(), text.len() - 1, "5")];
        for at in [start, 0, text.len() - 2] {
            let (done, range, _) = accepted(text, at, &edits);
            assert_eq!(done, "a = [\n    4,\n]\nb = 5\n");
            assert!(!text[range.start..range.end].contains('\n'), "{range:?}");
        }
    }
}
