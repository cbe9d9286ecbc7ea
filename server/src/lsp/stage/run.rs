//! `xeforge.runStage`: a long job (LLM + GPU harness) run by the [`StageActionProvider`] in a detached
//! task. The command returns at once; progress goes out as `$/progress` on a token the server creates;
//! `window/workDoneProgress/cancel` stops it; the result comes back as a `workspace/applyEdit` carrying
//! the version it was computed for (see `stage_result`: rebased onto later edits, or kept and offered).

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::{MessageType, NumberOrString, Url, WorkDoneProgressCancelParams};

use crate::lsp::progress::WorkProgress;
use crate::lsp::session::{Session, lock};
use crate::lsp::stage::ask;
use crate::lsp::stage::result::{Finished, deliver};
use crate::lsp::stage::{StageCommand, StageFailure, StageRun};

/// Start a run; answers `null` at once (the edit arrives later through applyEdit).
pub fn start(session: &Arc<Session>, args: &[Value]) -> Result<Option<Value>> {
    let Some(provider) = session.stage_provider() else {
        return Err(Error::invalid_params("no stage runner is available in this build"));
    };
    let cmd: StageCommand = args
        .first()
        .cloned()
        .ok_or_else(|| Error::invalid_params("xeforge.runStage needs one argument"))
        .and_then(|v| serde_json::from_value(v).map_err(|e| Error::invalid_params(e.to_string())))?;
    let uri = Url::parse(&cmd.uri).map_err(|e| Error::invalid_params(e.to_string()))?;
    let entry = session.entry(&uri).ok_or_else(|| Error::invalid_params(format!("document not open: {uri}")))?;
    let (text, version) = {
        let doc = lock(&entry.doc);
        (doc.text(), doc.version())
    };
    if cmd.version.is_some_and(|v| v != version) {
        return Err(Error::content_modified());
    }
    let run = StageRun {
        command: cmd.clone(),
        path: entry.path.clone(),
        text: text.clone(),
        settings: session.settings_for(entry.path.as_deref()),
    };
    let token = crate::lsp::progress::token(&format!("stage-{}", cmd.stage));
    let cancel = CancellationToken::new();
    lock(&session.jobs).insert(token.clone(), cancel.clone());
    let s = session.clone();
    tokio::spawn(async move {
        let progress = WorkProgress::begin(&s, &token, format!("xeforge: {} on {}", cmd.stage, cmd.kernel)).await;
        let (mut run, mut text) = (run, text);
        let mut asked = 0;
        let outcome = loop {
            let report = progress.clone();
            let on_progress = Box::new(move |message: String, percentage: Option<u32>| report.report(message, percentage));
            match provider.run(run.clone(), on_progress, cancel.clone()).await {
                // Sizes nothing in the code gives: ask once (again only if the answer still lacks some),
                // write the answer where the command line reads it, and go on with the new text.
                Err(StageFailure::NeedsInput { message, question }) if asked < 2 && !cancel.is_cancelled() => {
                    asked += 1;
                    match ask::ask_and_write(&s, &uri, &text, &message, &question, &cancel).await {
                        Ok(new) => {
                            text = new;
                            run.text = text.clone();
                        }
                        Err(why) => break Err(StageFailure::Failed(why)),
                    }
                }
                other => break other,
            }
        };
        lock(&s.jobs).remove(&token);
        let message = match outcome {
            Err(e) if cancel.is_cancelled() => format!("{} cancelled ({e})", cmd.stage),
            Err(StageFailure::NeedsInput { message, .. }) => message,
            Err(e) => format!("{} failed: {e}", cmd.stage),
            Ok(r) => match r.new_text.clone() {
                None => r.summary,
                // The edit goes to the document as it is now: rebased, or kept and offered again.
                Some(new) if !cancel.is_cancelled() => {
                    let f = Finished { uri: uri.clone(), stage: cmd.stage.clone(), kernel: cmd.kernel.clone(), old: text, new, result: r };
                    deliver(&s, f).await
                }
                Some(_) => format!("{} cancelled", cmd.stage),
            },
        };
        progress.end(message.clone());
        s.log(MessageType::INFO, format!("xeforge: {message}"));
    });
    Ok(None)
}

/// `window/workDoneProgress/cancel` (a custom method in tower-lsp 0.20).
pub fn cancel(session: &Session, p: WorkDoneProgressCancelParams) {
    let key = match p.token {
        NumberOrString::String(s) => s,
        NumberOrString::Number(n) => n.to_string(),
    };
    if let Some(t) = lock(&session.jobs).get(&key) {
        t.cancel();
    }
}
