//! `xeforge stage` as a command: what it prints and how it exits when the stage cannot run.

#[path = "common/pyenv.rs"]
mod pyenv;
use serde_json::Value;
use std::process::Command;

/// `--format json` answers on stdout whatever goes wrong, with a stable name for the failure; the
/// message stays on stderr too, and the exit status says it failed.
#[test]
fn a_stage_that_cannot_start_still_answers_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.py");
    std::fs::write(&file, "import triton\n\n@triton.jit\ndef k(x_ptr:\n    pass\n").unwrap();
    let run = |stage: &str| {
        Command::new(env!("CARGO_BIN_EXE_xeforge"))
            .args(["stage", stage])
            .arg(&file)
            .args(["--device", "cpu", "--format", "json"])
            .env("XEFORGE_PYTHON", dir.path().join("no-python"))
            .output()
            .unwrap()
    };
    for (stage, kind) in [("autotune", "does-not-parse"), ("no-such-stage", "unknown-stage")] {
        let out = run(stage);
        assert_eq!(out.status.code(), Some(2), "{stage}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{stage}: {e}: {stdout}"));
        assert_eq!(v["status"], "error", "{v}");
        assert_eq!(v["error"], kind, "{v}");
        let summary = v["summary"].as_str().unwrap();
        assert!(String::from_utf8_lossy(&out.stderr).contains(summary), "{stage}: {summary}");
    }
}

/// A wrapper module whose kernels live in another module: the stage says where to run instead.
#[test]
fn a_wrapper_without_its_kernel_is_told_where_the_stage_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ops.py");
    std::fs::write(
        &file,
        "import torch\nimport triton\n\nfrom .kernels import mul_kernel\n\n\ndef mul(x, y):\n    out = torch.empty_like(x)\n    \
         n = x.numel()\n    mul_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)\n    return out\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xeforge"))
        .args(["stage", "autotune"])
        .arg(&file)
        .args(["--device", "cpu", "--format", "json"])
        .env("XEFORGE_PYTHON", dir.path().join("no-python"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let summary = v["summary"].as_str().unwrap();
    assert!(summary.contains("launches `mul_kernel` from another module"), "{summary}");
}

/// On a machine without a GPU the harness runs the Triton interpreter; a wrapper that allocates on
/// `"cuda"` fails there, and the stage says why and what to change rather than only torch's words.
#[test]
fn a_wrapper_that_names_cuda_is_told_why_it_cannot_run_on_the_interpreter() {
    let Some(py) = pyenv::with("torch, triton, yaml") else {
        eprintln!("skipped: no Python with torch, triton and PyYAML");
        return;
    };
    let cuda = Command::new(&py).args(["-c", "import torch; print(torch.cuda.is_available())"]).output().unwrap();
    if String::from_utf8_lossy(&cuda.stdout).trim() == "True" {
        eprintln!("skipped: this machine has CUDA, where the wrapper runs");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    let file = dir.path().join("square.py");
    std::fs::write(
        &file,
        "import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\ndef sq(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n    \
         offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    m = offs < n\n    x = tl.load(x_ptr + offs, mask=m)\n    \
         tl.store(y_ptr + offs, x * x, mask=m)\n\n\ndef square(x: torch.Tensor) -> torch.Tensor:\n    \
         y = torch.empty(x.shape, device=\"cuda\", dtype=x.dtype)\n    n = x.numel()\n    \
         sq[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)\n    return y\n\n\nif __name__ == \"__main__\":\n    \
         square(torch.randn(4096, device=\"cuda\"))\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xeforge"))
        .args(["stage", "autotune"])
        .arg(&file)
        .args(["--device", "cpu", "--format", "json"])
        .env("XEFORGE_PYTHON", &py)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["status"], "error", "{v}");
    let summary = v["summary"].as_str().unwrap();
    assert!(summary.contains("the original asks for a CUDA device"), "{summary}");
    assert!(summary.contains("`x.device`"), "{summary}");
}

/// Tiles read off a settings object stay at the launch; the plain-text answer says so beside the
/// summary, so "correct" is not read as "the tiles were tried".
#[test]
fn the_answer_names_the_tiles_it_did_not_tune() {
    let Some(py) = pyenv::with("torch, triton, yaml") else {
        eprintln!("skipped: no Python with torch, triton and PyYAML");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    let file = dir.path().join("negate.py");
    std::fs::write(
        &file,
        "import torch\nimport triton\nimport triton.language as tl\n\n\nclass Tiles:\n    block = 128\n\n\n@triton.jit\n\
         def neg(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    \
         m = offs < n\n    tl.store(y_ptr + offs, -tl.load(x_ptr + offs, mask=m), mask=m)\n\n\n\
         def negate(x: torch.Tensor, tiles=Tiles()) -> torch.Tensor:\n    y = torch.empty_like(x)\n    n = x.numel()\n    \
         neg[(triton.cdiv(n, tiles.block),)](x, y, n, BLOCK=tiles.block, num_warps=2)\n    return y\n\n\n\
         if __name__ == \"__main__\":\n    negate(torch.randn(5000))\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xeforge"))
        .args(["stage", "autotune"])
        .arg(&file)
        .args(["--device", "cpu"])
        .env("XEFORGE_PYTHON", &py)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("note: not tuned, left as the launch passes it: BLOCK=`tiles.block` (read off an object at run time)"),
        "{stdout}"
    );
}

/// A file whose wrapper launches two kernels: without `--kernel` the stage works on each in turn,
/// the second on the text the first left, and `--apply` writes both changes at once.
#[test]
fn a_file_that_launches_two_kernels_gets_each_tuned_in_turn() {
    let Some(py) = pyenv::with("torch, triton, yaml") else {
        eprintln!("skipped: no Python with torch, triton and PyYAML");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    let file = dir.path().join("two.py");
    let text = "import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n\
         def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    \
         mask = offs < n\n    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)\n\n\n@triton.jit\n\
         def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    \
         mask = offs < n\n    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)\n\n\n\
         def scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:\n    t = torch.empty_like(x)\n    n = x.numel()\n    \
         scale_kernel[(triton.cdiv(n, 128),)](x, t, n, alpha, BLOCK=128)\n    out = torch.empty_like(x)\n    \
         add_kernel[(triton.cdiv(n, 128),)](t, y, out, n, BLOCK=128)\n    return out\n\n\n\
         if __name__ == \"__main__\":\n    scaled_add(torch.randn(5000), torch.randn(5000), 2.0)\n";
    std::fs::write(&file, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xeforge"))
        .args(["stage", "autotune"])
        .arg(&file)
        .args(["--device", "cpu", "--format", "json", "--apply"])
        .env("XEFORGE_PYTHON", &py)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("2 kernels are launched (scale_kernel, add_kernel): the stage works on each in turn"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["status"].as_str(), v["changed"].as_bool()), (Some("correct-only"), Some(true)), "{v}");
    let kernels: Vec<&str> = v["kernels"].as_array().unwrap().iter().map(|k| k["kernel"].as_str().unwrap()).collect();
    assert_eq!(kernels, ["scale_kernel", "add_kernel"]);
    let after = std::fs::read_to_string(&file).unwrap();
    assert_eq!(after.matches("@triton.autotune(").count(), 2, "{after}");
    assert!(after.contains("scale_kernel[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, t, n, alpha)"), "{after}");
    assert!(after.contains("add_kernel[lambda META: (triton.cdiv(n, META['BLOCK']),)](t, y, out, n)"), "{after}");
}
