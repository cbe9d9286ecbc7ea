//! One worker task per open document: reparse + analyse off the ingress path, "latest version wins".
//!
//! The ingress applies a change and wakes the worker. The worker snapshots the newest version, parses
//! it on the blocking pool (the parse stops early when a newer version arrives), analyses it, stores
//! the result and, in push mode, publishes it stamped with its version — unless the document moved on
//! meanwhile, in which case the next turn publishes the newer one. Wake-ups that arrive while it works
//! collapse into one, which is the debounce: no fixed delay unless `lint.debounceMs` asks for one.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tower_lsp::lsp_types::{MessageType, PublishDiagnosticsParams, notification::PublishDiagnostics};

use super::convert;
use super::documents::parse_snapshot;
use super::engine::{self, Computed, Inputs};
use super::session::{DocEntry, EditorFiles, Session, lock};
use crate::analysis::Place;
use crate::config::LintRun;
use crate::package::deps_current;

pub fn spawn(session: Arc<Session>, entry: Arc<DocEntry>) {
    if let Ok(h) = tokio::runtime::Handle::try_current() {
        h.spawn(run(session, entry));
    }
}

async fn run(session: Arc<Session>, entry: Arc<DocEntry>) {
    let mut announced: Option<i32> = None;
    loop {
        entry.wake.notified().await;
        if entry.closed.load(Ordering::SeqCst) {
            // Cleared here, after any publish of this worker, so the clear is the last word — unless
            // the document was reopened and a new worker owns its diagnostics now.
            // A cell's text document taken over by its notebook (`lsp::notebook`) counts as reopened.
            let reopened = session.entry(&entry.uri).is_some() || session.is_notebook_cell(&entry.uri);
            if entry.notebook.is_some() && !reopened {
                super::notebook::clear(&session, &entry);
            } else if !session.caps().pull_diagnostics && !reopened {
                publish(&session, &entry, Vec::new(), None);
            }
            super::heap::trim_soon();
            break;
        }
        let debounce = session.editor().debounce_ms;
        if debounce > 0 {
            tokio::time::sleep(Duration::from_millis(debounce)).await;
        }
        let forced = entry.force.swap(false, Ordering::SeqCst);
        let mode = session.lint_run(entry.path.as_deref());
        if mode == LintRun::OnSave && !forced {
            publish_while_dirty(&session, &entry);
            continue;
        }
        let (s, e) = (session.clone(), entry.clone());
        let (computed, replaced) = match tokio::task::spawn_blocking(move || compute_replacing(&s, &e, true)).await {
            Ok(c) => c,
            Err(err) => {
                session.log(MessageType::ERROR, format!("xeforge: analysis of {} failed: {err}", entry.uri));
                (None, None)
            }
        };
        let Some(c) = computed else {
            // Superseded by a newer version: its wake-up is already pending.
            if forced {
                entry.force.store(true, Ordering::SeqCst);
            }
            continue;
        };
        if mode == LintRun::OnSave {
            *lock(&entry.saved) = Some(c.clone());
        }
        if let Some(err) = &c.error {
            session.report_once(format!("xeforge: {err}"));
        }
        push_if_current(&session, &entry, &c);
        // Documents that import this one read its text: each version is news to them once (a
        // result redone for the same text is not, or two files importing each other would wake
        // each other forever).
        if announced != Some(c.version) {
            announced = Some(c.version);
            if let Some(path) = &entry.path {
                super::handlers::configuration::relint_dependents(&session, path);
            }
        }
        // The result this one replaced is freed after the publish, off the latency path.
        if let Some(old) = replaced {
            tokio::task::spawn_blocking(move || drop(old));
        }
        if !c.tree_trusted() {
            verify_when_idle(&session, &entry, c).await;
        }
        slim_when_idle(&session, &entry).await;
    }
}

/// How long a large document must stay unchanged before its incremental state is let go, unless
/// `lint.idleReleaseMs` says otherwise.
pub const IDLE_RELEASE: Duration = Duration::from_secs(30);
/// Documents from this size on (about 8k lines of Triton code) are made slim when idle: their
/// tree and reuse data are most of the server's memory (a 20k-line file: about 40 of 65 MiB of
/// heap), while a fresh parse and analysis of one costs a few hundred milliseconds, once.
const SLIM_BYTES: usize = 256 << 10;

/// Once a large document has been idle for [`IDLE_RELEASE`], drop its tree and the result's reuse
/// data and hand the freed memory back to the system. A change meanwhile cancels this.
async fn slim_when_idle(session: &Session, entry: &Arc<DocEntry>) {
    let idle = session.editor().idle_release_ms.map_or(IDLE_RELEASE, Duration::from_millis);
    if idle.is_zero() || entry.current().is_none_or(|c| c.text.len() < SLIM_BYTES) {
        return;
    }
    if !stays_idle(entry, idle).await {
        return;
    }
    let Some(c) = entry.current() else { return };
    let mut doc = lock(&entry.doc);
    // Only a result of the current text that a fresh parse has confirmed.
    if !c.tree_trusted() || doc.version() != c.version {
        return;
    }
    c.slim();
    doc.drop_tree();
    drop(doc);
    tokio::task::spawn_blocking(super::heap::trim);
}

/// Whether the document gets no change for `d`. A change that comes first is left pending for the
/// top of the worker loop, which handles it.
async fn stays_idle(entry: &DocEntry, d: Duration) -> bool {
    tokio::select! {
        _ = entry.wake.notified() => {
            entry.wake.notify_one();
            false
        }
        _ = tokio::time::sleep(d) => true,
    }
}

/// How long a document must stay unchanged before a broken incremental tree is checked.
const VERIFY_IDLE: Duration = Duration::from_millis(250);

/// A result built on an incremental tree with syntax errors is published at once; once the
/// document has been idle for [`VERIFY_IDLE`], a fresh parse confirms the tree (what `xeforge
/// check` would see) or replaces the result and publishes again. A change meanwhile cancels this.
async fn verify_when_idle(session: &Arc<Session>, entry: &Arc<DocEntry>, c: Arc<Computed>) {
    if !stays_idle(entry, VERIFY_IDLE).await {
        return;
    }
    let (s, e) = (session.clone(), entry.clone());
    let fixed = tokio::task::spawn_blocking(move || {
        let cancelled = || e.latest.load(Ordering::SeqCst) != c.version;
        let v = verified(&s, &e, c.clone(), &cancelled);
        (!Arc::ptr_eq(&v, &c)).then_some(v)
    })
    .await;
    if let Ok(Some(fixed)) = fixed {
        push_if_current(session, entry, &fixed);
    }
}

/// The analysed current version, reusing the stored result when it is still valid.
/// `cancellable`: stop (None) when a newer version arrives — workers only; handlers need an answer.
pub fn compute(session: &Session, entry: &DocEntry, cancellable: bool) -> Option<Arc<Computed>> {
    compute_replacing(session, entry, cancellable).0
}

/// [`compute`], also handing back the stored result the new one replaced, for the caller to drop
/// when it suits it (freeing a large file's result takes as long as a small edit's analysis).
fn compute_replacing(session: &Session, entry: &DocEntry, cancellable: bool) -> (Option<Arc<Computed>>, Option<Arc<Computed>>) {
    let snap = lock(&entry.doc).snapshot();
    let config_gen = session.config_gen.load(Ordering::SeqCst);
    let compiled = entry.compiled.snapshot();
    // The stored result: the answer when still valid, else the previous version to reuse from.
    let prev = entry.current();
    let files = EditorFiles(session);
    if let Some(c) = &prev
        && c.version == snap.version
        && c.config_gen == config_gen
        && deps_current(&files, &c.deps)
        && c.compiled.generation == compiled.generation
    {
        // A handler answers from what `xeforge check` would see.
        let c = if cancellable { c.clone() } else { verified(session, entry, c.clone(), &|| false) };
        return (Some(c), None);
    }
    let cancelled = || cancellable && entry.latest.load(Ordering::SeqCst) != snap.version;
    let (tree, tree_trusted) = match (&snap.tree, snap.tree_current) {
        // Parsed for this version already (by a handler's compute): trusted when error-free.
        (Some(t), true) => (t.clone(), !t.root_node().has_error()),
        _ => {
            let Some(t) = parse_snapshot(&snap, &cancelled) else { return (None, None) };
            lock(&entry.doc).install_tree(&snap, t.tree.clone());
            (t.tree, t.trusted)
        }
    };
    if cancelled() {
        return (None, None);
    }
    let settings = session.settings_for(entry.path.as_deref());
    let kb = session.knowledge_for(&settings);
    let options = settings.lint_options(entry.path.as_deref().unwrap_or(Path::new("")));
    let place = place(session, entry, &files);
    let c = Arc::new(engine::compute(Inputs {
        place,
        prev,
        uri: &entry.uri,
        version: snap.version,
        config_gen,
        rope: snap.rope,
        tree,
        tree_trusted,
        encoding: session.encoding(),
        kb,
        options,
        compiled,
    }));
    // Compiled facts of kernels this version changed are dropped, never shown again.
    entry.compiled.prune(c.version, &c.text, &c.model);
    let mut replaced = None;
    entry.result.send_if_modified(|cur| {
        let key = |r: &Computed| (r.version, r.config_gen, r.compiled.generation);
        let newer = cur.as_ref().is_none_or(|old| key(old) < key(&c));
        if newer {
            replaced = cur.replace(c.clone());
        }
        newer
    });
    let c = if cancellable { c } else { verified(session, entry, c, &|| false) };
    (Some(c), replaced)
}

/// Where the document's imports are read from: open documents first, then the disk.
fn place<'a>(session: &'a Session, entry: &'a DocEntry, files: &'a EditorFiles<'a>) -> Option<Place<'a>> {
    entry.path.as_deref().map(|path| Place { path, files, modules: &session.modules })
}

/// `c` once a fresh parse has confirmed its tree, or the result rebuilt from that parse (stored in
/// `c`'s place, its tree installed in the document). `c` itself when cancelled.
fn verified(session: &Session, entry: &DocEntry, c: Arc<Computed>, cancelled: &dyn Fn() -> bool) -> Arc<Computed> {
    if c.tree_trusted() {
        return c;
    }
    let snap = lock(&entry.doc).snapshot();
    let files = EditorFiles(session);
    let Some(fixed) = engine::reverified(&c, place(session, entry, &files), cancelled) else {
        if !cancelled() {
            c.mark_trusted();
        }
        return c;
    };
    session.log(MessageType::WARNING, format!("xeforge: the incremental tree of {} differed from a fresh parse; re-analysed", entry.uri));
    let fixed = Arc::new(fixed);
    if snap.version == c.version {
        // Later incremental parses start from the fresh tree.
        if let Some(tree) = fixed.tree() {
            lock(&entry.doc).install_tree(&snap, tree);
        }
    }
    entry.result.send_if_modified(|cur| {
        let same = cur.as_ref().is_some_and(|old| Arc::ptr_eq(old, &c));
        if same {
            *cur = Some(fixed.clone());
        }
        same
    });
    fixed
}

/// onSave mode while the text differs from the last lint: keep only the diagnostics that lie wholly
/// before the first changed byte (their positions are unchanged), so nothing stale is ever shown.
pub fn dirty_diagnostics(entry: &DocEntry) -> Option<(Vec<tower_lsp::lsp_types::Diagnostic>, i32)> {
    let saved = lock(&entry.saved).clone()?;
    let (dirty_from, version) = {
        let doc = lock(&entry.doc);
        (doc.dirty_from(), doc.version())
    };
    if version == saved.version {
        return Some((saved.lsp().to_vec(), version));
    }
    // Saved but not linted yet: the save's lint is on its way and will publish.
    let cut = dirty_from?;
    let kept = saved
        .diagnostics
        .iter()
        .filter(|d| d.range.end <= cut)
        .map(|d| {
            let mut d = d.clone();
            d.related.retain(|r| r.range.end <= cut);
            if d.fix.as_ref().is_some_and(|f| f.edits.iter().any(|e| e.range.end > cut)) {
                d.fix = None;
            }
            convert::diagnostic(&d, &entry.uri, &saved.rope, saved.encoding, version)
        })
        .collect();
    Some((kept, version))
}

fn publish_while_dirty(session: &Session, entry: &DocEntry) {
    // A notebook's cells are always pushed (`lsp::notebook`).
    if session.caps().pull_diagnostics && entry.notebook.is_none() {
        return;
    }
    if let Some((diags, version)) = dirty_diagnostics(entry) {
        if entry.notebook.is_some() {
            super::notebook::publish_for_version(session, entry, &diags, version);
        } else {
            publish(session, entry, diags, Some(version));
        }
    }
}

/// Publishes an analysed version, written as JSON straight from the checker's diagnostics, when
/// it is still the document's version and the client takes pushed diagnostics.
fn push_if_current(session: &Session, entry: &DocEntry, c: &Computed) {
    if entry.notebook.is_some() {
        return super::notebook::push_if_current(session, entry, c);
    }
    let current = lock(&entry.doc).version() == c.version;
    if current && !session.caps().pull_diagnostics && !entry.closed.load(Ordering::SeqCst) {
        session.outbox().send(c.publish_json());
    }
}

/// Publishes a list built otherwise (cleared, filtered while dirty). Through the same outbox as
/// [`push_if_current`], so a document's publishes reach the client in the order they were made.
pub fn publish(session: &Session, entry: &DocEntry, diagnostics: Vec<tower_lsp::lsp_types::Diagnostic>, version: Option<i32>) {
    let params = PublishDiagnosticsParams { uri: entry.uri.clone(), diagnostics, version };
    session.outbox().send(super::wire::notification::<PublishDiagnostics>(&params));
}
