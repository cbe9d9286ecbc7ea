//! Stages on the harness's pool: requests go at once up to the lanes `ping` reports, and the results
//! are the same as one at a time. First against the scripted `serve` (tests/fixtures/cover/harness/
//! fake_harness: a speedup per config, a pool of N cuda lanes), then against the real harness on the
//! CPU interpreter with two lanes (`serve --cpu-workers 2`); those are skipped, saying why, without a
//! Python with torch and triton ($XEFORGE_PYTHON or ./.venv/bin/python).

#[path = "common/pyenv.rs"]
mod pyenv;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use xeforge::cover::{OutcomeStatus, StageOutcome, StageRequest, StageRunner};
use xeforge::harness::{DeviceKind, EvaluateArgs, Harness, HarnessSettings, Verdict};
use xeforge::knowledge::Knowledge;

fn cover_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cover")
}

fn runner(harness: Harness) -> StageRunner {
    StageRunner { kb: Arc::new(Knowledge::embedded().clone()), harness: Arc::new(harness), llm: None }
}

/// A workspace holding `tests/fixtures/cover/kernel.py` and its spec.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    for f in ["kernel.py", "kernel.yaml"] {
        std::fs::copy(cover_fixtures().join(f), dir.path().join(f)).unwrap();
    }
    dir
}

/// What a run says about each config it judged: (round, config, verdict, speedup).
fn judged(o: &StageOutcome) -> Vec<(u32, String, Option<Verdict>, Option<f64>)> {
    o.rounds.iter().map(|r| (r.round, r.detail.split(" (").next().unwrap_or_default().to_string(), r.verdict, r.speedup)).collect()
}

fn logged(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log).unwrap_or_default().lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// The autotune stage on the scripted harness with `pool` cuda lanes, on `file` of `dir`: its
/// outcome and the harness's log.
async fn autotune_on_fake(dir: &Path, file: &str, pool: usize, extra: &[(&str, &str)]) -> (StageOutcome, Vec<serde_json::Value>) {
    autotune_on_fake_with(dir, file, pool, extra, 8).await
}

/// [`autotune_on_fake`] with `max_configs` configs in the space (the start config among them).
async fn autotune_on_fake_with(
    dir: &Path,
    file: &str,
    pool: usize,
    extra: &[(&str, &str)],
    max_configs: usize,
) -> (StageOutcome, Vec<serde_json::Value>) {
    let log = dir.join(format!("harness-{pool}-{max_configs}.log"));
    let mut env = vec![
        ("FAKE_HARNESS_LOG".to_string(), log.display().to_string()),
        ("FAKE_HARNESS_SPEEDUP".into(), "1".into()),
        ("FAKE_HARNESS_POOL".into(), pool.to_string()),
        ("FAKE_HARNESS_DELAY".into(), "0.3".into()),
    ];
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let settings = HarnessSettings {
        python: Some("python3".into()),
        harness_path: Some(cover_fixtures().join("harness")),
        module: Some("fake_harness".into()),
        env,
        ..Default::default()
    };
    let r = runner(Harness::new(&settings, dir).unwrap());
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    let mut req = StageRequest::new("autotune", dir.join(file), text);
    req.workspace = dir.to_path_buf();
    req.device = DeviceKind::Cuda;
    req.max_configs = max_configs;
    req.budget_s = 600; // every config judged: the two runs judge the same ones
    let out = r.run(req, |_| {}, CancellationToken::new()).await.unwrap();
    r.harness.shutdown().await;
    (out, logged(&log))
}

#[tokio::test]
async fn autotune_with_two_lanes_sends_two_batches_at_once_and_chooses_what_one_lane_chooses() {
    let dir = workspace();
    let (one, log1) = autotune_on_fake(dir.path(), "kernel.py", 1, &[]).await;
    let (two, log2) = autotune_on_fake(dir.path(), "kernel.py", 2, &[]).await;
    let sweeps = |log: &[serde_json::Value]| -> Vec<usize> {
        log.iter().filter(|r| r["command"] == "sweep").map(|r| r["args"]["candidates"].as_array().map_or(0, Vec::len)).collect()
    };
    let busy = |log: &[serde_json::Value]| log.iter().filter_map(|r| r["busy"].as_u64()).max();
    // One lane: today's requests, one sweep of the seven configs after the start, one at a time.
    assert_eq!(sweeps(&log1), [7], "{log1:?}");
    assert_eq!(busy(&log1), Some(1));
    // Two lanes: the seven split into two batches that ran at once.
    assert_eq!(sweeps(&log2), [4, 3], "{log2:?}");
    assert_eq!(busy(&log2), Some(2));
    // The same configs judged, in the same rounds, with the same figures, and the same choice.
    assert_eq!(judged(&one), judged(&two));
    assert_eq!((one.status, two.status), (OutcomeStatus::Accepted, OutcomeStatus::Accepted), "{}", one.summary);
    assert_eq!(one.new_text, two.new_text);
    assert_eq!(one.evaluation.and_then(|e| e.speedup()), two.evaluation.and_then(|e| e.speedup()));
}

#[tokio::test]
async fn a_slow_batch_holds_its_own_lane_only_and_answers_are_read_in_the_order_sent() {
    let dir = workspace();
    let (one, log1) = autotune_on_fake_with(dir.path(), "kernel.py", 1, &[], 20).await;
    // The first batch holds its lane until two other batches have ended (20 s at most): a sweep that
    // waited for every batch of a wave before sending the next would never let it go.
    let (two, log2) = autotune_on_fake_with(dir.path(), "kernel.py", 2, &[("FAKE_HARNESS_HOLD_FIRST", "2")], 20).await;
    let sweeps = |log: &[serde_json::Value]| -> Vec<(serde_json::Value, usize)> {
        log.iter()
            .filter(|r| r["command"] == "sweep")
            .map(|r| (r["id"].clone(), r["args"]["candidates"].as_array().map_or(0, Vec::len)))
            .collect()
    };
    let sizes = |log: &[serde_json::Value]| sweeps(log).into_iter().map(|s| s.1).collect::<Vec<_>>();
    assert_eq!(sizes(&log1), [8, 8, 3], "{log1:?}");
    // Two lanes: two batches of 8 at once, then what is left split as lanes free up.
    assert_eq!(sizes(&log2), [8, 8, 2, 1], "{log2:?}");
    let s = sweeps(&log2);
    let at = |what: &str, id: &serde_json::Value| {
        log2.iter()
            .position(|r| if what == "sent" { r["command"] == "sweep" && &r["id"] == id } else { &r["ended"] == id })
            .unwrap_or_else(|| panic!("no {what} {id} in {log2:?}"))
    };
    let first_ends = at("ended", &s[0].0);
    // While the first batch held its lane, the other lane judged its own batch, was sent the next one
    // at once and judged that too.
    assert!(at("ended", &s[1].0) < at("sent", &s[2].0), "{log2:?}");
    assert!(at("sent", &s[2].0) < first_ends && at("ended", &s[2].0) < first_ends, "the next batch waited for the slow one: {log2:?}");
    assert_eq!(log2.iter().find(|r| r.get("held").is_some()).map(|r| r["released"].clone()), Some(serde_json::json!(true)), "{log2:?}");
    let busy = log2.iter().filter_map(|r| r["busy"].as_u64()).max();
    assert_eq!(busy, Some(2), "never more jobs at once than lanes");
    // Read in the order sent: the same rounds, configs, verdicts and figures as one lane, the same choice.
    assert_eq!(judged(&one), judged(&two));
    assert_eq!((one.status, two.status), (OutcomeStatus::Accepted, OutcomeStatus::Accepted), "{}", one.summary);
    assert_eq!(one.new_text, two.new_text);
}

#[tokio::test]
async fn a_batch_that_sends_the_sweep_back_cancels_those_sent_after_it_and_they_are_judged_again() {
    let dir = workspace();
    // The judge of the first batch dies on its third config: the sweep goes on after that one, and
    // the second batch (sent at once, on the other lane) is cancelled and sent again from there.
    let dies = [("FAKE_HARNESS_DIE", "BLOCK_SIZE=512, num_warps=4,")];
    let (one, log1) = autotune_on_fake_with(dir.path(), "kernel.py", 1, &dies, 20).await;
    let (two, log2) = autotune_on_fake_with(dir.path(), "kernel.py", 2, &dies, 20).await;
    let sweeps = |log: &[serde_json::Value]| -> Vec<(serde_json::Value, usize)> {
        log.iter()
            .filter(|r| r["command"] == "sweep")
            .map(|r| (r["id"].clone(), r["args"]["candidates"].as_array().map_or(0, Vec::len)))
            .collect()
    };
    let sizes = |log: &[serde_json::Value]| sweeps(log).into_iter().map(|s| s.1).collect::<Vec<_>>();
    assert_eq!(sizes(&log1), [8, 8, 8], "{log1:?}");
    assert_eq!(sizes(&log2), [8, 8, 8, 8], "{log2:?}");
    let second = sweeps(&log2)[1].0.clone();
    assert!(log2.iter().any(|r| r["command"] == "cancel" && r["args"]["id"] == second), "the batch sent after was not cancelled: {log2:?}");
    let blamed: Vec<_> = judged(&two).into_iter().filter(|j| j.2 == Some(Verdict::Crashed)).collect();
    assert_eq!(blamed.len(), 1, "{blamed:?}");
    assert!(blamed[0].1.starts_with("BLOCK_SIZE=512 w4"), "{blamed:?}");
    // Every config judged once, in the rounds one lane gives them, and the same choice.
    assert_eq!(judged(&one), judged(&two));
    assert_eq!(one.new_text, two.new_text);
}

/// A kernel whose launch leaves open which tile its grid counts (both tiles lie along axis 0, and
/// nothing in the kernel names M with either): two grid readings, BLOCK_M first.
const OPEN_READING: &str = "import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(a_ptr, c_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):\n    pid = tl.program_id(0)\n    pid_m = pid // 7\n    pid_n = pid % 7\n    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n    tl.store(c_ptr + offs_m[:, None] * 7 + offs_n[None, :], tl.load(a_ptr + offs_m[:, None]))\n\n\nclass Model(torch.nn.Module):\n    def forward(self, a, c):\n        P = a.numel()\n        k[(triton.cdiv(P, 32),)](a, c, P, P, BLOCK_M=32, BLOCK_N=32)\n        return c\n";

#[tokio::test]
async fn a_readings_probes_go_at_once_and_the_same_reading_is_chosen() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    std::fs::write(dir.path().join("open.py"), OPEN_READING).unwrap();
    std::fs::write(
        dir.path().join("open.yaml"),
        "inputs:\n  a: {shape: [P], dtype: float32}\n  c: {shape: [P, 7], dtype: float32}\nci:\n  - params: [a, c]\n    dims: {P: 64}\n",
    )
    .unwrap();
    // The scripted harness fails every candidate whose grid counts BLOCK_M: the second reading is right.
    // (In a list, its grid reads `META['BLOCK_M']`; with one config in the launch, its divisor is BLOCK_M's value.)
    let wrong = [("FAKE_HARNESS_WRONG", r"META\['BLOCK_M'\]|cdiv\(P, (\d+)\),\)\]\(a, c, P, P, BLOCK_M=\1\b")];
    let (one, log1) = autotune_on_fake(dir.path(), "open.py", 1, &wrong).await;
    let (two, log2) = autotune_on_fake(dir.path(), "open.py", 2, &wrong).await;
    let probes = |o: &StageOutcome| -> Vec<(String, Option<Verdict>)> {
        o.rounds.iter().filter(|r| r.detail.starts_with("grid reading")).map(|r| (r.detail.clone(), r.verdict)).collect()
    };
    let (p1, p2) = (probes(&one), probes(&two));
    // One lane: the first reading's first probe fails, so its second is never judged; then both of the second's.
    let correct = |p: &[(String, Option<Verdict>)]| p.iter().map(|x| x.1.is_some_and(Verdict::is_correct)).collect::<Vec<_>>();
    assert_eq!(correct(&p1), [false, true, true], "{p1:?}");
    // Two lanes: each reading's two probes at once; the first one's second is recorded and decides nothing.
    assert_eq!(correct(&p2), [false, false, true, true], "{p2:?}");
    assert!(p2[0].0.starts_with("grid reading 1 of 2") && p2[1].0.starts_with("grid reading 1 of 2"), "{p2:?}");
    assert_eq!(
        two.rounds.iter().find(|r| r.detail == p2[1].0).map(|r| r.notes.iter().any(|n| n.contains("decided this reading"))),
        Some(true)
    );
    let busy = |log: &[serde_json::Value]| log.iter().filter_map(|r| r["busy"].as_u64()).max();
    assert_eq!((busy(&log1), busy(&log2)), (Some(1), Some(2)));
    // The same reading, and the same configs chosen with it.
    // (one config in the launch: the grid divides by BLOCK_N's value, not BLOCK_M's)
    let t = one.new_text.clone().unwrap_or_default();
    let value = |name: &str| t.split(&format!("{name}=")).nth(1).and_then(|v| v.split(',').next()).map(str::to_string);
    let (m, n) = (value("BLOCK_M").expect("BLOCK_M"), value("BLOCK_N").expect("BLOCK_N"));
    assert!(m != n && t.contains(&format!("k[(triton.cdiv(P, {n}),)]")), "{t}");
    assert_eq!(one.new_text, two.new_text);
    assert_eq!(one.status, two.status);
}

// --- the real harness on the interpreter ---------------------------------------------------------

macro_rules! need_python {
    () => {
        match pyenv::with("torch, triton, yaml") {
            Some(p) => p,
            None => {
                eprintln!("skipped: no Python with torch, triton and PyYAML ($XEFORGE_PYTHON or .venv/bin/python)");
                return;
            }
        }
    };
}

fn real(py: &Path, dir: &Path, cpu_workers: u32) -> Harness {
    Harness::new(&HarnessSettings { python: Some(py.to_path_buf()), cpu_workers: Some(cpu_workers), ..Default::default() }, dir).unwrap()
}

fn harness_case(candidate: &str) -> EvaluateArgs {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/harness");
    let mut args = EvaluateArgs::new(root.join("problems/vector_add.py"), root.join(candidate));
    args.device = DeviceKind::Cpu;
    args.family = Some("ci".into());
    args
}

#[tokio::test]
async fn two_evaluations_share_one_serve_and_a_cancelled_one_leaves_the_other() {
    let py = need_python!();
    let dir = tempfile::tempdir().unwrap();
    let h = real(&py, dir.path(), 2);
    assert_eq!(h.lanes(DeviceKind::Cpu).await, 2, "the pool of `serve --cpu-workers 2`");
    // Both at once through one child: both verdicts come back.
    let (sleepy, legit) = (harness_case("fixtures/add_sleepy.py"), harness_case("adversarial/legit_add_block1024.py"));
    let (a, b) = tokio::join!(h.evaluate(&sleepy), h.evaluate(&legit));
    assert_eq!((a.unwrap().verdict, b.unwrap().verdict), (Verdict::Correct, Verdict::Correct));
    // One dropped mid-job (a stage cancelled from the editor): the other is judged as usual, by the same child.
    let (dropped, kept) = tokio::join!(tokio::time::timeout(Duration::from_secs(3), h.evaluate(&sleepy)), h.evaluate(&sleepy));
    assert!(dropped.is_err(), "the sleepy job cannot be done in 3 s");
    assert_eq!(kept.unwrap().verdict, Verdict::Correct);
    let Harness::Stdio(stdio) = &h else { panic!("a local harness") };
    assert_eq!(stdio.starts(), 1, "nothing was restarted");
    h.shutdown().await;
}

/// The autotune stage on the interpreter, on the small scale kernel, with `cpu_workers` lanes.
async fn autotune_on_cpu(py: &Path, cpu_workers: u32) -> StageOutcome {
    let dir = workspace();
    let text = std::fs::read_to_string(dir.path().join("kernel.py")).unwrap();
    let mut req = StageRequest::new("autotune", dir.path().join("kernel.py"), text);
    req.workspace = dir.path().to_path_buf();
    req.device = DeviceKind::Cpu;
    req.timeout = 300;
    let r = runner(real(py, dir.path(), cpu_workers));
    assert_eq!(r.harness.lanes(DeviceKind::Cpu).await, cpu_workers as usize, "the pool `serve` reports");
    let out = r.run(req, |_| {}, CancellationToken::new()).await.unwrap();
    r.harness.shutdown().await;
    out
}

#[tokio::test]
async fn autotune_on_two_interpreter_lanes_chooses_what_one_lane_chooses() {
    let py = need_python!();
    let one = autotune_on_cpu(&py, 1).await;
    let two = autotune_on_cpu(&py, 2).await;
    assert_eq!((one.status, two.status), (OutcomeStatus::CorrectOnly, OutcomeStatus::CorrectOnly), "{} / {}", one.summary, two.summary);
    assert!(one.new_text.as_deref().is_some_and(|t| t.contains("@triton.autotune(")), "{:?}", one.new_text);
    assert_eq!(one.new_text, two.new_text, "the same config");
    assert_eq!(judged(&one), judged(&two), "the same evaluations and verdicts");
}

#[test]
fn optimize_dir_runs_files_at_once_and_reports_them_in_path_order() {
    let Some(py) = pyenv::with("torch, triton, yaml") else {
        eprintln!("skipped: no Python with torch, triton and PyYAML ($XEFORGE_PYTHON or .venv/bin/python)");
        return;
    };
    let dir = workspace();
    let kernels = dir.path().join("kernels");
    std::fs::create_dir(&kernels).unwrap();
    let text = std::fs::read_to_string(cover_fixtures().join("kernel.py")).unwrap();
    // `a.py` takes longest (it sleeps in every call), so it finishes last, and is still reported first.
    let slow = text
        .replace("import torch\n", "import time\n\nimport torch\n")
        .replace("        out = torch.empty_like(x)", "        time.sleep(0.4)\n        out = torch.empty_like(x)");
    for (name, body) in [("a.py", slow.as_str()), ("b.py", text.as_str())] {
        std::fs::write(kernels.join(name), body).unwrap();
        std::fs::copy(cover_fixtures().join("kernel.yaml"), kernels.join(name.replace(".py", ".yaml"))).unwrap();
    }
    std::fs::write(kernels.join("notes.py"), "print('not a kernel')\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xeforge"))
        .args(["optimize", "--stages", "autotune", "--device", "cpu", "--cpu-workers", "2", "--python"])
        .arg(&py)
        .arg(&kernels)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let at = |needle: &str| stdout.find(needle).unwrap_or_else(|| panic!("no `{needle}` in:\n{stdout}"));
    let (a, b) = (at("a.py: stages: autotune"), at("b.py: stages: autotune"));
    assert!(a < b, "path order: {stdout}");
    let summary = "autotune: correct on the CPU interpreter";
    assert_eq!(stdout.matches(summary).count(), 2, "{stdout}");
    assert!(a < at(summary) && at(summary) < b, "a's report is whole before b's starts: {stdout}");
    assert!(!stdout.contains("notes.py"), "a file without a kernel is not run: {stdout}");
    // They ran at once: the quick file's verdict came (on stderr, as it happened) before the slow one's,
    // though the slow one is first in path order and started first.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let verdict = |f: &str| stderr.find(&format!("{f}: round 1: correct")).unwrap_or_else(|| panic!("no verdict of {f} in:\n{stderr}"));
    assert!(verdict("b.py") < verdict("a.py"), "b waited for a: they ran one after the other:\n{stderr}");
}
