//! `xeforge.acceptInline`: the command an inline suggestion's item carries, run by the editor right
//! after it inserted the item. It applies the rest of the suggestion (the parts on other lines) and,
//! for a stage result, says the evidence summary and where the record is.
//!
//! The rest was computed for the text the insertion leaves; it is applied only when the document's
//! text is exactly that (its hash), as a `workspace/applyEdit` stamped with the version that has it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::request::ApplyWorkspaceEdit;
use tower_lsp::lsp_types::{ApplyWorkspaceEditParams, MessageType, TextEdit, Url};

use crate::cover::evidence::sha256;
use crate::lsp::edit::versioned_edit;
use crate::lsp::encoding::range_to_lsp;
use crate::lsp::session::{Session, lock};
use crate::lsp::transport::client_request;
use crate::text::TextRange;

pub const ACCEPT_INLINE_COMMAND: &str = "xeforge.acceptInline";

/// The command's one argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AcceptArgs {
    pub uri: Url,
    /// sha256 of the text the item leaves: the only text `edits` apply to.
    pub expect: String,
    /// Byte ranges of that text, sorted and not overlapping.
    #[serde(default)]
    pub edits: Vec<RestEdit>,
    /// A stage result's evidence summary and record, said once it is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestEdit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Edits that are valid in `text`: in bounds, on character boundaries, in order, apart.
fn valid(text: &str, edits: &[RestEdit]) -> bool {
    let mut end_of_last = 0;
    edits.iter().all(|e| {
        let ok = e.start >= end_of_last && e.start <= e.end && text.get(e.start..e.end).is_some();
        end_of_last = e.end;
        ok
    })
}

pub async fn command(s: &Arc<Session>, args: &[Value]) -> Result<Option<Value>> {
    let v = args.first().cloned().ok_or_else(|| Error::invalid_params("expected one argument {uri, expect, edits}"))?;
    let a: AcceptArgs = serde_json::from_value(v).map_err(|e| Error::invalid_params(e.to_string()))?;
    let entry = s.entry(&a.uri).ok_or_else(|| Error::invalid_params(format!("document not open: {}", a.uri)))?;
    let (text, version, rope) = {
        let doc = lock(&entry.doc);
        (doc.text(), doc.version(), doc.rope().clone())
    };
    if sha256(&text) != a.expect {
        let why = "the document changed after the suggestion was inserted; the rest of it was not applied";
        s.show(MessageType::WARNING, format!("xeforge: {why}"));
        return Ok(Some(json!({"applied": false, "reason": why})));
    }
    if !valid(&text, &a.edits) {
        return Err(Error::invalid_params("edits outside the text, off a character boundary or overlapping"));
    }
    if let Some(summary) = &a.summary {
        s.show(MessageType::INFO, crate::lsp::stage::result::with_record(summary, a.record.as_ref()));
    }
    if a.edits.is_empty() {
        return Ok(Some(json!({"applied": true, "edits": 0})));
    }
    let n = a.edits.len();
    let edits: Vec<TextEdit> = a
        .edits
        .iter()
        .map(|e| TextEdit { range: range_to_lsp(&rope, TextRange::new(e.start, e.end), s.encoding()), new_text: e.text.clone() })
        .collect();
    let label = a.summary.clone().unwrap_or_else(|| "xeforge suggestion".into());
    let params = ApplyWorkspaceEditParams { label: Some(label), edit: versioned_edit(&a.uri, version, edits) };
    // Detached: the editor answers applyEdit while this request's slot is free for others.
    if let Some(client) = s.client().cloned() {
        let s = s.clone();
        tokio::spawn(async move {
            match client_request::<ApplyWorkspaceEdit>(&client, params, Duration::from_secs(60)).await {
                Ok(r) if r.applied => {}
                Ok(r) => s.show(
                    MessageType::WARNING,
                    format!(
                        "xeforge: the rest of the suggestion was not applied: {}",
                        r.failure_reason.unwrap_or_else(|| "refused".into())
                    ),
                ),
                Err(e) => s.log(MessageType::WARNING, format!("xeforge: the rest of the suggestion was not applied: {e}")),
            }
        });
    }
    Ok(Some(json!({"applied": true, "edits": n})))
}

#[cfg(test)]
mod tests {
    use super::{RestEdit, valid};

    #[test]
    fn rest_edits_must_fit_the_text() {
        let e = |start, end| RestEdit { start, end, text: String::new() };
        assert!(valid("héllo", &[e(0, 1), e(3, 5)]));
        assert!(!valid("héllo", &[e(0, 2)]), "inside 'é'");
        assert!(!valid("héllo", &[e(3, 5), e(0, 1)]), "out of order");
        assert!(!valid("héllo", &[e(0, 9)]), "past the end");
        assert!(!valid("héllo", &[e(4, 3)]), "reversed");
    }
}
