//! What happens to a finished stage run's verified text.
//!
//! - Document unchanged, or changed only away from what the stage touched: the hunks are moved onto
//!   the current text ([`stage_rebase`]) and sent as a `workspace/applyEdit` stamped with the version
//!   they were computed for. A client that refuses because the version moved again gets a fresh try.
//! - The kernel (or a changed launch site) was edited meanwhile: nothing is applied. The result is kept
//!   and offered again, with `window/showMessageRequest` ("Apply anyway" / "Discard") and as a code
//!   lens over the kernel ("Apply verified … result"), until applied, discarded or the document closes.
//!
//! Every outcome names the evidence record (`.xeforge/runs/*.json`) by file URI.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::request::{ApplyWorkspaceEdit, ShowMessageRequest};
use tower_lsp::lsp_types::{
    ApplyWorkspaceEditParams, CodeLens, Command, MessageActionItem, MessageType, ShowMessageRequestParams, TextEdit, Url,
};

use crate::lsp::edit::versioned_edit;
use crate::lsp::encoding::range_to_lsp;
use crate::lsp::engine::Computed;
use crate::lsp::session::{Session, lock};
use crate::lsp::stage::StageResult;
use crate::lsp::stage::rebase::{self, Conflict, Replace};
use crate::lsp::transport::client_request;
use crate::text::TextRange;

pub const APPLY_RESULT_COMMAND: &str = "xeforge.applyStageResult";
pub const DISCARD_RESULT_COMMAND: &str = "xeforge.discardStageResult";

const APPLY_ANYWAY: &str = "Apply anyway";
const DISCARD: &str = "Discard";

/// A verified result that was not applied, waiting for the user's decision.
#[derive(Debug)]
pub struct PendingResult {
    pub id: u64,
    pub uri: Url,
    pub stage: String,
    pub kernel: String,
    pub summary: String,
    pub record: Option<PathBuf>,
    /// The text the run started from, and the verified text.
    pub old: String,
    pub new: String,
    pub kernel_before: Option<TextRange>,
    pub kernel_after: Option<TextRange>,
    pub why: Conflict,
}

/// The results waiting in this session, by id.
#[derive(Default)]
pub struct PendingResults {
    next: AtomicU64,
    map: Mutex<BTreeMap<u64, Arc<PendingResult>>>,
}

impl PendingResults {
    fn insert(&self, make: impl FnOnce(u64) -> PendingResult) -> Arc<PendingResult> {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let p = Arc::new(make(id));
        lock(&self.map).insert(id, p.clone());
        p
    }
    pub fn get(&self, id: u64) -> Option<Arc<PendingResult>> {
        lock(&self.map).get(&id).cloned()
    }
    pub fn remove(&self, id: u64) -> Option<Arc<PendingResult>> {
        lock(&self.map).remove(&id)
    }
    pub fn for_uri(&self, uri: &Url) -> Vec<Arc<PendingResult>> {
        lock(&self.map).values().filter(|p| &p.uri == uri).cloned().collect()
    }
    /// A closed document takes its waiting results with it.
    pub fn forget_uri(&self, uri: &Url) {
        lock(&self.map).retain(|_, p| &p.uri != uri);
    }
}

/// A run that produced a verified text.
pub struct Finished {
    pub uri: Url,
    pub stage: String,
    pub kernel: String,
    /// The text the run started from.
    pub old: String,
    pub new: String,
    pub result: StageResult,
}

/// Deliver a finished run; returns the line for the progress end and the log.
pub async fn deliver(s: &Arc<Session>, f: Finished) -> String {
    let summary = f.result.summary.clone();
    if let Some(record) = &f.result.record {
        s.evidence.record(&f.uri, &f.kernel, record.clone());
        refresh_lenses(s);
    }
    let hunks = rebase::hunks(&f.old, &f.new);
    if hunks.is_empty() {
        return format!("{summary} — no change");
    }
    // Tries: a refusal because the user typed between our read and the client's apply is retried.
    for _ in 0..3 {
        let Some((current, version, rope)) = snapshot(s, &f.uri) else {
            return with_record(&format!("{summary} — not applied: the document was closed"), f.result.record.as_ref());
        };
        let edits = match rebase::rebase(&f.old, &current, f.result.kernel_range, &hunks) {
            Ok(e) => e,
            Err(why) => return offer(s, &f, why),
        };
        match send(s, &f.uri, version, &rope, &edits, &summary).await {
            Sent::Applied => {
                s.show(MessageType::INFO, with_record(&summary, f.result.record.as_ref()));
                return summary;
            }
            Sent::Refused(_) if snapshot(s, &f.uri).is_some_and(|(_, v, _)| v != version) => continue,
            Sent::Refused(why) => {
                s.log(MessageType::WARNING, format!("xeforge: the editor refused the {} result: {why}", f.stage));
                return offer(s, &f, Conflict::RegionEdited);
            }
            Sent::NoClient => return summary,
        }
    }
    offer(s, &f, Conflict::RegionEdited)
}

fn snapshot(s: &Session, uri: &Url) -> Option<(String, i32, ropey::Rope)> {
    let entry = s.entry(uri)?;
    let doc = lock(&entry.doc);
    Some((doc.text(), doc.version(), doc.rope().clone()))
}

enum Sent {
    Applied,
    Refused(String),
    NoClient,
}

async fn send(s: &Session, uri: &Url, version: i32, rope: &ropey::Rope, edits: &[Replace], label: &str) -> Sent {
    let Some(client) = s.client() else { return Sent::NoClient };
    let edits: Vec<TextEdit> =
        edits.iter().map(|e| TextEdit { range: range_to_lsp(rope, e.range, s.encoding()), new_text: e.text.clone() }).collect();
    let params = ApplyWorkspaceEditParams { label: Some(label.to_string()), edit: versioned_edit(uri, version, edits) };
    match client_request::<ApplyWorkspaceEdit>(client, params, Duration::from_secs(60)).await {
        Ok(r) if r.applied => Sent::Applied,
        Ok(r) => Sent::Refused(r.failure_reason.unwrap_or_else(|| "the editor refused it".into())),
        Err(e) => Sent::Refused(e.to_string()),
    }
}

/// Keep the result and ask the user; the answer is awaited in the background so the run can end.
fn offer(s: &Arc<Session>, f: &Finished, why: Conflict) -> String {
    let p = s.stage_results.insert(|id| PendingResult {
        id,
        uri: f.uri.clone(),
        stage: f.stage.clone(),
        kernel: f.kernel.clone(),
        summary: f.result.summary.clone(),
        record: f.result.record.clone(),
        old: f.old.clone(),
        new: f.new.clone(),
        kernel_before: f.result.kernel_range,
        kernel_after: f.result.kernel_range_after,
        why: why.clone(),
    });
    let line = format!("{} — not applied: {why}", p.summary);
    refresh_lenses(s);
    if let Some(client) = s.client().cloned() {
        let s = s.clone();
        let message = format!("xeforge: {}. Kept as a code lens on {}.", with_record(&line, p.record.as_ref()), p.kernel);
        tokio::spawn(async move {
            let params = ShowMessageRequestParams {
                typ: MessageType::WARNING,
                message,
                actions: Some(vec![
                    MessageActionItem { title: APPLY_ANYWAY.into(), properties: Default::default() },
                    MessageActionItem { title: DISCARD.into(), properties: Default::default() },
                ]),
            };
            // The user may leave the prompt open for long; the lens stays meanwhile.
            let answer = client_request::<ShowMessageRequest>(&client, params, Duration::from_secs(24 * 3600)).await;
            match answer.ok().flatten().map(|a| a.title) {
                Some(t) if t == APPLY_ANYWAY => {
                    if let Err(e) = apply_pending(&s, p.id).await {
                        s.show(MessageType::WARNING, format!("xeforge: {e}"));
                    }
                }
                Some(t) if t == DISCARD => {
                    s.stage_results.remove(p.id);
                    refresh_lenses(&s);
                }
                _ => {}
            }
        });
    }
    line
}

/// Apply a kept result: rebased when the conflicting edit was undone, else the verified kernel replaces
/// the user's current one ("apply anyway"); hunks outside the kernel must still be intact.
pub async fn apply_pending(s: &Arc<Session>, id: u64) -> std::result::Result<String, String> {
    let p = s.stage_results.get(id).ok_or_else(|| format!("no kept stage result {id} (already applied or discarded)"))?;
    let hunks = rebase::hunks(&p.old, &p.new);
    let (current, version, rope) = snapshot(s, &p.uri).ok_or_else(|| format!("{} is not open", p.uri))?;
    let edits = match rebase::rebase(&p.old, &current, p.kernel_before, &hunks) {
        Ok(e) => e,
        Err(_) => {
            let (Some(before), Some(after)) = (p.kernel_before, p.kernel_after) else {
                return Err(format!("{}: the stage changed more than one kernel; re-run it", p.stage));
            };
            // The kernel where the server's own analysis of this version has it (no second parse).
            let c = crate::lsp::handlers::current(s, &p.uri).await.ok_or_else(|| format!("{} is not open", p.uri))?;
            if c.version != version {
                return Err(format!("{} changed while the result was being applied; try again", p.uri));
            }
            let k = c.model.kernels.iter().find(|k| k.name == p.kernel).ok_or_else(|| format!("{}: {}", p.kernel, Conflict::KernelGone))?;
            rebase::force(&p.old, &p.new, &current, before, after, k.range, &hunks)
                .map_err(|e| format!("{} result not applied: {e}; re-run the stage", p.stage))?
        }
    };
    match send(s, &p.uri, version, &rope, &edits, &p.summary).await {
        Sent::Applied | Sent::NoClient => {
            s.stage_results.remove(id);
            refresh_lenses(s);
            s.show(MessageType::INFO, with_record(&p.summary, p.record.as_ref()));
            Ok(p.summary.clone())
        }
        Sent::Refused(why) => Err(format!("{} result not applied: {why}", p.stage)),
    }
}

#[derive(Deserialize)]
struct ResultArg {
    id: u64,
}

fn result_id(args: &[Value]) -> Result<u64> {
    let v = args.first().cloned().ok_or_else(|| Error::invalid_params("expected one argument {\"id\": N}"))?;
    serde_json::from_value::<ResultArg>(v).map(|a| a.id).map_err(|e| Error::invalid_params(e.to_string()))
}

/// `xeforge.applyStageResult {id}`.
pub async fn command_apply(s: &Arc<Session>, args: &[Value]) -> Result<Option<Value>> {
    let id = result_id(args)?;
    match apply_pending(s, id).await {
        Ok(summary) => Ok(Some(json!({"applied": true, "summary": summary}))),
        Err(e) => {
            s.show(MessageType::WARNING, format!("xeforge: {e}"));
            Ok(Some(json!({"applied": false, "reason": e})))
        }
    }
}

/// `xeforge.discardStageResult {id}`.
pub fn command_discard(s: &Arc<Session>, args: &[Value]) -> Result<Option<Value>> {
    let id = result_id(args)?;
    let removed = s.stage_results.remove(id).is_some();
    refresh_lenses(s);
    Ok(Some(json!({"discarded": removed})))
}

/// Lenses for kept results over their kernel (the first line when the kernel is gone).
pub fn lenses(s: &Session, c: &Computed, uri: &Url) -> Vec<CodeLens> {
    let mut out = Vec::new();
    for p in s.stage_results.for_uri(uri) {
        let at = c.model.kernels.iter().find(|k| k.name == p.kernel).map(|k| k.def_range.start).unwrap_or(0);
        let range = range_to_lsp(&c.rope, TextRange::empty(at), c.encoding);
        let arg = vec![json!({"id": p.id, "uri": uri.as_str()})];
        out.push(CodeLens {
            range,
            command: Some(Command {
                title: format!("Apply verified {} result ({})", p.stage, p.why),
                command: APPLY_RESULT_COMMAND.into(),
                arguments: Some(arg.clone()),
            }),
            data: None,
        });
        out.push(CodeLens {
            range,
            command: Some(Command { title: "Discard".into(), command: DISCARD_RESULT_COMMAND.into(), arguments: Some(arg) }),
            data: None,
        });
    }
    out
}

fn refresh_lenses(s: &Arc<Session>) {
    if s.caps().code_lens_refresh
        && let Some(c) = s.client().cloned()
    {
        tokio::spawn(async move {
            let _ = c.code_lens_refresh().await;
        });
    }
}

/// `line — evidence: file:///…/.xeforge/runs/….json` (editors turn the URI into a link).
pub(crate) fn with_record(line: &str, record: Option<&PathBuf>) -> String {
    match record.and_then(|p| Url::from_file_path(std::path::absolute(p).unwrap_or_else(|_| p.clone())).ok()) {
        Some(u) => format!("{line} — evidence: {u}"),
        None => line.to_string(),
    }
}
