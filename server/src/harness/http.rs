//! A harness on another machine (`harness.url`): the same request objects as `serve`, one per POST.
//!
//! A path on this machine names nothing there, so every file an `evaluate` or `sweep` names is sent
//! as its contents, `{"name", "content", "sha256"}` (the harness writes them into a private directory
//! per request and names each in the result's `files`). The harness wants a bearer token: the value of
//! the variable named by `harness.token-env` (default `XEFORGE_HARNESS_TOKEN`), read per request and
//! never logged or kept. `https://` URLs go over rustls (`crate::net`).
//!
//! Every job (`evaluate`, `sweep`, `probe`) carries an id of this client's own making (a random prefix
//! and a counter: other clients share the harness, and an id names one request of all of theirs). A
//! request past its timeout sends `cancel` for its id (a POST of its own, authenticated like any) before
//! it lets go of its connection, and one whose caller drops it (a stage cancelled from the editor)
//! sends it from a task of its own: the harness stops that job and frees its lane, as the stdio
//! client's `cancel` does. (The harness also cancels a request whose connection closes; the explicit
//! `cancel` does not depend on a proxy in between passing that on.)

use super::protocol::{response_payload, tail_chars};
use super::{HarnessError, Lanes, PoolInfo};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The variable holding the token when `harness.token-env` names none.
pub const DEFAULT_TOKEN_ENV: &str = "XEFORGE_HARNESS_TOKEN";

/// How long a `cancel` may take to be answered.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(10);

/// The commands that run a job on a lane: the ones a `cancel` can stop.
fn cancellable(command: &str) -> bool {
    matches!(command, "evaluate" | "sweep" | "probe")
}

pub struct HttpHarness {
    url: String,
    token_env: String,
    client: reqwest::Client,
    /// This client's ids are `<prefix>-<n>`: the prefix random per client, so that two clients of one
    /// harness (an editor and a CLI run) never name each other's requests.
    prefix: String,
    next_id: std::sync::atomic::AtomicU64,
    lanes: Lanes,
}

impl HttpHarness {
    pub fn new(url: &str, token_env: Option<&str>) -> Result<Self, HarnessError> {
        let client = crate::net::client_builder().build().map_err(|e| HarnessError::Http(e.to_string()))?;
        let token_env = token_env.filter(|t| !t.trim().is_empty()).unwrap_or(DEFAULT_TOKEN_ENV).to_string();
        Ok(Self {
            url: url.trim_end_matches('/').to_string(),
            token_env,
            client,
            prefix: random_prefix(),
            next_id: 1.into(),
            lanes: Lanes::default(),
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub(super) fn lanes(&self) -> &Lanes {
        &self.lanes
    }

    /// How many jobs the remote harness runs at once (`ping`'s `pool`), read once. Other clients of
    /// the same harness share its lanes: this bounds only what this client sends.
    pub(super) async fn pool(&self) -> PoolInfo {
        self.lanes.info(|| self.call("ping", serde_json::json!({}), super::POOL_PING_TIMEOUT)).await
    }

    fn id(&self) -> String {
        format!("{}-{}", self.prefix, self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    fn post(&self, body: &Value, timeout: Duration) -> reqwest::RequestBuilder {
        post(&self.client, &self.url, &self.token_env, body, timeout)
    }

    /// Send one request and wait for its answer. A job past `timeout` is cancelled on the harness
    /// ([`HarnessError::Timeout`]); one whose future is dropped is cancelled too (see the module).
    pub async fn call(&self, command: &str, mut args: Value, timeout: Duration) -> Result<Value, HarnessError> {
        if matches!(command, "evaluate" | "sweep") {
            attach_contents(&mut args)?;
        }
        let id = self.id();
        let body = json!({"id": id, "command": command, "args": args});
        let mut pending = Pending { harness: self, id: &id, settled: !cancellable(command) };
        let exchange = async {
            let resp = self.post(&body, timeout + CANCEL_TIMEOUT).send().await.map_err(|e| {
                if e.is_timeout() {
                    HarnessError::Timeout { command: command.to_string(), seconds: timeout.as_secs() }
                } else {
                    HarnessError::Http(format!("{}: {e}", self.url))
                }
            })?;
            let status = resp.status();
            let text = resp.text().await.map_err(|e| HarnessError::Http(e.to_string()))?;
            Ok::<_, HarnessError>((status, text))
        };
        tokio::pin!(exchange);
        let outcome = tokio::time::timeout(timeout, &mut exchange).await;
        let (status, text) = match outcome {
            Ok(answer) => {
                pending.settled = true;
                answer?
            }
            Err(_) => {
                // Cancelled while its connection is still open: the harness stops the job now, and
                // answers the request itself `cancelled`, which nobody reads.
                if !pending.settled {
                    cancel(&self.client, &self.url, &self.token_env, &self.id(), &id).await;
                }
                pending.settled = true;
                return Err(HarnessError::Timeout { command: command.to_string(), seconds: timeout.as_secs() });
            }
        };
        match status.as_u16() {
            401 => {
                return Err(HarnessError::Http(format!(
                    "{}: HTTP 401: the harness wants its token; put it in ${} (harness.token-env names the variable)",
                    self.url, self.token_env
                )));
            }
            413 => return Err(HarnessError::Http(format!("{}: HTTP 413: {}", self.url, tail_chars(&text, 300)))),
            _ => {}
        }
        // A harness answers `error` verdicts with a JSON body even on non-2xx statuses; use it if present.
        match serde_json::from_str::<Value>(&text) {
            Ok(v) if v.is_object() => response_payload(v).map_err(HarnessError::Harness),
            _ if !status.is_success() => Err(HarnessError::Http(format!("{}: HTTP {status}: {}", self.url, tail_chars(&text, 300)))),
            _ => Err(HarnessError::Protocol(format!("not a JSON object: {}", tail_chars(&text, 300)))),
        }
    }
}

fn post(client: &reqwest::Client, url: &str, token_env: &str, body: &Value, timeout: Duration) -> reqwest::RequestBuilder {
    let mut req = client.post(url).timeout(timeout).json(body);
    if let Some(token) = std::env::var(token_env).ok().filter(|t| !t.is_empty()) {
        req = req.bearer_auth(token);
    }
    req
}

/// `cancel` of the request `target`, sent as its own request `own`. What it finds is only logged: a
/// request that finished first is named by nothing, and an older harness has no `cancel` over HTTP.
async fn cancel(client: &reqwest::Client, url: &str, token_env: &str, own: &str, target: &str) {
    let body = json!({"id": own, "command": "cancel", "args": {"id": target}});
    let answer = async {
        let resp = post(client, url, token_env, &body, CANCEL_TIMEOUT).send().await.map_err(|e| e.to_string())?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| e.to_string())?;
        Ok::<_, String>(format!("HTTP {status}: {}", tail_chars(&text, 300)))
    };
    match answer.await {
        Ok(a) => tracing::debug!("cancel of harness request {target}: {a}"),
        Err(e) => tracing::debug!("cancel of harness request {target} not sent: {e}"),
    }
}

/// A job's request waiting for its answer. Dropped before it settled (the caller's future was
/// dropped), it sends `cancel` for its id from a task of its own, so that the harness stops the job.
struct Pending<'a> {
    harness: &'a HttpHarness,
    id: &'a str,
    settled: bool,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let h = self.harness;
        let (client, url, token_env, own, target) = (h.client.clone(), h.url.clone(), h.token_env.clone(), h.id(), self.id.to_string());
        runtime.spawn(async move { cancel(&client, &url, &token_env, &own, &target).await });
    }
}

/// 64 bits that differ between clients and runs: std's hasher keys are random per process and per
/// `RandomState`; the time and the process id go in too.
fn random_prefix() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    format!("xf-{:016x}", h.finish())
}

/// Replace every file path of `evaluate`/`sweep` arguments by the file itself. Without a `spec`, the
/// spec the harness would have found beside the kernel (`<kernel>.yaml`, `.yml`) is sent as `spec`.
pub fn attach_contents(args: &mut Value) -> Result<(), HarnessError> {
    let Some(obj) = args.as_object_mut() else { return Ok(()) };
    if obj.get("spec").is_none_or(Value::is_null)
        && let Some(kernel) = obj.get("kernel").and_then(Value::as_str)
        && let Some(spec) = spec_beside(Path::new(kernel))
    {
        obj.insert("spec".into(), Value::String(spec.display().to_string()));
    }
    for key in ["kernel", "candidate", "spec", "reference"] {
        if let Some(Value::String(path)) = obj.get(key) {
            let file = file_object(Path::new(path))?;
            obj.insert(key.into(), file);
        }
    }
    if let Some(Value::Array(list)) = obj.get_mut("candidates") {
        for item in list.iter_mut() {
            if let Value::String(path) = item {
                *item = file_object(Path::new(path))?;
            }
        }
    }
    Ok(())
}

fn spec_beside(kernel: &Path) -> Option<PathBuf> {
    ["yaml", "yml"].iter().map(|ext| kernel.with_extension(ext)).find(|p| p.is_file())
}

/// `{"name", "content", "sha256"}` of one file: the harness checks the hash against what arrived.
fn file_object(path: &Path) -> Result<Value, HarnessError> {
    let bytes = std::fs::read(path).map_err(|e| HarnessError::File(format!("{}: {e}", path.display())))?;
    let content = String::from_utf8(bytes).map_err(|_| HarnessError::File(format!("{}: not UTF-8 text", path.display())))?;
    let sha256 = format!("{:x}", Sha256::digest(content.as_bytes()));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "file.py".into());
    Ok(json!({"name": name, "content": content, "sha256": sha256}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_contents_and_the_spec_beside_the_kernel_goes_too() {
        let dir = tempfile::tempdir().unwrap();
        let kernel = dir.path().join("k.py");
        std::fs::write(&kernel, "x = 1\n").unwrap();
        std::fs::write(dir.path().join("k.yaml"), "inputs: {}\n").unwrap();
        let cand = dir.path().join("c.py");
        std::fs::write(&cand, "x = 2\n").unwrap();
        let mut args = json!({"kernel": kernel, "candidates": [cand, cand], "device": "cpu"});
        attach_contents(&mut args).unwrap();
        assert_eq!(args["kernel"]["name"], "k.py");
        assert_eq!(args["kernel"]["content"], "x = 1\n");
        assert_eq!(args["kernel"]["sha256"], format!("{:x}", Sha256::digest(b"x = 1\n")));
        assert_eq!(args["spec"]["name"], "k.yaml");
        assert_eq!(args["candidates"][1]["content"], "x = 2\n");
        assert_eq!(args["device"], "cpu");
        assert!(!args.to_string().contains(&dir.path().display().to_string()), "no local path is sent");
    }

    #[test]
    fn a_missing_file_is_a_file_error() {
        let mut args = json!({"kernel": "/nonexistent/k.py", "candidate": "/nonexistent/c.py"});
        assert!(matches!(attach_contents(&mut args), Err(HarnessError::File(_))));
    }
}
