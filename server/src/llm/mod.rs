//! OpenAI-compatible chat-completions client (OpenAI, vLLM, Ollama, llama.cpp, LM Studio).
//!
//! Settings come from `[tool.xeforge.llm]` (`url`, `model`, `api-key-env`, `timeout`, `retries`,
//! `token-budget`) or `--llm-url`/`--llm-model`. The key is read from the named environment variable
//! only, sent as a bearer token, and never logged, recorded or passed to the harness.
//! Requests retry with exponential backoff on 429 and 5xx (honouring `Retry-After`), stop when the
//! run's token budget is spent, and end at once when the run is cancelled.

pub mod extract;

pub use extract::{NoCodeBlock, extract_code_block};

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, PartialEq)]
pub struct LlmSettings {
    /// Base URL (`http://localhost:11434/v1`) or the full `/chat/completions` URL.
    pub url: String,
    pub model: String,
    /// Environment variable holding the API key (default `OPENAI_API_KEY`).
    pub api_key_env: String,
    /// Per-request limit.
    pub timeout: Duration,
    /// Extra attempts after the first on 429/5xx/timeouts.
    pub retries: u32,
    /// First backoff delay; doubles each retry.
    pub backoff: Duration,
    /// Total tokens (prompt + completion) one stage run may spend.
    pub token_budget: u64,
    pub temperature: f32,
    /// `max_tokens` for one reply (None: the server's default).
    pub max_reply_tokens: Option<u32>,
}

impl Default for LlmSettings {
    fn default() -> Self {
        Self {
            url: String::new(),
            model: String::new(),
            api_key_env: "OPENAI_API_KEY".into(),
            timeout: Duration::from_secs(180),
            retries: 3,
            backoff: Duration::from_secs(2),
            token_budget: 400_000,
            temperature: 0.2,
            max_reply_tokens: None,
        }
    }
}

impl LlmSettings {
    pub fn is_configured(&self) -> bool {
        !self.url.trim().is_empty() && !self.model.trim().is_empty()
    }

    pub fn endpoint(&self) -> String {
        let u = self.url.trim().trim_end_matches('/');
        if u.ends_with("/chat/completions") { u.to_string() } else { format!("{u}/chat/completions") }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("no language model configured: set [tool.xeforge.llm] url and model, or --llm-url and --llm-model")]
    NotConfigured,
    #[error("{endpoint} needs an API key: set the environment variable {var}")]
    MissingApiKey { endpoint: String, var: String },
    #[error("the model endpoint did not answer within {0} s")]
    Timeout(u64),
    #[error("the model endpoint answered HTTP {status}: {body}")]
    Status { status: u16, body: String },
    #[error("could not reach the model endpoint: {0}")]
    Transport(String),
    #[error("unexpected reply from the model endpoint: {0}")]
    BadResponse(String),
    #[error("the token budget of this run is spent ({used} of {budget} tokens)")]
    BudgetExhausted { used: u64, budget: u64 },
    #[error("cancelled")]
    Cancelled,
}

impl LlmError {
    /// Whether another attempt may succeed.
    fn retryable(&self) -> bool {
        match self {
            LlmError::Timeout(_) | LlmError::Transport(_) => true,
            LlmError::Status { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn system(c: impl Into<String>) -> Self {
        Self { role: "system".into(), content: c.into() }
    }
    pub fn user(c: impl Into<String>) -> Self {
        Self { role: "user".into(), content: c.into() }
    }
    pub fn assistant(c: impl Into<String>) -> Self {
        Self { role: "assistant".into(), content: c.into() }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub total_tokens: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub content: String,
    pub usage: Usage,
    /// Attempts it took (1 = first try).
    pub attempts: u32,
}

pub struct LlmClient {
    settings: LlmSettings,
    http: reqwest::Client,
    used: AtomicU64,
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: &'a [ChatMessage],
    temperature: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    stream: bool,
}

#[derive(Deserialize)]
struct ChatResponse {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<String>,
}

impl LlmClient {
    pub fn new(settings: LlmSettings) -> Result<Self, LlmError> {
        if !settings.is_configured() {
            return Err(LlmError::NotConfigured);
        }
        let http = crate::net::client_builder().build().map_err(|e| LlmError::Transport(e.to_string()))?;
        Ok(Self { settings, http, used: AtomicU64::new(0) })
    }

    pub fn settings(&self) -> &LlmSettings {
        &self.settings
    }

    pub fn tokens_used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    fn api_key(&self) -> Result<Option<String>, LlmError> {
        let key = std::env::var(&self.settings.api_key_env).ok().filter(|k| !k.trim().is_empty());
        // Local servers need no key; OpenAI's own endpoint always does, and saying so beats a 401.
        if key.is_none() && self.settings.endpoint().contains("api.openai.com") {
            return Err(LlmError::MissingApiKey { endpoint: self.settings.endpoint(), var: self.settings.api_key_env.clone() });
        }
        Ok(key)
    }

    /// One chat completion, with retries, budget and cancellation.
    pub async fn chat(&self, messages: &[ChatMessage], cancel: &CancellationToken) -> Result<Reply, LlmError> {
        let used = self.tokens_used();
        if used >= self.settings.token_budget {
            return Err(LlmError::BudgetExhausted { used, budget: self.settings.token_budget });
        }
        let key = self.api_key()?;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let result = tokio::select! {
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                r = self.once(messages, key.as_deref()) => r,
            };
            match result {
                Ok((content, usage)) => {
                    let spent = if usage.total_tokens > 0 {
                        usage.total_tokens
                    } else {
                        // No usage reported (some local servers): estimate at 4 characters a token.
                        let chars: usize = messages.iter().map(|m| m.content.len()).sum::<usize>() + content.len();
                        (chars / 4) as u64
                    };
                    self.used.fetch_add(spent, Ordering::Relaxed);
                    return Ok(Reply { content, usage, attempts: attempt });
                }
                Err((e, retry_after)) if e.retryable() && attempt <= self.settings.retries => {
                    let backoff = self.settings.backoff.saturating_mul(1 << (attempt - 1).min(6));
                    let wait = retry_after.map(|r| r.min(Duration::from_secs(60))).unwrap_or(backoff);
                    tracing::info!("model endpoint: {e}; retrying in {:.1} s (attempt {attempt})", wait.as_secs_f64());
                    tokio::select! {
                        _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                        _ = tokio::time::sleep(wait) => {}
                    }
                }
                Err((e, _)) => return Err(e),
            }
        }
    }

    async fn once(&self, messages: &[ChatMessage], key: Option<&str>) -> Result<(String, Usage), (LlmError, Option<Duration>)> {
        let body = ChatRequest {
            model: &self.settings.model,
            messages,
            temperature: self.settings.temperature,
            max_tokens: self.settings.max_reply_tokens,
            stream: false,
        };
        let mut req = self.http.post(self.settings.endpoint()).timeout(self.settings.timeout).json(&body);
        if let Some(k) = key {
            req = req.bearer_auth(k);
        }
        let secs = self.settings.timeout.as_secs();
        let resp = req.send().await.map_err(|e| (classify(e, secs), None))?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = resp.text().await.map_err(|e| (classify(e, secs), None))?;
        if !status.is_success() {
            let body = crate::harness::protocol::tail_chars(&text, 300);
            return Err((LlmError::Status { status: status.as_u16(), body }, retry_after));
        }
        let parsed: ChatResponse = serde_json::from_str(&text).map_err(|e| (LlmError::BadResponse(e.to_string()), None))?;
        let content = parsed
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .ok_or_else(|| (LlmError::BadResponse("no choices[0].message.content".into()), None))?;
        Ok((content, parsed.usage.unwrap_or_default()))
    }
}

fn classify(e: reqwest::Error, secs: u64) -> LlmError {
    if e.is_timeout() { LlmError::Timeout(secs) } else { LlmError::Transport(without_url_secrets(&e.to_string())) }
}

/// reqwest errors quote the URL; a URL may carry credentials (`http://user:key@host`). Drop them.
fn without_url_secrets(s: &str) -> String {
    match (s.find("://"), s.find('@')) {
        (Some(a), Some(b)) if b > a => format!("{}://{}", &s[..a], &s[b + 1..]),
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_accepts_base_or_full_url() {
        let mut s = LlmSettings { url: "http://localhost:11434/v1/".into(), model: "m".into(), ..Default::default() };
        assert_eq!(s.endpoint(), "http://localhost:11434/v1/chat/completions");
        s.url = "http://h/v1/chat/completions".into();
        assert_eq!(s.endpoint(), "http://h/v1/chat/completions");
    }

    #[test]
    fn unconfigured_is_a_typed_error() {
        assert!(matches!(LlmClient::new(LlmSettings::default()), Err(LlmError::NotConfigured)));
    }

    #[test]
    fn credentials_in_urls_are_not_repeated() {
        assert_eq!(
            without_url_secrets("error sending request for url (http://u:sk-1@h/v1)"),
            "error sending request for url (http://h/v1)"
        );
    }
}
