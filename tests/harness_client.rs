//! The harness client against a scripted `serve` (tests/fixtures/cover/harness/fake_harness) and a
//! scripted HTTP harness: typed results, restarts of a dead process, timeouts, no secrets passed on.

#[path = "common/openai_stub.rs"]
mod openai_stub;

use openai_stub::{Reply, Stub};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use xeforge::harness::stdio::{SpawnSpec, StdioHarness};
use xeforge::harness::{DeviceKind, EvaluateArgs, Harness, HarnessError, HarnessSettings, Verdict};

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

/// The requests the fake logged (FAKE_HARNESS_LOG), and its job starts (`busy`: jobs running then).
fn logged(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log).unwrap_or_default().lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

fn logging(dir: &Path, extra: &[(&str, &str)]) -> (StdioHarness, PathBuf) {
    let log = dir.join("harness.log");
    let mut env = vec![("FAKE_HARNESS_LOG".to_string(), log.display().to_string())];
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    (fake(env), log)
}

/// A second candidate file beside `with_candidate`'s (in `other/`), for a request in flight at the same time.
fn other_candidate(dir: &Path, marker: &str) -> EvaluateArgs {
    std::fs::create_dir_all(dir.join("other")).unwrap();
    with_candidate(&dir.join("other"), marker)
}

#[tokio::test]
async fn a_dead_harness_fails_every_call_in_flight_and_the_next_call_starts_a_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let h = fake(vec![]);
    let hang = serde_json::to_value(with_candidate(dir.path(), "hang")).unwrap();
    let die = serde_json::to_value(other_candidate(dir.path(), "die")).unwrap();
    let (waiting, dying) = tokio::join!(h.call("evaluate", hang, Duration::from_secs(30)), async {
        tokio::time::sleep(Duration::from_millis(300)).await; // the hanging one is in flight first
        h.call("evaluate", die, Duration::from_secs(30)).await
    });
    assert!(matches!(&dying, Err(HarnessError::Died(m)) if m.contains("exited")), "{dying:?}");
    assert!(matches!(&waiting, Err(HarnessError::Died(_))), "a call in flight fails with the child: {waiting:?}");
    let ok = h.call("ping", serde_json::json!({}), Duration::from_secs(30)).await.unwrap();
    assert_eq!(ok["pong"], true);
    assert_eq!(h.starts(), 2, "the child that died, and a fresh one for the ping");
    h.shutdown().await;
}

#[tokio::test]
async fn a_request_past_its_time_is_cancelled_and_the_child_serves_on() {
    let dir = tempfile::tempdir().unwrap();
    let (h, log) = logging(dir.path(), &[]);
    let pid = h.call("ping", serde_json::json!({}), Duration::from_secs(30)).await.unwrap()["pid"].clone();
    let args = serde_json::to_value(with_candidate(dir.path(), "hang")).unwrap();
    let t = Instant::now();
    let err = h.call("evaluate", args, Duration::from_millis(1500)).await.unwrap_err();
    assert!(matches!(err, HarnessError::Timeout { .. }), "{err}");
    assert!(t.elapsed() < Duration::from_secs(5), "the cancel was answered at once: {:?}", t.elapsed());
    let requests = logged(&log);
    let id = requests.iter().find(|r| r["command"] == "evaluate").unwrap()["id"].clone();
    assert!(requests.iter().any(|r| r["command"] == "cancel" && r["args"]["id"] == id), "no cancel for {id}: {requests:?}");
    let ok = h.call("ping", serde_json::json!({}), Duration::from_secs(30)).await.unwrap();
    assert_eq!(ok["pid"], pid, "the same child");
    assert_eq!(h.starts(), 1);
    h.shutdown().await;
}

#[tokio::test]
async fn a_harness_that_answers_nothing_after_a_timeout_is_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let h = fake(vec![]);
    let pid = h.call("ping", serde_json::json!({}), Duration::from_secs(30)).await.unwrap()["pid"].clone();
    let args = serde_json::to_value(with_candidate(dir.path(), "wedge")).unwrap();
    let t = Instant::now();
    let err = h.call("evaluate", args, Duration::from_millis(1500)).await.unwrap_err();
    assert!(matches!(err, HarnessError::Timeout { .. }), "{err}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let ok = h.call("ping", serde_json::json!({}), Duration::from_secs(30)).await.unwrap();
    assert_ne!(ok["pid"], pid, "a new child: the old one answered neither the cancel nor a ping");
    assert_eq!(h.starts(), 2);
    h.shutdown().await;
}

#[tokio::test]
async fn a_dropped_call_cancels_its_own_request_and_the_others_complete() {
    // A stage cancelled from the editor drops its request's future: that job must stop (a `cancel`
    // for its id), and a request of another stage on the same child must go on to its verdict.
    let dir = tempfile::tempdir().unwrap();
    let (h, log) = logging(dir.path(), &[("FAKE_HARNESS_DELAY", "2")]);
    let pid = h.call("ping", serde_json::json!({}), Duration::from_secs(30)).await.unwrap()["pid"].clone();
    let hang = serde_json::to_value(with_candidate(dir.path(), "hang")).unwrap();
    let keep = serde_json::to_value(other_candidate(dir.path(), "accepted speedup=1.5")).unwrap();
    let (dropped, kept) = tokio::join!(
        tokio::time::timeout(Duration::from_millis(800), h.call("evaluate", hang, Duration::from_secs(600))),
        h.call("evaluate", keep, Duration::from_secs(30)),
    );
    assert!(dropped.is_err(), "the hanging request answered");
    assert_eq!(kept.unwrap()["verdict"], "accepted", "the other request's verdict is untouched");
    let requests = logged(&log);
    let hung =
        requests.iter().find(|r| r["command"] == "evaluate" && r["args"]["candidate"].as_str().is_some_and(|c| !c.contains("other")));
    let id = hung.unwrap()["id"].clone();
    assert!(requests.iter().any(|r| r["command"] == "cancel" && r["args"]["id"] == id), "no cancel for {id}: {requests:?}");
    assert!(requests.iter().any(|r| r["busy"] == 2), "both jobs ran at once: {requests:?}");
    let ok = h.call("ping", serde_json::json!({}), Duration::from_secs(30)).await.unwrap();
    assert_eq!((ok["pid"].clone(), h.starts()), (pid, 1), "the same child serves on");
    h.shutdown().await;
}

#[tokio::test]
async fn jobs_go_at_once_up_to_the_pool_the_harness_reports_and_one_at_a_time_without_one() {
    let dir = tempfile::tempdir().unwrap();
    for (pool, most) in [(None, 1), (Some("2"), 2)] {
        let mut extra = vec![("FAKE_HARNESS_DELAY", "1")];
        extra.extend(pool.map(|p| ("FAKE_HARNESS_POOL", p)));
        let (stdio, log) = logging(dir.path(), &extra);
        let h = Harness::Stdio(stdio);
        let (a, b) = (with_candidate(dir.path(), "accepted speedup=1.5"), other_candidate(dir.path(), "slower speedup=0.5"));
        let (ea, eb) = tokio::join!(h.evaluate(&a), h.evaluate(&b));
        assert_eq!((ea.unwrap().verdict, eb.unwrap().verdict), (Verdict::Accepted, Verdict::Slower));
        let busy = logged(&log).iter().filter_map(|r| r["busy"].as_u64()).max();
        assert_eq!(busy, Some(most), "pool {pool:?}");
        assert_eq!(h.lanes(DeviceKind::Cuda).await, most as usize);
        h.shutdown().await;
        std::fs::remove_file(&log).unwrap();
    }
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

#[tokio::test]
async fn the_http_harness_reads_the_pool_from_ping_and_sends_that_many_jobs_at_once() {
    let body = r#"{"id": 1, "verdict": "correct", "device": {"kind": "cuda"}, "log": ""}"#;
    let slow = || Reply::After(Duration::from_millis(500), Box::new(Reply::Raw(200, body.into())));
    let dir = tempfile::tempdir().unwrap();
    for (pool, most) in [(None, 1), (Some(serde_json::json!({"kind": "cuda", "size": 2, "kinds": {"cuda": 2, "cpu": 1}})), 2)] {
        let stub = Stub::with_pool(vec![slow(), slow(), slow()], pool.clone()).await;
        let h = Harness::new(&HarnessSettings { url: Some(stub.url.clone()), ..Default::default() }, &fixtures()).unwrap();
        let args = with_candidate(dir.path(), "any");
        let (a, b, c) = tokio::join!(h.evaluate(&args), h.evaluate(&args), h.evaluate(&args));
        assert!([a, b, c].iter().all(|e| e.as_ref().is_ok_and(|e| e.verdict == Verdict::Correct)));
        assert_eq!(stub.most_at_once.load(std::sync::atomic::Ordering::SeqCst), most, "pool {pool:?}");
        assert_eq!(stub.pings.load(std::sync::atomic::Ordering::SeqCst), 1, "the pool is asked once");
        assert_eq!(h.lanes(DeviceKind::Cpu).await, 1);
    }
}
