//! `xeforge verify FILE`: the harness's verdict on a kernel file against itself — a self-check that
//! the spec, the inputs and the kernels run, with the compile metadata of every config.

use super::stage::HarnessArgs;
use crate::cover::settings;
use crate::harness::{DeviceKind, EvaluateArgs, Harness, HarnessSettings, Verdict};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    pub file: PathBuf,
    #[command(flatten)]
    pub harness: HarnessArgs,
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub format: String,
}

pub fn run(args: VerifyArgs) -> u8 {
    let file = match std::path::absolute(&args.file) {
        Ok(f) if f.is_file() => f,
        _ => {
            eprintln!("xeforge verify: {}: no such file", args.file.display());
            return 2;
        }
    };
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
    let mut ev = EvaluateArgs::new(file.clone(), file.clone());
    ev.spec = args.harness.spec.clone().map(|p| std::path::absolute(&p).unwrap_or(p));
    ev.device = DeviceKind::parse(&args.harness.device).unwrap_or_default();
    ev.family = args.harness.family.clone();
    ev.seeds = args.harness.seeds.max(3);
    ev.timeout = args.harness.timeout;
    // Timing a file against itself says nothing; skip it.
    ev.no_timing = true;
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("xeforge verify: {e}");
            return 2;
        }
    };
    let result = rt.block_on(async {
        let r = harness.evaluate(&ev).await;
        harness.shutdown().await;
        r
    });
    let e = match result {
        Ok(e) => e,
        Err(e) => {
            eprintln!("xeforge verify: {e}");
            return 2;
        }
    };
    if args.format == "json" {
        println!("{}", serde_json::to_string_pretty(&e).unwrap_or_default());
    } else {
        let dev = format!("{} {} (torch {}, triton {})", e.device.kind, e.device.name, e.device.torch, e.device.triton);
        println!("{}: {} on {}", args.file.display(), e.verdict, dev.trim());
        if let Some(m) = &e.message {
            println!("  {m}");
        }
        if let Some(c) = &e.compile {
            for m in &c.configs {
                let cfg = m.config.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
                let f = |x: Option<u64>| x.map(|v| v.to_string()).unwrap_or_else(|| "?".into());
                println!("  config {cfg}: shared {} B, registers {}, spills {}", f(m.shared_bytes), f(m.registers), f(m.spills));
            }
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
    }
    match e.verdict {
        Verdict::Error => 2,
        v if v.is_correct() => 0,
        _ => 1,
    }
}
