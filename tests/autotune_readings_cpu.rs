//! On the CPU interpreter, through the real harness: a grid read the right way is correct on the derived
//! check variants and a wrong reading (tile names swapped) is not, for kernels of the generalisation
//! suite; and with only the spec's square dims a swapped 1-D product grid goes unnoticed, which is why
//! the variants are derived. Skipped, with the reason printed, without a Python with torch and triton.

#[path = "common/pyenv.rs"]
mod pyenv;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use xeforge::cover::autotune::{self, derive, space::ConfigValue, space::TuneBackend, space::TuneConfig};
use xeforge::cover::outline::Outline;
use xeforge::cover::{OutcomeStatus, StageOutcome, StageRequest, StageRunner};
use xeforge::harness::{DeviceKind, EvaluateArgs, Harness, HarnessSettings, Verdict};
use xeforge::knowledge::Knowledge;

fn suite(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bench/stages/general").join(name)
}

/// A temporary project directory (the stage's workspace).
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    dir
}

/// The autotune stage on `file` of workspace `dir`, on the interpreter through the real harness.
async fn stage_on_cpu(py: PathBuf, dir: &Path, file: &str) -> StageOutcome {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut req = StageRequest::new("autotune", path, text);
    req.workspace = dir.to_path_buf();
    req.device = DeviceKind::Cpu;
    req.timeout = 300;
    let h = Harness::new(&HarnessSettings { python: Some(py), ..Default::default() }, dir).unwrap();
    let runner = StageRunner { kb: Arc::new(Knowledge::embedded().clone()), harness: Arc::new(h), llm: None };
    runner.run(req, |_| {}, CancellationToken::new()).await.unwrap()
}

/// The start config with the two grid tiles set to `a` and `b`.
fn probe(start: &TuneConfig, names: &[String], a: i64, b: i64) -> TuneConfig {
    let mut c = start.clone();
    for (n, v) in names.iter().zip([a, b]) {
        if let Some(slot) = c.kwargs.iter_mut().find(|(k, _)| k == n) {
            slot.1 = ConfigValue::Int(v);
        }
    }
    c
}

struct Outcome {
    right: Vec<Verdict>,
    wrong: Vec<Verdict>,
}

async fn check(h: &Harness, dir: &Path, kernel: &str, derived: bool) -> Outcome {
    let text = std::fs::read_to_string(suite(&format!("{kernel}.py"))).unwrap();
    let spec = std::fs::read_to_string(suite(&format!("{kernel}.yaml"))).unwrap();
    let o = Outline::build(&text);
    let plan = autotune::plan(&text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
    let right = plan.readings[0].clone();
    // The wrong reading: the first two distinct tile names of the grid swapped.
    let mut names: Vec<String> = right.clone();
    names.dedup();
    assert!(names.len() >= 2, "{kernel}: {right:?}");
    let wrong: Vec<String> = right
        .iter()
        .map(|n| {
            if *n == names[0] {
                names[1].clone()
            } else if *n == names[1] {
                names[0].clone()
            } else {
                n.clone()
            }
        })
        .collect();
    let original = dir.join(format!("{kernel}.py"));
    std::fs::write(&original, &text).unwrap();
    let (spec_path, family) = if derived {
        let (s, _) = derive::check_spec(&spec, "ci", derive::Strategy::Edges).unwrap();
        let p = dir.join(format!("{kernel}.check.yaml"));
        std::fs::write(&p, s).unwrap();
        (p, derive::CHECK_FAMILY.to_string())
    } else {
        let p = dir.join(format!("{kernel}.yaml"));
        std::fs::write(&p, &spec).unwrap();
        (p, "ci".to_string())
    };
    let mut out = Outcome { right: Vec::new(), wrong: Vec::new() };
    for (a, b) in [(64, 32), (32, 64)] {
        let cfg = probe(&plan.input.start, &names, a, b);
        for (reading, verdicts) in [(&right, &mut out.right), (&wrong, &mut out.wrong)] {
            let cand = dir.join(format!("{kernel}_{a}_{b}_{}.py", verdicts.len()));
            std::fs::write(&cand, plan.candidate(&text, std::slice::from_ref(&cfg), reading).unwrap()).unwrap();
            let mut args = EvaluateArgs::new(original.clone(), cand);
            args.spec = Some(spec_path.clone());
            args.family = Some(family.clone());
            args.device = DeviceKind::Cpu;
            args.no_timing = true;
            args.timeout = 300;
            let e = h.evaluate(&args).await.unwrap();
            assert_ne!(e.verdict, Verdict::Error, "{kernel}: {}", e.failure_text(600));
            verdicts.push(e.verdict);
        }
    }
    out
}

#[tokio::test]
async fn a_wrong_grid_reading_fails_on_the_derived_variants() {
    let Some(py) = pyenv::with("torch, triton, yaml") else {
        eprintln!("skipped: no Python with torch, triton and PyYAML ($XEFORGE_PYTHON or .venv/bin/python)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let h = Harness::new(&HarnessSettings { python: Some(py), ..Default::default() }, dir.path()).unwrap();
    // A 1-D product grid, a 2-D grid, a local grid function, a helper returning the grid.
    for kernel in ["gemm_grouped_fp16", "gemm_bf16_2d", "transpose", "gemm_nt_helper"] {
        let o = check(&h, dir.path(), kernel, true).await;
        assert!(o.right.iter().all(|v| v.is_correct()), "{kernel}: the right reading: {:?}", o.right);
        assert!(o.wrong.contains(&Verdict::Incorrect), "{kernel}: a wrong reading passed: {:?}", o.wrong);
    }
    // With the spec's square dims alone, swapping the factors of `cdiv(M, BM) * cdiv(N, BN)` launches the
    // same number of programs: nothing fails, so the stage must not rely on those dims.
    let o = check(&h, dir.path(), "gemm_grouped_fp16", false).await;
    assert!(o.wrong.iter().all(|v| v.is_correct()), "{:?}", o.wrong);
}

#[tokio::test]
async fn the_stage_on_a_suite_kernel_checks_the_derived_variants() {
    let Some(py) = pyenv::with("torch, triton, yaml") else {
        eprintln!("skipped: no Python with torch, triton and PyYAML ($XEFORGE_PYTHON or .venv/bin/python)");
        return;
    };
    let dir = workspace();
    for f in ["gemm_grouped_fp16.py", "gemm_grouped_fp16.yaml"] {
        std::fs::copy(suite(f), dir.path().join(f)).unwrap();
    }
    let out = stage_on_cpu(py, dir.path(), "gemm_grouped_fp16.py").await;
    assert_eq!(out.status, OutcomeStatus::CorrectOnly, "{}", out.summary);
    let new = out.new_text.unwrap();
    assert!(new.contains("grid = lambda META: (triton.cdiv(M, META['BLOCK_SIZE_M']) * triton.cdiv(N, META['BLOCK_SIZE_N']),)"), "{new}");
    let notes = &out.rounds[0].notes;
    assert!(notes.iter().any(|n| n.contains("M / 32 on axis 0 → BLOCK_SIZE_M (the kernel bounds M with it)")), "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("checked on xeforge-check") && n.contains("M=65 N=129 K=193")), "{notes:?}");
    assert_eq!(out.rounds[0].variants.len(), 2, "ci[0] and the derived variant");
}

/// The interpreter cannot time configs, so a kernel that already has an autotune list of its own keeps
/// it whole: the stage checks it as it is and proposes no edit (before, the list became its first config).
#[tokio::test]
async fn on_the_interpreter_a_kernel_with_its_own_autotune_list_keeps_it_whole() {
    let Some(py) = pyenv::with("torch, triton") else {
        eprintln!("skipped: no Python with torch and triton ($XEFORGE_PYTHON or .venv/bin/python)");
        return;
    };
    let dir = workspace();
    let text = r#"import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=4), triton.Config({"BLOCK": 1024}, num_warps=8)], key=["n"])
@triton.jit
def square_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, x * x, mask=m)


# xeforge: dims n=3000
def square(x):
    y = torch.empty_like(x)
    n = x.numel()
    square_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    return y
"#;
    std::fs::write(dir.path().join("square.py"), text).unwrap();
    let out = stage_on_cpu(py, dir.path(), "square.py").await;
    assert_eq!(out.status, OutcomeStatus::CorrectOnly, "{}", out.summary);
    assert!(out.new_text.is_none(), "{:?}", out.new_text);
    let details: Vec<&str> = out.rounds.iter().map(|r| r.detail.as_str()).collect();
    assert!(details.iter().any(|d| d.starts_with("the kernel's own autotune list, unchanged")), "{details:?}");
}
