//! `xeforge.verifyCompiled {uri, version?, refresh?}`: compile the document's text on the session's
//! harness (local or remote, the stages' settings), as `xeforge verify` does and through its cache,
//! in a detached task. The command answers `null` at once; `$/progress` (cancellable) follows the
//! run, and its end and a `window/showMessage` say what came of it: how many compiled findings are
//! shown, or why none are ("no compile metadata on this device …" on the interpreter, a kernel
//! edited while it compiled). The findings are kept for the version that was compiled
//! ([`super::Store::put`]) and published by the document's worker with the next analysis.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::request::WorkspaceDiagnosticRefresh;
use tower_lsp::lsp_types::{MessageType, Url};

use super::VerifyOutcome;
use crate::lint::Origin;
use crate::lsp::engine::Computed;
use crate::lsp::progress::{self, WorkProgress};
use crate::lsp::session::{DocEntry, Session, lock};
use crate::lsp::transport::client_request;

pub const VERIFY_COMPILED_COMMAND: &str = "xeforge.verifyCompiled";

/// The command's argument. Code actions send `{uri, version}` (`refresh` when re-verifying a
/// compiled finding); the editors' own commands send `{uri}`, meaning the current version. A
/// `textDocument: {uri, version}` is accepted for `uri`/`version`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyCommand {
    pub uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i32>,
    /// Ask the harness again even when the cache has this text's result.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub refresh: bool,
}

impl<'de> Deserialize<'de> for VerifyCommand {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            #[serde(flatten)]
            doc: super::super::stage::CommandDoc,
            #[serde(default)]
            refresh: bool,
        }
        let w = Wire::deserialize(d)?;
        let (uri, version) = w.doc.resolve()?;
        Ok(VerifyCommand { uri, version, refresh: w.refresh })
    }
}

/// Start a verification; answers `null` at once (the findings arrive with the next publish).
pub async fn start(session: &Arc<Session>, args: &[Value]) -> Result<Option<Value>> {
    let Some(provider) = session.stage_provider() else {
        return Err(Error::invalid_params("no harness runner is available in this build"));
    };
    let cmd: VerifyCommand = args
        .first()
        .cloned()
        .ok_or_else(|| Error::invalid_params(format!("{VERIFY_COMPILED_COMMAND} needs one argument: {{\"uri\": …}}")))
        .and_then(|v| serde_json::from_value(v).map_err(|e| Error::invalid_params(e.to_string())))?;
    let uri = Url::parse(&cmd.uri).map_err(|e| Error::invalid_params(e.to_string()))?;
    let not_open = || Error::invalid_params(format!("document not open: {uri}"));
    let entry = session.entry(&uri).ok_or_else(not_open)?;
    let s = session.clone();
    let e = entry.clone();
    // The analysed current version: its text is what the harness compiles, its kernels what the
    // findings are kept for.
    let c = match tokio::task::spawn_blocking(move || crate::lsp::worker::compute(&s, &e, false)).await {
        Ok(Some(c)) => c,
        _ => return Err(not_open()),
    };
    if cmd.version.is_some_and(|v| v != c.version) {
        return Err(Error::content_modified());
    }
    let refused = match (&entry.path, &c.error) {
        (None, _) => Some("compiled verification needs a file on disk: save the document first".to_string()),
        (_, Some(e)) => Some(format!("nothing to verify: {e}")),
        _ if c.model.kernels.is_empty() => Some("nothing to verify: this document defines no Triton kernel".to_string()),
        _ => None,
    };
    if let Some(why) = refused {
        show(session, MessageType::WARNING, why);
        return Ok(None);
    }
    let run = super::VerifyRun {
        path: entry.path.clone().unwrap_or_default(),
        text: c.text.clone(),
        settings: session.settings_for(entry.path.as_deref()),
        kb: c.kb.clone(),
        target: c.target.clone(),
        refresh: cmd.refresh,
    };
    let token = progress::token("verify");
    let cancel = CancellationToken::new();
    lock(&session.jobs).insert(token.clone(), cancel.clone());
    let s = session.clone();
    tokio::spawn(async move {
        let name = run.path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| uri.to_string());
        let progress = WorkProgress::begin(&s, &token, format!("xeforge: compiling {name} on the harness")).await;
        let report = progress.clone();
        let on_progress = Box::new(move |message: String, percentage: Option<u32>| report.report(message, percentage));
        let outcome = provider.verify_compiled(run, on_progress, cancel.clone()).await;
        lock(&s.jobs).remove(&token);
        let (typ, message) = match outcome {
            Err(_) if cancel.is_cancelled() => (MessageType::INFO, format!("{name}: verification cancelled")),
            Err(e) => (MessageType::ERROR, format!("{name}: verification failed: {e}")),
            Ok(o) => {
                let (typ, message) = deliver(&s, &entry, &c, o).await;
                (typ, format!("{name}: {message}"))
            }
        };
        progress.end(message.clone());
        show(&s, typ, format!("xeforge: {message}"));
    });
    Ok(None)
}

/// Keep the facts for the compiled version and have the worker publish the current one with them;
/// the line that says what the current version shows.
async fn deliver(s: &Arc<Session>, entry: &Arc<DocEntry>, compiled_on: &Computed, o: VerifyOutcome) -> (MessageType, String) {
    let Some(facts) = o.facts else {
        let note = o.note.unwrap_or_else(|| "the harness gave no compile metadata".into());
        return (MessageType::WARNING, format!("{}; {note}", o.summary));
    };
    if entry.closed.load(Ordering::SeqCst) {
        return (MessageType::INFO, format!("{}; not shown: the document was closed", o.summary));
    }
    let c = compiled_on;
    entry.compiled.put(c.version, &c.text, &c.model, &c.target, &o.kernels, facts);
    // The current version analysed with the facts: stored, so the worker woken next publishes it.
    let (sess, e) = (s.clone(), entry.clone());
    let now = tokio::task::spawn_blocking(move || crate::lsp::worker::compute(&sess, &e, false)).await.ok().flatten();
    entry.force.store(true, Ordering::SeqCst);
    entry.wake.notify_one();
    refresh_pull_clients(s);
    let Some(now) = now else {
        return (MessageType::INFO, format!("{}; not shown: the document was closed", o.summary));
    };
    let shown = now.diagnostics.iter().filter(|d| d.origin == Origin::Compiled).count();
    let edited = super::edited_kernels(&o.kernels, (&c.model, &c.text), (&now.model, &now.text));
    let mut message = format!("{}; {shown} compiled finding{}", o.summary, if shown == 1 { "" } else { "s" });
    if !edited.is_empty() {
        message.push_str(&format!(" (none for {}: edited while it compiled; verify again)", edited.join(", ")));
    }
    (if edited.is_empty() { MessageType::INFO } else { MessageType::WARNING }, message)
}

/// A client that pulls diagnostics asks again (pushing clients get the worker's publish).
fn refresh_pull_clients(s: &Session) {
    let caps = s.caps();
    if caps.pull_diagnostics
        && caps.diagnostic_refresh
        && let Some(client) = s.client().cloned()
    {
        tokio::spawn(async move {
            let _ = client_request::<WorkspaceDiagnosticRefresh>(&client, (), Duration::from_secs(10)).await;
        });
    }
}

fn show(s: &Session, typ: MessageType, message: String) {
    s.log(typ, message.clone());
    s.show(typ, message);
}

#[cfg(test)]
mod tests {
    use super::VerifyCommand;
    use serde_json::json;

    #[test]
    fn the_argument_round_trips_and_hand_written_shapes_are_accepted() {
        let action = VerifyCommand { uri: "file:///k.py".into(), version: Some(3), refresh: true };
        let wire = serde_json::to_value(&action).unwrap();
        assert_eq!(wire, json!({"uri": "file:///k.py", "version": 3, "refresh": true}));
        assert_eq!(serde_json::from_value::<VerifyCommand>(wire).unwrap(), action);
        let palette: VerifyCommand = serde_json::from_value(json!({"uri": "file:///k.py"})).unwrap();
        assert_eq!(palette, VerifyCommand { uri: "file:///k.py".into(), version: None, refresh: false });
        assert_eq!(serde_json::to_value(&palette).unwrap(), json!({"uri": "file:///k.py"}));
        let by_doc: VerifyCommand = serde_json::from_value(json!({"textDocument": {"uri": "file:///k.py", "version": 3}})).unwrap();
        assert_eq!(by_doc.version, Some(3));
        assert!(serde_json::from_value::<VerifyCommand>(json!({"version": 3})).is_err(), "a document is required");
    }
}
