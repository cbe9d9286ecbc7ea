//! Text synchronisation, applied on the ordered ingress path (see `transport`): didOpen, didChange,
//! didSave and didClose mutate documents here, in wire order, before any handler runs; so do the
//! notebook notifications (`notebookDocument/did*`, applied by `lsp::notebook`).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tower_lsp::lsp_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams, MessageType,
};

use super::notebook;
use super::session::{DocEntry, Session, lock};
use super::transport::Ingress;
use super::worker;

impl Ingress for Arc<Session> {
    fn notification(&self, method: &str, params: Option<&Value>) {
        // A cell of an open notebook gets its text from the notebook's notifications only; text
        // sync for it too (a client that sends both) would analyse the cell alone.
        if method.starts_with("textDocument/did")
            && let Some(uri) = params.and_then(|p| p.pointer("/textDocument/uri")).and_then(Value::as_str)
            && let Ok(uri) = tower_lsp::lsp_types::Url::parse(uri)
            && self.is_notebook_cell(&uri)
        {
            self.log(MessageType::LOG, format!("xeforge: {method} ignored for {uri}: a cell of an open notebook"));
            return;
        }
        match method {
            "textDocument/didOpen" => with(self, params, did_open),
            "textDocument/didChange" => with(self, params, did_change),
            "textDocument/didSave" => with(self, params, did_save),
            "textDocument/didClose" => with(self, params, did_close),
            notebook::DID_OPEN => with(self, params, notebook::did_open),
            notebook::DID_CHANGE => with(self, params, notebook::did_change),
            notebook::DID_SAVE => with(self, params, notebook::did_save),
            notebook::DID_CLOSE => with(self, params, notebook::did_close),
            _ => {}
        }
    }

    fn stamp_request(&self, method: &str, params: Option<&Value>) -> Option<Value> {
        if method != super::inline::METHOD {
            return None;
        }
        // The version the client had when it asked: text sync before this request is applied, none after.
        let uri: tower_lsp::lsp_types::Url = serde_json::from_value(params?.get("textDocument")?.get("uri")?.clone()).ok()?;
        let version = self.entry(&uri)?.latest.load(Ordering::SeqCst);
        let mut p = params?.clone();
        p.as_object_mut()?.insert(super::inline::VERSION_STAMP.into(), Value::from(version));
        Some(p)
    }

    fn extra_capabilities(&self) -> serde_json::Map<String, Value> {
        // LSP 3.18's inline completion (`lsp::inline`), which lsp-types 0.94 has no field for.
        let mut m = serde_json::Map::new();
        m.insert("inlineCompletionProvider".into(), Value::Bool(true));
        // LSP 3.17's notebook sync (`lsp::notebook`), which lsp-types 0.94 lacks too.
        m.insert("notebookDocumentSync".into(), notebook::capability());
        m
    }
}

fn with<P: DeserializeOwned>(s: &Arc<Session>, params: Option<&Value>, f: fn(&Arc<Session>, P)) {
    match params.map(|p| P::deserialize(p)) {
        Some(Ok(p)) => f(s, p),
        Some(Err(e)) => s.log(MessageType::WARNING, format!("xeforge: ignoring malformed notification: {e}")),
        None => s.log(MessageType::WARNING, "xeforge: ignoring a text notification without params"),
    }
}

fn did_open(s: &Arc<Session>, p: DidOpenTextDocumentParams) {
    let td = p.text_document;
    let entry = Arc::new(DocEntry::opened(td.uri, &td.text, td.version, None));
    install(s, entry);
}

/// A document opened (a text document, or a notebook's cells as one): its worker started.
pub(super) fn install(s: &Arc<Session>, entry: Arc<DocEntry>) {
    // Reopening without a close replaces the document; the old worker stops.
    if let Some(old) = lock(&s.docs).insert(entry.uri.clone(), entry.clone()) {
        old.closed.store(true, Ordering::SeqCst);
        old.wake.notify_one();
    }
    worker::spawn(s.clone(), entry.clone());
    entry.wake.notify_one();
    // Its text now stands for the file in other documents' imports.
    if let Some(path) = &entry.path {
        super::handlers::configuration::relint_dependents(s, path);
    }
}

fn did_change(s: &Arc<Session>, p: DidChangeTextDocumentParams) {
    let Some(entry) = s.entry(&p.text_document.uri) else {
        s.log(MessageType::WARNING, format!("xeforge: didChange for unknown document {}", p.text_document.uri));
        return;
    };
    let version = p.text_document.version;
    let applied = lock(&entry.doc).apply_changes(version, &p.content_changes, s.encoding());
    match applied {
        Ok(()) => {
            entry.latest.store(version, Ordering::SeqCst);
            entry.wake.notify_one();
        }
        Err(e) => s.log(MessageType::WARNING, format!("xeforge: {}: change refused: {e}", p.text_document.uri)),
    }
}

fn did_save(s: &Arc<Session>, p: DidSaveTextDocumentParams) {
    if let Some(entry) = s.entry(&p.text_document.uri) {
        lock(&entry.doc).mark_saved();
        entry.force.store(true, Ordering::SeqCst);
        entry.wake.notify_one();
    }
}

fn did_close(s: &Arc<Session>, p: DidCloseTextDocumentParams) {
    remove(s, &p.text_document.uri);
}

/// A document closed: its worker clears its diagnostics and stops.
pub(super) fn remove(s: &Arc<Session>, uri: &tower_lsp::lsp_types::Url) {
    let removed = lock(&s.docs).remove(uri);
    if let Some(entry) = removed {
        entry.closed.store(true, Ordering::SeqCst);
        entry.wake.notify_one();
        // The file on disk stands for it again in other documents' imports.
        if let Some(path) = &entry.path {
            super::handlers::configuration::relint_dependents(s, path);
        }
    }
    // Kept stage results were for that buffer's text; the evidence records stay on disk.
    s.stage_results.forget_uri(uri);
    s.evidence.forget(uri);
}
