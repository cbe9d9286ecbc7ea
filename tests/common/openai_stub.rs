//! A scripted HTTP server on loopback: each request gets the next scripted reply. Serves as an
//! OpenAI-compatible chat-completions endpoint (`Reply::Chat`) or any JSON API (`Reply::Raw`),
//! and records every request body for assertions. As a harness it answers `ping` itself (the client
//! asks it once for the pool's size), apart from the script: with no `pool` by default, an older
//! harness's answer (one job at a time), or the pool given to [`Stub::with_pool`]; pings are counted
//! in `pings`, not recorded in `requests`.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[derive(Debug, Clone)]
pub enum Reply {
    /// A chat completion whose message content is this text.
    Chat(String),
    /// Status and raw body.
    Raw(u16, String),
    /// Wait, then answer.
    After(Duration, Box<Reply>),
    /// Status and body made from the request (a harness `sweep` answers one result per candidate).
    Fn(fn(&serde_json::Value) -> (u16, String)),
}

pub struct Stub {
    pub url: String,
    pub requests: Arc<Mutex<Vec<serde_json::Value>>>,
    pub pings: Arc<std::sync::atomic::AtomicUsize>,
    /// The most requests (pings aside) the stub was answering at once.
    pub most_at_once: Arc<std::sync::atomic::AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Stub {
    pub async fn start(script: Vec<Reply>) -> Stub {
        Self::with_pool(script, None).await
    }

    /// A harness stub whose `ping` reports `pool` (e.g. `{"kind": "cuda", "size": 2, "kinds": {"cuda": 2}}`).
    pub async fn with_pool(script: Vec<Reply>, pool: Option<serde_json::Value>) -> Stub {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let pong = match pool {
            Some(p) => serde_json::json!({"id": 0, "ok": true, "pool": p}).to_string(),
            None => serde_json::json!({"id": 0, "ok": true}).to_string(),
        };
        let pings = Arc::new(AtomicUsize::new(0));
        let most_at_once = Arc::new(AtomicUsize::new(0));
        let at_once = Arc::new(AtomicUsize::new(0));
        let (pings2, most2) = (pings.clone(), most_at_once.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let reqs = requests.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else { return };
                let reqs = reqs.clone();
                let script = script.clone();
                let (pong, pings, most, at_once) = (pong.clone(), pings2.clone(), most2.clone(), at_once.clone());
                tokio::spawn(async move {
                    let Some(body) = read_request(&mut sock).await else { return };
                    let request: serde_json::Value = serde_json::from_str(&body).unwrap_or(serde_json::Value::String(body));
                    let (status, body) = if request["command"] == "ping" {
                        pings.fetch_add(1, Ordering::SeqCst);
                        (200, pong)
                    } else {
                        reqs.lock().unwrap().push(request.clone());
                        let reply =
                            script.lock().unwrap().pop_front().unwrap_or(Reply::Raw(500, "{\"error\": \"script exhausted\"}".into()));
                        let now = at_once.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        let answer = resolve(reply, &request).await;
                        at_once.fetch_sub(1, Ordering::SeqCst);
                        answer
                    };
                    let resp = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = sock.write_all(resp.as_bytes()).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        Stub { url, requests, pings, most_at_once, task }
    }

    /// Chat requests received, as the list of their message contents joined.
    pub fn prompts(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|r| {
                r["messages"]
                    .as_array()
                    .map(|m| m.iter().filter_map(|x| x["content"].as_str()).collect::<Vec<_>>().join("\n---\n"))
                    .unwrap_or_default()
            })
            .collect()
    }
}

async fn resolve(mut reply: Reply, request: &serde_json::Value) -> (u16, String) {
    loop {
        match reply {
            Reply::After(d, r) => {
                tokio::time::sleep(d).await;
                reply = *r;
            }
            Reply::Raw(s, b) => return (s, b),
            Reply::Fn(f) => return f(request),
            Reply::Chat(content) => {
                let body = serde_json::json!({
                    "id": "stub", "object": "chat.completion",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}
                });
                return (200, body.to_string());
            }
        }
    }
}

async fn read_request(sock: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_ascii_lowercase();
    let len: usize = head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    while buf.len() < header_end + len {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(String::from_utf8_lossy(&buf[header_end..]).to_string())
}
