//! `xeforge lsp`: the checker as a language server over stdio (tower-lsp 0.20, tokio, ropey).
//!
//! - `transport`: every tower-lsp 0.20 workaround (ordered ingress, exit, panics, client requests).
//! - `ingress` + `documents` + `encoding`: text sync on the ordered path; rope, tree, positions.
//! - `worker` + `engine` + `convert`: per-document reparse/analysis, "latest version wins", publish.
//! - `session`: shared state and settings; `server`: capabilities and routing; `handlers/*`: features.
//! - `stage` + `run_stage`: the hook through which CoVeR stages become actions, lenses and a command;
//!   `stage_rebase` + `stage_result`: moving a finished result onto the edited document, or keeping it.
//! - `compiled`: what compiling a document on the harness said (`xeforge.verifyCompiled`), kept per
//!   kernel text and merged into every analysed version; `progress`: `$/progress` of long commands.
//! - `notebook`: LSP 3.17 notebook sync; a notebook's Python cells are one document, published per cell.
//! - `inline`: LSP 3.18 inline suggestions (a finding's fix, a verified stage result) and the command
//!   that completes one after the editor inserted it.

pub mod compiled;
pub mod convert;
pub mod documents;
pub mod edit;
pub mod encoding;
pub mod engine;
pub mod handlers;
pub mod heap;
mod ingress;
pub mod inline;
pub mod notebook;
pub mod progress;
pub mod server;
pub mod session;
pub mod stage;
pub mod transport;
pub mod wire;
pub mod worker;

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp::{LspService, Server};

use server::Backend;
use session::Session;
use stage::StageActionProvider;

#[derive(Default)]
pub struct ServeOptions {
    /// Provider of stage actions (the `cover` module); `None` hides stage actions and the command.
    pub stage: Option<Arc<dyn StageActionProvider>>,
    /// End the process on `exit` (the real binary). Off for in-process tests.
    pub exit_process: bool,
}

/// Serve one client over the given streams until it exits or closes the input.
pub async fn serve<I, O>(input: I, output: O, opts: ServeOptions)
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin,
{
    let (writer, outbox, frames) = transport::mux();
    let input = transport::sanitized_input(input, outbox.clone());
    let session = Session::new(outbox);
    if let Some(p) = opts.stage {
        *session.stage.write().unwrap_or_else(|e| e.into_inner()) = Some(p);
    }
    let s = session.clone();
    let (service, socket) = LspService::build(move |client| Backend::new(s, client))
        .custom_method("xeforge/devices", Backend::devices)
        .custom_method("xeforge/debugDocument", Backend::debug_document)
        .custom_method("xeforge/stages", Backend::stages)
        .custom_method(inline::METHOD, Backend::inline_completion)
        .custom_method("window/workDoneProgress/cancel", |b: &Backend, p| {
            stage::run::cancel(&b.session, p);
            std::future::ready(())
        })
        .finish();
    let ingress: Arc<dyn transport::Ingress> = Arc::new(session);
    let service = transport::OrderedIngress::new(service, ingress, opts.exit_process);
    // The writer is dropped when the serve loop ends, which closes the queue after its last frame.
    let serve = Server::new(input, writer, socket).serve(service);
    tokio::join!(serve, transport::write_frames(frames, output));
}
