//! A harness on another machine (`harness.url`): the same request objects as `serve`, one per POST.
//!
//! A path on this machine names nothing there, so every file an `evaluate` or `sweep` names is sent
//! as its contents, `{"name", "content", "sha256"}` (the harness writes them into a private directory
//! per request and names each in the result's `files`). The harness wants a bearer token: the value of
//! the variable named by `harness.token-env` (default `XEFORGE_HARNESS_TOKEN`), read per request and
//! never logged or kept. `https://` URLs go over rustls (`crate::net`).

use super::protocol::{Request, response_payload, tail_chars};
use super::{HarnessError, Lanes, PoolInfo};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The variable holding the token when `harness.token-env` names none.
pub const DEFAULT_TOKEN_ENV: &str = "XEFORGE_HARNESS_TOKEN";

pub struct HttpHarness {
    url: String,
    token_env: String,
    client: reqwest::Client,
    next_id: std::sync::atomic::AtomicU64,
    lanes: Lanes,
}

impl HttpHarness {
    pub fn new(url: &str, token_env: Option<&str>) -> Result<Self, HarnessError> {
        let client = crate::net::client_builder().build().map_err(|e| HarnessError::Http(e.to_string()))?;
        let token_env = token_env.filter(|t| !t.trim().is_empty()).unwrap_or(DEFAULT_TOKEN_ENV).to_string();
        Ok(Self { url: url.trim_end_matches('/').to_string(), token_env, client, next_id: 1.into(), lanes: Lanes::default() })
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

    pub async fn call(&self, command: &str, mut args: Value, timeout: Duration) -> Result<Value, HarnessError> {
        if matches!(command, "evaluate" | "sweep") {
            attach_contents(&mut args)?;
        }
        let id = self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body = Request { id, command, args };
        let mut req = self.client.post(&self.url).timeout(timeout).json(&body);
        if let Some(token) = std::env::var(&self.token_env).ok().filter(|t| !t.is_empty()) {
            req = req.bearer_auth(token);
        }
        let resp = req.send().await.map_err(|e| {
            if e.is_timeout() {
                HarnessError::Timeout { command: command.to_string(), seconds: timeout.as_secs() }
            } else {
                HarnessError::Http(format!("{}: {e}", self.url))
            }
        })?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| HarnessError::Http(e.to_string()))?;
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
