//! The autotune stage over a scripted HTTP harness: every config of the space is measured, slower ones
//! are kept out, the fastest go into the decorator, and the final list must verify as faster.

#[path = "common/openai_stub.rs"]
mod openai_stub;

use openai_stub::{Reply, Stub};
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use xeforge::cover::{OutcomeStatus, StageRequest, StageRunner};
use xeforge::harness::{DeviceKind, Harness, HarnessSettings};
use xeforge::knowledge::Knowledge;

fn verdict(v: &str, speedup: f64) -> Reply {
    Reply::Raw(
        200,
        serde_json::json!({"id": 0, "verdict": v, "device": {"kind": "cuda", "name": "NVIDIA H200", "torch": "2.11.0", "triton": "3.6.0"},
            "correctness": {"ok": true, "variants": [{"name": "bench-gpu[0]", "seeds": 3, "max_abs": 1e-6, "rel_err": 1e-7, "rtol": 1e-4, "atol": 1e-4}]},
            "timing": {"meaningful": true, "baseline_us": 10.0, "candidate_us": 10.0 / speedup, "speedup": speedup,
                       "speedup_ci95": [speedup - 0.02, speedup + 0.02], "runs": 100}, "log": ""})
        .to_string(),
    )
}

fn setup() -> (tempfile::TempDir, StageRequest) {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cover/kernel.py")).unwrap();
    let file = dir.path().join("kernel.py");
    std::fs::write(&file, &text).unwrap();
    let mut req = StageRequest::new("autotune", file, text);
    req.workspace = dir.path().to_path_buf();
    req.device = DeviceKind::Cuda;
    req.max_configs = 4;
    (dir, req)
}

fn runner(url: &str, dir: &Path) -> StageRunner {
    let h = Harness::new(&HarnessSettings { url: Some(url.into()), ..Default::default() }, dir).unwrap();
    StageRunner { kb: Arc::new(Knowledge::embedded().clone()), harness: Arc::new(h), llm: None }
}

#[tokio::test]
async fn the_fastest_configs_are_written_and_slower_ones_kept_out() {
    let (dir, req) = setup();
    // Space of 4: the start config (≈1.0), then three candidates: slower, faster, fastest; then the final list.
    let stub = Stub::start(vec![
        verdict("correct", 1.0),
        verdict("slower", 0.7),
        verdict("accepted", 1.3),
        verdict("accepted", 1.6),
        verdict("accepted", 1.55),
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
    let new = out.new_text.unwrap();
    let requests = stub.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 5);
    let configs_in = |s: &str| s.matches("triton.Config(").count();
    assert_eq!(configs_in(&new), 2, "only the two configs that beat the start: {new}");
    assert!(new.contains("@triton.autotune(") && new.contains("key=['n_elements']"), "{new}");
    assert!(new.contains("scale_kernel[lambda META: (triton.cdiv(n, META['BLOCK_SIZE']),)](x, out, n)"), "{new}");
    // The fastest config (round 4, 1.6×) is listed first, then round 3's (1.3×).
    let first = new.split("triton.Config(").nth(1).unwrap();
    let second = new.split("triton.Config(").nth(2).unwrap();
    let label = |c: &str| {
        let block = c.split("'BLOCK_SIZE': ").nth(1).unwrap().split('}').next().unwrap().to_string();
        let warps = c.split("num_warps=").nth(1).unwrap().split(',').next().unwrap().to_string();
        let stages = c.split("num_stages=").nth(1).unwrap().split(')').next().unwrap().to_string();
        format!("BLOCK_SIZE={block} w{warps} s{stages}")
    };
    assert_eq!(label(first), out.rounds[3].detail);
    assert_eq!(label(second), out.rounds[2].detail);
    assert!(std::fs::read_to_string(requests[3]["args"]["candidate"].as_str().unwrap()).is_err(), "the work directory is cleaned up");
    assert!(out.summary.starts_with("autotune: verified 1.55× faster"), "{}", out.summary);
}

#[tokio::test]
async fn when_nothing_beats_the_start_the_file_is_unchanged() {
    let (dir, req) = setup();
    let stub = Stub::start(vec![verdict("correct", 1.0), verdict("slower", 0.9), verdict("slower", 0.8), verdict("slower", 0.95)]).await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::NoImprovement);
    assert!(out.new_text.is_none());
    assert_eq!(stub.requests.lock().unwrap().len(), 4, "no final run without a better config");
}

#[tokio::test]
async fn a_final_list_that_is_not_verified_faster_is_dropped() {
    let (dir, req) = setup();
    let stub = Stub::start(vec![verdict("correct", 1.0), verdict("accepted", 1.1), verdict("slower", 0.9), verdict("slower", 0.9), verdict("correct", 1.01)]).await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::NoImprovement);
    assert!(out.new_text.is_none());
}
