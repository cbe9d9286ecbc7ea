//! `xeforge optimize FILE`: the stages the analysis selects, in dependency order, each verified on the
//! harness and re-verified against the original file; a stage that does not help leaves the file as it was.
//!
//! `xeforge optimize DIR`: the same for every file of the directory that defines a Triton kernel
//! (the files `xeforge check DIR` visits), several files at once: as many as the harness runs jobs at
//! once (`ping`'s pool), each file's stages still in order. Each file's report is printed whole, in
//! path order, whatever order they finish in.

use super::rules::KnowledgeArgs;
use super::stage::{Env, HarnessArgs, show, write_if_unchanged};
use crate::cover::{Progress, StageError, evidence};
use crate::harness::DeviceKind;
use crate::lint::LintOptions;
use futures::StreamExt;
use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;

#[derive(Debug, clap::Args)]
pub struct OptimizeArgs {
    /// A kernel file, or a directory: every file in it that defines a Triton kernel.
    pub file: PathBuf,
    /// The kernel to work on (a file with several); not with a directory.
    #[arg(long)]
    pub kernel: Option<String>,
    #[command(flatten)]
    pub harness: HarnessArgs,
    /// Knowledge overlays, instead of the workspace's `[tool.xeforge] knowledge`.
    #[command(flatten)]
    pub knowledge: KnowledgeArgs,
    /// Only these stages (comma-separated), still in dependency order.
    #[arg(long, value_delimiter = ',')]
    pub stages: Vec<String>,
    /// Write the verified result into the file.
    #[arg(long, conflicts_with = "diff")]
    pub apply: bool,
    #[arg(long)]
    pub diff: bool,
    #[arg(long, default_value_t = 5)]
    pub rounds: u32,
    #[arg(long, default_value_t = 16)]
    pub max_configs: usize,
    #[arg(long)]
    pub llm_url: Option<String>,
    #[arg(long)]
    pub llm_model: Option<String>,
}

/// Where one file's report goes: straight to the terminal (one file), or kept until the file is
/// done and printed whole in path order (a directory, files run at once).
enum Report {
    Live,
    Kept(Vec<(bool, String)>),
}

impl Report {
    fn out(&mut self, line: String) {
        match self {
            Report::Live => println!("{line}"),
            Report::Kept(lines) => lines.push((false, line)),
        }
    }

    fn err(&mut self, line: String) {
        match self {
            Report::Live => eprintln!("{line}"),
            Report::Kept(lines) => lines.push((true, line)),
        }
    }
}

pub fn run(args: OptimizeArgs) -> u8 {
    if let Some(code) = super::refuse_notebook("optimize", &args.file) {
        return code;
    }
    let dir = args.file.is_dir();
    if dir && args.kernel.is_some() {
        eprintln!("xeforge optimize: --kernel names a kernel of one file; give that file, not a directory");
        return 2;
    }
    let files = if dir {
        match kernel_files(&args.file) {
            Ok(f) if f.is_empty() => {
                println!("{}: no file defines a Triton kernel; nothing to do", args.file.display());
                return 0;
            }
            Ok(f) => f,
            Err(code) => return code,
        }
    } else {
        vec![args.file.clone()]
    };
    let env = match Env::new(&args.file, &args.harness, &args.knowledge, args.llm_url.clone(), args.llm_model.clone()) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let cancel = CancellationToken::new();
    let tty = std::io::stderr().is_terminal();
    env.runtime.block_on(async {
        let c2 = cancel.clone();
        let ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                c2.cancel();
            }
        });
        // Files at once: the harness's lanes for the device (each file's stages go one after another,
        // and the autotune stage's own requests share the same lanes). One file: as it always ran.
        let device = DeviceKind::parse(&args.harness.device).unwrap_or_default();
        let at_once = if dir { env.runner.harness.lanes(device).await } else { 1 };
        let runs = files.iter().map(|f| {
            let report = if dir { Report::Kept(Vec::new()) } else { Report::Live };
            optimize_file(&env, f, &args, &cancel, report, dir, tty)
        });
        let mut done = futures::stream::iter(runs).buffered(at_once);
        let mut code = 0u8;
        while let Some((c, report)) = done.next().await {
            if let Report::Kept(lines) = report {
                for (to_err, line) in lines {
                    if to_err { eprintln!("{line}") } else { println!("{line}") }
                }
            }
            // Cancelled beats failed beats done.
            code = if c == 130 || code == 130 { 130 } else { code.max(c) };
        }
        ctrl_c.abort();
        env.runner.harness.shutdown().await;
        code
    })
}

/// The files of `dir` that can define a kernel: the `*.py` files `xeforge check` visits (its
/// `.gitignore` and `exclude` respected), holding both `triton` and `jit`, in path order.
fn kernel_files(dir: &Path) -> Result<Vec<PathBuf>, u8> {
    let resolver = std::sync::Arc::new(crate::config::ConfigResolver::new());
    let found = crate::workspace::discover_files(&[dir.to_path_buf()], &resolver);
    if let Some(e) = found.errors.first() {
        eprintln!("xeforge optimize: {}: {}", e.path.display(), e.message);
        return Err(2);
    }
    // Stages rewrite Python files; a notebook's kernels are checked (`xeforge check`), not staged.
    let files = found.files.into_iter().filter(|f| !crate::workspace::is_notebook(f));
    Ok(files.filter(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("triton") && t.contains("jit"))).collect())
}

/// One file's stages, in order, each on the previous one's verified text; the exit status and the report.
async fn optimize_file(
    env: &Env,
    file: &Path,
    args: &OptimizeArgs,
    cancel: &CancellationToken,
    mut report: Report,
    dir: bool,
    tty: bool,
) -> (u8, Report) {
    let name = file.display().to_string();
    let original = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            report.err(format!("xeforge optimize: {name}: {e}"));
            return (2, report);
        }
    };
    let order = match stages_for(env, file, &original, args) {
        Ok(o) => o,
        Err(e) => {
            report.err(format!("xeforge optimize: {}{e}", if dir { format!("{name}: ") } else { String::new() }));
            return (2, report);
        }
    };
    if order.is_empty() {
        report.out(format!("{name}: the analysis selects no stage; nothing to do"));
        return (0, report);
    }
    // A directory's report names its file first; one file's reads as it always did.
    report.out(if dir { format!("{name}: stages: {}", order.join(" → ")) } else { format!("stages: {}", order.join(" → ")) });
    let kb = env.runner.kb.clone();
    let mut current = original.clone();
    for stage in &order {
        if kb.stage(stage).is_some_and(|s| s.deterministic.is_none()) && env.runner.llm.is_none() {
            report.out(format!("{stage}: skipped (needs a language model: [tool.xeforge.llm] or --llm-url/--llm-model)"));
            continue;
        }
        let mut req = env.request(stage, file, current.clone(), &args.harness);
        req.kernel = args.kernel.clone();
        req.rounds = args.rounds;
        req.max_configs = args.max_configs;
        req.pristine = Some(original.clone());
        let progress = |p: Progress| {
            if !dir {
                show(tty, &p);
            } else if matches!(p, Progress::Planned { .. } | Progress::Evaluated { .. } | Progress::Rejected { .. }) {
                // Files run at once: lasting lines only, each naming its file (stderr is a log here).
                eprintln!("{name}: {}", p.message());
            }
        };
        let outcome = env.runner.run(req, progress, cancel.clone()).await;
        if tty && !dir {
            eprint!("\r\x1b[2K"); // the progress line, before the stage's summary
        }
        match outcome {
            Ok(o) => {
                report.out(o.summary);
                if let Some(t) = o.new_text {
                    current = t;
                }
            }
            Err(StageError::Cancelled) => {
                report.err(format!("xeforge optimize: cancelled; {} unchanged", if dir { name.as_str() } else { "file" }));
                return (130, report);
            }
            Err(e) => report.out(format!("{stage}: not run: {e}")),
        }
    }
    if current == original {
        report.out(if dir {
            format!("{name}: no stage verified an improvement; unchanged")
        } else {
            "no stage verified an improvement; file unchanged".into()
        });
        return (0, report);
    }
    if args.diff {
        for line in evidence::unified_diff(&name, &original, &current).lines() {
            report.out(line.to_string());
        }
    }
    if args.apply {
        if let Err(m) = write_if_unchanged(file, &evidence::sha256(&original), &current) {
            report.err(format!("xeforge optimize: {m}"));
            return (2, report);
        }
        report.out(format!("applied to {name}"));
    }
    (0, report)
}

/// The stages the analysis selects for `text` (a stage is selected by a finding of one of its rules,
/// or of a rule whose fix is that stage), or `--stages`; in dependency order.
fn stages_for(env: &Env, file: &Path, text: &str, args: &OptimizeArgs) -> Result<Vec<String>, String> {
    let kb = &env.runner.kb;
    let opts = LintOptions { device: env.settings.device.clone(), toolchain: env.settings.toolchain.clone(), ..Default::default() };
    // Read as `check` reads it: `tl.dot` in helpers imported from other files of the package counts.
    let analysis = crate::analysis::analyze_file(file, text, kb, &opts).map_err(|e| e.to_string())?;
    let mut selected: BTreeSet<String> = BTreeSet::new();
    for d in &analysis.diagnostics {
        for s in &kb.stages {
            if s.rules.iter().any(|r| r == d.code) {
                selected.insert(s.name.clone());
            }
        }
        if let Some(fs) = kb.rule(d.code).and_then(|r| r.fix_stage.clone()) {
            selected.insert(fs);
        }
    }
    if !args.stages.is_empty() {
        selected = args.stages.iter().cloned().collect();
    }
    let names: Vec<&str> = selected.iter().map(String::as_str).collect();
    Ok(kb.stage_order(&names).iter().map(|s| s.name.clone()).collect())
}
