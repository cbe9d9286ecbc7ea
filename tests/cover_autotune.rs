//! The autotune stage over a scripted HTTP harness: every config of the space is measured, slower ones
//! are kept out, the fastest go into the decorator, and the final list must verify as faster.

#[path = "common/openai_stub.rs"]
mod openai_stub;

use openai_stub::{Reply, Stub};
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use xeforge::cover::{OutcomeStatus, Progress, StageRequest, StageRunner};
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

fn result(v: &str, speedup: f64) -> serde_json::Value {
    let Reply::Raw(_, body) = verdict(v, speedup) else { unreachable!() };
    let mut r: serde_json::Value = serde_json::from_str(&body).unwrap();
    r.as_object_mut().unwrap().remove("id");
    r["elapsed"] = serde_json::json!({"candidate_s": 2.0});
    r
}

/// `verdict` with the interval [lo, hi] instead of ±0.02.
fn verdict_ci(v: &str, speedup: f64, lo: f64, hi: f64) -> Reply {
    let mut r = result_ci(v, speedup, lo, hi);
    r["id"] = serde_json::json!(0);
    Reply::Raw(200, r.to_string())
}

/// `result` with the interval [lo, hi] instead of ±0.02.
fn result_ci(v: &str, speedup: f64, lo: f64, hi: f64) -> serde_json::Value {
    let mut r = result(v, speedup);
    r["timing"]["speedup_ci95"] = serde_json::json!([lo, hi]);
    r
}

/// A `sweep` answer: one result per (verdict, speedup), then why it stopped short, if it did.
fn sweep(results: &[(&str, f64)], stopped: Option<&str>) -> Reply {
    sweep_of(results.iter().map(|(v, s)| result(v, *s)).collect(), stopped)
}

fn sweep_of(results: Vec<serde_json::Value>, stopped: Option<&str>) -> Reply {
    Reply::Raw(
        200,
        serde_json::json!({"id": 0, "kind": "sweep", "device": {"kind": "cuda"}, "results": results, "stopped": stopped, "setup_s": 3.0})
            .to_string(),
    )
}

/// What an older harness answers to a command it does not know.
fn unknown_command() -> Reply {
    Reply::Raw(200, serde_json::json!({"id": 0, "verdict": "error", "message": "unknown command 'sweep'", "error": "unknown command 'sweep'", "field": "command"}).to_string())
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

/// `setup` with a spec beside the kernel: checked on its small `ci` family (and the variants derived
/// from it), timed on `bench-gpu`.
fn setup_timed_on_bench() -> (tempfile::TempDir, StageRequest) {
    let (dir, mut req) = setup();
    req.family = Some("bench-gpu".into());
    let spec = "inputs:\n  x: {shape: [N], dtype: float32}\nci:\n  - params: [x]\n    dims: {N: 4096}\nbench-gpu:\n  - params: [x]\n    dims: {N: 16777216}\n";
    std::fs::write(dir.path().join("kernel.yaml"), spec).unwrap();
    (dir, req)
}

fn runner(url: &str, dir: &Path) -> StageRunner {
    let h = Harness::new(&HarnessSettings { url: Some(url.into()), ..Default::default() }, dir).unwrap();
    StageRunner { kb: Arc::new(Knowledge::embedded().clone()), harness: Arc::new(h), llm: None }
}

#[tokio::test]
async fn the_fastest_config_is_written_into_the_launch_and_slower_ones_kept_out() {
    let (dir, req) = setup();
    // Space of 4: the start config (the original itself, not run), then three candidates in one sweep:
    // slower, one the sweep cannot tell from the fastest, the fastest (an interval too wide to stand
    // as the result); then the final round.
    let stub = Stub::start(vec![
        sweep_of(vec![result("slower", 0.7), result("accepted", 1.59), result_ci("accepted", 1.6, 1.3, 1.9)], None),
        verdict("accepted", 1.55),
    ])
    .await;
    let mut planned = None;
    let out = runner(&stub.url, dir.path())
        .run(
            req,
            |p| {
                if let Progress::Planned { configs, expected_s } = p {
                    planned.get_or_insert((configs, expected_s));
                }
            },
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
    // Said before it started: 3 configs and the knowledge base's prior for how long that takes.
    let (n, secs) = planned.unwrap();
    assert_eq!(n, 3);
    assert!(secs > 10 && secs <= 60, "within the default 60 s budget: {secs}");
    let new = out.new_text.unwrap();
    let requests = stub.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    // One sweep request for the three configs, timed with few pairs, within what is left of the
    // budget once the final round is set aside; the final file alone, with more pairs.
    assert_eq!(requests[0]["command"], "sweep");
    let args = &requests[0]["args"];
    assert_eq!(args["candidates"].as_array().unwrap().len(), 3);
    assert!(args.get("candidate").is_none() && args.get("stop_below").is_none(), "{args}");
    assert_eq!(args["runs"], 20);
    assert_eq!(args["min_candidates"], 3);
    let room = args["budget_s"].as_f64().unwrap();
    assert!(room > 0.0 && room < 60.0, "{room}");
    assert_eq!(requests[1]["command"], "evaluate");
    assert_eq!(requests[1]["args"]["runs"], 40);
    assert!(requests[1]["args"].get("stop_below").is_none());
    // The fastest config (round 3, 1.6×) alone, in the launch: no autotuner between caller and kernel,
    // so the one the sweep could not tell from it (round 2, 1.59×) is left out.
    assert!(!new.contains("triton.autotune") && !new.contains("META"), "{new}");
    let value = |detail: &str, key: &str| detail.split(key).nth(1).unwrap().split(' ').next().unwrap().to_string();
    let (fast, tied) = (&out.rounds[2].detail, &out.rounds[1].detail);
    let block = value(fast, "BLOCK_SIZE=");
    let launch = format!(
        "scale_kernel[(triton.cdiv(n, {block}),)](x, out, n, BLOCK_SIZE={block}, num_warps={}, num_stages={})",
        value(fast, " w"),
        value(fast, " s")
    );
    assert!(new.contains(&launch), "{launch} not in {new}");
    assert!(!new.contains(&format!("BLOCK_SIZE={},", value(tied, "BLOCK_SIZE="))), "{new}");
    assert_eq!(out.rounds.iter().map(|r| r.round).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
    assert_eq!(out.rounds[3].detail, format!("final: {} written into the launches", fast.split(" (").next().unwrap()));
    // Over HTTP the candidate travels as its contents, named as the stage wrote it.
    assert!(requests[1]["args"]["candidate"]["content"].as_str().unwrap().contains(&launch));
    let work = dir.path().join(".xeforge/work");
    assert!(std::fs::read_dir(&work).map_or(true, |mut d| d.next().is_none()), "the work directory is cleaned up");
    assert!(out.summary.starts_with("autotune: verified 1.55× faster"), "{}", out.summary);
}

#[tokio::test]
async fn a_kernel_with_its_own_autotune_list_keeps_a_list_of_the_configs_the_sweep_could_not_tell_apart() {
    let (dir, mut req) = setup();
    let own = req.text.replace(
        "@triton.jit\n",
        "@triton.autotune(configs=[triton.Config({'BLOCK_SIZE': 256}, num_warps=4)], key=['n_elements'])\n@triton.jit\n",
    );
    let own = own
        .replace(", BLOCK_SIZE=256, num_warps=4)", ")")
        .replace("(triton.cdiv(n, 256),)", "lambda META: (triton.cdiv(n, META['BLOCK_SIZE']),)");
    assert!(own.contains("@triton.autotune(") && own.contains("lambda META"), "{own}");
    std::fs::write(&req.path, &own).unwrap();
    req.text = own;
    let stub = Stub::start(vec![sweep(&[("slower", 0.7), ("accepted", 1.59), ("accepted", 1.6)], None), verdict("accepted", 1.55)]).await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
    let new = out.new_text.unwrap();
    assert_eq!(new.matches("triton.Config(").count(), 2, "the fastest and the one the sweep could not tell from it: {new}");
    assert_eq!(new.matches("@triton.autotune(").count(), 1, "{new}");
    assert_eq!(stub.requests.lock().unwrap().len(), 2, "a list of two is a new file: evaluated");
}

#[tokio::test]
async fn a_harness_without_sweep_gets_one_evaluate_per_config_with_sequential_stopping() {
    let (dir, req) = setup();
    let stub = Stub::start(vec![
        unknown_command(),
        verdict("slower", 0.7),
        verdict("accepted", 1.59),
        verdict_ci("accepted", 1.6, 1.3, 1.9),
        verdict("accepted", 1.55),
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
    let requests = stub.requests.lock().unwrap().clone();
    let commands: Vec<_> = requests.iter().map(|r| r["command"].as_str().unwrap().to_string()).collect();
    assert_eq!(commands, ["sweep", "evaluate", "evaluate", "evaluate", "evaluate"]);
    // Once a config beats the start, later ones stop when decided below its interval's lower end
    // (1.59 - 0.02); never before, and never in the final list.
    assert!(requests[1]["args"].get("stop_below").is_none() && requests[2]["args"].get("stop_below").is_none());
    assert!((requests[3]["args"]["stop_below"].as_f64().unwrap() - 1.57).abs() < 1e-9, "{}", requests[3]["args"]);
    assert!(requests[4]["args"].get("stop_below").is_none());
    assert_eq!(out.rounds.iter().map(|r| r.round).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
}

#[tokio::test]
async fn a_sweep_whose_judge_died_goes_on_from_the_config_after_the_one_blamed() {
    let (dir, req) = setup();
    // The second config killed the judge: it is blamed (crashed), the third is judged in a new sweep.
    let died = Some("the judge died while candidate 2 of 3 ran: was killed by SIGKILL");
    let stub = Stub::start(vec![
        // (the first config's interval too wide to stand as the result: the final round runs)
        sweep_of(vec![result_ci("accepted", 1.3, 1.28, 1.45), result("crashed", 1.0)], died),
        sweep_of(vec![result_ci("accepted", 1.25, 1.1, 1.4)], None),
        verdict("accepted", 1.2),
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    let requests = stub.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 3, "{requests:?}");
    let again = requests[1]["args"]["candidates"].as_array().unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(again[0], requests[0]["args"]["candidates"][2], "the third config, as it was staged");
    assert_eq!(requests[1]["args"]["stop_below"].as_f64().unwrap(), 1.28, "the first config's lower end");
    assert_eq!(out.rounds.iter().map(|r| r.round).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
    assert_eq!(out.rounds[1].verdict.map(|v| v.as_str()), Some("crashed"));
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
}

#[tokio::test]
async fn a_sweep_stopped_by_its_budget_ends_the_sweep() {
    let (dir, req) = setup();
    let stub = Stub::start(vec![
        sweep_of(vec![result_ci("accepted", 1.3, 1.15, 1.45)], Some("budget: 1 of 3 candidates judged in 40 s (budget 41 s)")),
        verdict("accepted", 1.29),
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(stub.requests.lock().unwrap().len(), 2, "no second sweep after the budget stop");
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
    let last = out.rounds.last().unwrap();
    assert!(last.notes.iter().any(|n| n.starts_with("budget: 1 of 3")), "{:?}", last.notes);
    assert_eq!(out.rounds.iter().map(|r| r.round).collect::<Vec<_>>(), vec![1, 2], "no gap for the configs not judged");
}

/// The sweep's first batch stops on a budget that set the final round's time aside; its best config
/// was accepted narrowly, so no final round will run: that time goes to the configs not yet judged,
/// and the best config's own round is the result.
#[tokio::test]
async fn a_final_list_of_one_config_already_accepted_narrowly_is_not_evaluated_again() {
    let (dir, req) = setup();
    let stub = Stub::start(vec![
        sweep(&[("accepted", 1.6)], Some("budget: 1 of 3 candidates judged in 40 s (budget 41 s)")),
        sweep(&[("slower", 0.9)], Some("budget: 1 of 2 candidates judged in 12 s (budget 13 s)")),
        verdict("accepted", 1.2),
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
    let requests = stub.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2, "two batches of the sweep, no final round: the first config's evaluation stands");
    let (first, rest) = (requests[0]["args"]["candidates"].as_array().unwrap(), requests[1]["args"]["candidates"].as_array().unwrap());
    assert_eq!(rest.as_slice(), &first[1..], "the second batch is the configs the first did not judge");
    assert!(out.rounds[1].notes.iter().any(|n| n.contains("the time set aside for one goes to more configs")), "{:?}", out.rounds[1].notes);
    assert!(out.summary.starts_with("autotune: verified 1.60× faster"), "{}", out.summary);
    // One config is written into the launch itself: no autotuner between the caller and the kernel.
    let new = out.new_text.unwrap();
    assert!(!new.contains("triton.autotune") && !new.contains("META"), "{new}");
    // The record says which round stands for the final list, and keeps what the final round would have said.
    assert_eq!(out.rounds.iter().map(|r| r.round).collect::<Vec<_>>(), vec![1, 2]);
    let notes = &out.rounds[0].notes;
    assert!(notes.iter().any(|n| n.starts_with("the final list is this config alone, byte for byte")), "{notes:?}");
    assert!(out.rounds.iter().flat_map(|r| &r.notes).any(|n| n.starts_with("budget: 1 of 2")), "{:?}", out.rounds);
}

#[tokio::test]
async fn a_final_list_of_one_config_with_a_wide_interval_is_measured_again() {
    let (dir, req) = setup();
    let stub = Stub::start(vec![
        sweep_of(vec![result("slower", 0.7), result_ci("accepted", 1.6, 1.3, 1.9), result("slower", 0.8)], None),
        verdict("accepted", 1.55),
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    let requests = stub.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1]["args"]["runs"], 40);
    assert!(out.summary.starts_with("autotune: verified 1.55× faster"), "{}", out.summary);
}

#[tokio::test]
async fn when_nothing_beats_the_start_the_file_is_unchanged() {
    let (dir, req) = setup();
    let stub = Stub::start(vec![sweep(&[("slower", 0.9), ("slower", 0.8), ("slower", 0.95)], None)]).await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::NoImprovement);
    assert!(out.new_text.is_none());
    assert_eq!(stub.requests.lock().unwrap().len(), 1, "no final run without a better config");
}

/// A kernel whose calls issue in about the time they run: the harness says so (the original's own
/// clock), and the outcome says why a device-time gain may not show.
#[tokio::test]
async fn an_original_bound_by_its_launches_is_named_in_the_outcome() {
    let (dir, req) = setup();
    let bound = |v: &str, s: f64| {
        let mut r = result(v, s);
        r["timing"]["issue_us"] = serde_json::json!(9.4);
        r["timing"]["issue_bound"] = serde_json::json!(true);
        r
    };
    let stub = Stub::start(vec![sweep_of(vec![bound("slower", 0.97), bound("correct", 0.99), result("slower", 0.95)], None)]).await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::NoImprovement);
    assert!(
        out.summary.ends_with("the original's calls are launch-bound here (9 of its 10 µs a call is launch issue): a device-time gain below that floor does not show in a loop of this call (it would with CUDA graphs, or other work queued ahead of it)"),
        "{}",
        out.summary
    );
    assert_eq!(out.rounds[1].launch_bound_us, Some(9.4));
    assert_eq!(out.rounds[2].launch_bound_us, None, "a round whose timing did not find it");
}

#[tokio::test]
async fn a_final_list_that_is_not_verified_faster_is_dropped() {
    let (dir, req) = setup();
    let stub = Stub::start(vec![
        sweep_of(vec![result_ci("accepted", 1.1, 1.02, 1.2), result("slower", 0.9), result("slower", 0.9)], None),
        verdict("correct", 1.01),
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::NoImprovement);
    assert!(out.new_text.is_none());
}

#[tokio::test]
async fn the_small_family_is_checked_and_the_requested_one_timed() {
    let (dir, req) = setup_timed_on_bench();
    // First the start config on the check family (are the derived variants sound?), then the sweep.
    let stub = Stub::start(vec![verdict("correct", 1.0), sweep(&[("slower", 0.9), ("slower", 0.8), ("slower", 0.95)], None)]).await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::NoImprovement);
    let requests = stub.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["args"]["no_timing"], true);
    let args = &requests[1]["args"];
    assert_eq!(args["family"], "xeforge-check");
    assert_eq!(args["timing_family"], "bench-gpu");
    // The check family: ci's variant plus N = 4097 (not a multiple of any block).
    assert!(out.rounds[0].notes.iter().any(|n| n.contains("N=4097")), "{:?}", out.rounds[0].notes);
}

#[tokio::test]
async fn derived_variants_the_original_does_not_hold_on_are_dropped() {
    let (dir, req) = setup_timed_on_bench();
    // The start config fails on the derived variant (edges): the stage falls back; Multiples has nothing
    // new for one dimension, nor has Tied (the same N + 1), so the spec's own family is checked.
    let stub = Stub::start(vec![verdict("incorrect", 1.0), sweep(&[("slower", 0.9), ("slower", 0.8), ("slower", 0.95)], None)]).await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::NoImprovement);
    let requests = stub.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1]["args"]["family"], "ci");
    assert!(requests[1]["args"].get("spec").is_none_or(|s| !s["name"].as_str().unwrap_or("").contains("check-spec")));
    assert!(out.rounds[0].notes.iter().any(|n| n.contains("checking on the spec's own family")), "{:?}", out.rounds[0].notes);
}

/// The harness's answer when the device is missing (as a real one sends it), as an evaluation or a sweep.
fn device_failed(kind: Option<&str>) -> Reply {
    let message = "the device failed: DeviceError: no such device: cuda (torch 2.11.0 reports it unavailable)";
    let mut r = serde_json::json!({"id": 0, "verdict": "error", "message": message, "error": message, "device": null,
        "files": {"kernel": {"name": "original.py", "bytes": 10, "sha256": "ab"}}});
    if let Some(kind) = kind {
        // A sweep lists its candidates' digests.
        r["kind"] = kind.into();
        r["results"] = serde_json::json!([]);
        r["files"]["candidates"] = serde_json::json!([{"name": "candidate_2.py", "bytes": 11, "sha256": "cd"}]);
    }
    Reply::Raw(200, r.to_string())
}

#[tokio::test]
async fn a_device_that_fails_the_start_check_ends_the_stage_not_the_derived_variants() {
    let (dir, req) = setup_timed_on_bench();
    let stub = Stub::start(vec![device_failed(None), device_failed(Some("sweep"))]).await;
    let err = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap_err();
    assert!(matches!(err, xeforge::cover::StageError::HarnessVerdictError(_)), "{err:?}");
    assert!(err.to_string().contains("no such device: cuda"), "{err}");
    // One request: no fallback to other variants, no sweep.
    assert_eq!(stub.requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_sweep_the_device_fails_ends_the_stage_with_the_harness_message() {
    let (dir, req) = setup();
    let stub = Stub::start(vec![device_failed(Some("sweep"))]).await;
    let err = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap_err();
    // Before, its list of candidate digests failed to parse: "harness protocol error: sweep result: ...".
    assert!(matches!(err, xeforge::cover::StageError::HarnessVerdictError(_)), "{err:?}");
    assert!(err.to_string().contains("no such device: cuda"), "{err}");
}

#[tokio::test]
async fn an_original_that_fails_on_the_device_is_reported_with_the_checkers_errors_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kernels/matmul_xpu.py")).unwrap();
    let file = dir.path().join("matmul_xpu.py");
    std::fs::write(&file, &text).unwrap();
    let mut req = StageRequest::new("autotune", file, text);
    req.workspace = dir.path().to_path_buf();
    req.device = DeviceKind::Cuda;
    let failed = r#"{"id": 0, "verdict": "error", "message": "the reference on ci[0] failed: KeyError: 'Keyword argument grf_mode was specified but unrecognised'"}"#;
    // Every check of the original fails: three derived variants, the spec's family, and the last word.
    let stub = Stub::start((0..5).map(|_| Reply::Raw(200, failed.into())).collect()).await;
    let err = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap_err().to_string();
    assert!(err.contains("grf_mode was specified but unrecognised"), "{err}");
    // On CUDA the checker names the very cause: `grf_mode` is an Intel-only option.
    assert!(err.contains("XF107 at line 12") && err.contains("XF101 at line 13"), "{err}");
}

/// A screen's answer: a judged evaluation of the whole space as one autotune list, with what the
/// autotuner measured of each config (and picked per key).
fn screened(verdict_: &str, timings: serde_json::Value, picks: serde_json::Value) -> Reply {
    let Reply::Raw(_, body) = verdict(verdict_, 1.4) else { unreachable!() };
    let mut r: serde_json::Value = serde_json::from_str(&body).unwrap();
    r["compile"] =
        serde_json::json!({"ok": true, "configs": [], "metadata_available": true, "autotune_picks": picks, "autotune_timings": timings});
    Reply::Raw(200, r.to_string())
}

fn cfg(block: i64, warps: i64) -> serde_json::Value {
    serde_json::json!({"BLOCK_SIZE": block, "num_warps": warps, "num_stages": 3})
}

/// The space of 8 does not fit a 15 s budget: the whole space is screened as one autotune list, the
/// sweep takes configs in the order of the autotuner's timings (and needs one correct one), the
/// final list is verified as always.
#[tokio::test]
async fn a_space_the_budget_cannot_sweep_is_screened_and_swept_in_the_autotuners_order() {
    let (dir, mut req) = setup();
    req.max_configs = 8;
    req.budget_s = 15;
    let timings = serde_json::json!([
        {"kernel": "scale_kernel", "config": cfg(2048, 16), "ms": 0.30},
        {"kernel": "scale_kernel", "config": cfg(512, 4), "ms": 0.11},
        {"kernel": "scale_kernel", "config": cfg(256, 4), "ms": 0.40},
        {"kernel": "scale_kernel", "config": cfg(1024, 8), "ms": 0.12},
    ]);
    // The list itself may be wrong (a kernel that accumulates): the order is used all the same.
    let stub = Stub::start(vec![
        screened("incorrect", timings, serde_json::json!([])),
        sweep_of(vec![result_ci("accepted", 1.39, 1.2, 1.6)], Some("budget: 1 of 7 candidates judged")),
        verdict("accepted", 1.38),
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
    let requests = stub.requests.lock().unwrap().clone();
    let commands: Vec<_> = requests.iter().map(|r| r["command"].as_str().unwrap().to_string()).collect();
    assert_eq!(commands, ["evaluate", "sweep", "evaluate"]);
    assert!(out.rounds[0].detail.starts_with("screen: all 8 configs"), "{}", out.rounds[0].detail);
    let screen_file = requests[0]["args"]["candidate"]["name"].as_str().unwrap().to_string();
    assert!(requests[0]["args"].get("timing_family").is_none());
    // The screen is for the autotuner's timings: checked, not timed by the harness.
    assert_eq!(requests[0]["args"]["no_timing"], true, "{}", requests[0]["args"]);
    assert!(requests[0]["args"].get("search_timed").is_none(), "{}", requests[0]["args"]);
    assert!(out.rounds[0].notes.iter().any(|n| n.starts_with("harness ready ")), "{:?}", out.rounds[0].notes);
    assert!(
        out.rounds[0].notes.iter().any(|n| n.contains("ranked first: BLOCK_SIZE=512 w4 s3, BLOCK_SIZE=1024 w8 s3, BLOCK_SIZE=2048 w16 s3")),
        "{:?} ({screen_file})",
        out.rounds[0].notes
    );
    let args = &requests[1]["args"];
    assert_eq!(args["min_candidates"], 1, "after a screen one correct config is enough");
    assert!(out.rounds[1].detail.starts_with("BLOCK_SIZE=512 w4 s3"), "{}", out.rounds[1].detail);
    // The batch's own set-up (outside any config's seconds) is said on its first config.
    assert!(out.rounds[1].notes.iter().any(|n| n.starts_with("its batch of 1 took ")), "{:?}", out.rounds[1].notes);
    let new = out.new_text.unwrap();
    assert!(!new.contains("triton.autotune"), "{new}");
    assert!(new.contains("scale_kernel[(triton.cdiv(n, 512),)](x, out, n, BLOCK_SIZE=512, num_warps=4, num_stages=3)"), "{new}");
    assert_eq!(requests[2]["args"]["runs"], 40);
}

/// A config whose round timed it at the launch floor (the original's issue in that round fills its
/// call) has a speedup that says how fast the host was: the screen's device order ranks it against
/// the config another round measured faster, and the record says why it leads.
#[tokio::test]
async fn a_config_timed_at_the_launch_floor_is_ranked_by_the_screen() {
    // 512 (first in the screen): 7.7 µs a call, 7.0 of them the original's issue in its round; 1024:
    // 6.25 µs a call in a round whose issue was 3 µs.
    let out = floor_and_faster(7.0).await;
    let new = out.new_text.unwrap();
    assert!(new.contains("scale_kernel[(triton.cdiv(n, 512),)](x, out, n, BLOCK_SIZE=512, num_warps=4, num_stages=3)"), "{new}");
    let notes: Vec<&String> = out.rounds.iter().flat_map(|r| &r.notes).collect();
    assert!(
        notes.iter().any(|n| n.starts_with("BLOCK_SIZE=512 w4 s3 leads, not BLOCK_SIZE=1024 w8 s3 (1.60× measured)")
            && n.contains("at the launch floor (7 µs of its 8 µs a call")),
        "{notes:?}"
    );
    // The same answers with little issue in 512's round: the faster measurement leads, as before.
    let new = floor_and_faster(3.0).await.new_text.unwrap();
    assert!(new.contains("BLOCK_SIZE=1024, num_warps=8"), "{new}");
}

/// A screened stage whose sweep measures 512 w4 (the screen's first) at 1.30× with `issue_512` µs of
/// the original's issue in its round, and 1024 w8 at 1.60× with 3 µs; both accepted with narrow
/// intervals, so the lead's own round is the result.
async fn floor_and_faster(issue_512: f64) -> xeforge::cover::StageOutcome {
    let (dir, mut req) = setup();
    req.max_configs = 8;
    req.budget_s = 15;
    let timings = serde_json::json!([
        {"kernel": "scale_kernel", "config": cfg(512, 4), "ms": 0.050},
        {"kernel": "scale_kernel", "config": cfg(1024, 8), "ms": 0.055},
    ]);
    let at = |speedup: f64, lo: f64, hi: f64, issue: f64| {
        let mut r = result_ci("accepted", speedup, lo, hi);
        r["timing"]["issue_us"] = serde_json::json!(issue);
        r
    };
    let stub = Stub::start(vec![
        screened("correct", timings, serde_json::json!([])),
        sweep_of(vec![at(1.30, 1.26, 1.35, issue_512), at(1.60, 1.55, 1.65, 3.0)], Some("budget: 2 of 7 candidates judged")),
        // The lead's own round stands (accepted, narrow): the final round's time goes to more configs.
        sweep_of(vec![], Some("budget: 0 of 5 candidates judged")),
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
    out
}

/// A request with a spec whose timed family is not its check family.
fn with_timed_family() -> (tempfile::TempDir, StageRequest) {
    let (dir, mut req) = setup();
    req.max_configs = 8;
    req.budget_s = 15;
    req.family = Some("bench-gpu".into());
    let spec = "inputs:\n  x: {shape: [N], dtype: float32}\nci:\n  - params: [x]\n    dims: {N: 4096}\nbench-gpu:\n  - params: [x]\n    dims: {N: 16777216}\n";
    std::fs::write(dir.path().join("kernel.yaml"), spec).unwrap();
    (dir, req)
}

/// By default the screen is checked where the sweep checks (its calls there take the list's first
/// config, no search), and the timed shape is only called once (untimed) for the autotuner's search;
/// the order is taken as before.
#[tokio::test]
async fn a_screen_on_the_check_family_calls_the_timed_shape_once_for_the_search() {
    let (dir, req) = with_timed_family();
    assert_eq!(req.screen, xeforge::cover::autotune::budget::Screen::Check, "the default");
    let timings = serde_json::json!([
        {"kernel": "scale_kernel", "config": cfg(1024, 8), "ms": 0.11},
        {"kernel": "scale_kernel", "config": cfg(512, 4), "ms": 0.20},
    ]);
    let stub = Stub::start(vec![
        verdict("correct", 1.0),
        screened("correct", timings, serde_json::json!([])),
        sweep(&[("accepted", 1.3)], Some("budget")),
        sweep(&[("slower", 0.9)], Some("budget")), // the final round's time, freed: the best was accepted narrowly
        verdict("accepted", 1.3),
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
    let requests = stub.requests.lock().unwrap().clone();
    assert!(out.rounds[1].detail.starts_with("screen: all"), "{}", out.rounds[1].detail);
    let (screen, swept) = (&requests[1]["args"], &requests[2]["args"]);
    assert_eq!((screen["no_timing"].as_bool(), screen["search_timed"].as_bool()), (Some(true), Some(true)), "{screen}");
    assert_eq!(screen["family"], "xeforge-check", "checked where the sweep checks");
    assert_eq!(swept["family"], "xeforge-check");
    assert_eq!((&screen["timing_family"], &swept["timing_family"]), (&serde_json::json!("bench-gpu"), &serde_json::json!("bench-gpu")));
    assert!(out.rounds[2].detail.starts_with("BLOCK_SIZE=1024 w8 s3"), "{}", out.rounds[2].detail);
    // Only the screen sends the addition (a harness without it is never asked otherwise).
    assert!(requests.iter().enumerate().all(|(i, r)| i == 1 || r["args"].get("search_timed").is_none()));
}

/// `XEFORGE_AUTOTUNE_SCREEN=timed`: the screen checked on the timed family, where its first call searches.
#[tokio::test]
async fn a_screen_on_the_timed_family_searches_in_its_checked_calls() {
    let (dir, mut req) = with_timed_family();
    req.screen = xeforge::cover::autotune::budget::Screen::Timed;
    let timings = serde_json::json!([{"kernel": "scale_kernel", "config": cfg(1024, 8), "ms": 0.11}]);
    let stub = Stub::start(vec![
        verdict("correct", 1.0),
        screened("correct", timings, serde_json::json!([])),
        sweep(&[("accepted", 1.3)], Some("budget")),
        sweep(&[("slower", 0.9)], Some("budget")), // the final round's time, freed: the best was accepted narrowly
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
    let requests = stub.requests.lock().unwrap().clone();
    let screen = &requests[1]["args"];
    assert_eq!(screen["family"], "bench-gpu", "{screen}");
    assert!(screen.get("timing_family").is_none() && screen.get("search_timed").is_none(), "{screen}");
    assert_eq!(screen["no_timing"], true);
}

#[tokio::test]
async fn without_timings_the_screen_puts_the_pick_for_the_largest_key_first() {
    let (dir, mut req) = setup();
    req.max_configs = 8;
    req.budget_s = 15;
    let picks = serde_json::json!([
        {"kernel": "scale_kernel", "key": ["1000", "torch.float32"], "config": cfg(2048, 16)},
        {"kernel": "scale_kernel", "key": ["16777216", "torch.float32"], "config": cfg(1024, 8)},
    ]);
    let stub = Stub::start(vec![
        screened("accepted", serde_json::json!([]), picks),
        sweep(&[("accepted", 1.3)], Some("budget")),
        sweep(&[("slower", 0.9)], Some("budget")), // the final round's time, freed: the best was accepted narrowly
        verdict("accepted", 1.3),
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
    assert!(out.rounds[1].detail.starts_with("BLOCK_SIZE=1024 w8 s3"), "{}", out.rounds[1].detail);
}

#[tokio::test]
async fn a_screen_without_an_order_leaves_the_sweep_as_it_was() {
    let (dir, mut req) = setup();
    req.max_configs = 8;
    req.budget_s = 15;
    let stub = Stub::start(vec![
        verdict("runtime_error", 1.0),
        sweep(&[("accepted", 1.2), ("slower", 0.8), ("accepted", 1.1)], Some("budget: 3 of 7 candidates judged")),
        sweep(&[("slower", 0.9)], Some("budget")),
        verdict("accepted", 1.19),
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
    assert!(out.rounds[0].notes.iter().any(|n| n.contains("no order from the screen")), "{:?}", out.rounds[0].notes);
    let requests = stub.requests.lock().unwrap().clone();
    assert_eq!(requests[1]["command"], "sweep");
    assert_eq!(requests[1]["args"]["min_candidates"], 3);
}

/// The autotuner's first pick is wrong on the check family (a tile larger than the check's dims):
/// the sweep goes on to the next in the screen's order, past its budget, until one is correct.
#[tokio::test]
async fn after_a_screen_the_sweep_goes_on_until_one_config_is_correct() {
    let (dir, mut req) = setup();
    req.max_configs = 8;
    req.budget_s = 15;
    let timings = serde_json::json!([
        {"kernel": "scale_kernel", "config": cfg(2048, 16), "ms": 0.10},
        {"kernel": "scale_kernel", "config": cfg(1024, 8), "ms": 0.11},
    ]);
    let stub = Stub::start(vec![
        screened("accepted", timings, serde_json::json!([])),
        sweep(&[("incorrect", 1.0)], Some("budget: 1 of 7 candidates judged")),
        sweep(&[("accepted", 1.5)], Some("budget: 1 of 6 candidates judged")),
        sweep(&[("slower", 0.9)], Some("budget")),
        verdict("accepted", 1.49),
    ])
    .await;
    let out = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted, "{}", out.summary);
    let details: Vec<_> = out.rounds.iter().map(|r| r.detail.clone()).collect();
    assert!(details[1].starts_with("BLOCK_SIZE=2048 w16 s3") && details[2].starts_with("BLOCK_SIZE=1024 w8 s3"), "{details:?}");
    let new = out.new_text.unwrap();
    assert!(new.contains("scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK_SIZE=1024, num_warps=8, num_stages=3)"), "{new}");
}

/// A run that ends in an error (here: an LLM stage with no model configured) leaves no work directory.
#[tokio::test]
async fn a_stage_that_fails_removes_its_work_directory() {
    let (dir, mut req) = setup();
    req.stage = "dtype".into();
    let stub = Stub::start(vec![]).await;
    let err = runner(&stub.url, dir.path()).run(req, |_| {}, CancellationToken::new()).await;
    assert!(err.is_err(), "no generator for an LLM stage");
    let work = dir.path().join(".xeforge/work");
    let left: Vec<_> = std::fs::read_dir(&work).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[tokio::test]
async fn a_start_config_the_original_does_not_run_is_timed_like_the_others() {
    let (dir, mut req) = setup();
    // The wrapper chooses its warps per size: the start config (its first choice, num_warps=8) is one
    // value for every size, not the original.
    req.text = req.text.replace(
        "        scale_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK_SIZE=256, num_warps=4)",
        "        w = 8 if n > 1 << 20 else 2\n        scale_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK_SIZE=256, num_warps=w)",
    );
    std::fs::write(&req.path, &req.text).unwrap();
    req.max_configs = 3;
    let stub = Stub::start(vec![sweep(&[("slower", 0.9), ("slower", 0.8), ("slower", 0.95)], None)]).await;
    let mut planned = None;
    let out = runner(&stub.url, dir.path())
        .run(
            req,
            |p| {
                if let Progress::Planned { configs, .. } = p {
                    planned.get_or_insert(configs);
                }
            },
            CancellationToken::new(),
        )
        .await;
    let sent: Vec<String> = stub.requests.lock().unwrap().iter().map(|r| format!("{} {}", r["command"], r["args"])).collect();
    let out = out.unwrap_or_else(|e| panic!("{e:?}: {sent:#?}"));
    assert_eq!(out.status, OutcomeStatus::NoImprovement, "{}", out.summary);
    assert_eq!(planned, Some(3), "all three configs of the space, the start config among them: {sent:#?}");
    assert_eq!(sent.len(), 1, "{sent:#?}");
    assert!(sent[0].starts_with("\"sweep\""), "{sent:#?}");
    let details: Vec<&str> = out.rounds.iter().map(|r| r.detail.as_str()).collect();
    assert_eq!(details.len(), 3, "{details:?}");
    assert!(details[0].starts_with("BLOCK_SIZE=256 w8 s3 (config 1 of 3"), "{details:?}");
}
