//! The LLM stage loop end to end: a scripted OpenAI-compatible server on loopback as the model, and a
//! scripted `serve` process (tests/fixtures/cover/harness/fake_harness) as the harness, whose verdict
//! each candidate names in a `# fake-verdict:` comment. The real-harness variant is in cover_real.rs.

#[path = "common/openai_stub.rs"]
mod openai_stub;

use openai_stub::{Reply, Stub};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use xeforge::cover::{OutcomeStatus, StageError, StageRequest, StageRunner};
use xeforge::harness::{DeviceKind, Harness, HarnessSettings};
use xeforge::knowledge::Knowledge;
use xeforge::llm::{LlmClient, LlmError, LlmSettings};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cover")
}

fn original() -> String {
    std::fs::read_to_string(fixtures().join("kernel.py")).unwrap()
}

/// The original with the kernel's body changed and a verdict marker for the fake harness.
fn candidate(verdict: &str) -> String {
    original().replace("x * 2.0, mask=mask)", &format!("x + x, mask=mask)  # fake-verdict: {verdict}"))
}

fn fenced(code: &str) -> String {
    format!("Here is the optimised file.\n\n```python\n{code}```\n")
}

struct Setup {
    dir: tempfile::TempDir,
    file: PathBuf,
    log: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    let file = dir.path().join("kernel.py");
    std::fs::write(&file, original()).unwrap();
    let log = dir.path().join("harness.log");
    Setup { dir, file, log }
}

fn runner(s: &Setup, llm_url: &str, tweak: impl FnOnce(&mut LlmSettings)) -> StageRunner {
    let hs = HarnessSettings {
        env: vec![("FAKE_HARNESS_LOG".into(), s.log.display().to_string())],
        python: Some("python3".into()),
        harness_path: Some(fixtures().join("harness")),
        module: Some("fake_harness".into()),
        ..Default::default()
    };
    let harness = Harness::new(&hs, s.dir.path()).unwrap();
    let mut ls =
        LlmSettings { url: format!("{llm_url}/v1"), model: "stub-model".into(), backoff: Duration::from_millis(10), ..Default::default() };
    tweak(&mut ls);
    StageRunner {
        kb: Arc::new(Knowledge::embedded().clone()),
        harness: Arc::new(harness),
        llm: Some(Arc::new(LlmClient::new(ls).unwrap())),
    }
}

fn request(s: &Setup, stage: &str, rounds: u32) -> StageRequest {
    let mut r = StageRequest::new(stage, s.file.clone(), original());
    r.workspace = s.dir.path().to_path_buf();
    r.device = DeviceKind::Cuda;
    r.rounds = rounds;
    r
}

fn evaluations_logged(s: &Setup) -> usize {
    std::fs::read_to_string(&s.log).unwrap_or_default().lines().filter(|l| l.contains("\"evaluate\"")).count()
}

async fn run(_s: &Setup, r: &StageRunner, req: StageRequest) -> Result<xeforge::cover::StageOutcome, StageError> {
    let out = r.run(req, |_| {}, CancellationToken::new()).await;
    r.harness.shutdown().await;
    out
}

#[tokio::test]
async fn right_first_time_is_accepted_with_evidence() {
    let s = setup();
    let good = candidate("accepted speedup=1.5");
    let stub = Stub::start(vec![Reply::Chat(fenced(&good))]).await;
    let r = runner(&s, &stub.url, |_| {});
    let out = run(&s, &r, request(&s, "memory-access", 5)).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted);
    assert_eq!(out.new_text.as_deref(), Some(good.as_str()));
    assert_eq!(out.rounds.len(), 1);
    assert!(out.summary.starts_with("memory-access: verified 1.50× faster [1.47, 1.53] over 100 runs on Fake GPU"), "{}", out.summary);
    let record: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.record_path.unwrap()).unwrap()).unwrap();
    assert_eq!(record["outcome"], "accepted");
    assert_eq!(record["rounds"][0]["verdict"], "accepted");
    assert_eq!(record["kernel"], "scale_kernel");
    assert_ne!(record["kernel_sha256_before"], record["kernel_sha256_after"]);
    // The prompt carried the stage's instructions and the file.
    let prompt = &stub.prompts()[0];
    assert!(prompt.contains("## Stage:") && prompt.contains("def scale_kernel"), "{prompt}");
    // The runner never writes the user's file.
    assert_eq!(std::fs::read_to_string(&s.file).unwrap(), original());
}

#[tokio::test]
async fn wrong_then_fixed_feeds_the_harness_error_back() {
    let s = setup();
    let stub = Stub::start(vec![
        Reply::Chat(fenced(&candidate("incorrect message=max_abs 3.2 on ci[0] seed 1"))),
        Reply::Chat(fenced(&candidate("accepted speedup=1.2"))),
    ])
    .await;
    let r = runner(&s, &stub.url, |_| {});
    let out = run(&s, &r, request(&s, "memory-access", 5)).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted);
    assert_eq!(out.rounds.len(), 2);
    let prompts = stub.prompts();
    assert!(prompts[1].contains("verdict `incorrect`") && prompts[1].contains("max_abs 3.2 on ci[0] seed 1"), "{}", prompts[1]);
}

#[tokio::test]
async fn reflection_and_constructor_edits_are_rejected_before_the_harness() {
    let s = setup();
    let reflect = candidate("accepted speedup=9")
        .replace("        out = torch.empty_like(x)\n", "        _nn = __import__('torch').nn\n        out = torch.empty_like(x)\n");
    let ctor = candidate("accepted speedup=9").replace("def __init__(self):", "def __init__(self, scale=2.0):");
    let stub = Stub::start(vec![Reply::Chat(fenced(&reflect)), Reply::Chat(fenced(&ctor))]).await;
    let r = runner(&s, &stub.url, |_| {});
    let out = run(&s, &r, request(&s, "fusion", 2)).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::NoImprovement);
    assert!(out.new_text.is_none());
    assert_eq!(out.rounds[0].rejected.as_ref().unwrap().rule, "XF901 obfuscated-call");
    assert!(out.rounds[1].rejected.as_ref().unwrap().message.contains("Model.__init__"));
    assert_eq!(evaluations_logged(&s), 0, "no candidate reached the harness");
    assert!(stub.prompts()[1].contains("The guard rejected this candidate"));
    assert_eq!(std::fs::read_to_string(&s.file).unwrap(), original());
}

#[tokio::test]
async fn a_slower_candidate_is_kept_out() {
    let s = setup();
    let stub = Stub::start(vec![Reply::Chat(fenced(&candidate("slower speedup=0.8")))]).await;
    let r = runner(&s, &stub.url, |_| {});
    let out = run(&s, &r, request(&s, "memory-access", 1)).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::NoImprovement);
    assert!(out.new_text.is_none());
    assert!(out.summary.contains("no verified improvement"), "{}", out.summary);
}

#[tokio::test]
async fn a_reply_without_code_is_a_refinement_round() {
    let s = setup();
    let stub =
        Stub::start(vec![Reply::Chat("I would use a larger block.".into()), Reply::Chat(fenced(&candidate("accepted speedup=1.3")))]).await;
    let r = runner(&s, &stub.url, |_| {});
    let out = run(&s, &r, request(&s, "memory-access", 3)).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted);
    assert!(out.rounds[0].generator_error.as_deref().unwrap().contains("no ```python code block"));
    assert!(stub.prompts()[1].contains("no ```python code block"));
}

#[tokio::test]
async fn server_errors_are_retried_then_reported() {
    let s = setup();
    let err = || Reply::Raw(500, "{\"error\": {\"message\": \"overloaded\"}}".into());
    let stub = Stub::start(vec![err(), err(), err()]).await;
    let r = runner(&s, &stub.url, |l| l.retries = 2);
    let e = run(&s, &r, request(&s, "memory-access", 2)).await.unwrap_err();
    assert!(matches!(e, StageError::Llm(LlmError::Status { status: 500, .. })), "{e}");
    assert_eq!(stub.requests.lock().unwrap().len(), 3, "first try + 2 retries");
}

#[tokio::test]
async fn a_500_then_success_recovers() {
    let s = setup();
    let stub = Stub::start(vec![Reply::Raw(503, "busy".into()), Reply::Chat(fenced(&candidate("accepted speedup=1.1")))]).await;
    let r = runner(&s, &stub.url, |_| {});
    let out = run(&s, &r, request(&s, "memory-access", 1)).await.unwrap();
    assert_eq!(out.status, OutcomeStatus::Accepted);
}

#[tokio::test]
async fn an_endpoint_that_does_not_answer_times_out() {
    let s = setup();
    let stub = Stub::start(vec![Reply::After(Duration::from_secs(5), Box::new(Reply::Chat("late".into())))]).await;
    let r = runner(&s, &stub.url, |l| {
        l.timeout = Duration::from_millis(300);
        l.retries = 0;
    });
    let t = Instant::now();
    let e = run(&s, &r, request(&s, "memory-access", 1)).await.unwrap_err();
    assert!(matches!(e, StageError::Llm(LlmError::Timeout(_))), "{e}");
    assert!(t.elapsed() < Duration::from_secs(4));
}

#[tokio::test]
async fn cancellation_ends_the_run_promptly() {
    let s = setup();
    let stub = Stub::start(vec![Reply::After(Duration::from_secs(10), Box::new(Reply::Chat("late".into())))]).await;
    let r = runner(&s, &stub.url, |_| {});
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        c2.cancel();
    });
    let t = Instant::now();
    let e = r.run(request(&s, "memory-access", 3), |_| {}, cancel).await.unwrap_err();
    assert!(matches!(e, StageError::Cancelled), "{e}");
    assert!(t.elapsed() < Duration::from_secs(3));
    assert_eq!(std::fs::read_to_string(&s.file).unwrap(), original());
}

#[tokio::test]
async fn the_outcome_rebases_onto_a_document_edited_during_the_run() {
    let s = setup();
    let good = candidate("accepted speedup=1.5");
    let stub = Stub::start(vec![Reply::Chat(fenced(&good))]).await;
    let r = runner(&s, &stub.url, |_| {});
    let out = run(&s, &r, request(&s, "memory-access", 1)).await.unwrap();
    // Meanwhile the user added a comment above the kernel and edited the Model.
    let edited = format!("# tuned for B70\n{}", original().replace("return out\n", "return out  # result\n"));
    assert_ne!(xeforge::cover::evidence::sha256(&edited), out.original_sha256, "a plain apply must be refused");
    let shift = "# tuned for B70\n".len();
    let before = out.kernel_range_before;
    let new_text = out.new_text.unwrap();
    let after = out.kernel_range_after.unwrap();
    let rebased = format!("{}{}{}", &edited[..before.start + shift], &new_text[after.start..after.end], &edited[before.end + shift..]);
    assert!(rebased.starts_with("# tuned for B70\n"));
    assert!(rebased.contains("x + x, mask=mask)"));
    assert!(rebased.contains("return out  # result\n"));
}
