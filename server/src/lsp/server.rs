//! The `LanguageServer` implementation: capabilities, life cycle and request routing. Text sync is
//! applied by the ingress (`ingress.rs`); the notification handlers here only exist to silence
//! tower-lsp's "not implemented" warnings.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::*;
use tower_lsp::{Client, LanguageServer};

use super::compiled::command::VERIFY_COMPILED_COMMAND;
use super::encoding::Encoding;
use super::handlers::{
    self, code_actions, code_lens, completion, configuration, diagnostics, hover, inlay_hints, signature_help, workspace_diagnostics,
};
use super::inline::accept::ACCEPT_INLINE_COMMAND;
use super::inline::{InlineCompletionList, InlineCompletionParams};
use super::session::{Caps, Session, uri_path};
use super::stage::RUN_STAGE_COMMAND;
use super::stage::report::RENDER_REPORT_COMMAND;
use super::stage::result::{APPLY_RESULT_COMMAND, DISCARD_RESULT_COMMAND};

pub const SELECT_DEVICE_COMMAND: &str = "xeforge.selectDevice";

pub struct Backend {
    pub session: Arc<Session>,
    folders: std::sync::Mutex<Vec<PathBuf>>,
}

impl Backend {
    pub fn new(session: Arc<Session>, client: Client) -> Backend {
        session.set_client(client);
        Backend { session, folders: std::sync::Mutex::new(Vec::new()) }
    }

    fn folders(&self) -> Vec<PathBuf> {
        super::session::lock(&self.folders).clone()
    }

    /// `xeforge/devices`.
    pub async fn devices(&self, _: Value) -> Result<configuration::DevicesResult> {
        Ok(configuration::devices(&self.session))
    }

    /// `xeforge/stages`: the stage picker's data (see `handlers::stages`).
    pub async fn stages(&self, p: handlers::stages::StagesParams) -> Result<handlers::stages::StagesResult> {
        let Some(provider) = self.session.stage_provider() else {
            return Err(Error::invalid_params("no stage runner is available in this build"));
        };
        let uri = p.text_document.uri.clone();
        let Some(c) = handlers::current(&self.session, &uri).await else {
            return Err(Error::invalid_params(format!("document not open: {uri}")));
        };
        let entry = self.session.entry(&uri);
        let settings = self.session.settings_for(entry.as_ref().and_then(|e| e.path.as_deref()));
        Ok(handlers::stages::stages(&c, &p, &settings, provider.as_ref()))
    }

    /// `textDocument/inlineCompletion` (LSP 3.18; see `lsp::inline`).
    pub async fn inline_completion(&self, p: InlineCompletionParams) -> Result<InlineCompletionList> {
        super::inline::inline_completion(&self.session, p).await
    }

    /// `xeforge/debugDocument` (tests only; enabled by initializationOptions `{"debug": true}`): the
    /// server's text, version and the diagnostics it would publish for that version.
    pub async fn debug_document(&self, p: DebugDocumentParams) -> Result<DebugDocument> {
        if !self.session.debug.load(Ordering::SeqCst) {
            return Err(Error::method_not_found());
        }
        let Some(c) = handlers::current(&self.session, &p.text_document.uri).await else {
            return Err(Error::invalid_params(format!("document not open: {}", p.text_document.uri)));
        };
        Ok(DebugDocument { version: c.version, text: c.text.clone(), diagnostics: c.lsp().to_vec(), slim: c.tree().is_none() })
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DebugDocumentParams {
    pub text_document: TextDocumentIdentifier,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct DebugDocument {
    pub version: i32,
    pub text: String,
    pub diagnostics: Vec<Diagnostic>,
    /// The result let its tree and reuse data go (a large idle document, `worker::slim_when_idle`).
    #[serde(default)]
    pub slim: bool,
}

/// The non-settings part of initializationOptions.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct InitExtras {
    debug: bool,
    lint: InitLint,
    diagnostics: InitDiagnostics,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct InitDiagnostics {
    /// Advertise `workspace/diagnostic`: the client then pulls every Triton file of the workspace
    /// (VS Code's `xeforge.diagnostics.workspace`).
    workspace: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct InitLint {
    debounce_ms: Option<u64>,
    idle_release_ms: Option<u64>,
}

#[tower_lsp::async_trait]
impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let s = &self.session;
        let enc = Encoding::negotiate(params.capabilities.general.as_ref().and_then(|g| g.position_encodings.as_deref()));
        s.set_encoding(enc);
        let caps = Caps::from_client(&params.capabilities);
        s.set_caps(caps.clone());
        if let Some(opts) = &params.initialization_options {
            let extras: InitExtras = serde_json::from_value(opts.clone()).unwrap_or_default();
            s.debug.store(extras.debug, Ordering::SeqCst);
            s.workspace_diagnostics.store(extras.diagnostics.workspace, Ordering::SeqCst);
            let init = s.parse_editor_settings(opts);
            s.update_editor(|e| {
                e.init = init;
                e.debounce_ms = extras.lint.debounce_ms.unwrap_or(0).min(2_000);
                e.idle_release_ms = extras.lint.idle_release_ms;
            });
        }
        let mut folders: Vec<PathBuf> = params.workspace_folders.unwrap_or_default().iter().filter_map(|f| uri_path(&f.uri)).collect();
        #[allow(deprecated)]
        if folders.is_empty()
            && let Some(root) = params.root_uri.as_ref().and_then(uri_path)
        {
            folders.push(root);
        }
        *super::session::lock(&self.folders) = folders;

        let mut commands = vec![SELECT_DEVICE_COMMAND.to_string(), ACCEPT_INLINE_COMMAND.to_string()];
        if s.stage_provider().is_some() {
            commands.push(RUN_STAGE_COMMAND.to_string());
            commands.push(APPLY_RESULT_COMMAND.to_string());
            commands.push(DISCARD_RESULT_COMMAND.to_string());
            commands.push(RENDER_REPORT_COMMAND.to_string());
            commands.push(VERIFY_COMPILED_COMMAND.to_string());
        }
        let code_action_provider = if caps.code_action_literals {
            CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(code_actions::kinds()),
                work_done_progress_options: WorkDoneProgressOptions::default(),
                resolve_provider: Some(false),
            })
        } else {
            CodeActionProviderCapability::Simple(true)
        };
        let capabilities = ServerCapabilities {
            position_encoding: Some(enc.kind()),
            text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text: Some(false) })),
                ..TextDocumentSyncOptions::default()
            })),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            code_action_provider: Some(code_action_provider),
            code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
            inlay_hint_provider: Some(OneOf::Left(true)),
            completion_provider: Some(CompletionOptions {
                resolve_provider: Some(true),
                trigger_characters: Some([".", "(", ",", "=", "\"", "'", "{"].iter().map(|s| s.to_string()).collect()),
                ..CompletionOptions::default()
            }),
            signature_help_provider: Some(SignatureHelpOptions {
                trigger_characters: Some(vec!["(".into(), ",".into()]),
                retrigger_characters: Some(vec!["=".into()]),
                work_done_progress_options: WorkDoneProgressOptions::default(),
            }),
            execute_command_provider: Some(ExecuteCommandOptions {
                commands,
                work_done_progress_options: WorkDoneProgressOptions::default(),
            }),
            diagnostic_provider: caps.pull_diagnostics.then(|| {
                DiagnosticServerCapabilities::Options(DiagnosticOptions {
                    identifier: Some("xeforge".into()),
                    inter_file_dependencies: false,
                    workspace_diagnostics: s.workspace_diagnostics.load(Ordering::SeqCst),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                })
            }),
            workspace: Some(WorkspaceServerCapabilities {
                workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                    supported: Some(true),
                    change_notifications: Some(OneOf::Left(true)),
                }),
                file_operations: None,
            }),
            ..ServerCapabilities::default()
        };
        Ok(InitializeResult {
            capabilities,
            server_info: Some(ServerInfo { name: "xeforge".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let s = self.session.clone();
        let folders = self.folders();
        s.log(MessageType::INFO, format!("xeforge {} ready (positions in {:?})", env!("CARGO_PKG_VERSION"), s.encoding()));
        // Detached: the client may answer late, and this handler must not hold a slot meanwhile.
        tokio::spawn(async move {
            configuration::register_watchers(&s).await;
            configuration::pull(&s, &folders).await;
        });
    }

    async fn shutdown(&self) -> Result<()> {
        self.session.shutting_down.store(true, Ordering::SeqCst);
        Ok(())
    }

    // Applied on the ingress path (ingress.rs); nothing left to do here.
    async fn did_open(&self, _: DidOpenTextDocumentParams) {}
    async fn did_change(&self, _: DidChangeTextDocumentParams) {}
    async fn did_save(&self, _: DidSaveTextDocumentParams) {}
    async fn did_close(&self, _: DidCloseTextDocumentParams) {}

    async fn did_change_configuration(&self, p: DidChangeConfigurationParams) {
        let s = self.session.clone();
        let folders = self.folders();
        tokio::spawn(async move { configuration::changed(&s, p.settings, &folders).await });
    }

    async fn did_change_watched_files(&self, p: DidChangeWatchedFilesParams) {
        configuration::watched_files_changed(&self.session, p.changes.into_iter().map(|c| c.uri));
    }

    async fn did_change_workspace_folders(&self, p: DidChangeWorkspaceFoldersParams) {
        let folders = {
            let mut f = super::session::lock(&self.folders);
            let removed: Vec<PathBuf> = p.event.removed.iter().filter_map(|w| uri_path(&w.uri)).collect();
            f.retain(|x| !removed.contains(x));
            f.extend(p.event.added.iter().filter_map(|w| uri_path(&w.uri)));
            f.clone()
        };
        let s = self.session.clone();
        tokio::spawn(async move { configuration::pull(&s, &folders).await });
    }

    async fn diagnostic(&self, p: DocumentDiagnosticParams) -> Result<DocumentDiagnosticReportResult> {
        diagnostics::pull(&self.session, p).await
    }

    async fn workspace_diagnostic(&self, p: WorkspaceDiagnosticParams) -> Result<WorkspaceDiagnosticReportResult> {
        workspace_diagnostics::pull(&self.session, self.folders(), p).await
    }

    async fn code_action(&self, p: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = p.text_document.uri;
        if self.session.is_notebook_cell(&uri) {
            return Ok(super::notebook::code_actions(&self.session, &uri, p.range, p.context.only.as_deref()).await);
        }
        let Some(c) = handlers::current(&self.session, &uri).await else { return Ok(None) };
        let entry = self.session.entry(&uri);
        let settings = self.session.settings_for(entry.as_ref().and_then(|e| e.path.as_deref()));
        let provider = self.session.stage_provider();
        let req = code_actions::Request {
            uri: &uri,
            range: p.range,
            only: p.context.only.as_deref(),
            settings: &settings,
            stage: provider.as_deref(),
        };
        Ok(Some(code_actions::code_actions(&c, &req)))
    }

    async fn hover(&self, p: HoverParams) -> Result<Option<Hover>> {
        let pp = p.text_document_position_params;
        if self.session.is_notebook_cell(&pp.text_document.uri) {
            return Ok(super::notebook::hover(&self.session, &pp.text_document.uri, pp.position).await);
        }
        let Some(c) = handlers::current(&self.session, &pp.text_document.uri).await else { return Ok(None) };
        Ok(hover::hover(&c, pp.position))
    }

    async fn completion(&self, p: CompletionParams) -> Result<Option<CompletionResponse>> {
        let pp = p.text_document_position;
        let Some(c) = handlers::current_for_typing(&self.session, &pp.text_document.uri).await else { return Ok(None) };
        Ok(completion::completion(&c, pp.position))
    }

    async fn completion_resolve(&self, item: CompletionItem) -> Result<CompletionItem> {
        // The item's data names the symbol, the toolchain and the document (whose knowledge base
        // holds any overlay); the last result of that document is enough, nothing is recomputed.
        let doc = completion::data(&item).and_then(|d| d.uri).and_then(|u| self.session.entry(&u)).and_then(|e| e.current());
        let kb = doc.map(|c| c.kb.clone()).unwrap_or_else(|| self.session.embedded_knowledge());
        Ok(completion::resolve(&kb, item))
    }

    async fn signature_help(&self, p: SignatureHelpParams) -> Result<Option<SignatureHelp>> {
        let pp = p.text_document_position_params;
        let Some(c) = handlers::current_for_typing(&self.session, &pp.text_document.uri).await else { return Ok(None) };
        Ok(signature_help::signature_help(&c, pp.position))
    }

    async fn inlay_hint(&self, p: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let Some(c) = handlers::current(&self.session, &p.text_document.uri).await else { return Ok(None) };
        Ok(Some(inlay_hints::inlay_hints(&c, p.range)))
    }

    async fn code_lens(&self, p: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let uri = p.text_document.uri;
        let Some(c) = handlers::current(&self.session, &uri).await else { return Ok(None) };
        let entry = self.session.entry(&uri);
        let settings = self.session.settings_for(entry.as_ref().and_then(|e| e.path.as_deref()));
        let provider = self.session.stage_provider();
        let mut lenses = code_lens::code_lenses(&c, &uri, &settings, provider.as_deref());
        lenses.extend(super::stage::result::lenses(&self.session, &c, &uri));
        lenses.extend(self.session.evidence.lenses(&c, &uri, self.session.encoding()));
        Ok(Some(lenses))
    }

    async fn execute_command(&self, p: ExecuteCommandParams) -> Result<Option<Value>> {
        match p.command.as_str() {
            SELECT_DEVICE_COMMAND => configuration::select_device(&self.session, &p.arguments),
            RUN_STAGE_COMMAND => super::stage::run::start(&self.session, &p.arguments),
            APPLY_RESULT_COMMAND => super::stage::result::command_apply(&self.session, &p.arguments).await,
            DISCARD_RESULT_COMMAND => super::stage::result::command_discard(&self.session, &p.arguments),
            RENDER_REPORT_COMMAND => super::stage::report::command_render(&p.arguments),
            VERIFY_COMPILED_COMMAND => super::compiled::command::start(&self.session, &p.arguments).await,
            ACCEPT_INLINE_COMMAND => super::inline::accept::command(&self.session, &p.arguments).await,
            other => Err(Error::invalid_params(format!("unknown command `{other}`"))),
        }
    }
}
