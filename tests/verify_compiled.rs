//! `xeforge verify`: what compiling said, as findings on the config that produced each compiled
//! config, against a scripted HTTP harness that reports a GPU's compile metadata (the numbers are
//! the script's, not a measurement). The interpreter's "no compile metadata" is in the unit tests
//! of `cover::compiled` and in tests/harness (the harness's own `metadata_available: false`).

#[path = "common/openai_stub.rs"]
mod openai_stub;

use openai_stub::{Reply, Stub};
use serde_json::{Value, json};
use std::process::Command;

/// A GEMM with two autotune configs, the larger of which spills (in the scripts below).
const KERNEL: &str = include_str!("fixtures/cover/mm_compiled.py");

fn compiled(request: &Value) -> (u16, String) {
    assert_eq!(request["command"], "evaluate");
    let cfg = |bm: u64, bk: u64, warps: u64, stages: u64, regs: u64, spills: u64, shared: u64| {
        json!({"kernel": "mm_kernel", "config": {"BLOCK_M": bm, "BLOCK_N": bm, "BLOCK_K": bk, "num_warps": warps, "num_stages": stages},
               "shared_bytes": shared, "registers": regs, "spills": spills})
    };
    let body = json!({"id": 0, "verdict": "correct",
        "device": {"kind": "cuda", "name": "NVIDIA H200", "torch": "2.11.0", "triton": "3.6.0"},
        "compile": {"ok": true, "metadata_available": true,
                    "configs": [cfg(256, 64, 8, 4, 255, 4096, 262144), cfg(64, 32, 4, 3, 128, 0, 32768)]},
        "correctness": {"ok": true, "variants": [{"name": "ci[0]", "seeds": 3, "max_abs": 0.0, "rel_err": 0.0, "rtol": 1e-4, "atol": 1e-4}]},
        "timing": {"meaningful": false, "reason": "timing was not requested"}, "log": ""});
    (200, body.to_string())
}

fn verify(dir: &std::path::Path, url: &str, extra: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_xeforge"))
        .args(["verify", "mm.py", "--harness-url", url, "--device", "cuda", "--target", "h200", "--toolchain", "cuda", "--format", "json"])
        .args(extra)
        .current_dir(dir)
        .env("XEFORGE_HARNESS_TOKEN", "t")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn each_compiled_config_is_a_finding_on_its_config_and_an_unchanged_file_is_not_verified_again() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stub = rt.block_on(Stub::start(vec![Reply::Fn(compiled), Reply::Fn(compiled)]));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[tool.xeforge]\n").unwrap();
    std::fs::write(dir.path().join("mm.py"), KERNEL).unwrap();

    let v = verify(dir.path(), &stub.url, &[]);
    let found = v["compiled"]["diagnostics"].as_array().expect("compiled findings").clone();
    let line_of = |needle: &str| KERNEL.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let on = |code: &str, row: usize| found.iter().find(|d| d["code"] == code && d["location"]["row"] == row as u64).cloned();
    let big = on("XF202", line_of("\"BLOCK_M\": 256")).expect("the spilling config's registers");
    assert_eq!(big["severity"], "warning");
    let message = big["message"].as_str().unwrap();
    assert!(
        message.contains("compiled on NVIDIA H200") && message.contains("4096 B spilled") && message.contains("255 registers"),
        "{message}"
    );
    let small = on("XF202", line_of("\"BLOCK_M\": 64")).expect("the other config");
    assert_eq!(small["severity"], "info");
    let slm = on("XF201", line_of("\"BLOCK_M\": 256")).expect("shared memory against the H200's");
    assert_eq!(slm["severity"], "error", "{slm}");
    assert_eq!(v["compiled"]["cached"], false);

    // Unchanged file: the cached result, no second harness request.
    let again = verify(dir.path(), &stub.url, &[]);
    assert_eq!(again["compiled"]["cached"], true);
    assert_eq!(again["compiled"]["diagnostics"], v["compiled"]["diagnostics"]);
    assert_eq!(stub.requests.lock().unwrap().len(), 1);
    // --refresh asks the harness again; a changed file would too.
    let refreshed = verify(dir.path(), &stub.url, &["--refresh"]);
    assert_eq!(refreshed["compiled"]["cached"], false);
    assert_eq!(stub.requests.lock().unwrap().len(), 2);
}
