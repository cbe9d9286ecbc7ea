//! `xeforge optimize FILE`: the stages the analysis selects, in dependency order, each verified on the
//! harness and re-verified against the original file; a stage that does not help leaves the file as it was.

use super::rules::KnowledgeArgs;
use super::stage::{Env, HarnessArgs, write_if_unchanged};
use crate::cover::{StageError, evidence};
use crate::lint::LintOptions;
use std::collections::BTreeSet;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct OptimizeArgs {
    pub file: PathBuf,
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

pub fn run(args: OptimizeArgs) -> u8 {
    let original = match std::fs::read_to_string(&args.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("xeforge optimize: {}: {e}", args.file.display());
            return 2;
        }
    };
    let env = match Env::new(&args.file, &args.harness, &args.knowledge, args.llm_url.clone(), args.llm_model.clone()) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let kb = env.runner.kb.clone();
    let opts = LintOptions { device: env.settings.device.clone(), toolchain: env.settings.toolchain.clone(), ..Default::default() };
    let analysis = match crate::analysis::analyze_file(&args.file, &original, &kb, &opts) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("xeforge optimize: {e}");
            return 2;
        }
    };
    // A stage is selected by a finding of one of its rules (or a rule whose fix is that stage).
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
    let order: Vec<String> = kb.stage_order(&names).iter().map(|s| s.name.clone()).collect();
    if order.is_empty() {
        println!("{}: the analysis selects no stage; nothing to do", args.file.display());
        return 0;
    }
    println!("stages: {}", order.join(" → "));
    let mut current = original.clone();
    for name in &order {
        let stage = kb.stage(name);
        if stage.is_some_and(|s| s.deterministic.is_none()) && env.runner.llm.is_none() {
            println!("{name}: skipped (needs a language model: [tool.xeforge.llm] or --llm-url/--llm-model)");
            continue;
        }
        let mut req = env.request(name, &args.file, current.clone(), &args.harness);
        req.kernel = args.kernel.clone();
        req.rounds = args.rounds;
        req.max_configs = args.max_configs;
        req.pristine = Some(original.clone());
        match env.block_on(req) {
            Ok(o) => {
                println!("{}", o.summary);
                if let Some(t) = o.new_text {
                    current = t;
                }
            }
            Err(StageError::Cancelled) => {
                eprintln!("xeforge optimize: cancelled; file unchanged");
                return 130;
            }
            Err(e) => println!("{name}: not run: {e}"),
        }
    }
    if current == original {
        println!("no stage verified an improvement; file unchanged");
        return 0;
    }
    if args.diff {
        let n = args.file.display().to_string();
        print!("{}", crate::cover::evidence::unified_diff(&n, &original, &current));
    }
    if args.apply {
        if let Err(m) = write_if_unchanged(&args.file, &evidence::sha256(&original), &current) {
            eprintln!("xeforge optimize: {m}");
            return 2;
        }
        println!("applied to {}", args.file.display());
    }
    0
}
