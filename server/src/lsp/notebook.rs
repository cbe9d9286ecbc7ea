//! LSP 3.17 notebook documents (`notebookDocument/didOpen`, `didChange`, `didSave`, `didClose`;
//! lsp-types 0.94 has no types for them, so they are here): a notebook's Python code cells are one
//! document to the analyser, its diagnostics are published on each cell's own URI.
//!
//! - The ingress keeps each open notebook's cells (kind, language, text and version of each cell
//!   document) in its [`DocEntry::notebook`] and the entry's document holds the cells concatenated
//!   as `notebook::Concat` makes them (IPython syntax neutralised in place), under a version of its
//!   own that every change bumps; so the worker, the analysis and the stored results are those of any
//!   document, keyed by the notebook's URI. Each change reaches that document as one minimal edit.
//! - [`Layout`] says, for one such version, where each Python cell starts (a whole line) and which
//!   URI and version the cell had: a result is published only when the layout is that of the very
//!   version it was computed for, each cell's list stamped with that cell's version; a cell that
//!   leaves the Python cells (deleted, made markdown) gets an empty list, and a cell whose version
//!   and list are those it was last sent is not sent again (an edit in one cell of a long notebook
//!   publishes what changed).
//! - Notebook diagnostics are pushed also to clients that pull: VS Code's client pulls only the
//!   documents its selector names, and cells are `vscode-notebook-cell:` documents. A pull of a cell
//!   answers an empty report, so nothing shows twice.
//! - Hover and code actions on a cell document go through the same layout to the notebook's result
//!   and back: each edit lands in the cell it belongs to (a fix in the kernel's cell for a finding in
//!   the launch's is an edit of that cell), stamped with that cell's version.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::Deserialize;
use tower_lsp::lsp_types::{
    self as lsp, CodeActionOrCommand, DocumentChanges, MessageType, OneOf, OptionalVersionedTextDocumentIdentifier, Position,
    PublishDiagnosticsParams, Range, TextDocumentContentChangeEvent, TextDocumentEdit, TextDocumentIdentifier, TextDocumentItem, TextEdit,
    Url, VersionedTextDocumentIdentifier, WorkspaceEdit, notification::PublishDiagnostics,
};

use super::documents::Document;
use super::encoding::{Encoding, byte_to_position};
use super::engine::Computed;
use super::session::{DocEntry, Session, lock};
use crate::notebook::{Concat, Part};

pub const DID_OPEN: &str = "notebookDocument/didOpen";
pub const DID_CHANGE: &str = "notebookDocument/didChange";
pub const DID_SAVE: &str = "notebookDocument/didSave";
pub const DID_CLOSE: &str = "notebookDocument/didClose";

/// `notebookDocumentSync` for the `initialize` result: Jupyter notebooks, their Python cells, saves.
pub fn capability() -> serde_json::Value {
    serde_json::json!({
        "notebookSelector": [{"notebook": {"notebookType": "jupyter-notebook"}, "cells": [{"language": "python"}]}],
        "save": true,
    })
}

// ---------------------------------------------------------------- wire types (LSP 3.17)

const CODE: u8 = 2;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotebookCell {
    pub kind: u8,
    pub document: Url,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotebookDocument {
    pub uri: Url,
    pub version: i32,
    #[serde(default)]
    pub cells: Vec<NotebookCell>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidOpenNotebookDocumentParams {
    pub notebook_document: NotebookDocument,
    #[serde(default)]
    pub cell_text_documents: Vec<TextDocumentItem>,
}

#[derive(Debug, Deserialize)]
pub struct VersionedNotebookDocumentIdentifier {
    pub version: i32,
    pub uri: Url,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidChangeNotebookDocumentParams {
    pub notebook_document: VersionedNotebookDocumentIdentifier,
    pub change: NotebookDocumentChangeEvent,
}

#[derive(Debug, Default, Deserialize)]
pub struct NotebookDocumentChangeEvent {
    #[serde(default)]
    pub cells: Option<CellsChange>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CellsChange {
    pub structure: Option<StructureChange>,
    pub data: Option<Vec<NotebookCell>>,
    pub text_content: Option<Vec<CellTextChange>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StructureChange {
    pub array: NotebookCellArrayChange,
    pub did_open: Option<Vec<TextDocumentItem>>,
    pub did_close: Option<Vec<TextDocumentIdentifier>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotebookCellArrayChange {
    pub start: u32,
    pub delete_count: u32,
    pub cells: Option<Vec<NotebookCell>>,
}

#[derive(Debug, Deserialize)]
pub struct CellTextChange {
    pub document: VersionedTextDocumentIdentifier,
    pub changes: Vec<TextDocumentContentChangeEvent>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotebookDocumentIdentifier {
    pub uri: Url,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidSaveNotebookDocumentParams {
    pub notebook_document: NotebookDocumentIdentifier,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidCloseNotebookDocumentParams {
    pub notebook_document: NotebookDocumentIdentifier,
}

// ---------------------------------------------------------------- state

/// An open notebook as the client has it.
pub struct NotebookState {
    /// The client's notebook version.
    pub version: i32,
    cells: Vec<NotebookCell>,
    /// The text of each cell document the client opened, with its language.
    texts: HashMap<Url, (Document, String)>,
    /// What the entry's document holds now.
    pub layout: Arc<Layout>,
    /// What each cell was last sent (a hash of its version and list): a cell left out of the next
    /// publish is cleared, and one whose list and version are the same is not sent again.
    published: HashMap<Url, u64>,
}

/// Where each Python cell sits in one version of the concatenated text.
#[derive(Debug, Default)]
pub struct Layout {
    /// The version of the entry's document this layout is of.
    pub version: i32,
    /// `Part::cell` indexes `cells`.
    pub parts: Vec<Part>,
    pub cells: Vec<CellAt>,
}

#[derive(Debug, Clone)]
pub struct CellAt {
    pub uri: Url,
    pub version: i32,
    /// The cell's end in its own coordinates (for a range cut at the cell's end).
    pub end: Position,
}

impl NotebookState {
    /// The Python cells concatenated, and the layout that text has (its `version` left to the caller).
    fn concat(&self, enc: Encoding) -> (Concat, Layout) {
        let mut cells = Vec::new();
        let mut texts = Vec::new();
        for c in &self.cells {
            let Some((doc, language)) = self.texts.get(&c.document) else { continue };
            if c.kind != CODE || language != "python" {
                continue;
            }
            cells.push(CellAt { uri: c.document.clone(), version: doc.version(), end: byte_to_position(doc.rope(), usize::MAX, enc) });
            texts.push(doc.text());
        }
        let concat = Concat::build(texts.iter().enumerate().map(|(i, t)| (i, t.as_str())));
        let layout = Layout { version: 0, parts: concat.parts.clone(), cells };
        (concat, layout)
    }
}

impl Layout {
    /// The cell (index into `cells`) holding concatenated line `line`, and that line in the cell.
    fn cell_line(&self, line: u32) -> Option<(usize, u32)> {
        let k = Concat::part_at_row_of(&self.parts, line as usize)?;
        let part = &self.parts[k];
        Some((part.cell, line - part.row as u32))
    }

    /// A concatenated range as (cell, range in the cell); an end past the cell is cut at its end.
    pub fn to_cell(&self, r: Range) -> Option<(usize, Range)> {
        let (cell, start_line) = self.cell_line(r.start.line)?;
        let start = Position { line: start_line, character: r.start.character };
        let end = match self.cell_line(r.end.line) {
            Some((c, line)) if c == cell => Position { line, character: r.end.character },
            _ => self.cells[cell].end,
        };
        Some((cell, Range { start, end: end.max(start) }))
    }

    /// A position in cell `uri` as a position in the concatenated text.
    pub fn from_cell(&self, uri: &Url, p: Position) -> Option<Position> {
        let cell = self.cells.iter().position(|c| &c.uri == uri)?;
        let part = self.parts.iter().find(|p| p.cell == cell)?;
        Some(Position { line: p.line + part.row as u32, character: p.character })
    }

    pub fn cell_index(&self, uri: &Url) -> Option<usize> {
        self.cells.iter().position(|c| &c.uri == uri)
    }

    /// Each Python cell's diagnostics, from a result's diagnostics over the concatenated text.
    pub fn split(&self, diagnostics: &[lsp::Diagnostic]) -> Vec<Vec<lsp::Diagnostic>> {
        let mut out = vec![Vec::new(); self.cells.len()];
        for d in diagnostics {
            if let Some((cell, d)) = self.diagnostic(d) {
                out[cell].push(d);
            }
        }
        out
    }

    /// One diagnostic moved into its cell: range, related locations (each in its own cell), the
    /// fix carried in `data` (kept only when all its edits are in the same cell) and the version.
    fn diagnostic(&self, d: &lsp::Diagnostic) -> Option<(usize, lsp::Diagnostic)> {
        let (cell, range) = self.to_cell(d.range)?;
        let mut d = d.clone();
        d.range = range;
        if let Some(related) = d.related_information.as_mut() {
            related.retain_mut(|r| match self.to_cell(r.location.range) {
                Some((c, range)) => {
                    r.location = lsp::Location { uri: self.cells[c].uri.clone(), range };
                    true
                }
                None => false,
            });
        }
        if let Some(data) = d.data.take()
            && let Ok(mut data) = serde_json::from_value::<super::convert::DiagnosticData>(data)
        {
            data.version = self.cells[cell].version;
            if let Some(fix) = data.fix.as_mut() {
                let edits: Option<Vec<TextEdit>> = fix
                    .edits
                    .iter()
                    .map(|e| {
                        self.to_cell(e.range).filter(|(c, _)| *c == cell).map(|(_, range)| TextEdit { range, new_text: e.new_text.clone() })
                    })
                    .collect();
                match edits {
                    Some(edits) => fix.edits = edits,
                    None => data.fix = None,
                }
            }
            d.data = serde_json::to_value(data).ok();
        }
        Some((cell, d))
    }

    /// A workspace edit over the concatenated text as edits of the cells they fall in, each stamped
    /// with its cell's version; `None` when an edit reaches past one cell or the edit is not versioned.
    pub fn edit(&self, e: &WorkspaceEdit) -> Option<WorkspaceEdit> {
        let Some(DocumentChanges::Edits(docs)) = &e.document_changes else { return None };
        let mut per_cell: Vec<(usize, Vec<OneOf<TextEdit, lsp::AnnotatedTextEdit>>)> = Vec::new();
        for doc in docs {
            for edit in &doc.edits {
                let OneOf::Left(edit) = edit else { return None };
                let (cell, range) = self.to_cell(edit.range)?;
                // A cut range would change more than the edit says.
                if self.to_cell(Range { start: edit.range.end, end: edit.range.end })?.0 != cell {
                    return None;
                }
                let moved = OneOf::Left(TextEdit { range, new_text: edit.new_text.clone() });
                match per_cell.iter_mut().find(|(c, _)| *c == cell) {
                    Some((_, edits)) => edits.push(moved),
                    None => per_cell.push((cell, vec![moved])),
                }
            }
        }
        let docs = per_cell
            .into_iter()
            .map(|(cell, edits)| TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier {
                    uri: self.cells[cell].uri.clone(),
                    version: Some(self.cells[cell].version),
                },
                edits,
            })
            .collect();
        Some(WorkspaceEdit { document_changes: Some(DocumentChanges::Edits(docs)), ..WorkspaceEdit::default() })
    }
}

// ---------------------------------------------------------------- ingress

pub fn did_open(s: &Arc<Session>, p: DidOpenNotebookDocumentParams) {
    let nb = p.notebook_document;
    let enc = s.encoding();
    let texts = p.cell_text_documents.into_iter().map(|d| (d.uri, (Document::new(&d.text, d.version), d.language_id))).collect();
    let mut state = NotebookState { version: nb.version, cells: nb.cells, texts, layout: Arc::default(), published: HashMap::new() };
    let (concat, mut layout) = state.concat(enc);
    layout.version = 1;
    state.layout = Arc::new(layout);
    for c in &state.cells {
        lock(&s.notebook_cells).insert(c.document.clone(), nb.uri.clone());
    }
    // A cell a client opened as a text document too is the notebook's now: that document goes,
    // without a clear (its worker sees the cell is a notebook's).
    for c in &state.cells {
        if let Some(old) = lock(&s.docs).remove(&c.document) {
            old.closed.store(true, Ordering::SeqCst);
            old.wake.notify_one();
        }
    }
    let entry = Arc::new(DocEntry::opened(nb.uri.clone(), &concat.text, 1, Some(state)));
    super::ingress::install(s, entry);
}

pub fn did_change(s: &Arc<Session>, p: DidChangeNotebookDocumentParams) {
    let uri = &p.notebook_document.uri;
    let Some(entry) = s.entry(uri) else {
        s.log(MessageType::WARNING, format!("xeforge: notebookDocument/didChange for unknown notebook {uri}"));
        return;
    };
    let Some(nb) = entry.notebook.as_ref() else { return };
    let enc = s.encoding();
    let mut state = lock(nb);
    // VS Code keeps the notebook's version through edits of a cell's text (the cell's own version
    // says which text a change applies to); only an older notebook version is refused.
    if p.notebook_document.version < state.version {
        s.log(MessageType::WARNING, format!("xeforge: {uri}: notebook change refused: version {} is older", p.notebook_document.version));
        return;
    }
    state.version = p.notebook_document.version;
    let cells = p.change.cells.unwrap_or_default();
    if let Some(st) = cells.structure {
        let len = state.cells.len();
        let start = (st.array.start as usize).min(len);
        let end = start.saturating_add(st.array.delete_count as usize).min(len);
        let removed: Vec<NotebookCell> = state.cells.splice(start..end, st.array.cells.unwrap_or_default()).collect();
        for d in st.did_open.unwrap_or_default() {
            state.texts.insert(d.uri, (Document::new(&d.text, d.version), d.language_id));
        }
        for d in st.did_close.unwrap_or_default() {
            state.texts.remove(&d.uri);
        }
        let mut owners = lock(&s.notebook_cells);
        for c in &removed {
            if !state.cells.iter().any(|k| k.document == c.document) {
                owners.remove(&c.document);
            }
        }
        for c in &state.cells {
            owners.insert(c.document.clone(), uri.clone());
        }
    }
    for changed in cells.data.unwrap_or_default() {
        if let Some(c) = state.cells.iter_mut().find(|c| c.document == changed.document) {
            c.kind = changed.kind;
        }
    }
    for t in cells.text_content.unwrap_or_default() {
        let Some((doc, _)) = state.texts.get_mut(&t.document.uri) else {
            s.log(MessageType::WARNING, format!("xeforge: {uri}: change for a cell that is not open: {}", t.document.uri));
            continue;
        };
        if let Err(e) = doc.apply_changes(t.document.version, &t.changes, enc) {
            s.log(MessageType::WARNING, format!("xeforge: {}: cell change refused: {e}", t.document.uri));
        }
    }
    let (concat, mut layout) = state.concat(enc);
    let mut doc = lock(&entry.doc);
    let version = doc.version().saturating_add(1);
    let old = doc.text();
    let (a, b, text) = super::edit::minimal_replacement(&old, &concat.text).unwrap_or((0, 0, ""));
    if doc.replace_bytes(version, a, b, text).is_err() {
        return;
    }
    drop(doc);
    layout.version = version;
    state.layout = Arc::new(layout);
    drop(state);
    entry.latest.store(version, Ordering::SeqCst);
    entry.wake.notify_one();
}

pub fn did_save(s: &Arc<Session>, p: DidSaveNotebookDocumentParams) {
    if let Some(entry) = s.entry(&p.notebook_document.uri).filter(|e| e.notebook.is_some()) {
        lock(&entry.doc).mark_saved();
        entry.force.store(true, Ordering::SeqCst);
        entry.wake.notify_one();
    }
}

pub fn did_close(s: &Arc<Session>, p: DidCloseNotebookDocumentParams) {
    let uri = p.notebook_document.uri;
    if s.entry(&uri).is_some_and(|e| e.notebook.is_none()) {
        return;
    }
    lock(&s.notebook_cells).retain(|_, owner| *owner != uri);
    super::ingress::remove(s, &uri);
}

// ---------------------------------------------------------------- publishing

/// Publishes an analysed version of a notebook on its cells, when it is still the current version.
pub fn push_if_current(session: &Session, entry: &DocEntry, c: &Computed) {
    let Some(nb) = entry.notebook.as_ref() else { return };
    let mut state = lock(nb);
    let current = lock(&entry.doc).version() == c.version;
    if !current || state.layout.version != c.version || entry.closed.load(Ordering::SeqCst) {
        return;
    }
    let layout = state.layout.clone();
    publish_split(session, &mut state, &layout, layout.split(c.lsp()));
}

/// Publishes diagnostics computed for version `version` of a notebook (onSave mode's filtered ones).
pub fn publish_for_version(session: &Session, entry: &DocEntry, diagnostics: &[lsp::Diagnostic], version: i32) {
    let Some(nb) = entry.notebook.as_ref() else { return };
    let mut state = lock(nb);
    if state.layout.version != version {
        return;
    }
    let layout = state.layout.clone();
    publish_split(session, &mut state, &layout, layout.split(diagnostics));
}

/// Clears every cell of a closed notebook.
pub fn clear(session: &Session, entry: &DocEntry) {
    let Some(nb) = entry.notebook.as_ref() else { return };
    let mut state = lock(nb);
    let mut uris: HashSet<Url> = std::mem::take(&mut state.published).into_keys().collect();
    uris.extend(state.layout.cells.iter().map(|c| c.uri.clone()));
    for uri in uris {
        send(session, uri, Vec::new(), None);
    }
}

fn publish_split(session: &Session, state: &mut NotebookState, layout: &Layout, lists: Vec<Vec<lsp::Diagnostic>>) {
    let mut now = HashMap::new();
    for (cell, list) in layout.cells.iter().zip(lists) {
        let key = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (cell.version, serde_json::to_string(&list).unwrap_or_default()).hash(&mut h);
            h.finish()
        };
        now.insert(cell.uri.clone(), key);
        if state.published.get(&cell.uri) != Some(&key) {
            send(session, cell.uri.clone(), list, Some(cell.version));
        }
    }
    for gone in state.published.keys().filter(|u| !now.contains_key(*u)) {
        send(session, gone.clone(), Vec::new(), None);
    }
    state.published = now;
}

fn send(session: &Session, uri: Url, diagnostics: Vec<lsp::Diagnostic>, version: Option<i32>) {
    let params = PublishDiagnosticsParams { uri, diagnostics, version };
    session.outbox().send(super::wire::notification::<PublishDiagnostics>(&params));
}

// ---------------------------------------------------------------- requests on a cell

/// A cell document's notebook, analysed at its current version, with the layout of that version.
pub async fn current(session: &Arc<Session>, cell: &Url) -> Option<(Arc<Computed>, Arc<Layout>)> {
    let owner = lock(&session.notebook_cells).get(cell).cloned()?;
    let c = super::handlers::current(session, &owner).await?;
    let entry = session.entry(&owner)?;
    let layout = lock(entry.notebook.as_ref()?).layout.clone();
    (layout.version == c.version && layout.cell_index(cell).is_some()).then_some((c, layout))
}

pub async fn hover(session: &Arc<Session>, cell: &Url, pos: Position) -> Option<lsp::Hover> {
    let (c, layout) = current(session, cell).await?;
    let mut h = super::handlers::hover::hover(&c, layout.from_cell(cell, pos)?)?;
    let want = layout.cell_index(cell)?;
    h.range = h.range.and_then(|r| layout.to_cell(r)).filter(|(k, _)| *k == want).map(|(_, r)| r);
    Some(h)
}

/// The code actions of a cell: quick fixes and ignore comments, their edits moved into the cells
/// they change; stage and harness actions (which rewrite a file) are left out.
pub async fn code_actions(
    session: &Arc<Session>,
    cell: &Url,
    range: Range,
    only: Option<&[lsp::CodeActionKind]>,
) -> Option<Vec<CodeActionOrCommand>> {
    let (c, layout) = current(session, cell).await?;
    let want = layout.cell_index(cell)?;
    let range = Range { start: layout.from_cell(cell, range.start)?, end: layout.from_cell(cell, range.end)? };
    let entry = session.entry(&c.uri);
    let settings = session.settings_for(entry.as_ref().and_then(|e| e.path.as_deref()));
    let req = super::handlers::code_actions::Request { uri: &c.uri, range, only, settings: &settings, stage: None };
    let mut out = Vec::new();
    for action in super::handlers::code_actions::code_actions(&c, &req) {
        let CodeActionOrCommand::CodeAction(mut a) = action else { continue };
        if a.command.is_some() {
            continue;
        }
        let Some(edit) = a.edit.as_ref().and_then(|e| layout.edit(e)) else { continue };
        a.edit = Some(edit);
        if let Some(diags) = a.diagnostics.take() {
            a.diagnostics = Some(diags.iter().filter_map(|d| layout.diagnostic(d)).filter(|(k, _)| *k == want).map(|(_, d)| d).collect());
        }
        out.push(CodeActionOrCommand::CodeAction(a));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        let concat = Concat::build([(0, "import triton\n@triton.jit\ndef k(x):\n    pass"), (1, "k[(1,)](x, num_warps=6)\n")]);
        let cell = |n: u32, version: i32, end: Position| CellAt {
            uri: Url::parse(&format!("vscode-notebook-cell:/nb.ipynb#C{n}")).unwrap(),
            version,
            end,
        };
        Layout { version: 4, parts: concat.parts, cells: vec![cell(0, 7, Position::new(3, 8)), cell(1, 2, Position::new(1, 0))] }
    }

    fn range(l0: u32, c0: u32, l1: u32, c1: u32) -> Range {
        Range { start: Position::new(l0, c0), end: Position::new(l1, c1) }
    }

    #[test]
    fn ranges_move_into_their_cell_and_stop_at_its_end() {
        let l = layout();
        assert_eq!(l.to_cell(range(4, 21, 4, 22)), Some((1, range(0, 21, 0, 22))));
        assert_eq!(l.to_cell(range(1, 0, 1, 3)), Some((0, range(1, 0, 1, 3))));
        // From the kernel's cell into the next: cut at the kernel cell's end.
        assert_eq!(l.to_cell(range(3, 4, 4, 1)), Some((0, range(3, 4, 3, 8))));
        let uri = l.cells[1].uri.clone();
        assert_eq!(l.from_cell(&uri, Position::new(0, 21)), Some(Position::new(4, 21)));
    }

    #[test]
    fn a_diagnostic_carries_its_cells_version_and_related_places_in_their_cells() {
        let l = layout();
        let data = super::super::convert::DiagnosticData {
            name: "n".into(),
            version: 4,
            fix: Some(super::super::convert::FixData {
                title: "t".into(),
                applicability: "safe".into(),
                edits: vec![TextEdit { range: range(4, 21, 4, 22), new_text: "8".into() }],
            }),
        };
        let d = lsp::Diagnostic {
            range: range(4, 21, 4, 22),
            related_information: Some(vec![lsp::DiagnosticRelatedInformation {
                location: lsp::Location { uri: Url::parse("file:///nb.ipynb").unwrap(), range: range(2, 4, 2, 5) },
                message: "the kernel".into(),
            }]),
            data: serde_json::to_value(data).ok(),
            ..lsp::Diagnostic::default()
        };
        let lists = l.split(&[d]);
        assert!(lists[0].is_empty());
        let got = &lists[1][0];
        assert_eq!(got.range, range(0, 21, 0, 22));
        let rel = &got.related_information.as_ref().unwrap()[0].location;
        assert_eq!((rel.uri.clone(), rel.range), (l.cells[0].uri.clone(), range(2, 4, 2, 5)));
        assert_eq!(got.data.as_ref().unwrap()["version"], 2);
        assert_eq!(got.data.as_ref().unwrap()["fix"]["edits"][0]["range"], serde_json::to_value(range(0, 21, 0, 22)).unwrap());
    }

    #[test]
    fn edits_land_in_their_cells_with_the_cells_versions() {
        let l = layout();
        let e = super::super::edit::versioned_edit(
            &Url::parse("file:///nb.ipynb").unwrap(),
            4,
            vec![
                TextEdit { range: range(4, 21, 4, 22), new_text: "8".into() },
                TextEdit { range: range(1, 0, 1, 0), new_text: "#".into() },
            ],
        );
        let moved = l.edit(&e).unwrap();
        let Some(DocumentChanges::Edits(docs)) = moved.document_changes else { panic!() };
        assert_eq!(docs.len(), 2);
        assert_eq!((docs[0].text_document.uri.clone(), docs[0].text_document.version), (l.cells[1].uri.clone(), Some(2)));
        assert_eq!((docs[1].text_document.uri.clone(), docs[1].text_document.version), (l.cells[0].uri.clone(), Some(7)));
        let across = super::super::edit::versioned_edit(
            &Url::parse("file:///nb.ipynb").unwrap(),
            4,
            vec![TextEdit { range: range(3, 0, 4, 3), new_text: String::new() }],
        );
        assert!(l.edit(&across).is_none());
    }
}
