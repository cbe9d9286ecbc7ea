//! `xeforge stage NAME FILE`: run one optimisation stage on a kernel, verified on the harness.

use super::rules::KnowledgeArgs;
use crate::cover::{OutcomeStatus, Progress, StageError, StageOutcome, StageRequest, StageRunner, settings};
use crate::harness::{DeviceKind, Harness, HarnessSettings};
use crate::knowledge::Knowledge;
use crate::llm::LlmClient;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Options every harness-using command shares.
#[derive(Debug, Clone, clap::Args)]
pub struct HarnessArgs {
    /// Harness device: auto, xpu, cuda or cpu (the Triton interpreter).
    #[arg(long, default_value = "auto")]
    pub device: String,
    /// Spec file (default: `<file stem>.yaml` beside the file).
    #[arg(long)]
    pub spec: Option<PathBuf>,
    /// Variant family of the spec (ci, bench-gpu, bench-xpu, ...).
    #[arg(long)]
    pub family: Option<String>,
    /// Seeds per variant (at least 3).
    #[arg(long, default_value_t = 3)]
    pub seeds: u32,
    /// Per-candidate wall-clock limit, seconds.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    /// Python interpreter for the harness (default: $XEFORGE_PYTHON, the environment xeforge was installed into, .venv/bin/python, python3).
    #[arg(long)]
    pub python: Option<PathBuf>,
    /// A remote harness instead of a local process.
    #[arg(long)]
    pub harness_url: Option<String>,
    /// Run the local harness's jobs on a Ray cluster: auto, local, ray://HOST:10001, HOST:PORT
    /// (default: `[tool.xeforge.harness] ray`).
    #[arg(long)]
    pub ray: Option<String>,
    /// Interpreter lanes of the local harness (`serve --cpu-workers N`): CPU jobs judged at once
    /// (default: `[tool.xeforge.harness] cpu-workers`, else 1).
    #[arg(long, value_name = "N")]
    pub cpu_workers: Option<u32>,
    /// Jobs each device of the local harness runs at once (`serve --jobs-per-device N`): their
    /// compile and correctness overlap, each timed comparison has the device to itself
    /// (default: `[tool.xeforge.harness] jobs-per-device`, else 1).
    #[arg(long, value_name = "N")]
    pub jobs_per_device: Option<u32>,
}

#[derive(Debug, clap::Args)]
pub struct StageArgs {
    /// Stage name (see `xeforge stages`).
    pub name: String,
    pub file: PathBuf,
    /// The kernel to work on (required when the file has several).
    #[arg(long)]
    pub kernel: Option<String>,
    #[command(flatten)]
    pub harness: HarnessArgs,
    /// Knowledge overlays, instead of the workspace's `[tool.xeforge] knowledge`.
    #[command(flatten)]
    pub knowledge: KnowledgeArgs,
    /// Knowledge-base device the generator and guard target (default from config).
    #[arg(long = "target")]
    pub target_device: Option<String>,
    #[arg(long)]
    pub toolchain: Option<String>,
    /// Write the verified result into the file.
    #[arg(long, conflicts_with = "diff")]
    pub apply: bool,
    /// Print the verified change as a unified diff.
    #[arg(long)]
    pub diff: bool,
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub format: String,
    /// Generate-verify rounds for LLM stages.
    #[arg(long, default_value_t = 5)]
    pub rounds: u32,
    /// Most configs the autotune stage measures.
    #[arg(long, default_value_t = 16)]
    pub max_configs: usize,
    /// Seconds the autotune stage aims to finish in (default: the knowledge base's, 60).
    #[arg(long, default_value_t = 0)]
    pub budget: u64,
    /// Autotune: write the pruned config space as one file per config (and index.json) into DIR, run nothing.
    #[arg(long, value_name = "DIR")]
    pub emit_space: Option<PathBuf>,
    #[arg(long)]
    pub llm_url: Option<String>,
    #[arg(long)]
    pub llm_model: Option<String>,
}

pub fn run(args: StageArgs) -> u8 {
    if let Some(code) = super::refuse_notebook("stage", &args.file) {
        return code;
    }
    let text = match std::fs::read_to_string(&args.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("xeforge stage: {}: {e}", args.file.display());
            return 2;
        }
    };
    if let Some(dir) = &args.emit_space {
        return emit_space(&args, &text, dir);
    }
    let env = match Env::new(&args.file, &args.harness, &args.knowledge, args.llm_url.clone(), args.llm_model.clone()) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let mut req = env.request(&args.name, &args.file, text.clone(), &args.harness);
    req.kernel = args.kernel.clone();
    req.rounds = args.rounds;
    req.max_configs = args.max_configs;
    req.budget_s = args.budget;
    if let Some(d) = &args.target_device {
        req.target_device = d.clone();
    }
    if let Some(t) = &args.toolchain {
        req.target_toolchain = t.clone();
    }
    if args.kernel.is_none()
        && let Some(kernels) = several_launched(&text)
    {
        return each_kernel(&args, &env, &text, req, &kernels);
    }
    let result = env.block_on(req);
    match result {
        Ok(outcome) => {
            report(&args.file, &text, &outcome, &args.format, args.diff);
            if args.apply
                && let Some(new) = &outcome.new_text
                && let Err(m) = write_if_unchanged(&args.file, &outcome.original_sha256, new)
            {
                eprintln!("xeforge stage: {m}");
                return 2;
            }
            0
        }
        // Not a failure: the user is told what to add, once, and the next run remembers it.
        Err(StageError::ProblemIncomplete(what)) => {
            if args.format == "json" {
                println!("{}", serde_json::json!({"status": "needs-input", "summary": what.message, "question": what.question}));
            } else {
                println!("{what}");
            }
            0
        }
        Err(e) => {
            eprintln!("xeforge stage: {e}");
            // A script reading stdout gets an answer it can parse, whatever went wrong.
            if args.format == "json" {
                println!("{}", serde_json::json!({"status": "error", "error": e.kind(), "summary": e.to_string()}));
            }
            if matches!(e, StageError::Cancelled) { 130 } else { 2 }
        }
    }
}

/// The kernels a file launches, where it launches more than one (a stage without `--kernel` then works
/// on each in turn); None otherwise, and the stage picks its one kernel or says what to name.
fn several_launched(text: &str) -> Option<Vec<String>> {
    let o = crate::cover::outline::Outline::build(text);
    let launched: Vec<String> = o.kernels().filter(|k| o.launches.iter().any(|l| l.targets(&k.name))).map(|k| k.name.clone()).collect();
    (launched.len() > 1).then_some(launched)
}

/// The stage on each launched kernel in turn, each on the text the ones before it left (its
/// verified change included), so the second kernel is judged against the file as it will be. One
/// write at the end, and only if the file still holds what the run started from.
fn each_kernel(args: &StageArgs, env: &Env, text: &str, req: StageRequest, kernels: &[String]) -> u8 {
    eprintln!("{} kernels are launched ({}): the stage works on each in turn (--kernel NAME for one)", kernels.len(), kernels.join(", "));
    let started = crate::cover::evidence::sha256(text);
    let mut current = text.to_string();
    let mut results: Vec<serde_json::Value> = Vec::new();
    let mut failed = 0;
    for k in kernels {
        let mut one = req.clone();
        one.kernel = Some(k.clone());
        one.text = current.clone();
        match env.block_on(one) {
            Ok(outcome) => {
                if args.format == "json" {
                    results.push(outcome_json(&outcome));
                } else {
                    println!("== {k}");
                    report(&args.file, &current, &outcome, "text", args.diff);
                }
                if let Some(new) = &outcome.new_text {
                    current = new.clone();
                }
            }
            Err(StageError::Cancelled) => {
                eprintln!("xeforge stage: cancelled");
                return 130;
            }
            Err(e) => {
                failed += 1;
                eprintln!("xeforge stage: `{k}`: {e}");
                if args.format == "json" {
                    results.push(serde_json::json!({"status": "error", "kernel": k, "error": e.kind(), "summary": e.to_string()}));
                } else {
                    println!("== {k}\nnot changed: {e}");
                }
            }
        }
    }
    let changed = current != text;
    if args.format == "json" {
        let status = ["accepted", "correct-only", "no-improvement", "error"]
            .into_iter()
            .find(|s| results.iter().any(|r| r["status"] == *s))
            .unwrap_or("error");
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"status": status, "changed": changed, "kernels": results}))
                .unwrap_or_default()
        );
    }
    if args.apply
        && changed
        && let Err(m) = write_if_unchanged(&args.file, &started, &current)
    {
        eprintln!("xeforge stage: {m}");
        return 2;
    }
    if failed == kernels.len() { 2 } else { 0 }
}

/// Everything a stage run needs from the workspace.
pub struct Env {
    pub runtime: tokio::runtime::Runtime,
    pub runner: StageRunner,
    pub settings: settings::StageSettings,
    pub workspace: PathBuf,
}

impl Env {
    pub fn new(
        file: &Path,
        h: &HarnessArgs,
        overlays: &KnowledgeArgs,
        llm_url: Option<String>,
        llm_model: Option<String>,
    ) -> Result<Env, u8> {
        let workspace = settings::workspace_root(file);
        let mut s = settings::load(&workspace).map_err(|e| {
            eprintln!("xeforge: {e}");
            2u8
        })?;
        if let Some(u) = llm_url {
            s.llm.url = u;
        }
        if let Some(m) = llm_model {
            s.llm.model = m;
        }
        let hs = HarnessSettings {
            python: h.python.clone().or(s.harness.python.clone()),
            url: h.harness_url.clone().or(s.harness.url.clone()),
            token_env: s.harness.token_env.clone(),
            ray: h.ray.clone().or(s.harness.ray.clone()),
            cpu_workers: h.cpu_workers.or(s.harness.cpu_workers),
            jobs_per_device: h.jobs_per_device.or(s.harness.jobs_per_device),
            scrub_env: vec![s.llm.api_key_env.clone()],
            ..Default::default()
        };
        let harness = Harness::new(&hs, &workspace).map_err(|e| {
            eprintln!("xeforge: {e}");
            2u8
        })?;
        let llm = if s.llm.is_configured() {
            Some(Arc::new(LlmClient::new(s.llm.clone()).map_err(|e| {
                eprintln!("xeforge: {e}");
                2u8
            })?))
        } else {
            None
        };
        let kb = knowledge(&s, overlays)?;
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(|e| {
            eprintln!("xeforge: cannot start the async runtime: {e}");
            2u8
        })?;
        let runner = StageRunner { kb, harness: Arc::new(harness), llm };
        Ok(Env { runtime, runner, settings: s, workspace })
    }

    pub fn request(&self, stage: &str, file: &Path, text: String, h: &HarnessArgs) -> StageRequest {
        let mut req = StageRequest::new(stage, file.to_path_buf(), text);
        req.workspace = self.workspace.clone();
        req.spec = h.spec.clone();
        req.device = DeviceKind::parse(&h.device).unwrap_or_default();
        req.family = h.family.clone();
        req.seeds = h.seeds;
        req.timeout = h.timeout;
        req.target_device = self.settings.device.clone();
        req.target_toolchain = self.settings.toolchain.clone();
        // A measurement knob of the autotune stage's screen (see `budget::Screen`).
        req.screen = crate::cover::autotune::budget::Screen::parse(std::env::var("XEFORGE_AUTOTUNE_SCREEN").ok().as_deref());
        req
    }

    /// Run a stage with progress on a TTY and Ctrl-C as cancellation.
    pub fn block_on(&self, req: StageRequest) -> Result<StageOutcome, StageError> {
        let cancel = CancellationToken::new();
        let tty = std::io::stderr().is_terminal();
        let c2 = cancel.clone();
        self.runtime.block_on(async {
            let ctrl_c = tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    c2.cancel();
                }
            });
            let r = self.runner.run(req, |p: Progress| show(tty, &p), cancel).await;
            ctrl_c.abort();
            if tty {
                eprint!("\r\x1b[2K");
            }
            self.runner.harness.shutdown().await;
            r
        })
    }
}

/// The knowledge base with the command line's overlays, or else the workspace's (`[tool.xeforge]
/// knowledge`): the command line wins, as for `xeforge check`.
fn knowledge(s: &settings::StageSettings, cli: &KnowledgeArgs) -> Result<Arc<Knowledge>, u8> {
    if cli.overlays.is_empty() { KnowledgeArgs { overlays: s.knowledge.iter().cloned().collect() }.load() } else { cli.load() }
        .map(|kb| Arc::new(kb.into_owned()))
}

/// `--emit-space DIR`: the autotune stage's pruned space, one file per config, for sweeps: for the
/// target and with the seed lists a run of the stage would use.
fn emit_space(args: &StageArgs, text: &str, dir: &Path) -> u8 {
    use crate::cover::autotune::{self, emit, space};
    let s = match settings::load(&settings::workspace_root(&args.file)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("xeforge: {e}");
            return 2;
        }
    };
    let kb = match knowledge(&s, &args.knowledge) {
        Ok(kb) => kb,
        Err(code) => return code,
    };
    let mut req = StageRequest::new(&args.name, args.file.clone(), String::new());
    req.device = DeviceKind::parse(&args.harness.device).unwrap_or_default();
    req.target_device = args.target_device.clone().unwrap_or(s.device);
    req.target_toolchain = args.toolchain.clone().unwrap_or(s.toolchain);
    let target = match req.target(&kb) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("xeforge stage: {e}");
            return 2;
        }
    };
    let tt = space::TuneTarget::for_stage(&kb, &target, req.device == DeviceKind::Cuda);
    let o = crate::cover::outline::Outline::build(text);
    let files = autotune::pick_kernel(&o, args.kernel.as_deref())
        .and_then(|k| autotune::plan(text, &o, k, tt.backend))
        .map(|mut p| {
            // The spec a run of the stage would hand the harness, where it is a file already.
            let spec = args.harness.spec.clone().or_else(|| crate::cover::problem::spec_beside(&args.file));
            if let Some(s) = spec.and_then(|s| std::fs::read_to_string(s).ok()) {
                p.read_spec(&s);
            }
            p
        })
        .and_then(|p| emit::files(&p, &tt, args.max_configs, text));
    let files = match files {
        Ok(f) => f,
        Err(e) => {
            eprintln!("xeforge stage: {e}");
            return 2;
        }
    };
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("xeforge stage: {}: {e}", dir.display());
        return 2;
    }
    let mut index = Vec::new();
    for (i, (label, body)) in files.iter().enumerate() {
        let name = format!("config_{i:03}.py");
        if let Err(e) = std::fs::write(dir.join(&name), body) {
            eprintln!("xeforge stage: {}: {e}", dir.display());
            return 2;
        }
        index.push(serde_json::json!({"file": name, "config": label, "start": i == 0}));
    }
    let _ = std::fs::write(dir.join("index.json"), serde_json::to_string_pretty(&index).unwrap_or_default());
    println!("{} configs written to {}", files.len(), dir.display());
    0
}

pub(super) fn show(tty: bool, p: &Progress) {
    if !tty {
        // Logs still say how long the stage expects to take.
        if matches!(p, Progress::Planned { .. }) {
            eprintln!("{}", p.message());
        }
        return;
    }
    match p {
        Progress::Planned { .. } => eprintln!("\r\x1b[2K{}", p.message()),
        // Lasting lines for results, one self-overwriting line for activity.
        Progress::Rejected { .. } | Progress::Evaluated { .. } => {
            eprintln!("\r\x1b[2K{}", p.message())
        }
        _ => eprint!("\r\x1b[2K{}", p.message()),
    }
}

/// One outcome as the JSON `--format json` prints.
fn outcome_json(o: &StageOutcome) -> serde_json::Value {
    serde_json::json!({
            "status": o.status,
            "summary": o.summary,
            "kernel": o.kernel,
            "record": o.record_path,
            "changed": o.new_text.is_some(),
            "verdict": o.evaluation.as_ref().map(|e| e.verdict),
            "speedup": o.evaluation.as_ref().and_then(|e| e.speedup()),
            "speedup_ci95": o.evaluation.as_ref().and_then(|e| e.speedup_interval()),
            "runs": o.evaluation.as_ref().and_then(|e| e.timing.as_ref()).and_then(|t| t.runs),
            "device": o.evaluation.as_ref().map(|e| e.device.clone()),
            "rounds": o.rounds,
            "problem": o.problem,
    })
}

pub fn report(file: &Path, before: &str, o: &StageOutcome, format: &str, diff: bool) {
    if format == "json" {
        println!("{}", serde_json::to_string_pretty(&outcome_json(o)).unwrap_or_default());
    } else {
        if let Some(p) = &o.problem {
            print!("{}", crate::cover::problem::render::summary(p));
        }
        println!("{}", o.summary);
        // What the stage left alone is part of the answer: only warps and stages tried is not "the tile is fine".
        for prefix in [
            crate::cover::autotune::splat::SPELLED_NOTE,
            crate::cover::autotune::KEPT_NOTE,
            crate::cover::autotune::REPLACED_NOTE,
            crate::cover::autotune::RESTORE_NOTE,
        ] {
            if let Some(n) = o.rounds.iter().flat_map(|r| &r.notes).find(|n| n.starts_with(prefix)) {
                println!("note: {n}");
            }
        }
        if let Some(p) = &o.record_path {
            println!("evidence: {}", p.display());
        }
        if o.status == OutcomeStatus::NoImprovement {
            for r in &o.rounds {
                println!("  round {} ({}): {}", r.round, r.detail, round_outcome(r));
            }
        }
    }
    if diff && let Some(new) = &o.new_text {
        let name = file.display().to_string();
        print!("{}", crate::cover::evidence::unified_diff(&name, before, new));
    }
}

/// What stopped a round, naming the layer: the static guard (before any device time), the harness
/// (its verdict and why), or the generator.
fn round_outcome(r: &crate::cover::evidence::RoundRecord) -> String {
    if let Some(x) = &r.rejected {
        return format!("static guard rejected it: {x}");
    }
    if let Some(e) = &r.generator_error {
        return format!("generator: {e}");
    }
    match (r.verdict, &r.message) {
        (Some(v), Some(m)) if !m.is_empty() => format!("harness: {v}: {m}"),
        (Some(v), _) => format!("harness: {v}"),
        _ => String::new(),
    }
}

/// Write `new` only if the file still holds what the run started from.
pub fn write_if_unchanged(file: &Path, sha: &str, new: &str) -> Result<(), String> {
    let now = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    if crate::cover::evidence::sha256(&now) != sha {
        return Err(format!("{} changed during the run; not overwriting it (re-run the stage)", file.display()));
    }
    std::fs::write(file, new).map_err(|e| format!("{}: {e}", file.display()))
}
