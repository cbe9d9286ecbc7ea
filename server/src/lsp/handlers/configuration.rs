//! Configuration at run time: `workspace/configuration` per workspace folder, `didChangeConfiguration`,
//! project files watched through a `didChangeWatchedFiles` registration, the `xeforge.selectDevice`
//! command and the `xeforge/devices` request for editor pickers. Any change re-lints open documents.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::request::{
    CodeLensRefresh, InlayHintRefreshRequest, RegisterCapability, WorkspaceConfiguration, WorkspaceDiagnosticRefresh,
};
use tower_lsp::lsp_types::{
    ConfigurationItem, ConfigurationParams, DidChangeWatchedFilesRegistrationOptions, FileSystemWatcher, GlobPattern, MessageType,
    Registration, RegistrationParams, WatchKind,
};

use super::super::session::{Session, uri_path};
use super::super::transport::client_request;
use crate::config::Settings;

const SECTION: &str = "xeforge";
const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Ask the client for the `xeforge` section, globally and for each workspace folder, then re-lint.
pub async fn pull(session: &Arc<Session>, folders: &[PathBuf]) {
    if !session.caps().configuration {
        return;
    }
    let Some(client) = session.client() else { return };
    let mut items = vec![ConfigurationItem { scope_uri: None, section: Some(SECTION.into()) }];
    let mut roots = vec![PathBuf::new()];
    for f in folders {
        if let Ok(uri) = tower_lsp::lsp_types::Url::from_directory_path(f) {
            items.push(ConfigurationItem { scope_uri: Some(uri), section: Some(SECTION.into()) });
            roots.push(f.clone());
        }
    }
    match client_request::<WorkspaceConfiguration>(client, ConfigurationParams { items }, CLIENT_TIMEOUT).await {
        Ok(values) => {
            let parsed: Vec<(PathBuf, Settings)> =
                roots.into_iter().zip(values.iter()).map(|(r, v)| (r, session.parse_editor_settings(v))).collect();
            if session.update_editor(|e| e.folders = parsed) {
                relint_all(session);
            }
        }
        Err(e) => session.log(MessageType::WARNING, format!("xeforge: workspace/configuration failed: {e}")),
    }
}

/// Settings pushed inside didChangeConfiguration (`{"xeforge": {...}}`) or `null` (pull them).
pub async fn changed(session: &Arc<Session>, settings: Value, folders: &[PathBuf]) {
    let section = settings.get(SECTION).cloned().unwrap_or(Value::Null);
    if section.is_null() || session.caps().configuration {
        pull(session, folders).await;
    } else {
        let s = session.parse_editor_settings(&section);
        if session.update_editor(|e| e.folders = vec![(PathBuf::new(), s)]) {
            relint_all(session);
        }
    }
}

/// Re-lint every open document (config generation already bumped), and tell pull-mode clients and
/// hint/lens consumers to ask again.
pub fn relint_all(session: &Arc<Session>) {
    session.config_gen.fetch_add(1, Ordering::SeqCst);
    for e in session.entries() {
        e.force.store(true, Ordering::SeqCst);
        e.wake.notify_one();
    }
    refresh_client(session);
}

/// The file at `path` changed: re-lint the open documents that read it through an import, and
/// tell pull-mode clients and hint/lens consumers to ask again when there are any.
pub fn relint_dependents(session: &Arc<Session>, path: &std::path::Path) {
    if session.wake_dependents(path) {
        refresh_client(session);
    }
}

/// Ask the client to pull diagnostics, inlay hints and code lenses again (where it supports that).
fn refresh_client(session: &Arc<Session>) {
    let caps = session.caps();
    let Some(client) = session.client().cloned() else { return };
    // Also called from text sync, which need not run inside the runtime.
    let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
    runtime.spawn(async move {
        if caps.pull_diagnostics && caps.diagnostic_refresh {
            let _ = client_request::<WorkspaceDiagnosticRefresh>(&client, (), CLIENT_TIMEOUT).await;
        }
        if caps.inlay_hint_refresh {
            let _ = client_request::<InlayHintRefreshRequest>(&client, (), CLIENT_TIMEOUT).await;
        }
        if caps.code_lens_refresh {
            let _ = client_request::<CodeLensRefresh>(&client, (), CLIENT_TIMEOUT).await;
        }
    });
}

/// Watch the project files so edits to them re-lint, and Python files so a helper written on disk
/// re-lints the open documents that import it (dynamic registration, when the client allows it).
pub async fn register_watchers(session: &Arc<Session>) {
    if !session.caps().watched_files_dynamic {
        return;
    }
    let Some(client) = session.client() else { return };
    let watchers = ["**/pyproject.toml", "**/xeforge.toml", "**/*.py"]
        .into_iter()
        .map(|g| FileSystemWatcher { glob_pattern: GlobPattern::String(g.into()), kind: Some(WatchKind::all()) })
        .collect();
    let options = DidChangeWatchedFilesRegistrationOptions { watchers };
    let reg = Registration {
        id: "xeforge-project-files".into(),
        method: "workspace/didChangeWatchedFiles".into(),
        register_options: serde_json::to_value(options).ok(),
    };
    let params = RegistrationParams { registrations: vec![reg] };
    if let Err(e) = client_request::<RegisterCapability>(client, params, CLIENT_TIMEOUT).await {
        session.log(MessageType::WARNING, format!("xeforge: could not watch project files: {e}"));
    }
}

pub fn watched_files_changed(session: &Arc<Session>, paths: impl Iterator<Item = tower_lsp::lsp_types::Url>) {
    let paths: Vec<PathBuf> = paths.filter_map(|u| uri_path(&u)).collect();
    // A Python file written on disk may be a helper an open document imports.
    for p in paths.iter().filter(|p| p.extension().is_some_and(|e| e == "py")) {
        relint_dependents(session, p);
    }
    let relevant = paths.iter().any(|p| matches!(p.file_name().and_then(|n| n.to_str()), Some("pyproject.toml" | "xeforge.toml")));
    if relevant {
        session.invalidate_project_config();
        relint_all(session);
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DeviceInfo {
    pub id: String,
    pub name: String,
    pub vendor: String,
    pub arch: String,
    pub generation: String,
    pub selected: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DevicesResult {
    pub devices: Vec<DeviceInfo>,
    pub toolchains: Vec<String>,
    pub device: String,
    pub toolchain: String,
}

/// `xeforge/devices`: the device list (and toolchains) for pickers, with the current selection.
pub fn devices(session: &Session) -> DevicesResult {
    let settings = session.settings_for(None);
    let kb = session.knowledge_for(&settings);
    let device = settings.device.clone().unwrap_or_else(|| kb.default_device.clone());
    let toolchain = settings.toolchain.clone().unwrap_or_else(|| kb.default_toolchain.clone());
    DevicesResult {
        devices: kb
            .devices
            .iter()
            .map(|d| DeviceInfo {
                id: d.id.clone(),
                name: d.name.clone(),
                vendor: format!("{:?}", d.vendor).to_lowercase(),
                arch: d.arch.clone(),
                generation: d.generation.clone(),
                selected: d.id == device,
            })
            .collect(),
        toolchains: kb.toolchains.iter().map(|t| t.id.clone()).collect(),
        device,
        toolchain,
    }
}

/// `xeforge.selectDevice`: arguments `[device]`, `[device, toolchain]` or `[{"device", "toolchain"}]`.
/// Unknown ids are refused with the list of known ones; `null`/"" resets to the configured value.
pub fn select_device(session: &Arc<Session>, args: &[Value]) -> Result<Option<Value>> {
    #[derive(Deserialize, Default)]
    struct Sel {
        device: Option<String>,
        toolchain: Option<String>,
    }
    let sel = match args.first() {
        Some(Value::Object(_)) => {
            serde_json::from_value::<Sel>(args[0].clone()).map_err(|e| Error::invalid_params(format!("xeforge.selectDevice: {e}")))?
        }
        _ => Sel {
            device: args.first().and_then(Value::as_str).map(str::to_string),
            toolchain: args.get(1).and_then(Value::as_str).map(str::to_string),
        },
    };
    let kb = session.knowledge_for(&session.settings_for(None));
    let clean = |s: Option<String>| s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let (device, toolchain) = (clean(sel.device), clean(sel.toolchain));
    if let Some(d) = &device
        && kb.device(d).is_none()
    {
        let known: Vec<_> = kb.devices.iter().map(|d| d.id.as_str()).collect();
        return Err(Error::invalid_params(format!("unknown device `{d}`; known devices: {}", known.join(", "))));
    }
    if let Some(t) = &toolchain
        && kb.toolchain(t).is_none()
    {
        let known: Vec<_> = kb.toolchains.iter().map(|t| t.id.as_str()).collect();
        return Err(Error::invalid_params(format!("unknown toolchain `{t}`; known toolchains: {}", known.join(", "))));
    }
    let picked_device = device.is_some();
    session.update_editor(|e| {
        if picked_device || toolchain.is_none() {
            e.overrides.device = device.clone();
        }
        if toolchain.is_some() {
            e.overrides.toolchain = toolchain.clone();
        }
    });
    relint_all(session);
    Ok(Some(serde_json::to_value(devices(session)).unwrap_or(Value::Null)))
}
