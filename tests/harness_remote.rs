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

// --- cancellation ---------------------------------------------------------------------------------

/// A stand-in harness on loopback that records every request (its body and `Authorization`) and
/// answers only `cancel`s: a job's request is held open, as a long job's would be.
async fn recording_server() -> (String, tokio::sync::mpsc::UnboundedReceiver<(serde_json::Value, String)>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else { return };
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let (head, body) = loop {
                    let n = sock.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let head = text[..end].to_ascii_lowercase();
                        let len: usize =
                            head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            break (head, buf[end + 4..end + 4 + len].to_vec());
                        }
                    }
                };
                let auth = head.lines().find_map(|l| l.strip_prefix("authorization:")).unwrap_or("").trim().to_string();
                let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
                let is_cancel = v["command"] == "cancel";
                let _ = tx.send((v.clone(), auth));
                if is_cancel {
                    let reply = serde_json::json!({"id": v["id"], "ok": true, "cancelled": true}).to_string();
                    let resp = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                        reply.len()
                    );
                    let _ = sock.write_all(resp.as_bytes()).await;
                } else {
                    // Held until the client lets go.
                    let _ = sock.read(&mut chunk).await;
                }
            });
        }
    });
    (url, rx)
}

async fn next_request(rx: &mut tokio::sync::mpsc::UnboundedReceiver<(serde_json::Value, String)>) -> (serde_json::Value, String) {
    tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.expect("a request within 20 s").expect("the server runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_past_its_time_or_dropped_sends_cancel_for_its_own_id() {
    let (url, mut rx) = recording_server().await;
    let h = client(&url, "XEFORGE_TEST_REMOTE_CANCEL", Some(TOKEN));
    let Harness::Http(http) = &h else { panic!("an HTTP harness") };
    let args = serde_json::json!({"device": "cpu"});

    // Past its time: the call says so, and the harness was told to stop that request, with the token.
    let err = http.call("probe", args.clone(), Duration::from_millis(500)).await.unwrap_err();
    assert!(matches!(err, HarnessError::Timeout { .. }), "{err}");
    let (job, _) = next_request(&mut rx).await;
    let (cancel, auth) = next_request(&mut rx).await;
    assert_eq!(job["command"], "probe");
    let id = job["id"].as_str().expect("a string id").to_string();
    assert_eq!(cancel["command"], "cancel");
    assert_eq!(cancel["args"]["id"], id.as_str(), "the cancel names the request that timed out");
    assert_eq!(auth, format!("bearer {}", TOKEN.to_ascii_lowercase()), "authenticated like any request");
    assert_ne!(cancel["id"], job["id"]);

    // Dropped by its caller (a stage cancelled): the cancel is sent all the same.
    let call = http.call("probe", args.clone(), Duration::from_secs(600));
    let dropped = tokio::time::timeout(Duration::from_millis(500), call).await;
    assert!(dropped.is_err());
    let (job2, _) = next_request(&mut rx).await;
    let (cancel2, _) = next_request(&mut rx).await;
    assert_eq!((job2["command"].as_str(), cancel2["command"].as_str()), (Some("probe"), Some("cancel")));
    assert_eq!(cancel2["args"]["id"], job2["id"]);

    // Ids are this client's own: another client of the same harness never names the same request.
    let other = client(&url, "XEFORGE_TEST_REMOTE_CANCEL2", Some(TOKEN));
    let Harness::Http(other_http) = &other else { unreachable!() };
    let _ = tokio::time::timeout(Duration::from_millis(300), other_http.call("probe", args, Duration::from_secs(600))).await;
    let (job3, _) = next_request(&mut rx).await;
    let prefix = |v: &serde_json::Value| v["id"].as_str().and_then(|s| s.rsplit_once('-')).map(|(p, _)| p.to_string());
    assert_eq!(prefix(&job), prefix(&job2));
    assert_ne!(prefix(&job), prefix(&job3), "{job} / {job3}");
    let _ = next_request(&mut rx).await; // its cancel
    assert!(tokio::time::timeout(Duration::from_millis(300), rx.recv()).await.is_err(), "a ping or anything else was sent");
}

/// The sleepy fixture with 1000 s in every forward call: only a cancel ends it within the test.
fn long_case(dir: &Path) -> EvaluateArgs {
    let text =
        std::fs::read_to_string(repo().join("tests/harness/fixtures/add_sleepy.py")).unwrap().replace("SLEEP_S = 1.0", "SLEEP_S = 1000.0");
    let cand = dir.join("long.py");
    std::fs::write(&cand, text).unwrap();
    let mut args = EvaluateArgs::new(dir.join("vector_add.py"), cand);
    args.device = xeforge::harness::DeviceKind::Cpu;
    args.timeout = 900;
    args
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_request_frees_the_remote_harness_lane() {
    let Some(python) = pyenv::harness() else {
        eprintln!("skipped: no Python with torch and triton (set XEFORGE_PYTHON)");
        return;
    };
    // One interpreter lane: a job still running would hold every other one back for 1000 s a call.
    let server = Server::start(&python);
    let h = client(&server.url, "XEFORGE_TEST_REMOTE_LANE", Some(TOKEN));
    let Harness::Http(http) = &h else { unreachable!() };
    let (dir, quick, _) = client_files("add_correct.py");
    let long = serde_json::to_value(long_case(dir.path())).unwrap();
    let before = served(&h).await;

    // Past its time: cancelled by id while its connection is still open.
    let err = http.call("evaluate", long.clone(), Duration::from_secs(8)).await.unwrap_err();
    assert!(matches!(err, HarnessError::Timeout { .. }), "{err}");
    let e = tokio::time::timeout(Duration::from_secs(240), h.evaluate(&quick)).await.expect("the lane was freed");
    assert_eq!(e.unwrap().verdict, Verdict::Correct);
    let after = served(&h).await;
    assert_eq!(after["cancelled"].as_u64(), before["cancelled"].as_u64().map(|n| n + 1), "{after}");

    // Dropped by its caller (a stage cancelled from the editor).
    let dropped = tokio::time::timeout(Duration::from_secs(8), http.call("evaluate", long, Duration::from_secs(1200))).await;
    assert!(dropped.is_err());
    let e = tokio::time::timeout(Duration::from_secs(240), h.evaluate(&quick)).await.expect("the lane was freed");
    assert_eq!(e.unwrap().verdict, Verdict::Correct);
    let _ = http.call("shutdown", serde_json::json!({}), Duration::from_secs(30)).await;
}
