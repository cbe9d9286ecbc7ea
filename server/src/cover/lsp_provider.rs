//! The language server's stage provider: which stages to offer on each kernel, running one with the
//! real [`StageRunner`] configured from the editor and project settings, and compiling a document on
//! the same harness for `xeforge.verifyCompiled` (`cover::verify`, as `xeforge verify` does).
//!
//! Offered per kernel: `autotune` always, plus every stage the analysis selects for that kernel — a
//! finding whose rule belongs to the stage, or whose rule names it as its `fix_stage` — in dependency
//! order. Settings: the workspace's stage settings (`[tool.xeforge.llm]`, `[tool.xeforge.harness]`,
//! retries and budgets) overlaid by the merged LSP settings (`harness.python/url/device/timeout`,
//! `llm.url/model/apiKeyEnv/timeout/maxTokens`, `device`, `toolchain`).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::compiled;
use super::problem::Incomplete;
use super::run::{Progress, StageError, StageRequest, StageRunner};
use super::settings::{self, StageSettings};
use super::verify::{self, VerifyRequest};
use crate::config::Settings;
use crate::harness::protocol::CompileReport;
use crate::harness::{DeviceInfo, DeviceKind, Harness, HarnessRegistry, HarnessSettings, Verdict};
use crate::knowledge::Knowledge;
use crate::lint::Diagnostic;
use crate::llm::LlmClient;
use crate::lsp::compiled::{CompiledFacts, VerifyOutcome, VerifyRun};
use crate::lsp::stage::{
    ProgressFn, StageAction, StageActionProvider, StageContext, StageFailure, StageFuture, StageInfo, StageQuestion, StageResult, StageRun,
    VerifyFuture,
};
use crate::model::FileModel;

/// The stage every kernel is offered, whatever the analysis found.
const ALWAYS: &str = "autotune";

#[derive(Default)]
pub struct CoverStageProvider {
    /// One harness per workspace and settings, kept warm across runs (a local `serve` child).
    harnesses: Arc<HarnessRegistry>,
    overlays: Mutex<HashMap<PathBuf, Arc<Knowledge>>>,
}

impl CoverStageProvider {
    pub fn new() -> Self {
        Self::default()
    }

    /// Embedded knowledge, or with the configured overlay (a broken overlay falls back to embedded;
    /// the session already reported it).
    fn knowledge(&self, s: &Settings) -> Arc<Knowledge> {
        // One shared copy of the embedded base for every request, not a deep copy per request.
        static EMBEDDED: std::sync::OnceLock<Arc<Knowledge>> = std::sync::OnceLock::new();
        let embedded = || EMBEDDED.get_or_init(|| Arc::new(Knowledge::embedded().clone())).clone();
        let Some(dir) = &s.knowledge else { return embedded() };
        let mut cache = self.overlays.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(dir.clone())
            .or_insert_with(|| Knowledge::embedded().with_overlay(dir).map(Arc::new).unwrap_or_else(|_| embedded()))
            .clone()
    }
}

/// Where the harness verifies, for the action title: the harness device setting, else the remote
/// harness's host, else whatever the harness finds.
fn verify_on(s: &Settings) -> String {
    if let Some(d) = &s.harness.device {
        return d.clone();
    }
    if let Some(u) = &s.harness.url {
        let host = u.split("://").nth(1).unwrap_or(u).split('/').next().unwrap_or(u);
        return host.to_string();
    }
    "the local harness".into()
}

/// The stages the analysis selects for kernel `k`, with the codes that selected each.
fn selected(kb: &Knowledge, ctx: &StageContext<'_>, k: usize) -> Vec<(String, Vec<String>)> {
    let Some(kernel) = ctx.model.kernels.get(k) else { return Vec::new() };
    let mut why: HashMap<String, BTreeSet<String>> = HashMap::new();
    why.entry(ALWAYS.to_string()).or_default();
    let mine = ctx.diagnostics.iter().filter(|d| match d.kernel.as_deref() {
        Some(name) => name == kernel.name,
        None => kernel.range.contains_range(d.range),
    });
    for d in mine {
        for s in kb.stages.iter().filter(|s| s.rules.iter().any(|r| r == d.code)) {
            why.entry(s.name.clone()).or_default().insert(d.code.to_string());
        }
        if let Some(fs) = kb.rule(d.code).and_then(|r| r.fix_stage.clone()) {
            why.entry(fs).or_default().insert(d.code.to_string());
        }
    }
    let names: Vec<&str> = why.keys().map(String::as_str).collect();
    kb.stage_order(&names)
        .into_iter()
        .map(|s| (s.name.clone(), why.get(&s.name).map(|c| c.iter().cloned().collect()).unwrap_or_default()))
        .collect()
}

impl StageActionProvider for CoverStageProvider {
    fn actions(&self, ctx: &StageContext<'_>) -> Vec<StageAction> {
        let kb = self.knowledge(ctx.settings);
        let on = verify_on(ctx.settings);
        let mut out = Vec::new();
        for k in 0..ctx.model.kernels.len() {
            for (stage, codes) in selected(&kb, ctx, k) {
                let because = if codes.is_empty() { String::new() } else { format!("{}; ", codes.join(", ")) };
                out.push(StageAction { title: format!("Run stage: {stage} ({because}verify on {on})"), stage, kernel: k, lens: true });
            }
        }
        out
    }

    fn catalogue(&self, settings: &Settings) -> Vec<StageInfo> {
        self.knowledge(settings)
            .stages
            .iter()
            .map(|s| StageInfo { name: s.name.clone(), title: s.title.clone(), summary: s.summary.clone() })
            .collect()
    }

    fn run(&self, run: StageRun, mut progress: ProgressFn, cancel: CancellationToken) -> StageFuture {
        let kb = self.knowledge(&run.settings);
        let harnesses = self.harnesses.clone();
        Box::pin(async move {
            let path = run.path.clone().ok_or("stages run on files on disk: save the document first")?;
            let prepared = prepare(&run, path, &harnesses, kb)?;
            let outcome = prepared
                .runner
                .run(
                    prepared.request,
                    {
                        let mut rounds = 1u32;
                        move |p: Progress| {
                            if let Progress::Started { rounds: r, .. } = &p {
                                rounds = (*r).max(1);
                            }
                            progress(p.message(), Some(p.percentage(rounds)))
                        }
                    },
                    cancel,
                )
                .await
                .map_err(failure)?;
            Ok(StageResult {
                new_text: outcome.new_text,
                summary: outcome.summary,
                kernel_range: Some(outcome.kernel_range_before).filter(|_| outcome.kernel != "*"),
                kernel_range_after: outcome.kernel_range_after.filter(|_| outcome.kernel != "*"),
                record: outcome.record_path,
            })
        })
    }

    fn verify_compiled(&self, run: VerifyRun, progress: ProgressFn, cancel: CancellationToken) -> VerifyFuture {
        let harnesses = self.harnesses.clone();
        Box::pin(async move {
            // Dropping the verification drops its harness request, which ends a local run.
            tokio::select! {
                r = verify(run, harnesses, progress) => r,
                _ = cancel.cancelled() => Err("cancelled".into()),
            }
        })
    }
}

/// A stage error as the server reports it: a missing problem size becomes a question for the editor.
fn failure(e: StageError) -> StageFailure {
    match e {
        StageError::ProblemIncomplete(Incomplete { message, question: Some(q) }) => StageFailure::NeedsInput {
            message,
            question: StageQuestion { entry: q.entry, missing: q.missing, suggestion: q.dims, line: q.line as u32, indent: q.indent },
        },
        e => StageFailure::Failed(e.to_string()),
    }
}

struct Prepared {
    runner: StageRunner,
    request: StageRequest,
}

/// Workspace stage settings overlaid by the LSP settings; the harness (shared) and LLM client (per run).
fn prepare(run: &StageRun, path: PathBuf, harnesses: &HarnessRegistry, kb: Arc<Knowledge>) -> Result<Prepared, String> {
    let workspace = settings::workspace_root(&path);
    let mut st = settings::load(&workspace).map_err(|e| e.to_string())?;
    let ed = &run.settings;
    if let Some(v) = &ed.llm.url {
        st.llm.url = v.clone();
    }
    if let Some(v) = &ed.llm.model {
        st.llm.model = v.clone();
    }
    if let Some(v) = &ed.llm.api_key_env {
        st.llm.api_key_env = v.clone();
    }
    if let Some(v) = ed.llm.timeout {
        st.llm.timeout = v;
    }
    if let Some(v) = ed.llm.max_tokens {
        st.llm.max_reply_tokens = Some(v);
    }
    let harness = harness_for(ed, &st, &workspace, harnesses)?;
    let llm = if st.llm.is_configured() { Some(Arc::new(LlmClient::new(st.llm.clone()).map_err(|e| e.to_string())?)) } else { None };

    let mut req = StageRequest::new(&run.command.stage, path, run.text.clone());
    req.workspace = workspace;
    req.kernel = Some(run.command.kernel.clone());
    req.device = harness_device(ed)?;
    req.target_device = ed.device.clone().unwrap_or(st.device);
    req.target_toolchain = ed.toolchain.clone().unwrap_or(st.toolchain);
    if let Some(t) = ed.harness.timeout {
        req.timeout = t.as_secs().max(1);
    }
    Ok(Prepared { runner: StageRunner { kb, harness, llm }, request: req })
}

/// The harness the editor's settings (over the workspace's) name, shared by every run of the workspace.
fn harness_for(ed: &Settings, st: &StageSettings, workspace: &Path, harnesses: &HarnessRegistry) -> Result<Arc<Harness>, String> {
    let hs = HarnessSettings {
        python: ed.harness.python.clone().or(st.harness.python.clone()),
        url: ed.harness.url.clone().or(st.harness.url.clone()),
        token_env: ed.harness.token_env.clone().or(st.harness.token_env.clone()),
        // The LLM key never reaches candidate code.
        scrub_env: vec![st.llm.api_key_env.clone()],
        ..st.harness.clone()
    };
    harnesses.get(workspace, &hs).map_err(|e| e.to_string())
}

fn harness_device(ed: &Settings) -> Result<DeviceKind, String> {
    let device = ed.harness.device.as_deref().unwrap_or("auto");
    DeviceKind::parse(device).ok_or_else(|| format!("harness.device `{device}`: expected auto, xpu, cuda or cpu"))
}

/// `xeforge verify` for the editor: the same request (`cover::verify`, its cache included) on the
/// document's text, and what compiling said as facts the server places on each later version.
async fn verify(run: VerifyRun, harnesses: Arc<HarnessRegistry>, mut progress: ProgressFn) -> Result<VerifyOutcome, String> {
    let workspace = settings::workspace_root(&run.path);
    let st = settings::load(&workspace).map_err(|e| e.to_string())?;
    let harness = harness_for(&run.settings, &st, &workspace, &harnesses)?;
    let mut req = VerifyRequest::new(run.path.clone(), run.text.clone(), workspace, run.target.clone());
    req.device = harness_device(&run.settings)?;
    if let Some(t) = run.settings.harness.timeout {
        req.timeout = t.as_secs().max(1);
    }
    req.refresh = run.refresh;
    progress(format!("verifying on {} ({})", harness.describe(), req.device.as_str()), None);
    let v = verify::verify(&harness, &req).await?;
    let e = v.evaluation;
    if e.verdict == Verdict::Error {
        return Err(e.failure_text(600));
    }
    let cached = if v.cached { " (cached: the text is unchanged)" } else { "" };
    let mut summary = format!("{} on {} {}{cached}", e.verdict, e.device.kind, e.device.name);
    if !e.verdict.is_correct()
        && let Some(m) = &e.message
    {
        summary.push_str(&format!(": {m}"));
    }
    let note = compiled::missing(&e);
    let report = e.compile.filter(|_| note.is_none());
    let kernels = report.iter().flat_map(|r| r.configs.iter().filter_map(|c| c.kernel.clone())).collect::<BTreeSet<_>>();
    let facts = report.map(|report| {
        Arc::new(ReportFacts { report, ran: e.device.clone(), kb: run.kb.clone(), target: run.target.clone() }) as Arc<dyn CompiledFacts>
    });
    Ok(VerifyOutcome { facts, kernels: kernels.into_iter().collect(), summary, note })
}

/// One compile report, placed on any model by `cover::compiled` (the config or launch that agrees
/// with each compiled config).
struct ReportFacts {
    report: CompileReport,
    ran: DeviceInfo,
    kb: Arc<Knowledge>,
    target: (String, String),
}

impl CompiledFacts for ReportFacts {
    fn findings(&self, model: &FileModel, kernel: &str) -> Vec<Diagnostic> {
        let mut found = compiled::diagnostics(model, &self.report, &self.ran, &self.kb, (&self.target.0, &self.target.1)).diagnostics;
        found.retain(|d| d.kernel.as_deref() == Some(kernel));
        found
    }
}
