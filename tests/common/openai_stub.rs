//! A scripted HTTP server on loopback: each request gets the next scripted reply. Serves as an
//! OpenAI-compatible chat-completions endpoint (`Reply::Chat`) or any JSON API (`Reply::Raw`),
//! and records every request body for assertions.
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
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Stub {
    pub async fn start(script: Vec<Reply>) -> Stub {
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
                tokio::spawn(async move {
                    let Some(body) = read_request(&mut sock).await else { return };
                    let request: serde_json::Value = serde_json::from_str(&body).unwrap_or(serde_json::Value::String(body));
                    reqs.lock().unwrap().push(request.clone());
                    let reply = script.lock().unwrap().pop_front().unwrap_or(Reply::Raw(500, "{\"error\": \"script exhausted\"}".into()));
                    let (status, body) = resolve(reply, &request).await;
                    let resp = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = sock.write_all(resp.as_bytes()).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        Stub { url, requests, task }
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
