//! The harness client against a scripted `serve` (tests/fixtures/cover/harness/fake_harness) and a
//! scripted HTTP harness: typed results, restarts of a dead process, timeouts, no secrets passed on.

#[path = "common/openai_stub.rs"]
mod openai_stub;

use openai_stub::{Reply, Stub};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use xeforge::harness::stdio::{SpawnSpec, StdioHarness};
use xeforge::harness::{EvaluateArgs, Harness, HarnessError, HarnessSettings, Verdict};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cover")
}

fn fake(env: Vec<(String, String)>) -> StdioHarness {
    StdioHarness::new(SpawnSpec {
        python: "python3".into(),
        harness_path: fixtures().join("harness"),
        cwd: fixtures(),
        module: "fake_harness".into(),
        scrub_env: vec!["XEFORGE_TEST_SECRET".into()],
        env,
        serve_args: vec![],
    })
}

fn with_candidate(dir: &Path, marker: &str) -> EvaluateArgs {
    let kernel = fixtures().join("kernel.py");
    let cand = dir.join("cand.py");
    std::fs::write(&cand, format!("{}\n# fake-verdict: {marker}\n", std::fs::read_to_string(&kernel).unwrap())).unwrap();
    EvaluateArgs::new(kernel, cand)
}

#[tokio::test]
async fn evaluate_returns_a_typed_result() {
    let dir = tempfile::tempdir().unwrap();
    let h = Harness::Stdio(fake(vec![]));
    let e = h.evaluate(&with_candidate(dir.path(), "accepted speedup=2.0")).await.unwrap();
    assert_eq!(e.verdict, Verdict::Accepted);
    assert_eq!(e.speedup_interval(), Some([1.96, 2.04]));
    assert_eq!(e.device.name, "Fake GPU");
    let p = h.probe().await.unwrap();
    assert_eq!(p.device.kind, "cuda");
    assert_eq!(p.properties["properties"]["multiprocessor_count"], 1);
    h.shutdown().await;
}

#[tokio::test]
async fn a_dead_harness_is_restarted_on_the_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let h = fake(vec![]);
    let args = serde_json::to_value(with_candidate(dir.path(), "die")).unwrap();
    let err = h.call("evaluate", args, Duration::from_secs(30)).await.unwrap_err();
    assert!(matches!(err, HarnessError::Died(_)), "{err}");
    let ok = h.call("ping", serde_json::json!({}), Duration::from_secs(30)).await.unwrap();
    assert_eq!(ok["pong"], true);
    assert_eq!(h.starts(), 3, "the first child, its one retry, and a fresh one for the ping");
    h.shutdown().await;
}

#[tokio::test]
async fn a_hung_request_times_out_and_the_next_one_gets_a_new_process() {
    let dir = tempfile::tempdir().unwrap();
    let h = fake(vec![]);
    let args = serde_json::to_value(with_candidate(dir.path(), "hang")).unwrap();
    let t = Instant::now();
    let err = h.call("evaluate", args, Duration::from_millis(1500)).await.unwrap_err();
    assert!(matches!(err, HarnessError::Timeout { .. }), "{err}");
    assert!(t.elapsed() < Duration::from_secs(5));
    let ok = h.call("ping", serde_json::json!({}), Duration::from_secs(30)).await.unwrap();
    assert_eq!(ok["pong"], true);
    assert_eq!(h.starts(), 2);
    h.shutdown().await;
}

#[tokio::test]
async fn a_cancelled_request_ends_the_serve_process() {
    // A stage cancelled from the editor drops its request's future: the serve child (and with it
    // its running job, or its Ray actors) must end, not keep judging for nobody.
    let dir = tempfile::tempdir().unwrap();
    let h = fake(vec![]);
    let pid = h.call("ping", serde_json::json!({}), Duration::from_secs(30)).await.unwrap()["pid"].as_u64().unwrap();
    let args = serde_json::to_value(with_candidate(dir.path(), "hang")).unwrap();
    let cancelled = tokio::time::timeout(Duration::from_millis(800), h.call("evaluate", args, Duration::from_secs(600))).await;
    assert!(cancelled.is_err(), "the hanging request answered");
    // Gone, or a zombie not yet reaped (its state after the command name is `Z`).
    let gone = || match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => true,
    };
    let t = Instant::now();
    while !gone() && t.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone(), "the serve process of a cancelled request is still running");
    let ok = h.call("ping", serde_json::json!({}), Duration::from_secs(30)).await.unwrap();
    assert_eq!(ok["pong"], true);
    assert_eq!(h.starts(), 2, "a fresh child after the cancelled one");
    h.shutdown().await;
}

#[tokio::test]
async fn the_ray_setting_reaches_serve_as_an_option() {
    let settings = HarnessSettings {
        python: Some("python3".into()),
        harness_path: Some(fixtures().join("harness")),
        module: Some("fake_harness".into()),
        ray: Some("ray://head:10001".into()),
        ..Default::default()
    };
    let h = Harness::new(&settings, &fixtures()).unwrap();
    let Harness::Stdio(stdio) = &h else { panic!("a local harness") };
    let ok = stdio.call("ping", serde_json::json!({}), Duration::from_secs(30)).await.unwrap();
    assert_eq!(ok["argv"], serde_json::json!(["serve", "--ray", "ray://head:10001"]));
    h.shutdown().await;
}

#[tokio::test]
async fn secrets_do_not_reach_the_harness() {
    // SAFETY: a variable only this test reads or writes.
    unsafe { std::env::set_var("XEFORGE_TEST_SECRET", "sk-do-not-leak") };
    let h = fake(vec![]);
    let ok = h.call("ping", serde_json::json!({}), Duration::from_secs(30)).await.unwrap();
    assert_eq!(ok["env_has_secret"], false);
    h.shutdown().await;
}

#[tokio::test]
async fn unknown_commands_are_harness_errors() {
    let h = fake(vec![]);
    let err = h.call("frobnicate", serde_json::json!({}), Duration::from_secs(30)).await.unwrap_err();
    assert!(matches!(&err, HarnessError::Harness(m) if m.contains("unknown command")), "{err}");
    h.shutdown().await;
}

#[tokio::test]
async fn a_missing_interpreter_is_a_spawn_error() {
    let settings = HarnessSettings { python: Some("/nonexistent/python".into()), ..Default::default() };
    let h = Harness::new(&settings, &fixtures()).unwrap();
    assert!(matches!(h.ping().await, Err(HarnessError::Spawn { .. })));
}

#[tokio::test]
async fn the_http_harness_speaks_the_same_json() {
    let body = r#"{"id": 1, "verdict": "slower", "device": {"kind": "xpu", "name": "Intel Arc Pro B70"},
      "timing": {"meaningful": true, "speedup": 0.91, "speedup_ci95": [0.88, 0.95], "runs": 100}, "log": ""}"#;
    let stub = Stub::start(vec![
        Reply::Raw(200, body.into()),
        Reply::Raw(400, r#"{"verdict": "error", "error": "bad spec", "message": "bad spec"}"#.into()),
    ])
    .await;
    let h = Harness::new(&HarnessSettings { url: Some(stub.url.clone()), ..Default::default() }, &fixtures()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let args = with_candidate(dir.path(), "any");
    let e = h.evaluate(&args).await.unwrap();
    assert_eq!(e.verdict, Verdict::Slower);
    assert_eq!(e.speedup(), Some(0.91));
    // An `error` verdict is a result, even on a 4xx status.
    let e = h.evaluate(&args).await.unwrap();
    assert_eq!(e.verdict, Verdict::Error);
    let sent = stub.requests.lock().unwrap()[0].clone();
    assert_eq!(sent["command"], "evaluate");
    // Over HTTP the files themselves go, not paths of this machine.
    assert_eq!(sent["args"]["kernel"]["name"], "kernel.py");
    assert_eq!(sent["args"]["kernel"]["content"], std::fs::read_to_string(fixtures().join("kernel.py")).unwrap());
    assert!(sent["args"]["candidate"]["content"].as_str().unwrap().contains("# fake-verdict: any"));
    assert_eq!(sent["args"]["candidate"]["sha256"].as_str().map(str::len), Some(64));
    assert_eq!(sent["args"]["seeds"], 3);
}
