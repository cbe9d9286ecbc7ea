//! The Rust client against a real remote harness: `python -m xeforge_harness serve --http` on
//! loopback, run from a directory of its own, with a token. The kernel, its spec and the candidate
//! are in a temporary directory of the client's; the harness refuses paths over HTTP, so a verdict
//! can only come from the contents the client sent, and the result names them by sha256.

#[path = "common/pyenv.rs"]
mod pyenv;

use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use xeforge::harness::{EvaluateArgs, Harness, HarnessError, HarnessSettings, Verdict};

const TOKEN: &str = "xf-rust-test-5e0c1f";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A `serve --http 127.0.0.1:0` with XEFORGE_HARNESS_TOKEN set, in its own working directory.
struct Server {
    child: Child,
    url: String,
    _cwd: tempfile::TempDir,
}

impl Server {
    fn start(python: &Path) -> Server {
        let cwd = tempfile::tempdir().unwrap();
        let mut child = Command::new(python)
            .args(["-m", "xeforge_harness", "serve", "--http", "127.0.0.1:0"])
            .env("PYTHONPATH", repo().join("server/harness"))
            .env("XEFORGE_HARNESS_TOKEN", TOKEN)
            .current_dir(cwd.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the harness");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        let url = v["listening"].as_str().unwrap_or_else(|| panic!("no address: {line}")).to_string();
        Server { child, url, _cwd: cwd }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client whose token variable is `var` (set to `value`, or unset).
fn client(url: &str, var: &str, value: Option<&str>) -> Harness {
    // SAFETY: each variable is read and written by one test only.
    unsafe {
        match value {
            Some(v) => std::env::set_var(var, v),
            None => std::env::remove_var(var),
        }
    }
    let settings = HarnessSettings { url: Some(url.into()), token_env: Some(var.into()), ..Default::default() };
    Harness::new(&settings, repo()).unwrap()
}

/// The problem in a temporary directory of the client's: vector_add.py, vector_add.yaml beside it
/// (found by the client, as the harness would), and `rewrite.py` from a harness fixture.
fn client_files(candidate: &str) -> (tempfile::TempDir, EvaluateArgs, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let problems = repo().join("tests/harness/problems");
    for name in ["vector_add.py", "vector_add.yaml"] {
        std::fs::copy(problems.join(name), dir.path().join(name)).unwrap();
    }
    let cand = dir.path().join("rewrite.py");
    std::fs::copy(repo().join("tests/harness/fixtures").join(candidate), &cand).unwrap();
    let mut args = EvaluateArgs::new(dir.path().join("vector_add.py"), cand.clone());
    args.device = xeforge::harness::DeviceKind::Cpu;
    args.timeout = 120;
    (dir, args, cand)
}

fn sha256(path: &Path) -> String {
    format!("{:x}", Sha256::digest(std::fs::read(path).unwrap()))
}

async fn served(h: &Harness) -> serde_json::Value {
    let Harness::Http(http) = h else { panic!("an HTTP harness") };
    http.call("ping", serde_json::json!({}), Duration::from_secs(60)).await.unwrap()["served"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_harness_verifies_files_only_the_client_has_and_refuses_strangers() {
    let Some(python) = pyenv::harness() else {
        eprintln!("skipped: no Python with torch and triton (set XEFORGE_PYTHON)");
        return;
    };
    let server = Server::start(&python);
    let h = client(&server.url, "XEFORGE_TEST_REMOTE_TOKEN", Some(TOKEN));

    let (dir, args, cand) = client_files("add_correct.py");
    let e = h.evaluate(&args).await.unwrap();
    assert_eq!(e.verdict, Verdict::Correct, "{:?}", e.message);
    assert_eq!(e.files["candidate"].sha256, sha256(&cand));
    assert_eq!(e.files["candidate"].name, "rewrite.py");
    assert_eq!(e.files["kernel"].sha256, sha256(&dir.path().join("vector_add.py")));
    assert_eq!(e.files["spec"].sha256, sha256(&dir.path().join("vector_add.yaml")), "the spec beside the kernel went along");
    assert_eq!(e.correctness.as_ref().map(|c| c.variants.len()), Some(2), "the spec's two ci variants were checked");
    assert!(!e.log.contains(&dir.path().display().to_string()));

    // A wrong rewrite, from the same client-only directory: judged on what was sent.
    let (_dir2, args2, _) = client_files("add_zeros.py");
    assert_eq!(h.evaluate(&args2).await.unwrap().verdict, Verdict::Incorrect);

    // Without the token, or with a wrong one: HTTP 401, and nothing ran.
    let before = served(&h).await;
    for (var, value) in [("XEFORGE_TEST_REMOTE_NONE", None), ("XEFORGE_TEST_REMOTE_WRONG", Some("xf-rust-test-5e0c1g"))] {
        let stranger = client(&server.url, var, value);
        let err = stranger.evaluate(&args).await.unwrap_err();
        assert!(matches!(&err, HarnessError::Http(m) if m.contains("401") && m.contains(var)), "{err}");
        assert!(!err.to_string().contains(TOKEN));
        assert!(stranger.ping().await.is_err());
    }
    assert_eq!(served(&h).await, before, "a refused request started a job");

    let Harness::Http(http) = &h else { unreachable!() };
    let _ = http.call("shutdown", serde_json::json!({}), Duration::from_secs(30)).await;
}
