//! One long-lived `python -m xeforge_harness serve` child, spoken to in JSON lines, several requests
//! in flight at once.
//!
//! The harness runs each request on a thread of its own (its lanes decide what runs at once) and
//! answers each with one line tagged with the request's `id`, in whatever order they finish. So here:
//! one writer task sends whole lines, one reader task routes each reply to the caller waiting for
//! that id (a oneshot channel). A caller that gives up sends `cancel` for its own id and leaves the
//! others alone: its timeout does so, and so does dropping its future (a stage cancelled from the
//! editor). Only a child that answers nothing at all (not the cancel, not a `ping`) is killed; a
//! child that dies fails every call in flight with [`HarnessError::Died`], and the next call starts a
//! new one.

use super::HarnessError;
use super::protocol::{Request, response_payload};
use super::{Lanes, PoolInfo};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex as SyncMutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::{Mutex, mpsc, oneshot};

/// After a request timed out and its `cancel` was sent: how long the child has to show it still
/// answers (the cancelled request's reply, or a `ping`'s) before it is taken for hung and killed.
const LIVENESS_GRACE: Duration = Duration::from_secs(5);

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
    /// Options after `serve` (`--ray ADDRESS`, `--cpu-workers N`).
    pub serve_args: Vec<String>,
}

/// A reply line for one caller, or why none will come.
type Reply = Result<Value, HarnessError>;

/// The calls waiting for a reply, by request id. Once the child's stdout ends, `closed` says why and
/// nothing more can wait.
#[derive(Default)]
struct Waiting {
    calls: HashMap<u64, oneshot::Sender<Reply>>,
    closed: Option<String>,
}

struct Table(SyncMutex<Waiting>);

impl Table {
    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wait for `id`'s reply; `None` when the child's output already ended.
    fn register(&self, id: u64) -> Option<oneshot::Receiver<Reply>> {
        let mut w = self.lock();
        if w.closed.is_some() {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        w.calls.insert(id, tx);
        Some(rx)
    }

    fn forget(&self, id: u64) {
        self.lock().calls.remove(&id);
    }

    /// One line from the child: to the call waiting for its id. A reply without an id (the harness
    /// could not read the request) goes to the one call in flight, if there is exactly one.
    fn route(&self, line: &str) {
        let trimmed = line.trim();
        // Lines that are not JSON objects are stray prints from imported code; skip them.
        let Ok(v) = serde_json::from_str::<Value>(trimmed) else { return };
        if !v.is_object() {
            return;
        }
        let mut w = self.lock();
        let id = match v.get("id").and_then(Value::as_u64) {
            Some(id) => id,
            None if v.get("id").is_none_or(Value::is_null)
                && (v.get("verdict").is_some() || v.get("result").is_some() || v.get("error").is_some())
                && w.calls.len() == 1 =>
            {
                *w.calls.keys().next().unwrap_or(&0)
            }
            // A late answer to a request that gave up, a `cancel`'s answer, or the ready line.
            None => return,
        };
        if let Some(tx) = w.calls.remove(&id) {
            let _ = tx.send(Ok(v));
        }
    }

    /// The child's output ended: every call in flight fails, and so does every later one on it.
    fn close(&self, why: &str) {
        let mut w = self.lock();
        w.closed = Some(why.to_string());
        for (_, tx) in w.calls.drain() {
            let _ = tx.send(Err(HarnessError::Died(why.to_string())));
        }
    }
}

/// One running child: the writer's queue, the table of calls in flight, the process.
struct Conn {
    /// Whole lines for the child's stdin, written in order by one task.
    lines: mpsc::UnboundedSender<String>,
    waiting: Arc<Table>,
    child: Mutex<Child>,
}

impl Conn {
    fn send(&self, line: String) {
        // A closed queue means the writer is gone with the child: the reader fails the calls.
        let _ = self.lines.send(line);
    }

    async fn alive(&self) -> bool {
        self.waiting.lock().closed.is_none() && matches!(self.child.lock().await.try_wait(), Ok(None))
    }
}

pub struct StdioHarness {
    spec: SpawnSpec,
    live: Mutex<Option<Arc<Conn>>>,
    next_id: AtomicU64,
    /// How many times a child was started (for tests and the status line).
    starts: AtomicU32,
    lanes: Lanes,
}

impl StdioHarness {
    pub fn new(spec: SpawnSpec) -> Self {
        Self { spec, live: Mutex::new(None), next_id: 1.into(), starts: 0.into(), lanes: Lanes::default() }
    }

    pub fn spawn_spec(&self) -> &SpawnSpec {
        &self.spec
    }

    pub fn starts(&self) -> u32 {
        self.starts.load(Ordering::Relaxed)
    }

    pub(super) fn lanes(&self) -> &Lanes {
        &self.lanes
    }

    fn id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn spawn(&self) -> Result<Conn, HarnessError> {
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
        self.starts.fetch_add(1, Ordering::Relaxed);
        let waiting = Arc::new(Table(SyncMutex::new(Waiting::default())));
        let (lines, queue) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(stdin, queue));
        tokio::spawn(read_replies(stdout, waiting.clone()));
        Ok(Conn { lines, waiting, child: Mutex::new(child) })
    }

    /// The running child, or a new one when there is none or it has exited.
    async fn connection(&self) -> Result<Arc<Conn>, HarnessError> {
        let mut slot = self.live.lock().await;
        if let Some(c) = slot.as_ref()
            && c.alive().await
        {
            return Ok(c.clone());
        }
        let c = Arc::new(self.spawn()?);
        *slot = Some(c.clone());
        Ok(c)
    }

    /// Send one command and wait for the reply with its id.
    ///
    /// Several calls may be in flight; the harness answers each when it is done. On `timeout` the
    /// request is cancelled (its job stopped, the others untouched) and [`HarnessError::Timeout`]
    /// returned; a child that then answers nothing within [`LIVENESS_GRACE`] is killed. A call whose
    /// future is dropped sends `cancel` for its id: the child goes on serving the others.
    pub async fn call(&self, command: &str, args: Value, timeout: Duration) -> Result<Value, HarnessError> {
        let id = self.id();
        let line = serde_json::to_string(&Request { id, command, args }).map_err(|e| HarnessError::Protocol(e.to_string()))? + "\n";
        // A child found dead (between requests) is replaced: once, then its death is the answer.
        let (conn, rx) = {
            let conn = self.connection().await?;
            match conn.waiting.register(id) {
                Some(rx) => (conn, rx),
                None => {
                    self.discard(&conn).await;
                    let conn = self.connection().await?;
                    let rx = conn.waiting.register(id).ok_or_else(|| HarnessError::Died("the harness process keeps exiting".into()))?;
                    (conn, rx)
                }
            }
        };
        conn.send(line);
        let mut pending = InFlight { harness: self, conn: &conn, id, settled: false };
        let outcome = tokio::time::timeout(timeout, rx).await;
        pending.settled = true;
        match outcome {
            Ok(Ok(Ok(v))) => response_payload(v).map_err(HarnessError::Harness),
            Ok(Ok(Err(HarnessError::Died(why)))) => Err(HarnessError::Died(format!("{why} while answering `{command}`"))),
            Ok(Ok(Err(e))) => Err(e),
            Ok(Err(_)) => Err(HarnessError::Died(format!("the harness process went away while answering `{command}`"))),
            Err(_) => {
                self.give_up(&conn, id).await;
                Err(HarnessError::Timeout { command: command.to_string(), seconds: timeout.as_secs() })
            }
        }
    }

    /// A request that ran past its time: cancel it, and make sure the child still answers at all
    /// (the cancelled request's reply, or a ping's); one that does not is hung, and is killed.
    async fn give_up(&self, conn: &Arc<Conn>, id: u64) {
        let answer = conn.waiting.register(id);
        conn.send(cancel_line(self.id(), id));
        let ping = self.id();
        let pong = conn.waiting.register(ping);
        conn.send(format!("{{\"id\":{ping},\"command\":\"ping\",\"args\":{{}}}}\n"));
        let heard = async {
            match (answer, pong) {
                (Some(a), Some(p)) => {
                    tokio::select! {
                        r = a => matches!(r, Ok(Ok(_))),
                        r = p => matches!(r, Ok(Ok(_))),
                    }
                }
                _ => false,
            }
        };
        let alive = tokio::time::timeout(LIVENESS_GRACE, heard).await.unwrap_or(false);
        conn.waiting.forget(id);
        conn.waiting.forget(ping);
        if !alive {
            tracing::warn!("the harness answered nothing within {} s of a cancel; restarting it", LIVENESS_GRACE.as_secs());
            self.discard(conn).await;
        }
    }

    /// End `conn`'s child and empty the slot if it still holds it: the next call starts afresh.
    async fn discard(&self, conn: &Arc<Conn>) {
        {
            let mut slot = self.live.lock().await;
            if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn)) {
                *slot = None;
            }
        }
        let _ = conn.child.lock().await.start_kill();
    }

    /// How many jobs the harness runs at once (`ping`'s `pool`), read once; see [`Lanes`].
    pub(super) async fn pool(&self) -> PoolInfo {
        self.lanes.info(|| self.call("ping", serde_json::json!({}), super::POOL_PING_TIMEOUT)).await
    }

    /// Ask the child to exit and wait briefly; kill it otherwise. Requests still in flight are
    /// answered (cancelled) by the harness first.
    pub async fn shutdown(&self) {
        let Some(conn) = self.live.lock().await.take() else { return };
        conn.send(format!("{{\"id\":{},\"command\":\"shutdown\",\"args\":{{}}}}\n", self.id()));
        let mut child = conn.child.lock().await;
        if tokio::time::timeout(Duration::from_secs(2), child.wait()).await.is_err() {
            let _ = child.start_kill();
        }
    }
}

fn cancel_line(own: u64, target: u64) -> String {
    format!("{{\"id\":{own},\"command\":\"cancel\",\"args\":{{\"id\":{target}}}}}\n")
}

/// A call waiting for its reply. Dropped before it settled (the caller's future was dropped: a stage
/// cancelled from the editor), it stops waiting and sends `cancel` for its id, so that its job stops
/// and the child goes on serving every other request.
struct InFlight<'a> {
    harness: &'a StdioHarness,
    conn: &'a Arc<Conn>,
    id: u64,
    settled: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.conn.waiting.forget(self.id);
            self.conn.send(cancel_line(self.harness.id(), self.id));
        }
    }
}

async fn write_lines(mut stdin: ChildStdin, mut queue: mpsc::UnboundedReceiver<String>) {
    while let Some(line) = queue.recv().await {
        if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
}

async fn read_replies(stdout: ChildStdout, waiting: Arc<Table>) {
    let mut reader = BufReader::new(stdout);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => waiting.route(&String::from_utf8_lossy(&buf)),
        }
    }
    waiting.close("the harness process exited");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table(SyncMutex::new(Waiting::default()))
    }

    #[test]
    fn replies_go_to_the_call_with_their_id_whatever_the_order() {
        let t = table();
        let mut a = t.register(1).unwrap();
        let mut b = t.register(2).unwrap();
        t.route("{\"id\": 2, \"verdict\": \"correct\"}\n");
        t.route("not json: a stray print\n");
        t.route("{\"id\": 7, \"verdict\": \"incorrect\"}\n"); // nobody waits for 7
        t.route("{\"id\": 1, \"verdict\": \"incorrect\"}\n");
        assert_eq!(b.try_recv().unwrap().unwrap()["verdict"], "correct");
        assert_eq!(a.try_recv().unwrap().unwrap()["verdict"], "incorrect");
    }

    #[test]
    fn a_reply_without_an_id_goes_to_the_only_call_and_to_none_of_two() {
        let t = table();
        let mut a = t.register(1).unwrap();
        t.route("{\"id\": null, \"verdict\": \"error\", \"error\": \"request is not JSON\"}");
        assert_eq!(a.try_recv().unwrap().unwrap()["verdict"], "error");
        let mut b = t.register(2).unwrap();
        let mut c = t.register(3).unwrap();
        t.route("{\"id\": null, \"verdict\": \"error\", \"error\": \"request is not JSON\"}");
        assert!(b.try_recv().is_err() && c.try_recv().is_err(), "two calls in flight: nobody can tell whose");
    }

    #[test]
    fn a_closed_output_fails_every_call_in_flight_and_every_later_one() {
        let t = table();
        let mut a = t.register(1).unwrap();
        let mut b = t.register(2).unwrap();
        t.close("the harness process exited");
        assert!(matches!(a.try_recv().unwrap(), Err(HarnessError::Died(_))));
        assert!(matches!(b.try_recv().unwrap(), Err(HarnessError::Died(_))));
        assert!(t.register(3).is_none());
    }
}
