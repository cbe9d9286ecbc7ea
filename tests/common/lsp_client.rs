//! A small, synchronous LSP test client that drives the real `xeforge` binary over stdio.
//!
//! A reader thread splits the server's output into messages. Server→client requests are answered
//! by that thread (configuration from `settings`, registrations and progress tokens accepted,
//! applyEdit recorded and accepted), so the server never waits on the test. Include it with
//! `#[path = "common/lsp_client.rs"] mod lsp_client;`.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub const TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Default)]
struct Inbox {
    /// Responses and notifications not yet consumed, in arrival order.
    messages: VecDeque<Value>,
    applied_edits: Vec<Value>,
    server_requests: Vec<String>,
    /// Params of every server request, in arrival order.
    server_request_params: Vec<(String, Value)>,
    /// Scripted results for server requests by method (e.g. `xeforge/askProblem`); others get `null`.
    answers: std::collections::HashMap<String, Value>,
    closed: bool,
}

type Shared<T> = Arc<Mutex<T>>;

pub struct Client {
    pub child: Child,
    stdin: Shared<Option<ChildStdin>>,
    inbox: Arc<(Mutex<Inbox>, Condvar)>,
    next_id: i64,
    /// What `workspace/configuration` answers for each item.
    pub settings: Shared<Value>,
}

pub fn binary() -> String {
    std::env::var("XEFORGE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_xeforge").to_string())
}

fn write_message(w: &mut impl Write, v: &Value) -> std::io::Result<()> {
    let body = serde_json::to_vec(v).expect("serialise");
    write!(w, "Content-Length: {}\r\n\r\n", body.len())?;
    w.write_all(&body)?;
    w.flush()
}

fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            len = v.trim().parse::<usize>().ok();
        }
    }
    let mut buf = vec![0; len?];
    r.read_exact(&mut buf).ok()?;
    serde_json::from_slice(&buf).ok()
}

impl Client {
    pub fn spawn() -> Client {
        Self::spawn_args(&["lsp"])
    }

    pub fn spawn_args(args: &[&str]) -> Client {
        let mut child = Command::new(binary())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start xeforge lsp");
        let stdout = child.stdout.take().expect("stdout");
        let stdin: Shared<Option<ChildStdin>> = Arc::new(Mutex::new(child.stdin.take()));
        let inbox = Arc::new((Mutex::new(Inbox::default()), Condvar::new()));
        let settings: Shared<Value> = Arc::new(Mutex::new(json!({})));
        let (reader_inbox, reader_stdin, reader_settings) = (inbox.clone(), stdin.clone(), settings.clone());
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(msg) = read_message(&mut r) {
                let (lock, cv) = &*reader_inbox;
                if msg.get("method").is_some() && msg.get("id").is_some() {
                    let method = msg["method"].as_str().unwrap_or("").to_string();
                    let result = match method.as_str() {
                        "workspace/configuration" => {
                            let n = msg["params"]["items"].as_array().map_or(1, Vec::len);
                            Value::Array(vec![reader_settings.lock().unwrap().clone(); n])
                        }
                        "workspace/applyEdit" => {
                            lock.lock().unwrap().applied_edits.push(msg["params"].clone());
                            json!({"applied": true})
                        }
                        other => lock.lock().unwrap().answers.get(other).cloned().unwrap_or(Value::Null),
                    };
                    lock.lock().unwrap().server_request_params.push((method.clone(), msg["params"].clone()));
                    lock.lock().unwrap().server_requests.push(method);
                    if let Some(w) = reader_stdin.lock().unwrap().as_mut() {
                        let _ = write_message(w, &json!({"jsonrpc": "2.0", "id": msg["id"].clone(), "result": result}));
                    }
                } else {
                    lock.lock().unwrap().messages.push_back(msg);
                }
                cv.notify_all();
            }
            let (lock, cv) = &*reader_inbox;
            lock.lock().unwrap().closed = true;
            cv.notify_all();
        });
        Client { child, stdin, inbox, next_id: 1, settings }
    }

    pub fn send(&self, v: &Value) {
        let mut guard = self.stdin.lock().unwrap();
        let w = guard.as_mut().expect("stdin open");
        write_message(w, v).expect("write to server");
    }

    /// Raw bytes, for protocol fuzzing.
    pub fn send_raw(&self, bytes: &[u8]) {
        let mut guard = self.stdin.lock().unwrap();
        let w = guard.as_mut().expect("stdin open");
        w.write_all(bytes).and_then(|_| w.flush()).expect("write to server");
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Send a request without waiting; returns its id.
    pub fn request_async(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The whole response (with `result` or `error`) to request `id`.
    pub fn response(&self, id: i64) -> Value {
        self.take(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
            .unwrap_or_else(|| panic!("no response to request {id} within {TIMEOUT:?}"))
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.request_async(method, params);
        let r = self.response(id);
        if let Some(e) = r.get("error") {
            panic!("{method} failed: {e}");
        }
        r["result"].clone()
    }

    /// Wait for (and consume) the first message matching `pred`.
    pub fn take(&self, pred: impl Fn(&Value) -> bool) -> Option<Value> {
        self.take_within(TIMEOUT, pred)
    }

    pub fn take_within(&self, timeout: Duration, pred: impl Fn(&Value) -> bool) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        let (lock, cv) = &*self.inbox;
        let mut inbox = lock.lock().unwrap();
        loop {
            if let Some(i) = inbox.messages.iter().position(&pred) {
                return inbox.messages.remove(i);
            }
            let now = Instant::now();
            if now >= deadline || inbox.closed {
                return None;
            }
            inbox = cv.wait_timeout(inbox, deadline - now).unwrap().0;
        }
    }

    /// The next publishDiagnostics for `uri` whose params satisfy `pred` (earlier ones are consumed).
    pub fn diagnostics_where(&self, uri: &str, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            let n = self
                .take(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri)
                .unwrap_or_else(|| panic!("no matching publishDiagnostics for {uri}"));
            if pred(&n["params"]) {
                return n["params"].clone();
            }
        }
    }

    /// Diagnostics published for `uri` at exactly `version`.
    pub fn diagnostics_for_version(&self, uri: &str, version: i64) -> Vec<Value> {
        let p = self.diagnostics_where(uri, |p| p["version"] == json!(version));
        p["diagnostics"].as_array().cloned().unwrap_or_default()
    }

    pub fn applied_edits(&self) -> Vec<Value> {
        self.inbox.0.lock().unwrap().applied_edits.clone()
    }

    /// Answer every later server request of `method` with `result`.
    pub fn answer(&self, method: &str, result: Value) {
        self.inbox.0.lock().unwrap().answers.insert(method.to_string(), result);
    }

    /// The params of the server requests of `method` so far.
    pub fn server_request_params(&self, method: &str) -> Vec<Value> {
        self.inbox.0.lock().unwrap().server_request_params.iter().filter(|(m, _)| m == method).map(|(_, p)| p.clone()).collect()
    }

    pub fn server_requests(&self) -> Vec<String> {
        self.inbox.0.lock().unwrap().server_requests.clone()
    }

    /// initialize + initialized with the given capabilities and initializationOptions.
    pub fn initialize(&mut self, capabilities: Value, options: Value) -> Value {
        let r = self.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": capabilities, "initializationOptions": options}),
        );
        self.notify("initialized", json!({}));
        r
    }

    pub fn open(&self, uri: &str, text: &str, version: i64) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}}),
        );
    }

    pub fn change(&self, uri: &str, version: i64, changes: Value) {
        self.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}));
    }

    /// shutdown + exit; returns the exit status, waiting at most `TIMEOUT`.
    pub fn shutdown_and_exit(mut self) -> Option<i32> {
        let _ = self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        self.wait_exit()
    }

    /// Wait for the process to end on its own (stdin stays open: the server must exit by itself).
    pub fn wait_exit(&mut self) -> Option<i32> {
        let deadline = Instant::now() + TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Client capabilities shaped like a modern editor: push diagnostics, code action literals,
/// configuration, dynamic file watching, and the position encodings given.
pub fn capabilities(encodings: &[&str]) -> Value {
    json!({
        "general": {"positionEncodings": encodings},
        "workspace": {
            "configuration": true,
            "didChangeWatchedFiles": {"dynamicRegistration": true},
            "applyEdit": true,
            "workspaceEdit": {"documentChanges": true}
        },
        "textDocument": {
            "publishDiagnostics": {"relatedInformation": true, "versionSupport": true},
            "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source", "source.fixAll", "refactor"]}}},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "inlayHint": {},
            "synchronization": {"didSave": true}
        },
        "window": {"workDoneProgress": true}
    })
}
