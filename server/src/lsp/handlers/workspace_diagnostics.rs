//! Pull diagnostics for the whole workspace (`workspace/diagnostic`, LSP 3.17): the Triton files of
//! every workspace folder — the files `xeforge check` visits (`workspace::discover_files`: `.gitignore`,
//! hidden files and each config's `exclude` left out), those that define a kernel — and every open
//! document, inside a folder or not. Each file is checked with its own settings
//! (`Session::settings_for`: the nearest `[tool.xeforge]` upward, else the defaults, under the
//! editor's), so folders that target different devices each get theirs. An open document reports its
//! current version exactly as a document pull does; a file on disk is read and analysed again only
//! when its size, its time or the configuration changed, as clients pull again every few seconds.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;
use ropey::Rope;
use tower_lsp::jsonrpc::Result;
use tower_lsp::lsp_types::{
    self as lsp, FullDocumentDiagnosticReport, UnchangedDocumentDiagnosticReport, Url, WorkspaceDiagnosticParams,
    WorkspaceDiagnosticReport, WorkspaceDiagnosticReportResult, WorkspaceDocumentDiagnosticReport, WorkspaceFullDocumentDiagnosticReport,
    WorkspaceUnchangedDocumentDiagnosticReport,
};

use super::super::convert;
use super::super::session::{Session, lock};
use super::diagnostics;

/// The result id of the empty report that clears a file nothing reports any more.
const CLEARED: &str = "cleared";

/// What was last reported for each file on disk: its result id and diagnostics (`None`: no kernel).
#[derive(Default)]
pub struct Reports(Mutex<HashMap<PathBuf, (String, Option<Arc<Vec<lsp::Diagnostic>>>)>>);

/// Sets the flag when the request's future is dropped (`$/cancelRequest`, or the client's next pull),
/// so the file loop in the blocking pool stops too.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

pub async fn pull(session: &Arc<Session>, folders: Vec<PathBuf>, p: WorkspaceDiagnosticParams) -> Result<WorkspaceDiagnosticReportResult> {
    let previous: HashMap<Url, String> = p.previous_result_ids.into_iter().map(|r| (r.uri, r.value)).collect();
    let mut items = Vec::new();
    let mut reported: HashSet<Url> = HashSet::new();
    let open = session.entries();
    for entry in &open {
        // A notebook's diagnostics are its cells', pushed (`lsp::notebook`).
        if entry.closed.load(Ordering::SeqCst) || entry.notebook.is_some() {
            continue;
        }
        let Some(r) = diagnostics::document_report(session, entry).await else { continue };
        reported.insert(entry.uri.clone());
        items.push(report(entry.uri.clone(), Some(i64::from(r.version)), r.result_id, r.items, &previous));
    }
    let open_paths: HashSet<PathBuf> = open.iter().filter_map(|e| e.path.clone()).collect();
    let cancelled = Arc::new(AtomicBool::new(false));
    let _cancel = CancelOnDrop(cancelled.clone());
    let s = session.clone();
    let disk = tokio::task::spawn_blocking(move || on_disk(&s, &folders, &open_paths, &cancelled)).await.unwrap_or_default();
    for (path, id, diags) in disk {
        let (Some(diags), Ok(uri)) = (diags, Url::from_file_path(&path)) else { continue };
        if reported.insert(uri.clone()) {
            items.push(report(uri, None, id, diags.to_vec(), &previous));
        }
    }
    // A file the client holds diagnostics for that nothing reports now (deleted, excluded, no kernel
    // left, closed outside the folders) gets an empty report, or the client would keep them.
    for (uri, id) in &previous {
        if !reported.contains(uri) && id != CLEARED {
            items.push(report(uri.clone(), None, CLEARED.to_string(), Vec::new(), &HashMap::new()));
        }
    }
    Ok(WorkspaceDiagnosticReportResult::Report(WorkspaceDiagnosticReport { items }))
}

fn report(
    uri: Url,
    version: Option<i64>,
    result_id: String,
    items: Vec<lsp::Diagnostic>,
    previous: &HashMap<Url, String>,
) -> WorkspaceDocumentDiagnosticReport {
    if previous.get(&uri) == Some(&result_id) {
        return WorkspaceDocumentDiagnosticReport::Unchanged(WorkspaceUnchangedDocumentDiagnosticReport {
            uri,
            version,
            unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport { result_id },
        });
    }
    WorkspaceDocumentDiagnosticReport::Full(WorkspaceFullDocumentDiagnosticReport {
        uri,
        version,
        full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id: Some(result_id), items },
    })
}

type OnDisk = Vec<(PathBuf, String, Option<Arc<Vec<lsp::Diagnostic>>>)>;

/// The files of the folders that are not open, each with its result id and diagnostics.
fn on_disk(s: &Session, folders: &[PathBuf], open: &HashSet<PathBuf>, cancelled: &AtomicBool) -> OnDisk {
    if folders.is_empty() {
        return Vec::new();
    }
    let resolver = s.resolver.read().unwrap_or_else(|e| e.into_inner()).clone();
    let found = crate::workspace::discover_files(folders, &resolver);
    let generation = s.config_gen.load(Ordering::SeqCst);
    let out: OnDisk = found
        .files
        .par_iter()
        // A notebook's diagnostics belong to its cells, which exist only while it is open
        // (`lsp::notebook` publishes those).
        .filter(|p| !open.contains(*p) && !crate::workspace::is_notebook(p))
        .filter_map(|path| {
            if cancelled.load(Ordering::SeqCst) {
                return None;
            }
            let meta = std::fs::metadata(path).ok()?;
            let mtime = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
            let id = format!("disk:{generation}:{mtime}:{}", meta.len());
            if let Some((known, diags)) = lock(&s.workspace_reports.0).get(path)
                && *known == id
            {
                return Some((path.clone(), id, diags.clone()));
            }
            let diags = analyse(s, path).map(Arc::new);
            lock(&s.workspace_reports.0).insert(path.clone(), (id.clone(), diags.clone()));
            Some((path.clone(), id, diags))
        })
        .collect();
    // Files no longer found are forgotten, so the cache stays the size of the workspace.
    let seen: HashSet<&PathBuf> = found.files.iter().collect();
    lock(&s.workspace_reports.0).retain(|p, _| seen.contains(p));
    out
}

/// A file's diagnostics with its own settings, as `xeforge check` finds them; `None` for a file that
/// defines no kernel, cannot be read as text, or whose settings cannot be used (said once).
fn analyse(s: &Session, path: &Path) -> Option<Vec<lsp::Diagnostic>> {
    let bytes = std::fs::read(path).ok()?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return None;
    }
    let text = String::from_utf8(bytes).ok()?;
    if !crate::model::may_have_kernels(&text) {
        return None;
    }
    let settings = s.settings_for(Some(path));
    let kb = s.knowledge_for(&settings);
    let a = match crate::analysis::analyze(&text, &kb, &settings.lint_options(path)) {
        Ok(a) => a,
        Err(e) => {
            // Said once per cause (an unknown device in a folder's config), not once per file.
            s.log(tower_lsp::lsp_types::MessageType::WARNING, format!("xeforge: {}: {e}", path.display()));
            s.report_once(format!("xeforge: workspace diagnostics: {e}"));
            return None;
        }
    };
    if !a.model.is_triton() {
        return None;
    }
    let uri = Url::from_file_path(path).ok()?;
    let rope = Rope::from_str(&text);
    // No document version: the file on disk is not open; 0 stands for "as saved".
    Some(a.diagnostics.iter().map(|d| convert::diagnostic(d, &uri, &rope, s.encoding(), 0)).collect())
}
