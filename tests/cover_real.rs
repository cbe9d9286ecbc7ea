//! Stages against the REAL harness (`xeforge_harness serve`) on the CPU interpreter. Skipped, with the
//! reason printed, when no Python with torch and triton is found ($XEFORGE_PYTHON or ./.venv/bin/python).

#[path = "common/openai_stub.rs"]
mod openai_stub;

#[path = "common/pyenv.rs"]
mod pyenv;
use openai_stub::{Reply, Stub};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use xeforge::cover::{OutcomeStatus, StageRequest, StageRunner};
use xeforge::harness::{DeviceKind, Harness, HarnessSettings};
use xeforge::knowledge::Knowledge;
use xeforge::llm::{LlmClient, LlmSettings};

macro_rules! need_python {
    () => {
        match pyenv::harness() {
            Some(p) => p,
            None => {
                eprintln!(
                    "skipped: no Python with torch and triton ($XEFORGE_PYTHON or .venv/bin/python); run tests/harness/install_deps.sh"
                );
                return;
            }
        }
    };
}

fn setup() -> (tempfile::TempDir, StageRequest) {
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cover");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    for f in ["kernel.py", "kernel.yaml"] {
        std::fs::copy(fx.join(f), dir.path().join(f)).unwrap();
    }
    let text = std::fs::read_to_string(dir.path().join("kernel.py")).unwrap();
    let mut req = StageRequest::new("autotune", dir.path().join("kernel.py"), text);
    req.workspace = dir.path().to_path_buf();
    req.device = DeviceKind::Cpu;
    req.timeout = 300;
    (dir, req)
}

fn runner(py: PathBuf, dir: &Path, llm: Option<LlmClient>) -> StageRunner {
    let h = Harness::new(&HarnessSettings { python: Some(py), ..Default::default() }, dir).unwrap();
    StageRunner { kb: Arc::new(Knowledge::embedded().clone()), harness: Arc::new(h), llm: llm.map(Arc::new) }
}

#[tokio::test]
async fn autotune_on_the_interpreter_is_correct_only_and_says_so() {
    let py = need_python!();
    let (dir, req) = setup();
    let r = runner(py, dir.path(), None);
    let out = r.run(req, |_| {}, CancellationToken::new()).await.unwrap();
    r.harness.shutdown().await;
    assert_eq!(out.status, OutcomeStatus::CorrectOnly, "{} {:?}", out.summary, out.rounds);
    assert!(out.summary.contains("CPU interpreter") && out.summary.contains("no speedup claimed"), "{}", out.summary);
    assert!(out.new_text.unwrap().contains("@triton.autotune("));
}

#[tokio::test]
async fn an_llm_candidate_is_verified_by_the_real_harness_and_a_wrong_one_refined() {
    let py = need_python!();
    let (dir, mut req) = setup();
    req.stage = "memory-access".into();
    let orig = req.text.clone();
    let wrong = orig.replace("x * 2.0, mask=mask)", "x * 3.0, mask=mask)");
    let right = orig.replace("x * 2.0, mask=mask)", "x + x, mask=mask)");
    let stub = Stub::start(vec![Reply::Chat(format!("```python\n{wrong}```")), Reply::Chat(format!("```python\n{right}```"))]).await;
    let llm = LlmClient::new(LlmSettings { url: stub.url.clone(), model: "stub".into(), ..Default::default() }).unwrap();
    let r = runner(py, dir.path(), Some(llm));
    let out = r.run(req, |_| {}, CancellationToken::new()).await.unwrap();
    r.harness.shutdown().await;
    assert_eq!(out.status, OutcomeStatus::CorrectOnly, "{}", out.summary);
    assert_eq!(out.new_text.as_deref(), Some(right.as_str()));
    assert!(stub.prompts()[1].contains("verdict `incorrect`"), "{}", stub.prompts()[1]);
}

/// `sweep` through the client, against the real harness: one result per candidate, in order, each
/// judged on its own (a cheat between two legitimate rewrites changes neither of theirs).
#[tokio::test]
async fn the_real_harness_sweeps_candidates_in_order() {
    let py = need_python!();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/harness");
    let h = Harness::new(&HarnessSettings { python: Some(py), ..Default::default() }, &root).unwrap();
    let legit = root.join("adversarial/legit_add_block1024.py");
    let mut base = xeforge::harness::EvaluateArgs::new(root.join("problems/vector_add.py"), legit.clone());
    base.device = DeviceKind::Cpu;
    base.family = Some("ci".into());
    let args = xeforge::harness::SweepArgs {
        base,
        candidates: vec![legit.clone(), root.join("adversarial/add_zero_inputs.py"), legit],
        budget_s: None,
        min_candidates: 1,
    };
    let sweep = h.sweep(&args).await.unwrap().unwrap();
    h.shutdown().await;
    let verdicts: Vec<&str> = sweep.results.iter().map(|e| e.verdict.as_str()).collect();
    assert_eq!(verdicts, ["correct", "incorrect", "correct"], "{:?}", sweep.stopped);
    assert!(sweep.stopped.is_none() && sweep.setup_s.is_some_and(|s| s > 0.0));
    assert!(sweep.results.iter().all(|e| e.elapsed.as_ref().and_then(|x| x.candidate_s).is_some_and(|s| s > 0.0)));
}
