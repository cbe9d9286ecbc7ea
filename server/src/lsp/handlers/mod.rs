//! One file per LSP feature. Handlers read an analysed snapshot of the *current* version
//! ([`current`]) and never mutate documents: only the ingress does.

pub mod code_actions;
pub mod code_lens;
pub mod completion;
pub mod configuration;
mod cursor;
pub mod diagnostics;
pub mod hover;
pub mod inlay_hints;
pub mod signature_help;
pub mod stages;
mod target;
pub mod workspace_diagnostics;

use std::sync::Arc;

use tower_lsp::lsp_types::Url;

use super::engine::Computed;
use super::session::Session;
use super::worker;

/// The current version of `uri`, analysed (reusing the worker's result when it is up to date).
/// `None` for a document that is not open.
pub async fn current(session: &Arc<Session>, uri: &Url) -> Option<Arc<Computed>> {
    let entry = session.entry(uri)?;
    let s = session.clone();
    match tokio::task::spawn_blocking(move || worker::compute(&s, &entry, false)).await {
        Ok(c) => c,
        // A panic in the analysis: said in the log, where it can be reported, not hidden as "not open".
        Err(e) => {
            session.log(tower_lsp::lsp_types::MessageType::ERROR, format!("xeforge: the analysis of {uri} failed: {e}"));
            None
        }
    }
}

/// The current version of `uri` analysed, without the fresh-parse check [`current`] makes of a tree
/// with errors: for completion and signature help, which read the text around the cursor and the
/// model, and are asked exactly while the line is unfinished (`x = tl.`), where that check would
/// reparse the whole file on every keystroke. The worker's idle-time check still corrects the
/// published diagnostics. When linting on type, the worker is already analysing the version the
/// request follows: its result is awaited (briefly) instead of analysing the same text twice.
pub async fn current_for_typing(session: &Arc<Session>, uri: &Url) -> Option<Arc<Computed>> {
    use std::sync::atomic::Ordering;
    let entry = session.entry(uri)?;
    let version = entry.latest.load(Ordering::SeqCst);
    let config_gen = session.config_gen.load(Ordering::SeqCst);
    if session.lint_run(entry.path.as_deref()) == crate::config::LintRun::OnType {
        let mut rx = entry.result.subscribe();
        let done = |c: &Option<Arc<Computed>>| c.as_ref().is_some_and(|c| c.version >= version && c.config_gen >= config_gen);
        if let Ok(Ok(c)) = tokio::time::timeout(std::time::Duration::from_millis(200), rx.wait_for(done)).await {
            return c.clone();
        }
    }
    let s = session.clone();
    let e = entry.clone();
    match tokio::task::spawn_blocking(move || worker::compute(&s, &e, true)).await {
        Ok(Some(c)) => Some(c),
        _ => current(session, uri).await,
    }
}
