//! The hook through which the CoVeR stages (the `cover` module) appear in the editor: as code
//! actions on a kernel, as commands in its code lens, and as the long-running `xeforge.runStage`
//! command whose result comes back as a versioned `workspace/applyEdit`.
//!
//! The server owns the protocol side (progress tokens, cancellation, the version re-check before the
//! edit); a provider only lists actions and runs one stage on a text. The same provider compiles a
//! text on the harness for `xeforge.verifyCompiled` (`lsp::compiled`).

pub mod ask;
pub mod rebase;
pub mod report;
pub mod result;
pub mod run;

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::config::Settings;
use crate::lint::Diagnostic;
use crate::lsp::compiled::{VerifyOutcome, VerifyRun};
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

/// The argument of `xeforge.runStage`. The server puts `{uri, version, stage, kernel}` in every lens and
/// action; the editor clients pass that object back untouched (VS Code's and Neovim's stage pickers
/// re-send a lens's arguments). Hand-written invocations are accepted leniently: `kernelName` for
/// `kernel`, `textDocument: {uri, version}` for `uri`/`version`, and no version at all (the current one).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StageCommand {
    pub uri: String,
    /// The document version the command was offered for; `None`: whatever version is current.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i32>,
    pub stage: String,
    pub kernel: String,
}

/// The document a command names, as commands are written: `uri`/`version` at the top level (what
/// the server puts in lenses and actions) or `textDocument: {uri, version}` (hand-written); the
/// top level wins. Flattened into each command's wire form.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CommandDoc {
    uri: Option<String>,
    version: Option<i32>,
    text_document: Option<TextDocumentArg>,
}

#[derive(Deserialize)]
struct TextDocumentArg {
    uri: String,
    version: Option<i32>,
}

impl CommandDoc {
    /// The uri (required) and the version (`None`: whatever is current).
    pub(crate) fn resolve<E: serde::de::Error>(self) -> Result<(String, Option<i32>), E> {
        let (doc_uri, doc_version) = self.text_document.map(|t| (Some(t.uri), t.version)).unwrap_or((None, None));
        let uri = self.uri.or(doc_uri).ok_or_else(|| E::missing_field("uri"))?;
        Ok((uri, self.version.or(doc_version)))
    }
}

impl<'de> Deserialize<'de> for StageCommand {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            #[serde(flatten)]
            doc: CommandDoc,
            stage: String,
            #[serde(alias = "kernelName")]
            kernel: String,
        }
        let w = Wire::deserialize(d)?;
        let (uri, version) = w.doc.resolve()?;
        Ok(StageCommand { uri, version, stage: w.stage, kernel: w.kernel })
    }
}

/// One stage the provider knows, for the stage picker (`xeforge/stages`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageInfo {
    pub name: String,
    pub title: String,
    pub summary: String,
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
    /// The kernel's range in `new_text`, for "apply anyway" over a kernel the user edited meanwhile.
    pub kernel_range_after: Option<TextRange>,
    /// The evidence record (`.xeforge/runs/*.json`), linked from the result message.
    pub record: Option<std::path::PathBuf>,
}

/// Progress reports while a stage runs: (message, percentage).
pub type ProgressFn = Box<dyn FnMut(String, Option<u32>) + Send>;

pub type StageFuture = Pin<Box<dyn Future<Output = Result<StageResult, StageFailure>> + Send>>;

pub type VerifyFuture = Pin<Box<dyn Future<Output = Result<VerifyOutcome, String>> + Send>>;

/// Why a run ended without a result.
#[derive(Debug, Clone, PartialEq)]
pub enum StageFailure {
    Failed(String),
    /// The stage needs one line from the user before it can run: the server asks the editor
    /// (`xeforge/askProblem`), writes the answer as `line` (0-based) and runs again.
    NeedsInput {
        message: String,
        question: StageQuestion,
    },
}

/// One line the user can give: `{indent}# xeforge: dims {answer}` inserted at `line` (0-based).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StageQuestion {
    pub entry: String,
    pub missing: Vec<String>,
    /// Offered as the answer's starting value: example sizes, `<value>` where nothing suggests one.
    pub suggestion: String,
    pub line: u32,
    #[serde(skip)]
    pub indent: String,
}

impl StageQuestion {
    /// The text inserted for `answer` (with or without the `# xeforge: dims` prefix).
    pub fn insertion(&self, answer: &str) -> String {
        let answer = answer.trim();
        let answer = answer.strip_prefix("# xeforge: dims").unwrap_or(answer).trim();
        format!("{}# xeforge: dims {answer}\n", self.indent)
    }
}

impl std::fmt::Display for StageFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StageFailure::Failed(m) | StageFailure::NeedsInput { message: m, .. } => f.write_str(m),
        }
    }
}

impl From<String> for StageFailure {
    fn from(m: String) -> Self {
        StageFailure::Failed(m)
    }
}

impl From<&str> for StageFailure {
    fn from(m: &str) -> Self {
        StageFailure::Failed(m.to_string())
    }
}

pub trait StageActionProvider: Send + Sync {
    /// The stages worth offering for the document (cheap: called on every code action/lens request).
    fn actions(&self, ctx: &StageContext<'_>) -> Vec<StageAction>;
    /// Every stage that can be run on a kernel, for the stage picker; the ones [`Self::actions`] offers
    /// are marked recommended there.
    fn catalogue(&self, _settings: &Settings) -> Vec<StageInfo> {
        Vec::new()
    }
    /// Run one stage. Called from a detached task; must stop soon after `cancel` fires.
    fn run(&self, run: StageRun, progress: ProgressFn, cancel: CancellationToken) -> StageFuture;
    /// Compile the text on the harness, as `xeforge verify` does, and hand back what compiling said
    /// (`xeforge.verifyCompiled`). Called from a detached task; must stop soon after `cancel` fires.
    fn verify_compiled(&self, run: VerifyRun, progress: ProgressFn, cancel: CancellationToken) -> VerifyFuture;
}

#[cfg(test)]
mod tests {
    use super::StageCommand;
    use serde_json::json;

    #[test]
    fn the_lens_argument_round_trips_and_hand_written_shapes_are_accepted() {
        let lens = StageCommand { uri: "file:///k.py".into(), version: Some(3), stage: "autotune".into(), kernel: "k".into() };
        let wire = serde_json::to_value(&lens).unwrap();
        assert_eq!(wire, json!({"uri": "file:///k.py", "version": 3, "stage": "autotune", "kernel": "k"}));
        assert_eq!(serde_json::from_value::<StageCommand>(wire).unwrap(), lens);

        let by_doc: StageCommand =
            serde_json::from_value(json!({"textDocument": {"uri": "file:///k.py", "version": 3}, "stage": "autotune", "kernelName": "k"}))
                .unwrap();
        assert_eq!(by_doc, lens);
        let unversioned: StageCommand = serde_json::from_value(json!({"uri": "file:///k.py", "stage": "autotune", "kernel": "k"})).unwrap();
        assert_eq!(unversioned.version, None);
        assert!(serde_json::from_value::<StageCommand>(json!({"stage": "autotune", "kernel": "k"})).is_err(), "a document is required");
    }
}
