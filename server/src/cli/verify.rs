//! `xeforge verify FILE`: the harness's verdict on a kernel file against itself — a self-check that
//! the spec, the inputs and the kernels run — and what compiling said, as diagnostics on the config
//! or launch of each compiled config (`cover::compiled`). The run and its cache (`.xeforge/compiled/`,
//! by the file's text, the knowledge target and the harness device, so verifying an unchanged file
//! again costs no harness run; `--refresh` runs it anyway) are `cover::verify`'s, which the language
//! server's `xeforge.verifyCompiled` shares.

use super::stage::HarnessArgs;
use crate::cover::verify::{self, Verified, VerifyRequest};
use crate::cover::{compiled, settings};
use crate::harness::{DeviceKind, Harness, HarnessSettings, Verdict};
use crate::knowledge::Knowledge;
use crate::lint::LintOptions;
use crate::output::FileResult;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    pub file: PathBuf,
    #[command(flatten)]
    pub harness: HarnessArgs,
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub format: String,
    /// Knowledge-base device the findings are for (default from config).
    #[arg(long = "target", value_name = "DEVICE")]
    pub target_device: Option<String>,
    #[arg(long)]
    pub toolchain: Option<String>,
    /// Run the harness even when an unchanged file's result is cached.
    #[arg(long)]
    pub refresh: bool,
}

pub fn run(args: VerifyArgs) -> u8 {
    let file = match std::path::absolute(&args.file) {
        Ok(f) if f.is_file() => f,
        _ => {
            eprintln!("xeforge verify: {}: no such file", args.file.display());
            return 2;
        }
    };
    if let Some(code) = super::refuse_notebook("verify", &file) {
        return code;
    }
    let workspace = settings::workspace_root(&file);
    let s = match settings::load(&workspace) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("xeforge verify: {e}");
            return 2;
        }
    };
    let hs = HarnessSettings {
        python: args.harness.python.clone().or(s.harness.python),
        url: args.harness.harness_url.clone().or(s.harness.url),
        token_env: s.harness.token_env.clone(),
        ray: args.harness.ray.clone().or(s.harness.ray.clone()),
        cpu_workers: args.harness.cpu_workers.or(s.harness.cpu_workers),
        jobs_per_device: args.harness.jobs_per_device.or(s.harness.jobs_per_device),
        scrub_env: vec![s.llm.api_key_env.clone()],
        ..Default::default()
    };
    let harness = match Harness::new(&hs, &workspace) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("xeforge verify: {e}");
            return 2;
        }
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("xeforge verify: {}: {e}", file.display());
            return 2;
        }
    };
    let kb = match Knowledge::embedded_with(&s.knowledge.iter().cloned().collect::<Vec<_>>()) {
        Ok(kb) => kb,
        Err(e) => {
            eprintln!("xeforge verify: invalid knowledge overlay: {e}");
            return 2;
        }
    };
    let opts = LintOptions {
        device: args.target_device.clone().unwrap_or(s.device.clone()),
        toolchain: args.toolchain.clone().unwrap_or(s.toolchain.clone()),
        ..Default::default()
    };
    let analysis = match crate::analysis::analyze_file(&file, &text, &kb, &opts) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("xeforge verify: {e}");
            return 2;
        }
    };
    let target = (analysis.device.as_str(), analysis.toolchain.as_str());
    let mut req = VerifyRequest::new(file.clone(), text.clone(), workspace.clone(), (target.0.into(), target.1.into()));
    req.spec = args.harness.spec.clone();
    req.device = DeviceKind::parse(&args.harness.device).unwrap_or_default();
    req.family = args.harness.family.clone();
    req.seeds = args.harness.seeds;
    req.timeout = args.harness.timeout;
    req.refresh = args.refresh;
    let (e, from_cache) = match run_verify(&harness, &req) {
        Ok(v) => (v.evaluation, v.cached),
        Err(e) => {
            eprintln!("xeforge verify: {e}");
            return 2;
        }
    };
    let c = compiled::of_evaluation(&analysis.model, &e, &kb, target);
    let statics = analysis.diagnostics.into_iter().filter(|d| matches!(d.code, "XF201" | "XF202")).collect();
    let findings = crate::lint::compiled::with_compiled(statics, c.diagnostics, &analysis.model, &text, &opts);
    let result = FileResult::new(file.clone(), args.file.display().to_string(), text, findings);
    if args.format == "json" {
        let mut rows = Vec::new();
        let _ = crate::output::json::render(std::slice::from_ref(&result), &mut rows);
        let rows: serde_json::Value = serde_json::from_slice(&rows).unwrap_or_default();
        let mut v = serde_json::to_value(&e).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("compiled".into(), serde_json::json!({"cached": from_cache, "note": c.note, "diagnostics": rows}));
        }
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        let dev = format!("{} {} (torch {}, triton {})", e.device.kind, e.device.name, e.device.torch, e.device.triton);
        let cached_note = if from_cache { " [cached: the file is unchanged; --refresh runs it again]" } else { "" };
        println!("{}: {} on {}{cached_note}", args.file.display(), e.verdict, dev.trim());
        if let Some(m) = &e.message {
            println!("  {m}");
        }
        if let Some(c) = &e.correctness {
            for v in &c.variants {
                let f = |x: Option<f64>| x.map(|v| format!("{v:.3e}")).unwrap_or_else(|| "?".into());
                println!("  {}: {} seeds, max_abs {}, rel_err {}", v.name, v.seeds, f(v.max_abs), f(v.rel_err));
            }
        }
        if !e.verdict.is_correct() && e.message.is_none() {
            println!("{}", e.failure_text(2000));
        }
        match &c.note {
            Some(note) => println!("compiled: {note}"),
            None => {
                println!();
                let _ = crate::output::text::render(
                    std::slice::from_ref(&result),
                    crate::output::text::TextOptions::for_stdout(),
                    &mut std::io::stdout(),
                );
            }
        }
    }
    match e.verdict {
        Verdict::Error => 2,
        v if v.is_correct() => 0,
        _ => 1,
    }
}

fn run_verify(harness: &Harness, req: &VerifyRequest) -> Result<Verified, String> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let r = verify::verify(harness, req).await;
        harness.shutdown().await;
        r
    })
}
