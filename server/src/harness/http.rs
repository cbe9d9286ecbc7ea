//! A harness on another machine (`harness.url`): the same request objects as `serve`, one per POST.

use super::HarnessError;
use super::protocol::{Request, response_payload};
use std::time::Duration;

pub struct HttpHarness {
    url: String,
    client: reqwest::Client,
    next_id: std::sync::atomic::AtomicU64,
}

impl HttpHarness {
    pub fn new(url: &str) -> Result<Self, HarnessError> {
        let client = crate::net::client_builder().build().map_err(|e| HarnessError::Http(e.to_string()))?;
        Ok(Self { url: url.trim_end_matches('/').to_string(), client, next_id: 1.into() })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub async fn call(&self, command: &str, args: serde_json::Value, timeout: Duration) -> Result<serde_json::Value, HarnessError> {
        let id = self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body = Request { id, command, args };
        let resp = self.client.post(&self.url).timeout(timeout).json(&body).send().await.map_err(|e| {
            if e.is_timeout() {
                HarnessError::Timeout { command: command.to_string(), seconds: timeout.as_secs() }
            } else {
                HarnessError::Http(format!("{}: {e}", self.url))
            }
        })?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| HarnessError::Http(e.to_string()))?;
        // A harness answers `error` verdicts with a JSON body even on non-2xx statuses; use it if present.
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(v) if v.is_object() => response_payload(v).map_err(HarnessError::Harness),
            _ if !status.is_success() => {
                Err(HarnessError::Http(format!("{}: HTTP {status}: {}", self.url, super::protocol::tail_chars(&text, 300))))
            }
            _ => Err(HarnessError::Protocol(format!("not a JSON object: {}", super::protocol::tail_chars(&text, 300)))),
        }
    }
}
