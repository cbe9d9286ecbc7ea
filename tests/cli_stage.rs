//! `xeforge stage` as a command: what it prints and how it exits when the stage cannot run.

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
