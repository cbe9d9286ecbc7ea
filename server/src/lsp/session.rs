//! Server state shared by the ingress, the handlers and the per-document workers.
//!
//! Locks are `std::sync` and are never held across an `.await`. A poisoned lock (a panic elsewhere)
//! is recovered rather than propagated: the data it guards is replaced wholesale on the next change.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};

use tower_lsp::Client;
use tower_lsp::lsp_types::{ClientCapabilities, MessageType, Url};

use super::documents::Document;
use super::encoding::Encoding;
use super::engine::Computed;
use super::stage::StageActionProvider;
use crate::config::{ConfigResolver, EditorSettings, LintRun, Settings};
use crate::knowledge::Knowledge;
use crate::package::{Disk, Files, Modules, Stamp};

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
fn read<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|e| e.into_inner())
}
fn write<T>(m: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|e| e.into_inner())
}

/// What the client said it can do, reduced to the decisions the server makes.
#[derive(Debug, Clone, Default)]
pub struct Caps {
    pub pull_diagnostics: bool,
    pub diagnostic_refresh: bool,
    pub configuration: bool,
    pub watched_files_dynamic: bool,
    pub code_action_literals: bool,
    pub work_done_progress: bool,
    pub inlay_hint_refresh: bool,
    pub code_lens_refresh: bool,
    pub related_information: bool,
}

impl Caps {
    pub fn from_client(c: &ClientCapabilities) -> Caps {
        let td = c.text_document.as_ref();
        let ws = c.workspace.as_ref();
        Caps {
            pull_diagnostics: td.and_then(|t| t.diagnostic.as_ref()).is_some(),
            diagnostic_refresh: ws.and_then(|w| w.diagnostic.as_ref()).and_then(|d| d.refresh_support).unwrap_or(false),
            configuration: ws.and_then(|w| w.configuration).unwrap_or(false),
            watched_files_dynamic: ws
                .and_then(|w| w.did_change_watched_files.as_ref())
                .and_then(|d| d.dynamic_registration)
                .unwrap_or(false),
            code_action_literals: td.and_then(|t| t.code_action.as_ref()).and_then(|c| c.code_action_literal_support.as_ref()).is_some(),
            work_done_progress: c.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false),
            inlay_hint_refresh: ws.and_then(|w| w.inlay_hint.as_ref()).and_then(|i| i.refresh_support).unwrap_or(false),
            code_lens_refresh: ws.and_then(|w| w.code_lens.as_ref()).and_then(|i| i.refresh_support).unwrap_or(false),
            related_information: td.and_then(|t| t.publish_diagnostics.as_ref()).and_then(|p| p.related_information).unwrap_or(false),
        }
    }
}

/// Editor-side settings: `initializationOptions` < the `xeforge` section of each workspace folder <
/// run-time overrides (`xeforge.selectDevice`).
#[derive(Debug, Clone, Default)]
pub struct EditorConfig {
    pub init: Settings,
    /// Workspace folder path → settings pulled with `workspace/configuration`.
    pub folders: Vec<(PathBuf, Settings)>,
    pub overrides: Settings,
    /// Debounce before linting on type, milliseconds (initializationOptions `lint.debounceMs`).
    pub debounce_ms: u64,
    /// A large document idle this long lets its incremental state go (`lint.idleReleaseMs`; 0: never;
    /// unset: `worker::IDLE_RELEASE`).
    pub idle_release_ms: Option<u64>,
}

/// One open document and its worker's mailbox.
pub struct DocEntry {
    pub uri: Url,
    pub path: Option<PathBuf>,
    pub doc: Mutex<Document>,
    /// Version of the last change applied: a parse of an older snapshot stops early.
    pub latest: AtomicI32,
    pub wake: tokio::sync::Notify,
    /// Set by open, save and configuration changes: lint even in onSave mode.
    pub force: AtomicBool,
    pub closed: AtomicBool,
    pub result: tokio::sync::watch::Sender<Option<Arc<Computed>>>,
    /// The result published last (push) — in onSave mode, the one filtered while the text is dirty.
    pub saved: Mutex<Option<Arc<Computed>>>,
    /// Which opening of a document this is ([`next_opening`]), unique in the process.
    pub opening: u64,
    /// What compiling this document's kernels on the harness said (`xeforge.verifyCompiled`).
    pub compiled: super::compiled::Store,
    /// For a notebook (`lsp::notebook`): its cells; the document holds its Python cells concatenated.
    pub notebook: Option<Mutex<super::notebook::NotebookState>>,
}

/// A number for a new opening of a document, never given before.
pub fn next_opening() -> u64 {
    static OPENINGS: AtomicU64 = AtomicU64::new(0);
    OPENINGS.fetch_add(1, Ordering::SeqCst)
}

impl DocEntry {
    /// A document just opened at `version`, not yet analysed (a notebook's with its cells).
    pub fn opened(uri: Url, text: &str, version: i32, notebook: Option<super::notebook::NotebookState>) -> DocEntry {
        DocEntry {
            path: uri_path(&uri),
            uri,
            doc: Mutex::new(Document::new(text, version)),
            latest: AtomicI32::new(version),
            wake: tokio::sync::Notify::new(),
            force: AtomicBool::new(true),
            closed: AtomicBool::new(false),
            result: tokio::sync::watch::channel(None).0,
            saved: Mutex::new(None),
            opening: next_opening(),
            compiled: Default::default(),
            notebook: notebook.map(Mutex::new),
        }
    }

    pub fn current(&self) -> Option<Arc<Computed>> {
        self.result.borrow().clone()
    }
}

pub struct Session {
    client: OnceLock<Client>,
    /// Where `publishDiagnostics` goes, serialized by the server (every publish, so they stay in order).
    outbox: super::transport::Outbox,
    pub docs: Mutex<HashMap<Url, Arc<DocEntry>>>,
    encoding: RwLock<Encoding>,
    caps: RwLock<Caps>,
    editor: RwLock<EditorConfig>,
    pub resolver: RwLock<Arc<ConfigResolver>>,
    pub config_gen: AtomicU64,
    overlays: Mutex<HashMap<PathBuf, Arc<Knowledge>>>,
    embedded: Arc<Knowledge>,
    /// Enables `xeforge/debugDocument` (initializationOptions `{"debug": true}`).
    pub debug: AtomicBool,
    pub stage: RwLock<Option<Arc<dyn StageActionProvider>>>,
    shown_errors: Mutex<Vec<String>>,
    pub shutting_down: AtomicBool,
    /// Running stage jobs by progress token, for `window/workDoneProgress/cancel`.
    pub jobs: Mutex<HashMap<String, tokio_util::sync::CancellationToken>>,
    /// Verified stage results not applied yet (the document changed under them).
    pub stage_results: super::stage::result::PendingResults,
    /// The latest evidence record of each (document, kernel), for the "Evidence report" lens.
    pub evidence: super::stage::report::Evidence,
    /// Models of the files open documents import from (helpers' `tl.dot`), kept while unchanged.
    pub modules: Modules,
    /// The stage records on disk, for inline suggestions (`lsp::inline`).
    pub records: super::inline::records::Records,
    /// `workspace/diagnostic` advertised (initializationOptions `diagnostics.workspace`).
    pub workspace_diagnostics: AtomicBool,
    /// What `workspace/diagnostic` last computed for each file on disk.
    pub workspace_reports: super::handlers::workspace_diagnostics::Reports,
    /// The notebook each open notebook cell document belongs to (cell URI → notebook URI).
    pub notebook_cells: Mutex<HashMap<Url, Url>>,
}

impl Session {
    pub fn new(outbox: super::transport::Outbox) -> Arc<Session> {
        Arc::new(Session {
            client: OnceLock::new(),
            outbox,
            docs: Mutex::new(HashMap::new()),
            encoding: RwLock::new(Encoding::Utf16),
            caps: RwLock::new(Caps::default()),
            editor: RwLock::new(EditorConfig::default()),
            resolver: RwLock::new(Arc::new(ConfigResolver::default())),
            config_gen: AtomicU64::new(0),
            overlays: Mutex::new(HashMap::new()),
            embedded: Arc::new(Knowledge::embedded().clone()),
            debug: AtomicBool::new(false),
            stage: RwLock::new(None),
            shown_errors: Mutex::new(Vec::new()),
            shutting_down: AtomicBool::new(false),
            jobs: Mutex::new(HashMap::new()),
            stage_results: Default::default(),
            evidence: Default::default(),
            modules: Modules::new(),
            records: Default::default(),
            workspace_diagnostics: AtomicBool::new(false),
            workspace_reports: Default::default(),
            notebook_cells: Mutex::new(HashMap::new()),
        })
    }

    pub fn set_client(&self, client: Client) {
        let _ = self.client.set(client);
    }
    pub fn client(&self) -> Option<&Client> {
        self.client.get()
    }
    pub fn outbox(&self) -> &super::transport::Outbox {
        &self.outbox
    }

    pub fn encoding(&self) -> Encoding {
        *read(&self.encoding)
    }
    pub fn set_encoding(&self, e: Encoding) {
        *write(&self.encoding) = e;
    }
    pub fn caps(&self) -> Caps {
        read(&self.caps).clone()
    }
    pub fn set_caps(&self, c: Caps) {
        *write(&self.caps) = c;
    }
    pub fn editor(&self) -> EditorConfig {
        read(&self.editor).clone()
    }
    /// Change the editor settings; returns whether anything that affects results changed.
    pub fn update_editor(&self, f: impl FnOnce(&mut EditorConfig)) -> bool {
        let mut ed = write(&self.editor);
        let before = ed.clone();
        f(&mut ed);
        // A folder whose section is empty is the same as no entry for it.
        ed.folders.retain(|(_, s)| *s != Settings::default());
        let changed = ed.init != before.init || ed.folders != before.folders || ed.overrides != before.overrides;
        if changed {
            self.config_gen.fetch_add(1, Ordering::SeqCst);
        }
        changed
    }
    pub fn stage_provider(&self) -> Option<Arc<dyn StageActionProvider>> {
        read(&self.stage).clone()
    }

    pub fn entry(&self, uri: &Url) -> Option<Arc<DocEntry>> {
        lock(&self.docs).get(uri).cloned()
    }
    pub fn entries(&self) -> Vec<Arc<DocEntry>> {
        lock(&self.docs).values().cloned().collect()
    }
    /// Whether `uri` is a cell document of an open notebook (`lsp::notebook`).
    pub fn is_notebook_cell(&self, uri: &Url) -> bool {
        lock(&self.notebook_cells).contains_key(uri)
    }

    /// The open document of the file at `path`, if any.
    fn open_at(&self, path: &Path) -> Option<Arc<DocEntry>> {
        lock(&self.docs).values().find(|e| e.path.as_deref() == Some(path)).cloned()
    }

    /// The file at `path` changed (edited, opened, closed, written on disk): the open documents
    /// whose last analysis read it through an import are analysed again. Whether there were any.
    pub fn wake_dependents(&self, path: &Path) -> bool {
        let mut any = false;
        for e in self.entries() {
            let reads = e.current().is_some_and(|c| c.deps.iter().any(|(p, _)| p == path));
            if reads && e.path.as_deref() != Some(path) {
                e.force.store(true, Ordering::SeqCst);
                e.wake.notify_one();
                any = true;
            }
        }
        any
    }

    /// The settings for a document: project file < initializationOptions < folder settings < overrides.
    /// A broken project file is reported once and skipped, so the editor keeps working.
    pub fn settings_for(&self, path: Option<&Path>) -> Settings {
        let file = match path {
            Some(p) => {
                let resolver = read(&self.resolver).clone();
                match resolver.resolve(p) {
                    Ok(Some(cfg)) => cfg.settings.clone(),
                    Ok(None) => Settings::default(),
                    Err(e) => {
                        self.report_once(format!("xeforge: ignoring a project config: {e}"));
                        Settings::default()
                    }
                }
            }
            None => Settings::default(),
        };
        let ed = self.editor();
        let folder = path
            .and_then(|p| ed.folders.iter().filter(|(root, _)| p.starts_with(root)).max_by_key(|(root, _)| root.components().count()))
            .map(|(_, s)| s.clone())
            .unwrap_or_default();
        file.merge(ed.init).merge(folder).merge(ed.overrides)
    }

    pub fn lint_run(&self, path: Option<&Path>) -> LintRun {
        self.settings_for(path).lint_run()
    }

    /// The embedded knowledge base (shared, never copied per request), for answers without a document.
    pub fn embedded_knowledge(&self) -> Arc<Knowledge> {
        self.embedded.clone()
    }

    /// The knowledge base for the settings: embedded, or with the configured overlay (cached).
    pub fn knowledge_for(&self, settings: &Settings) -> Arc<Knowledge> {
        let Some(dir) = settings.knowledge.as_ref() else {
            return self.embedded.clone();
        };
        let mut cache = lock(&self.overlays);
        if let Some(kb) = cache.get(dir) {
            return kb.clone();
        }
        let kb = match self.embedded.with_overlay(dir) {
            Ok(kb) => Arc::new(kb),
            Err(e) => {
                self.report_once(format!("xeforge: knowledge overlay {} ignored: {e}", dir.display()));
                self.embedded.clone()
            }
        };
        cache.insert(dir.clone(), kb.clone());
        kb
    }

    /// Project files changed on disk: forget cached discovery and overlays.
    pub fn invalidate_project_config(&self) {
        *write(&self.resolver) = Arc::new(ConfigResolver::default());
        lock(&self.overlays).clear();
        self.config_gen.fetch_add(1, Ordering::SeqCst);
    }

    pub fn log(&self, typ: MessageType, msg: impl Into<String>) {
        let msg = msg.into();
        match typ {
            MessageType::ERROR => tracing::error!("{msg}"),
            MessageType::WARNING => tracing::warn!("{msg}"),
            _ => tracing::info!("{msg}"),
        }
        if let Some(c) = self.client() {
            let c = c.clone();
            if let Ok(h) = tokio::runtime::Handle::try_current() {
                h.spawn(async move { c.log_message(typ, msg).await });
            }
        }
    }

    /// Show a message to the user (`window/showMessage`), without waiting for the client.
    pub fn show(&self, typ: MessageType, message: String) {
        if let Some(c) = self.client().cloned()
            && let Ok(h) = tokio::runtime::Handle::try_current()
        {
            h.spawn(async move { c.show_message(typ, message).await });
        }
    }

    /// Show a problem to the user once per session (and log it every time).
    pub fn report_once(&self, msg: String) {
        let first = {
            let mut shown = lock(&self.shown_errors);
            if shown.contains(&msg) {
                false
            } else {
                shown.push(msg.clone());
                true
            }
        };
        self.log(MessageType::WARNING, msg.clone());
        if first && let Some(c) = self.client() {
            let c = c.clone();
            if let Ok(h) = tokio::runtime::Handle::try_current() {
                h.spawn(async move { c.show_message(MessageType::WARNING, msg).await });
            }
        }
    }

    /// Parse editor settings JSON (initializationOptions or a configuration section), reporting errors.
    pub fn parse_editor_settings(&self, v: &serde_json::Value) -> Settings {
        match EditorSettings::from_json(v) {
            Ok(s) => s.into_settings(),
            Err(e) => {
                self.report_once(format!("xeforge: invalid editor settings ignored: {e}"));
                Settings::default()
            }
        }
    }
}

/// Files as the editor has them: an open document's text wins over the file on disk.
pub struct EditorFiles<'a>(pub &'a Session);

impl EditorFiles<'_> {
    fn open_stamp(entry: &DocEntry, version: i32) -> Stamp {
        // Versions restart when a file is opened again: the opening tells the two texts apart.
        Stamp::Open { id: entry.opening, version }
    }
}

impl Files for EditorFiles<'_> {
    fn stamp(&self, path: &Path) -> Option<Stamp> {
        match self.0.open_at(path) {
            Some(e) => {
                let version = lock(&e.doc).version();
                Some(Self::open_stamp(&e, version))
            }
            None => Disk.stamp(path),
        }
    }

    fn read(&self, path: &Path) -> Option<(Stamp, String)> {
        match self.0.open_at(path) {
            Some(e) => {
                let doc = lock(&e.doc);
                Some((Self::open_stamp(&e, doc.version()), doc.text()))
            }
            None => Disk.read(path),
        }
    }
}

pub fn uri_path(uri: &Url) -> Option<PathBuf> {
    if uri.scheme() == "file" { uri.to_file_path().ok() } else { None }
}
