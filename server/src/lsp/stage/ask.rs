//! A stage that needs one line from the user (`StageFailure::NeedsInput`): ask the editor once with
//! `xeforge/askProblem`, write the answer where the command line reads it (a `# xeforge: dims` line
//! above the entry, as a versioned edit), and hand back the new text for the same run to go on.
//!
//! `xeforge/askProblem` (server → client): params `{uri, entry, missing: [what], suggestion, line,
//! message}`; result `{answer: string}`, or `null` when the user dismissed the prompt (or the client
//! does not know the method: the run then ends with the message saying what to add).

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use tower_lsp::lsp_types::request::{ApplyWorkspaceEdit, Request};
use tower_lsp::lsp_types::{ApplyWorkspaceEditParams, Position, Range, TextEdit, Url};

use crate::lsp::edit::versioned_edit;
use crate::lsp::session::{Session, lock};
use crate::lsp::stage::StageQuestion;
use crate::lsp::transport::client_request;

pub enum AskProblem {}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AskProblemParams {
    pub uri: Url,
    pub entry: String,
    pub missing: Vec<String>,
    pub suggestion: String,
    pub line: u32,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AskProblemAnswer {
    pub answer: String,
}

impl Request for AskProblem {
    type Params = AskProblemParams;
    type Result = Option<AskProblemAnswer>;
    const METHOD: &'static str = "xeforge/askProblem";
}

/// How long a prompt may stay open: the user is reading the question, not the server waiting on a bug.
const ANSWER_WITHIN: Duration = Duration::from_secs(3600);

/// Ask, write the answer into the document, and return the document's new text; `Err` says why the
/// run cannot go on (shown to the user in place of a result).
pub async fn ask_and_write(
    s: &Arc<Session>,
    uri: &Url,
    text: &str,
    message: &str,
    q: &StageQuestion,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let Some(client) = s.client().cloned() else { return Err(message.to_string()) };
    let params = AskProblemParams {
        uri: uri.clone(),
        entry: q.entry.clone(),
        missing: q.missing.clone(),
        suggestion: q.suggestion.clone(),
        line: q.line,
        message: message.to_string(),
    };
    let asked = tokio::select! {
        r = client_request::<AskProblem>(&client, params, ANSWER_WITHIN) => r,
        _ = cancel.cancelled() => return Err("cancelled while asking for sizes".into()),
    };
    let answer = match asked {
        Ok(Some(a)) if !a.answer.trim().is_empty() => a.answer,
        _ => return Err(message.to_string()),
    };
    let insertion = q.insertion(&answer);
    let Some(at) = line_start(text, q.line as usize) else { return Err(message.to_string()) };
    let mut new = String::with_capacity(text.len() + insertion.len());
    new.push_str(&text[..at]);
    new.push_str(&insertion);
    new.push_str(&text[at..]);

    // Only into the text the question was computed from: anything else may have moved the entry.
    let Some(entry) = s.entry(uri) else { return Err("the document was closed while asking".into()) };
    let version = {
        let doc = lock(&entry.doc);
        if doc.text() != text {
            return Err(format!("the document changed while asking; run the stage again (add `{}` yourself)", insertion.trim()));
        }
        doc.version()
    };
    let at_line = Position { line: q.line, character: 0 };
    let edit = TextEdit { range: Range { start: at_line, end: at_line }, new_text: insertion.clone() };
    let params =
        ApplyWorkspaceEditParams { label: Some(format!("xeforge: sizes for {}", q.entry)), edit: versioned_edit(uri, version, vec![edit]) };
    match client_request::<ApplyWorkspaceEdit>(&client, params, Duration::from_secs(60)).await {
        Ok(r) if r.applied => Ok(new),
        Ok(r) => Err(format!("the editor did not take `{}`: {}", insertion.trim(), r.failure_reason.unwrap_or_default())),
        Err(e) => Err(format!("the editor did not take `{}`: {e}", insertion.trim())),
    }
}

/// Byte offset where 0-based `line` starts (the end of the text for the line after the last).
fn line_start(text: &str, line: usize) -> Option<usize> {
    if line == 0 {
        return Some(0);
    }
    text.match_indices('\n').nth(line - 1).map(|(i, _)| i + 1).or_else(|| (text.lines().count() == line).then_some(text.len()))
}

#[cfg(test)]
mod tests {
    use super::line_start;
    use crate::lsp::stage::StageQuestion;

    #[test]
    fn the_answer_goes_on_its_own_line_with_the_entry_indentation() {
        let q = StageQuestion { entry: "K.f".into(), missing: vec![], suggestion: "n=<value>".into(), line: 3, indent: "    ".into() };
        assert_eq!(q.insertion(" n=8 "), "    # xeforge: dims n=8\n");
        assert_eq!(q.insertion("# xeforge: dims n=8"), "    # xeforge: dims n=8\n");
        let text = "a\nb\nc\n    def f(x):\n";
        assert_eq!(line_start(text, 0), Some(0));
        assert_eq!(line_start(text, 3), Some(6));
        assert_eq!(line_start(text, 9), None);
    }
}
