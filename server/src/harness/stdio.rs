//! One long-lived `python -m xeforge_harness serve` child, spoken to in JSON lines.
//!
//! Requests are serialised (one in flight): the harness evaluates each candidate in its own child
//! process anyway, so there is nothing to gain from pipelining and a lot to lose in matching replies.
//! A request that times out kills the child (its state is unknown); the next request starts a new one.

use super::HarnessError;
use super::protocol::{Request, response_payload};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::Mutex;

/// How to start the serve process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnSpec {
    pub python: PathBuf,
    /// Prepended to PYTHONPATH so `xeforge_harness` imports (when it is a directory; an installed
    /// harness needs none).
    pub harness_path: PathBuf,
    pub cwd: PathBuf,
    /// Extra arguments after `serve` (tests use this to point at a fake).
    pub module: String,
    /// Environment variables that must not reach the harness (API keys).
    pub scrub_env: Vec<String>,
    /// Extra variables for the child.
    pub env: Vec<(String, String)>,
    /// Options after `serve` (`--ray ADDRESS`).
    pub serve_args: Vec<String>,
}

struct Live {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

pub struct StdioHarness {
    spec: SpawnSpec,
    live: Mutex<Option<Live>>,
    next_id: std::sync::atomic::AtomicU64,
    /// How many times a child was started (for tests and the status line).
    starts: std::sync::atomic::AtomicU32,
}

impl StdioHarness {
    pub fn new(spec: SpawnSpec) -> Self {
        Self { spec, live: Mutex::new(None), next_id: 1.into(), starts: 0.into() }
    }

    pub fn spawn_spec(&self) -> &SpawnSpec {
        &self.spec
    }

    pub fn starts(&self) -> u32 {
        self.starts.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn spawn(&self) -> Result<Live, HarnessError> {
        let mut cmd = tokio::process::Command::new(&self.spec.python);
        cmd.arg("-m").arg(&self.spec.module).arg("serve").args(&self.spec.serve_args);
        // An installed harness (the wheel's) needs no path; a checkout's directory goes first.
        if self.spec.harness_path.is_dir() {
            let mut pythonpath = std::ffi::OsString::from(self.spec.harness_path.as_os_str());
            if let Some(old) = std::env::var_os("PYTHONPATH")
                && !old.is_empty()
            {
                pythonpath.push(":");
                pythonpath.push(old);
            }
            cmd.env("PYTHONPATH", pythonpath);
        }
        // The harness answers every request with an error naming both versions when they differ.
        cmd.env("PYTHONUNBUFFERED", "1").env("XEFORGE_SERVER_VERSION", env!("CARGO_PKG_VERSION"));
        for k in &self.spec.scrub_env {
            cmd.env_remove(k);
        }
        for (k, v) in &self.spec.env {
            cmd.env(k, v);
        }
        cmd.current_dir(&self.spec.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // The harness logs to stderr; it is not part of the protocol. Inherit would corrupt an LSP's
            // stdout-free stderr logging only cosmetically, but null loses crash reasons, so keep it.
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child =
            cmd.spawn().map_err(|e| HarnessError::Spawn { python: self.spec.python.display().to_string(), message: e.to_string() })?;
        let stdin = child.stdin.take().ok_or_else(|| HarnessError::Protocol("serve has no stdin".into()))?;
        let stdout = child.stdout.take().ok_or_else(|| HarnessError::Protocol("serve has no stdout".into()))?;
        self.starts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Live { child, stdin, stdout: BufReader::new(stdout) })
    }

    /// Send one command and wait for the answer with the same id. A dead child is restarted once.
    ///
    /// The child is taken out of the slot for the exchange and put back only when it answered: a
    /// call whose future is dropped (a stage cancelled from the editor) drops the child with it, and
    /// `kill_on_drop` ends it. A `serve` that ends stops its running job (its zygote sees its stdin
    /// close; on Ray, the cluster ends the actors of a driver that exits), so a cancelled request
    /// leaves nothing running; the next call starts a fresh child.
    pub async fn call(&self, command: &str, args: serde_json::Value, timeout: Duration) -> Result<serde_json::Value, HarnessError> {
        let mut guard = self.live.lock().await;
        for attempt in 0..2 {
            let alive = guard.as_mut().is_some_and(|l| matches!(l.child.try_wait(), Ok(None)));
            let mut live = match guard.take() {
                Some(l) if alive => l,
                _ => self.spawn()?,
            };
            let id = self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let line =
                serde_json::to_string(&Request { id, command, args: args.clone() }).map_err(|e| HarnessError::Protocol(e.to_string()))?;
            match tokio::time::timeout(timeout, exchange(&mut live, &line, id)).await {
                Err(_) => {
                    // Unknown state: end this child; the next call starts afresh.
                    let _ = live.child.start_kill();
                    return Err(HarnessError::Timeout { command: command.to_string(), seconds: timeout.as_secs() });
                }
                Ok(Ok(v)) => {
                    *guard = Some(live);
                    return response_payload(v).map_err(HarnessError::Harness);
                }
                Ok(Err(ExchangeError::Closed)) if attempt == 0 => {
                    // The child died between requests (or on this one before answering): restart once.
                    continue;
                }
                Ok(Err(ExchangeError::Closed)) => {
                    return Err(HarnessError::Died(format!("the harness process exited while answering `{command}`")));
                }
            }
        }
        Err(HarnessError::Died("the harness process keeps exiting".into()))
    }

    /// Ask the child to exit and wait briefly; kill it otherwise.
    pub async fn shutdown(&self) {
        let mut guard = self.live.lock().await;
        if let Some(mut l) = guard.take() {
            let _ = l.stdin.write_all(b"{\"id\":0,\"command\":\"shutdown\",\"args\":{}}\n").await;
            let _ = l.stdin.flush().await;
            if tokio::time::timeout(Duration::from_secs(2), l.child.wait()).await.is_err() {
                let _ = l.child.start_kill();
            }
        }
    }
}

enum ExchangeError {
    Closed,
}

async fn exchange(live: &mut Live, line: &str, id: u64) -> Result<serde_json::Value, ExchangeError> {
    let write = async {
        live.stdin.write_all(line.as_bytes()).await?;
        live.stdin.write_all(b"\n").await?;
        live.stdin.flush().await
    };
    if write.await.is_err() {
        return Err(ExchangeError::Closed);
    }
    let mut buf = String::new();
    loop {
        buf.clear();
        match live.stdout.read_line(&mut buf).await {
            Ok(0) | Err(_) => return Err(ExchangeError::Closed),
            Ok(_) => {}
        }
        let trimmed = buf.trim();
        if trimmed.is_empty() {
            continue;
        }
        // Lines that are not JSON objects are stray prints from imported code; skip them.
        let Ok(v) = serde_json::from_str::<serde_json::Value>(trimmed) else { continue };
        if !v.is_object() {
            continue;
        }
        match v.get("id").and_then(|i| i.as_u64()) {
            Some(got) if got == id => return Ok(v),
            Some(_) => continue, // a late answer to a request that timed out earlier
            None if v.get("verdict").is_some() || v.get("result").is_some() || v.get("error").is_some() => return Ok(v),
            None => continue,
        }
    }
}
