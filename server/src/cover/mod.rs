//! CoVeR stages: generate → guard → verify on the harness → refine, keeping the best verified candidate.
//!
//! Pieces, one job each:
//! - [`outline`]: the top-level shape of a kernel file (imports, kernels, `Model`, launches, banned constructs).
//! - [`guard`]: what a candidate may change and which patterns reject it, checked before any GPU time.
//! - [`autotune`]: the deterministic autotune generator (config space + decorator rewrite).
//! - [`prompt`]: prompts for LLM stages (the client is [`crate::llm`]).
//! - [`run`]: the loop, acceptance policy and re-verification; [`evidence`]: the JSON record and summary line.
//! - [`lsp_provider`]: the language server's stage actions and runs (`xeforge.runStage`), and its
//!   compiled verification (`xeforge.verifyCompiled`).
//! - [`compiled`]: compile metadata as findings; [`verify`]: one compiled verification of a text on
//!   the harness, cached, for `xeforge verify` and the language server.
//! - [`problem`]: the problem a stage verifies when there is no spec: entry, inputs and sizes inferred
//!   from the code (wrapper, call sites, `# xeforge: dims`), written as a spec with provenance.
//! - [`settings`]: `[tool.xeforge.llm]` / `[tool.xeforge.harness]` and the workspace root; [`spec`]: `xeforge spec`.
//!
//! ## API for the language server
//!
//! ```ignore
//! let runner = cover::run::StageRunner { kb, harness, llm };            // harness: HarnessRegistry::get(workspace, settings)
//! let mut req = cover::run::StageRequest::new("autotune", path, document_text);
//! req.kernel = Some("matmul_kernel".into());
//! let outcome = runner.run(req, |p: Progress| report(p.message()), cancel_token).await?;
//! ```
//! `StageOutcome` carries `new_text` (the whole file, `None` when nothing verified better), the one-line
//! `summary` for the edit label, `record_path` (the evidence JSON), `original_sha256` (the text the run
//! started from) and `kernel_range_before`/`kernel_range_after`. If the document changed during the run,
//! replace `kernel_range_before` (shifted by the user's edits, and only if those edits did not touch it)
//! with `new_text[kernel_range_after]`; apply `new_text` wholesale only when the document still hashes to
//! `original_sha256`. Launch-scope stages may also change code outside the kernel: for those, a changed
//! document means re-running. Cancelling the token ends the run with `StageError::Cancelled`; the
//! file is never written by the runner.

pub mod autotune;
pub mod compiled;
pub mod evidence;
pub mod guard;
pub mod lsp_provider;
pub mod outline;
pub mod problem;
pub mod prompt;
pub mod run;
pub mod settings;
pub mod spec;
mod tune;
pub mod verify;

pub use run::{OutcomeStatus, Progress, StageError, StageOutcome, StageRequest, StageRunner};
