//! The hook through which the CoVeR stages (helper H's `cover` module) appear in the editor: as code
//! actions on a kernel, as commands in its code lens, and as the long-running `xeforge.runStage`
//! command whose result comes back as a versioned `workspace/applyEdit`.
//!
//! The server owns the protocol side (progress tokens, cancellation, the version re-check before the
//! edit); a provider only lists actions and runs one stage on a text.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::config::Settings;
use crate::lint::Diagnostic;
use crate::model::FileModel;
use crate::text::TextRange;

/// The command every stage action runs; its single argument is a [`StageCommand`].
pub const RUN_STAGE_COMMAND: &str = "xeforge.runStage";

/// What a provider sees when asked for actions: one analysed document.
pub struct StageContext<'a> {
    pub uri: &'a str,
    pub path: Option<&'a std::path::Path>,
    pub text: &'a str,
    pub model: &'a FileModel,
    pub diagnostics: &'a [Diagnostic],
    pub settings: &'a Settings,
}

/// One stage offered for one kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct StageAction {
    /// "Autotune matmul_kernel (verified on the harness)".
    pub title: String,
    pub stage: String,
    /// Index into `FileModel::kernels` of the context.
    pub kernel: usize,
    /// Offer it in the kernel's code lens too.
    pub lens: bool,
}

/// The argument of `xeforge.runStage`, as the client sends it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StageCommand {
    pub uri: String,
    pub version: i32,
    pub stage: String,
    pub kernel: String,
}

/// A stage run's request: the text of the version the command was issued for.
#[derive(Debug, Clone)]
pub struct StageRun {
    pub command: StageCommand,
    pub path: Option<std::path::PathBuf>,
    pub text: String,
    pub settings: Settings,
}

/// A finished run: the whole new text (the server turns it into a minimal versioned edit) and a line
/// for the user, e.g. the evidence summary. `new_text: None` means "nothing to change".
#[derive(Debug, Clone)]
pub struct StageResult {
    pub new_text: Option<String>,
    pub summary: String,
    /// Range of the kernel in the original text, for rebasing if the user kept editing elsewhere.
    pub kernel_range: Option<TextRange>,
}

/// Progress reports while a stage runs: (message, percentage).
pub type ProgressFn = Box<dyn FnMut(String, Option<u32>) + Send>;

pub type StageFuture = Pin<Box<dyn Future<Output = Result<StageResult, String>> + Send>>;

pub trait StageActionProvider: Send + Sync {
    /// The stages worth offering for the document (cheap: called on every code action/lens request).
    fn actions(&self, ctx: &StageContext<'_>) -> Vec<StageAction>;
    /// Run one stage. Called from a detached task; must stop soon after `cancel` fires.
    fn run(&self, run: StageRun, progress: ProgressFn, cancel: CancellationToken) -> StageFuture;
}
