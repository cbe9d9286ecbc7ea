//! The verify-and-refine loop of one stage: generate → guard → harness → feedback, up to N rounds,
//! keeping the best verified candidate; then the evidence record. See the module docs in `cover`.

use super::autotune;
use super::evidence::{self, Record, RoundRecord};
use super::guard::{self, GuardPolicy, Rejection, Scope};
use super::outline::{Outline, slice};
use super::prompt;
use crate::harness::{DeviceKind, EvaluateArgs, Evaluation, Harness, HarnessError, Verdict};
use crate::knowledge::{Generator, Knowledge, Stage, Target};
use crate::lint::LintOptions;
use crate::llm::{ChatMessage, LlmClient, LlmError, extract_code_block};
use crate::text::TextRange;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What to run.
#[derive(Debug, Clone)]
pub struct StageRequest {
    pub stage: String,
    /// The file on disk (for the workspace, the spec beside it and the record); `text` is what is optimised.
    pub path: PathBuf,
    /// The document text the run starts from (an editor's unsaved buffer, or the file).
    pub text: String,
    pub kernel: Option<String>,
    pub spec: Option<PathBuf>,
    pub device: DeviceKind,
    /// Knowledge-base target ids; empty for the defaults.
    pub target_device: String,
    pub target_toolchain: String,
    pub family: Option<String>,
    pub seeds: u32,
    pub rounds: u32,
    /// Per-candidate wall-clock limit, seconds.
    pub timeout: u64,
    /// Most configs the autotune stage measures.
    pub max_configs: usize,
    /// Seconds the autotune stage aims to finish in; 0 takes the knowledge base's default.
    pub budget_s: u64,
    /// The file before any stage of an `optimize` run; the result is re-verified against it.
    pub pristine: Option<String>,
    /// Where `.xeforge/` lives.
    pub workspace: PathBuf,
    /// What the autotune stage's screen is checked on (`XEFORGE_AUTOTUNE_SCREEN` in the CLI).
    pub screen: super::autotune::budget::Screen,
}

impl StageRequest {
    /// The knowledge-base target the stage generates and checks for: the request's ids, defaults for
    /// those left empty. Measuring on NVIDIA with no toolchain named, the CUDA toolchain (and the
    /// default CUDA device when no device is named either), not the Intel default.
    pub fn target<'k>(&self, kb: &'k Knowledge) -> Result<Target<'k>, crate::analysis::AnalysisError> {
        let mut opts = LintOptions { device: self.target_device.clone(), toolchain: self.target_toolchain.clone(), ..Default::default() };
        if self.device == DeviceKind::Cuda && opts.toolchain.is_empty() {
            opts.toolchain = "cuda".into();
            if opts.device.is_empty() {
                opts.device = kb.default_cuda_device.clone();
            }
        }
        crate::analysis::resolve_target(kb, &opts)
    }

    pub fn new(stage: &str, path: PathBuf, text: String) -> Self {
        let workspace = super::settings::workspace_root(&path);
        Self {
            stage: stage.to_string(),
            path,
            text,
            kernel: None,
            spec: None,
            device: DeviceKind::Auto,
            target_device: String::new(),
            target_toolchain: String::new(),
            family: None,
            seeds: 3,
            rounds: 5,
            timeout: 120,
            max_configs: 16,
            budget_s: 0,
            pristine: None,
            workspace,
            screen: Default::default(),
        }
    }
}

/// Reported while the run goes on (a CLI spinner, LSP `$/progress`).
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    Started {
        stage: String,
        kernel: String,
        rounds: u32,
    },
    Generating {
        round: u32,
    },
    Rejected {
        round: u32,
        rejection: Rejection,
    },
    Evaluating {
        round: u32,
        what: String,
    },
    Evaluated {
        round: u32,
        verdict: Verdict,
        speedup: Option<f64>,
    },
    /// The autotune stage's plan, before it measures anything.
    Planned {
        configs: usize,
        expected_s: u64,
    },
    Reverifying,
}

impl Progress {
    pub fn message(&self) -> String {
        match self {
            Progress::Started { stage, kernel, rounds } => format!("{stage} on {kernel} (up to {rounds} rounds)"),
            Progress::Generating { round } => format!("round {round}: generating"),
            Progress::Rejected { round, rejection } => {
                format!("round {round}: rejected by the guard: {rejection}")
            }
            Progress::Evaluating { round, what } => format!("round {round}: verifying {what}"),
            Progress::Evaluated { round, verdict, speedup } => match speedup {
                Some(s) => format!("round {round}: {verdict} ({s:.2}×)"),
                None => format!("round {round}: {verdict}"),
            },
            Progress::Planned { configs, expected_s } => format!("measuring {configs} configs: about {expected_s} s"),
            Progress::Reverifying => "re-verifying against the original file".into(),
        }
    }

    /// Share of the run done, for `$/progress`: rounds fill 0–90 %, the final re-verification the rest.
    /// Only an upper bound on the work left, since a run stops at its first accepted candidate.
    pub fn percentage(&self, rounds: u32) -> u32 {
        let rounds = rounds.max(1) as f64;
        let done = |round: u32, part: f64| ((f64::from(round.saturating_sub(1)) + part) / rounds * 90.0).min(90.0) as u32;
        match self {
            Progress::Started { .. } | Progress::Planned { .. } => 0,
            Progress::Generating { round } => done(*round, 0.0),
            Progress::Rejected { round, .. } | Progress::Evaluated { round, .. } => done(*round, 1.0),
            Progress::Evaluating { round, .. } => done(*round, 0.5),
            Progress::Reverifying => 95,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutcomeStatus {
    /// Verified correct and faster.
    Accepted,
    /// Verified correct; accepted because the stage is about correctness or the device is the CPU interpreter.
    CorrectOnly,
    /// Nothing verified better than the input; `new_text` is None.
    NoImprovement,
}

impl OutcomeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeStatus::Accepted => "accepted",
            OutcomeStatus::CorrectOnly => "correct-only",
            OutcomeStatus::NoImprovement => "no-improvement",
        }
    }
}

/// The result; what the LSP needs to apply (or rebase) the edit.
#[derive(Debug, Clone)]
pub struct StageOutcome {
    pub status: OutcomeStatus,
    /// The whole new file text, when the stage changed it.
    pub new_text: Option<String>,
    /// One line for the edit label and the CLI.
    pub summary: String,
    pub record_path: Option<PathBuf>,
    pub kernel: String,
    /// sha256 of `StageRequest::text`: the document must still hash to this for a plain apply.
    pub original_sha256: String,
    /// The kernel's byte range in the request text and in `new_text`, to rebase onto an edited document.
    pub kernel_range_before: TextRange,
    pub kernel_range_after: Option<TextRange>,
    pub evaluation: Option<Evaluation>,
    pub rounds: Vec<RoundRecord>,
    /// The problem inferred from the code when there was no spec (entry, inputs, sizes, provenance).
    pub problem: Option<super::problem::Problem>,
}

#[derive(Debug, thiserror::Error)]
pub enum StageError {
    #[error("unknown stage `{name}`; stages: {}", .known.join(", "))]
    UnknownStage { name: String, known: Vec<String> },
    #[error("the file does not parse (line {line}); fix the syntax first")]
    OriginalDoesNotParse { line: usize },
    #[error(transparent)]
    Target(#[from] crate::analysis::AnalysisError),
    #[error(transparent)]
    Autotune(#[from] autotune::AutotuneError),
    #[error("stage `{0}` needs a language model: set [tool.xeforge.llm] url and model, or --llm-url and --llm-model")]
    NoGenerator(String),
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Harness(#[from] HarnessError),
    #[error("the harness could not run: {0}")]
    HarnessVerdictError(String),
    /// The problem cannot be inferred from the code: what is missing and the line to add.
    #[error("{0}")]
    ProblemIncomplete(super::problem::Incomplete),
    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
    #[error("cancelled")]
    Cancelled,
}

impl StageError {
    /// A stable name for each kind of failure, for machine-readable output (`--format json`).
    pub fn kind(&self) -> &'static str {
        match self {
            StageError::UnknownStage { .. } => "unknown-stage",
            StageError::OriginalDoesNotParse { .. } => "does-not-parse",
            StageError::Target(_) => "no-target",
            StageError::Autotune(_) => "autotune",
            StageError::NoGenerator(_) => "no-generator",
            StageError::Llm(_) => "llm",
            StageError::Harness(_) | StageError::HarnessVerdictError(_) => "harness",
            StageError::ProblemIncomplete(_) => "needs-input",
            StageError::Io { .. } => "io",
            StageError::Cancelled => "cancelled",
        }
    }
}

pub struct StageRunner {
    pub kb: Arc<Knowledge>,
    pub harness: Arc<Harness>,
    pub llm: Option<Arc<LlmClient>>,
}

/// The best verified candidate so far.
pub(super) struct Best {
    pub(super) text: String,
    pub(super) evaluation: Evaluation,
    pub(super) status: OutcomeStatus,
}

pub(super) struct Ctx<'a> {
    pub(super) req: &'a StageRequest,
    pub(super) stage: &'a Stage,
    pub(super) work: PathBuf,
    pub(super) original_path: PathBuf,
    pub(super) spec: Option<PathBuf>,
    pub(super) cancel: &'a CancellationToken,
    policy: GuardPolicy,
    started: u64,
    kernel: String,
    /// What Triton calls `kernel` where it records launches: its `def`'s name, which differs for a
    /// kernel made by an assignment (`add_kernel = triton.jit(_add_impl)` launches `_add_impl`).
    triton_name: String,
    /// The file launches `kernel` itself (not a helper other kernels call): the harness then checks
    /// that the original reaches it (`EvaluateArgs::target_kernel`).
    launched: bool,
    /// Knowledge-base (device, toolchain) ids.
    target: (String, String),
    /// The checker's findings on the original under that target, computed once: the fix round's
    /// edits, the model's prompt and the message when the original fails all read them.
    findings: Vec<crate::lint::Diagnostic>,
    problem: Option<super::problem::Problem>,
    /// Where a GPU times a generated candidate when no family is named: the spec's bench family
    /// (`super::tune::bench_family`); None on the interpreter or when a family is named.
    bench: Option<String>,
}

/// A stage's work directory (staged candidates, specs), removed when the run ends however it ends.
struct WorkDir(PathBuf);

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Overrides of one evaluation's harness arguments (the autotune stage's checked and timed families).
#[derive(Debug, Clone, Default)]
pub(super) struct EvalOpts {
    pub(super) spec: Option<PathBuf>,
    pub(super) family: Option<String>,
    pub(super) timing_family: Option<String>,
    pub(super) runs: Option<u32>,
    pub(super) stop_below: Option<f64>,
    pub(super) no_timing: bool,
    pub(super) search_timed: bool,
}

impl StageRunner {
    pub async fn run(
        &self,
        req: StageRequest,
        mut progress: impl FnMut(Progress),
        cancel: CancellationToken,
    ) -> Result<StageOutcome, StageError> {
        let started = evidence::now_unix();
        let stage = self.kb.stage(&req.stage).cloned().ok_or_else(|| StageError::UnknownStage {
            name: req.stage.clone(),
            known: self.kb.stages.iter().map(|s| s.name.clone()).collect(),
        })?;
        let outline = Outline::build(&req.text);
        if let Some(r) = outline.syntax_errors.first() {
            return Err(StageError::OriginalDoesNotParse { line: crate::text::LineIndex::new(&req.text).line_of(r.start) + 1 });
        }
        let target = req.target(&self.kb)?;
        let (kernel_name, kernel_range, triton_name) = match autotune::pick_kernel(&outline, req.kernel.as_deref()) {
            Ok(k) => (k.name.clone(), k.range, k.triton_name().to_string()),
            Err(e) if stage.generator() == Some(Generator::Autotune) || req.kernel.is_some() => {
                return Err(e.into());
            }
            // An LLM stage over a file with several kernels works on the whole file.
            Err(_) => ("*".to_string(), TextRange::new(0, req.text.len()), "*".to_string()),
        };
        progress(Progress::Started { stage: stage.name.clone(), kernel: kernel_name.clone(), rounds: req.rounds });

        // One per run, also for runs of one process that start in the same second (`optimize DIR`
        // runs files at once, an editor runs stages at once): each removes its own when it ends.
        static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let work = req.workspace.join(".xeforge").join("work").join(format!(
            "{}-{}-{}-{}",
            evidence::timestamp(started),
            stage.name,
            std::process::id(),
            RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&work).map_err(|e| io(&work, e))?;
        // Removed on every way out of the run: errors, cancellation and panics too.
        let _cleanup = WorkDir(work.clone());
        let original_path = work.join("original.py");
        std::fs::write(&original_path, &req.text).map_err(|e| io(&original_path, e))?;
        let kernel_arg = (kernel_name != "*").then_some(kernel_name.as_str());
        let (spec, problem) = super::problem::spec_for(&req.path, &req.text, kernel_arg, req.spec.clone(), &req.workspace)
            .map_err(StageError::ProblemIncomplete)?;
        let policy = GuardPolicy {
            // The autotune stage rewrites launches (tile names become META lookups) whatever its scope says.
            scope: if stage.generator() == Some(Generator::Autotune) { Scope::KernelsAndLaunch } else { stage.edit_scope() },
            allow_fusion: stage.allow_fusion,
        };
        let lint = LintOptions { device: target.device.id.clone(), toolchain: target.toolchain.id.clone(), ..Default::default() };
        // As `check` reads the file: `tl.dot` in helpers imported from the package's other files counts.
        let findings = crate::analysis::analyze_file(&req.path, &req.text, &self.kb, &lint)?.diagnostics;
        let ctx = Ctx {
            req: &req,
            stage: &stage,
            work: work.clone(),
            original_path,
            spec,
            cancel: &cancel,
            policy,
            started,
            kernel: kernel_name.clone(),
            triton_name,
            launched: outline.launches.iter().any(|l| l.targets(&kernel_name)),
            target: (target.device.id.clone(), target.toolchain.id.clone()),
            findings,
            problem: problem.clone(),
            bench: None,
        };
        let mut ctx = ctx;
        if stage.generator() != Some(Generator::Autotune)
            && req.family.is_none()
            && let Some(text) = ctx.spec.as_ref().and_then(|p| std::fs::read_to_string(p).ok())
        {
            let device = match req.device {
                DeviceKind::Cpu => None,
                DeviceKind::Xpu => Some("xpu"),
                DeviceKind::Auto => match self.harness.probe().await {
                    Ok(p) if !p.device.is_cpu() => Some(if p.device.kind.eq_ignore_ascii_case("xpu") { "xpu" } else { "cuda" }),
                    _ => None,
                },
                _ => Some("cuda"),
            };
            ctx.bench = device.and_then(|d| super::tune::bench_family(&super::autotune::derive::families(&text), d));
        }

        let mut rounds = Vec::new();
        let best = match stage.generator() {
            Some(Generator::Autotune) => self.autotune(&ctx, &outline, &kernel_name, target, &mut rounds, &mut progress).await?,
            other => {
                let fixes = if other == Some(Generator::Fixes) { self.fix_round(&ctx, &mut rounds, &mut progress).await? } else { None };
                match fixes {
                    Some(b) if b.status == OutcomeStatus::Accepted => Some(b),
                    first => {
                        let llm = match &self.llm {
                            Some(l) => Some(l.clone()),
                            None if first.is_some() || !rounds.is_empty() => None,
                            None => return Err(StageError::NoGenerator(stage.name.clone())),
                        };
                        match llm {
                            Some(llm) => {
                                let b = self.llm_rounds(&ctx, &llm, target, &mut rounds, &mut progress).await?;
                                better(first, b)
                            }
                            None => first,
                        }
                    }
                }
            }
        };

        // Re-verify against the pristine original when this stage's input was already rewritten.
        let mut reverification = None;
        let mut best = best;
        if let (Some(b), Some(pristine)) = (&best, req.pristine.as_ref().filter(|p| **p != req.text)) {
            progress(Progress::Reverifying);
            let p = work.join("pristine.py");
            std::fs::write(&p, pristine).map_err(|e| io(&p, e))?;
            let c = work.join("final.py");
            std::fs::write(&c, &b.text).map_err(|e| io(&c, e))?;
            let e = self.evaluate(&ctx, &p, &c).await?;
            let ok = e.verdict.is_correct();
            reverification = Some(e);
            if !ok {
                best = None;
            }
        }

        let status = best.as_ref().map(|b| b.status).unwrap_or(OutcomeStatus::NoImprovement);
        let evaluation = best.as_ref().map(|b| b.evaluation.clone());
        let summary = evidence::summary_line(&stage.name, evaluation.as_ref().filter(|_| best.is_some()), status.as_str(), &rounds);
        // A result that is the input itself (a kernel kept as it was) is no edit.
        let new_text = best.map(|b| b.text).filter(|t| *t != req.text);
        let kernel_range_after = new_text.as_deref().map(|t| {
            let o = Outline::build(t);
            o.kernel(&kernel_name).map(|k| k.range).unwrap_or(TextRange::new(0, t.len()))
        });
        let record = Record {
            xeforge: env!("CARGO_PKG_VERSION"),
            stage: stage.name.clone(),
            file: req.path.display().to_string(),
            kernel: kernel_name.clone(),
            started_unix: started,
            finished_unix: evidence::now_unix(),
            kernel_sha256_before: evidence::sha256(slice(&req.text, kernel_range)),
            kernel_sha256_after: new_text.as_deref().zip(kernel_range_after).map(|(t, r)| evidence::sha256(slice(t, r))),
            file_sha256_before: evidence::sha256(&req.text),
            file_sha256_after: new_text.as_deref().map(evidence::sha256),
            target_device: target.device.id.clone(),
            target_toolchain: target.toolchain.id.clone(),
            device: rounds_device(&evaluation, &reverification),
            harness: self.harness.describe(),
            spec: ctx.spec.as_ref().map(|s| s.display().to_string()),
            family: req.family.clone(),
            seeds: req.seeds,
            rounds: rounds.clone(),
            outcome: status.as_str().into(),
            summary: summary.clone(),
            evaluation: evaluation.clone(),
            reverification,
            llm_model: self.llm.as_ref().map(|l| l.settings().model.clone()),
            llm_tokens: self.llm.as_ref().map(|l| l.tokens_used()),
            problem: problem.clone(),
            diff: new_text.as_deref().map(|t| evidence::unified_diff(&req.path.display().to_string(), &req.text, t)),
        };
        let record_path = record.write(&req.workspace).ok();
        Ok(StageOutcome {
            status,
            new_text,
            summary,
            record_path,
            kernel: kernel_name,
            original_sha256: evidence::sha256(&req.text),
            kernel_range_before: kernel_range,
            kernel_range_after,
            evaluation,
            rounds,
            problem,
        })
    }

    /// One harness evaluation; an `error` verdict is returned, not raised.
    pub(super) async fn evaluate_raw(
        &self,
        ctx: &Ctx<'_>,
        kernel: &Path,
        candidate: &Path,
        opts: Option<&EvalOpts>,
    ) -> Result<Evaluation, StageError> {
        let args = self.eval_args(ctx, kernel, candidate, opts);
        tokio::select! {
            _ = ctx.cancel.cancelled() => Err(StageError::Cancelled),
            r = self.harness.evaluate(&args) => Ok(r?),
        }
    }

    fn eval_args(&self, ctx: &Ctx<'_>, kernel: &Path, candidate: &Path, opts: Option<&EvalOpts>) -> EvaluateArgs {
        let mut args = EvaluateArgs::new(kernel.to_path_buf(), candidate.to_path_buf());
        args.spec = ctx.spec.clone();
        args.device = ctx.req.device;
        args.family = ctx.req.family.clone();
        args.seeds = ctx.req.seeds.max(3);
        args.timeout = ctx.req.timeout;
        args.target_kernel = ctx.launched.then(|| ctx.triton_name.clone());
        if opts.is_none() {
            args.timing_family = ctx.bench.clone();
        }
        if let Some(o) = opts {
            args.spec = o.spec.clone().or(args.spec);
            args.family = o.family.clone().or(args.family);
            args.timing_family = o.timing_family.clone();
            args.runs = o.runs;
            args.stop_below = o.stop_below;
            args.no_timing = o.no_timing;
            args.search_timed = o.search_timed;
        }
        args
    }

    async fn evaluate(&self, ctx: &Ctx<'_>, kernel: &Path, candidate: &Path) -> Result<Evaluation, StageError> {
        let e = self.evaluate_raw(ctx, kernel, candidate, None).await?;
        if e.verdict == Verdict::Error {
            return Err(self.harness_verdict_error(ctx, &e));
        }
        Ok(e)
    }

    /// The harness itself could not run (bad spec, no device, an original that fails): no candidate
    /// can fix that. Its answer is still evidence: recorded, and its message shown wherever the error goes.
    pub(super) fn harness_verdict_error(&self, ctx: &Ctx<'_>, e: &Evaluation) -> StageError {
        let message = e.message.clone().filter(|m| !m.is_empty()).unwrap_or_else(|| e.failure_text(400));
        let mut message = if message.is_empty() { "the harness answered `error` without a message".to_string() } else { message };
        if crate::harness::protocol::names_the_original(&message) {
            message.push_str(&self.checker_errors(ctx));
            if e.device.is_cpu() && asks_for_cuda(&message) {
                message.push_str(
                    ". The harness ran on the CPU interpreter (no GPU here), and the original asks for a CUDA device (`device=\"cuda\"`, \
                     `.cuda()`, `torch.cuda.*`): allocate on the inputs' device (`x.device`, `torch.empty_like(x)`), or run the stage \
                     where a GPU is (`--device cuda`, or a remote harness)",
                );
            }
        }
        let record = self.error_record(ctx, e, &message).write(&ctx.req.workspace).ok();
        let at = record.map(|p| format!(" (evidence: {})", p.display())).unwrap_or_default();
        StageError::HarnessVerdictError(format!("{message}{at}"))
    }

    /// When the original itself fails on the device, the checker's errors in it are the likeliest
    /// reason (an option the backend rejects, a warp count it asserts on): named, with their lines.
    fn checker_errors(&self, ctx: &Ctx<'_>) -> String {
        let lines = crate::text::LineIndex::new(&ctx.req.text);
        let errors: Vec<String> = ctx
            .findings
            .iter()
            .filter(|d| d.severity == crate::knowledge::Severity::Error)
            .take(4)
            .map(|d| format!("{} at line {}: {}", d.code, lines.line_of(d.range.start) + 1, d.message))
            .collect();
        if errors.is_empty() {
            return String::new();
        }
        format!(
            ". `xeforge check` finds errors in the original that may explain it (fix them first; `xeforge check --fix` has quick fixes): {}",
            errors.join("; ")
        )
    }

    /// The evidence of a run the harness could not judge.
    fn error_record(&self, ctx: &Ctx<'_>, e: &Evaluation, message: &str) -> Record {
        Record {
            xeforge: env!("CARGO_PKG_VERSION"),
            stage: ctx.stage.name.clone(),
            file: ctx.req.path.display().to_string(),
            kernel: ctx.kernel.clone(),
            started_unix: ctx.started,
            finished_unix: evidence::now_unix(),
            kernel_sha256_before: String::new(),
            kernel_sha256_after: None,
            file_sha256_before: evidence::sha256(&ctx.req.text),
            file_sha256_after: None,
            target_device: ctx.target.0.clone(),
            target_toolchain: ctx.target.1.clone(),
            device: e.device.clone(),
            harness: self.harness.describe(),
            spec: ctx.spec.as_ref().map(|s| s.display().to_string()),
            family: ctx.req.family.clone(),
            seeds: ctx.req.seeds,
            rounds: Vec::new(),
            outcome: "harness-error".into(),
            summary: format!("{}: the harness could not run: {message}", ctx.stage.name),
            evaluation: Some(e.clone()),
            reverification: None,
            llm_model: None,
            llm_tokens: None,
            problem: ctx.problem.clone(),
            diff: None,
        }
    }

    /// Guard, then verify one candidate; `None` when the guard rejected it.
    async fn try_candidate(
        &self,
        ctx: &Ctx<'_>,
        round: u32,
        text: &str,
        rec: &mut RoundRecord,
        progress: &mut impl FnMut(Progress),
    ) -> Result<Option<Evaluation>, StageError> {
        let e = self.try_candidate_with(ctx, round, text, rec, progress, None).await?;
        if let Some(e) = e.as_ref().filter(|e| e.verdict == Verdict::Error) {
            return Err(self.harness_verdict_error(ctx, e));
        }
        Ok(e)
    }

    /// [`Self::try_candidate`] with harness overrides; an `error` verdict comes back as an evaluation.
    pub(super) async fn try_candidate_with(
        &self,
        ctx: &Ctx<'_>,
        round: u32,
        text: &str,
        rec: &mut RoundRecord,
        progress: &mut impl FnMut(Progress),
        opts: Option<&EvalOpts>,
    ) -> Result<Option<Evaluation>, StageError> {
        let Some(path) = self.stage_candidate(ctx, round, text, rec, progress)? else { return Ok(None) };
        let e = self.evaluate_raw(ctx, &ctx.original_path, &path, opts).await?;
        record(round, rec, &e, progress);
        Ok(Some(e))
    }

    /// The guard, then the candidate written where the harness reads it; `None` when the guard rejected it.
    pub(super) fn stage_candidate(
        &self,
        ctx: &Ctx<'_>,
        round: u32,
        text: &str,
        rec: &mut RoundRecord,
        progress: &mut impl FnMut(Progress),
    ) -> Result<Option<PathBuf>, StageError> {
        rec.candidate_sha256 = Some(evidence::sha256(text));
        if let Err(r) = guard::check(&ctx.req.text, text, ctx.policy) {
            progress(Progress::Rejected { round, rejection: r.clone() });
            rec.rejected = Some(r);
            return Ok(None);
        }
        let path = ctx.work.join(format!("candidate_{round}.py"));
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        progress(Progress::Evaluating { round, what: rec.detail.clone() });
        Ok(Some(path))
    }

    /// Several staged candidates judged in one `sweep` request (the trusted side set up once);
    /// `Ok(Err(e))` when the harness could not set up. `budget_s` counts from the request's start.
    pub(super) async fn sweep_raw(
        &self,
        ctx: &Ctx<'_>,
        candidates: Vec<PathBuf>,
        opts: &EvalOpts,
        budget_s: Option<f64>,
        min_candidates: u32,
    ) -> Result<Result<crate::harness::Sweep, Evaluation>, StageError> {
        let base = self.eval_args(ctx, &ctx.original_path, &candidates[0], Some(opts));
        let args = crate::harness::SweepArgs { base, candidates, budget_s, min_candidates };
        tokio::select! {
            _ = ctx.cancel.cancelled() => Err(StageError::Cancelled),
            r = self.harness.sweep(&args) => Ok(r?),
        }
    }

    pub(super) fn acceptable(&self, ctx: &Ctx<'_>, e: &Evaluation) -> Option<OutcomeStatus> {
        match e.verdict {
            Verdict::Accepted => Some(OutcomeStatus::Accepted),
            Verdict::Correct if ctx.stage.correctness_only || e.device.is_cpu() => Some(OutcomeStatus::CorrectOnly),
            _ => None,
        }
    }

    /// `device-tuning`'s first round: the rule engine's own fixes for the stage's rules.
    async fn fix_round(
        &self,
        ctx: &Ctx<'_>,
        rounds: &mut Vec<RoundRecord>,
        progress: &mut impl FnMut(Progress),
    ) -> Result<Option<Best>, StageError> {
        let mut edits: Vec<(TextRange, String)> = ctx
            .findings
            .iter()
            .filter(|d| ctx.stage.rules.iter().any(|r| r == d.code))
            .filter_map(|d| d.fix.as_ref())
            .flat_map(|f| f.edits.iter().map(|e| (e.range, e.content.clone())))
            .collect();
        if edits.is_empty() {
            return Ok(None);
        }
        edits.sort_by_key(|(r, _)| (r.start, r.end));
        let mut text = String::new();
        let mut at = 0;
        for (r, s) in &edits {
            if r.start < at || r.end > ctx.req.text.len() {
                continue;
            }
            text.push_str(&ctx.req.text[at..r.start]);
            text.push_str(s);
            at = r.end;
        }
        text.push_str(&ctx.req.text[at..]);
        let mut rec = RoundRecord::new(1, "fixes", format!("{} rule-engine edit{}", edits.len(), if edits.len() == 1 { "" } else { "s" }));
        let e = self.try_candidate(ctx, 1, &text, &mut rec, progress).await?;
        rounds.push(rec);
        Ok(e.and_then(|e| self.acceptable(ctx, &e).map(|status| Best { text, evaluation: e, status })))
    }

    async fn llm_rounds(
        &self,
        ctx: &Ctx<'_>,
        llm: &LlmClient,
        target: Target<'_>,
        rounds: &mut Vec<RoundRecord>,
        progress: &mut impl FnMut(Progress),
    ) -> Result<Option<Best>, StageError> {
        let mut history: Vec<ChatMessage> = vec![prompt::system(&target), prompt::first(ctx.stage, &self.kb, &ctx.findings, &ctx.req.text)];
        let mut best: Option<Best> = None;
        let first_round = rounds.len() as u32 + 1;
        for round in first_round..first_round + ctx.req.rounds.max(1) {
            if ctx.cancel.is_cancelled() {
                return Err(StageError::Cancelled);
            }
            progress(Progress::Generating { round });
            let mut rec = RoundRecord::new(round, "llm", llm.settings().model.clone());
            let reply = match llm.chat(&prompt::trimmed(&history), ctx.cancel).await {
                Ok(r) => r,
                Err(LlmError::Cancelled) => return Err(StageError::Cancelled),
                Err(e @ LlmError::BudgetExhausted { .. }) => {
                    rec.generator_error = Some(e.to_string());
                    rounds.push(rec);
                    break;
                }
                Err(e) => return Err(e.into()),
            };
            history.push(ChatMessage::assistant(reply.content.clone()));
            let code = match extract_code_block(&reply.content) {
                Ok(c) => c,
                Err(e) => {
                    rec.generator_error = Some(e.to_string());
                    rounds.push(rec);
                    history.push(prompt::no_code_block());
                    continue;
                }
            };
            let e = self.try_candidate(ctx, round, &code, &mut rec, progress).await?;
            let feedback = match (&e, &rec.rejected) {
                (_, Some(r)) => prompt::rejected(r),
                (Some(e), None) => prompt::evaluated(e),
                (None, None) => prompt::no_code_block(),
            };
            rounds.push(rec);
            if let Some(e) = e
                && let Some(status) = self.acceptable(ctx, &e)
            {
                best = better(best, Some(Best { text: code, evaluation: e, status }));
                break; // verified: CoVeR stops at the first success
            }
            history.push(feedback);
        }
        Ok(best)
    }
}

/// A verdict into its round's record, and to whoever watches progress.
pub(super) fn record(round: u32, rec: &mut RoundRecord, e: &Evaluation, progress: &mut impl FnMut(Progress)) {
    rec.record_evaluation(e);
    progress(Progress::Evaluated { round, verdict: e.verdict, speedup: e.speedup() });
}

fn better(a: Option<Best>, b: Option<Best>) -> Option<Best> {
    match (a, b) {
        (Some(a), Some(b)) => {
            let rank = |x: &Best| (x.status == OutcomeStatus::Accepted, x.evaluation.speedup_interval().map(|i| i[0]).unwrap_or(0.0));
            let (ra, rb) = (rank(&a), rank(&b));
            if rb.0 && !ra.0 || rb.0 == ra.0 && rb.1 > ra.1 { Some(b) } else { Some(a) }
        }
        (a, None) => a,
        (None, b) => b,
    }
}

fn rounds_device(e: &Option<Evaluation>, r: &Option<Evaluation>) -> crate::harness::DeviceInfo {
    e.as_ref().or(r.as_ref()).map(|e| e.device.clone()).unwrap_or_default()
}

fn io(path: &Path, e: std::io::Error) -> StageError {
    StageError::Io { context: path.display().to_string(), source: e }
}

/// torch's words when code reaches for CUDA where there is none (no driver, a CPU-only build, a CPU
/// tensor given to `torch.cuda.device`).
fn asks_for_cuda(message: &str) -> bool {
    ["NVIDIA driver", "not compiled with CUDA", "Expected a cuda device", "CUDA driver", "no CUDA GPUs"].iter().any(|w| message.contains(w))
}

#[cfg(test)]
mod progress_tests {
    use super::Progress;

    #[test]
    fn percentage_rises_through_rounds_and_ends_with_reverification() {
        let rounds = 4;
        let seq = [
            Progress::Started { stage: "autotune".into(), kernel: "k".into(), rounds },
            Progress::Generating { round: 1 },
            Progress::Evaluating { round: 1, what: "candidate".into() },
            Progress::Generating { round: 2 },
            Progress::Generating { round: 4 },
            Progress::Reverifying,
        ];
        let pct: Vec<u32> = seq.iter().map(|p| p.percentage(rounds)).collect();
        assert_eq!(pct, vec![0, 0, 11, 22, 67, 95]);
        assert!(pct.windows(2).all(|w| w[0] <= w[1]));
    }
}
