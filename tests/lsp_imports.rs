//! The real `xeforge lsp` binary on a package whose kernels call `@triton.jit` helpers of another
//! module (`tests/fixtures/check/crossfile`): the helper's `tl.dot` counts for the kernel, an open
//! document of the helper wins over the file on disk, and the kernel's diagnostics follow every
//! change of the helper (edited, closed, written on disk), pushed or pulled.

#[path = "common/lsp_client.rs"]
mod lsp_client;

use lsp_client::{Client, capabilities};
use serde_json::{Value, json};
use std::fs;
use std::path::Path;

/// 0-based lines of `gemm/kernels.py`: the two launches whose kernels reach the helper's tl.dot,
/// and the 32-warp config XF502 flags while the kernels use tl.dot.
const GEMM_LAUNCHES: [u64; 2] = [61, 62];
const TUNED_CONFIG: u64 = 45;
/// Launches whose helpers have no tl.dot (or cannot be found): XF102 whatever the helper says.
const OTHER_LAUNCHES: [u64; 2] = [64, 66];

fn copy_fixture(to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check/crossfile");
    for rel in ["xeforge.toml", "gemm/__init__.py", "gemm/helpers.py", "gemm/kernels.py"] {
        let p = to.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::copy(from.join(rel), p).unwrap();
    }
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// (line, code) of a publishDiagnostics' params.
fn findings(params: &Value) -> Vec<(u64, String)> {
    let mut v: Vec<(u64, String)> = params["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["range"]["start"]["line"].as_u64().unwrap(), d["code"].as_str().unwrap().to_string()))
        .collect();
    v.sort();
    v
}

/// What kernels.py shows when the helper `mac_loop` has a tl.dot (`true`) or not.
fn expected(dot: bool) -> Vec<(u64, String)> {
    let mut v: Vec<(u64, String)> = OTHER_LAUNCHES.iter().map(|l| (*l, "XF102".to_string())).collect();
    if dot {
        v.push((TUNED_CONFIG, "XF502".to_string()));
    } else {
        v.extend(GEMM_LAUNCHES.iter().map(|l| (*l, "XF102".to_string())));
    }
    v.sort();
    v
}

/// Waits for kernels.py to be published with exactly `want`.
fn kernels_show(c: &Client, kernels: &str, want: &[(u64, String)]) {
    let got = c.diagnostics_where(kernels, |p| findings(p) == want);
    assert_eq!(findings(&got), want);
}

#[test]
fn an_imported_helper_counts_and_its_open_text_wins_over_the_disk() {
    let t = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(t.path()).unwrap();
    copy_fixture(&root);
    let helpers_path = root.join("gemm/helpers.py");
    let (kernels, helpers) = (uri(&root.join("gemm/kernels.py")), uri(&helpers_path));
    let with_dot = fs::read_to_string(&helpers_path).unwrap();
    let without_dot = with_dot.replace("acc = tl.dot(a, b, acc)", "acc = acc + a");
    assert_ne!(with_dot, without_dot);

    let mut c = Client::spawn();
    c.initialize(capabilities(&["utf-16"]), json!({}));
    c.open(&kernels, &fs::read_to_string(root.join("gemm/kernels.py")).unwrap(), 1);
    // The helper on disk has the tl.dot.
    kernels_show(&c, &kernels, &expected(true));

    // Opened without it (unsaved): the kernel file is analysed again against the open text.
    c.open(&helpers, &without_dot, 1);
    kernels_show(&c, &kernels, &expected(false));

    // Edited back, then away again: each version of the helper reaches the kernel file.
    c.change(&helpers, 2, json!([{"text": with_dot}]));
    kernels_show(&c, &kernels, &expected(true));
    c.change(&helpers, 3, json!([{"text": without_dot}]));
    kernels_show(&c, &kernels, &expected(false));

    // Closed unsaved: the file on disk (with the tl.dot) stands for it again.
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": helpers}}));
    kernels_show(&c, &kernels, &expected(true));

    // Written on disk without the tl.dot while closed: the watched-file notice re-analyses.
    fs::write(&helpers_path, &without_dot).unwrap();
    c.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": helpers, "type": 2}]}));
    kernels_show(&c, &kernels, &expected(false));

    // A request answers from what the files say now, as `xeforge check` would.
    fs::write(&helpers_path, &with_dot).unwrap();
    let pulled = c.request("textDocument/diagnostic", json!({"textDocument": {"uri": kernels}}));
    assert_eq!(pulled_findings(&pulled), expected(true));
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

/// (line, code) of a pulled report's items.
fn pulled_findings(report: &Value) -> Vec<(u64, String)> {
    let mut v: Vec<(u64, String)> = report["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["range"]["start"]["line"].as_u64().unwrap(), d["code"].as_str().unwrap().to_string()))
        .collect();
    v.sort();
    v
}

#[test]
fn a_pull_client_is_asked_to_pull_again_and_gets_new_results_when_a_helper_changes() {
    let t = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(t.path()).unwrap();
    copy_fixture(&root);
    let helpers_path = root.join("gemm/helpers.py");
    let (kernels, helpers) = (uri(&root.join("gemm/kernels.py")), uri(&helpers_path));
    let without_dot = fs::read_to_string(&helpers_path).unwrap().replace("acc = tl.dot(a, b, acc)", "acc = acc + a");

    let mut caps = capabilities(&["utf-16"]);
    caps["textDocument"]["diagnostic"] = json!({"dynamicRegistration": false});
    caps["workspace"]["diagnostic"] = json!({"refreshSupport": true});
    let mut c = Client::spawn();
    c.initialize(caps, json!({}));
    c.open(&kernels, &fs::read_to_string(root.join("gemm/kernels.py")).unwrap(), 1);
    let first = c.request("textDocument/diagnostic", json!({"textDocument": {"uri": kernels}}));
    assert_eq!(pulled_findings(&first), expected(true));
    let refreshes = |c: &Client| c.server_requests().iter().filter(|m| *m == "workspace/diagnostic/refresh").count();
    let before = refreshes(&c);

    c.open(&helpers, &without_dot, 1);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while refreshes(&c) == before {
        assert!(std::time::Instant::now() < deadline, "no workspace/diagnostic/refresh after the helper changed");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Same document version, other results: the earlier result id is not "unchanged".
    let again = c.request("textDocument/diagnostic", json!({"textDocument": {"uri": kernels}, "previousResultId": first["resultId"]}));
    assert_eq!(again["kind"], "full");
    assert_eq!(pulled_findings(&again), expected(false));
    assert_eq!(c.shutdown_and_exit(), Some(0));
}
