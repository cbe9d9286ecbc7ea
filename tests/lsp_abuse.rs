//! The server under a hostile or buggy client: messages tower-lsp 0.20 cannot decode, `$/` requests,
//! text sync before `initialize`, and requests racing the first parse of a large document. Each
//! case is one that once cost the connection or published a wrong result.

#[path = "common/lsp_client.rs"]
mod lsp_client;

use std::time::Duration;

use lsp_client::{Client, capabilities};
use serde_json::{Value, json};
use xeforge::knowledge::Knowledge;
use xeforge::lint::LintOptions;

const URI: &str = "file:///tmp/xeforge-abuse/k.py";
const KERNEL: &str = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x, BLOCK: tl.constexpr):\n    pass\n\n\ndef run(x):\n    k[(1,)](x, BLOCK=64, num_warps=6)\n";

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

fn started() -> Client {
    let mut c = Client::spawn();
    c.initialize(capabilities(&["utf-16"]), json!({"debug": true}));
    c
}

/// The next error response with `"id": null`.
fn null_id_error(c: &Client) -> Value {
    c.take_within(Duration::from_secs(5), |m| m.get("method").is_none() && m.get("id") == Some(&Value::Null) && m.get("error").is_some())
        .expect("an error reply with id null")
}

fn still_answers(c: &mut Client) {
    c.open(URI, KERNEL, 1);
    let dbg = c.request("xeforge/debugDocument", json!({"textDocument": {"uri": URI}}));
    assert_eq!(dbg["version"], 1, "the session goes on after the bad message");
}

#[test]
fn ids_that_are_not_integers_cost_one_error_reply_not_the_connection() {
    for id in ["1.5", "1e3", "9223372036854775808", "-0.0", "[1]", "{}"] {
        let mut c = started();
        c.send_raw(&frame(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"textDocument/hover","params":{{}}}}"#)));
        let e = null_id_error(&c);
        assert_eq!(e["error"]["code"], -32600, "id {id}: {e}");
        still_answers(&mut c);
        assert_eq!(c.shutdown_and_exit(), Some(0), "id {id}");
    }
}

#[test]
fn a_response_with_an_unreadable_id_is_dropped_silently() {
    let mut c = started();
    c.send_raw(&frame(r#"{"jsonrpc":"2.0","id":2.5,"result":null}"#));
    c.send_raw(&frame(r#"{"jsonrpc":"2.0","id":3,"error":{"code":"not a number"}}"#));
    still_answers(&mut c);
    assert!(c.take_within(Duration::from_millis(200), |m| m.get("id") == Some(&Value::Null)).is_none(), "a response is never answered");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn malformed_bodies_get_parse_error_and_invalid_request() {
    let mut c = started();
    c.send_raw(&frame(r#"{"jsonrp"#));
    assert_eq!(null_id_error(&c)["error"]["code"], -32700);
    c.send_raw(&frame("[]"));
    assert_eq!(null_id_error(&c)["error"]["code"], -32600);
    c.send_raw(&frame(r#"{"jsonrpc":"1.0","id":4,"method":"textDocument/hover"}"#));
    assert_eq!(null_id_error(&c)["error"]["code"], -32600);
    still_answers(&mut c);
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn dollar_requests_with_an_id_get_method_not_found() {
    let mut c = started();
    let id = c.request_async("$/noSuchThing", json!({}));
    let r = c.response(id);
    assert_eq!(r["error"]["code"], -32601, "{r}");
    // `$/` notifications stay silent.
    c.notify("$/noSuchThing", json!({}));
    still_answers(&mut c);
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn text_sync_before_initialize_is_dropped_and_nothing_is_sent() {
    let mut c = Client::spawn();
    c.open(URI, KERNEL, 1);
    assert!(c.take_within(Duration::from_millis(1500), |_| true).is_none(), "the server sent something before it was initialized");
    c.initialize(capabilities(&["utf-16"]), json!({"debug": true}));
    let id = c.request_async("xeforge/debugDocument", json!({"textDocument": {"uri": URI}}));
    assert!(c.response(id).get("error").is_some(), "a document opened before initialize is not kept");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

fn fresh_codes(text: &str) -> Vec<String> {
    let a = xeforge::analysis::analyze(text, Knowledge::embedded(), &LintOptions::default()).expect("default target");
    let mut v: Vec<String> = a.diagnostics.iter().map(|d| d.code.to_string()).collect();
    v.sort();
    v
}

fn published_codes(p: &Value) -> Vec<String> {
    let mut v: Vec<String> = p["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap().to_string()).collect();
    v.sort();
    v
}

/// A large document, a request at once (which parses it on the handler's side), an edit at the top
/// while that first parse may still run: whatever finishes first, the diagnostics published for the
/// edited version are those of the edited text, and nothing older is published as current.
#[test]
fn a_request_racing_the_first_parse_never_leaves_a_stale_tree() {
    let mut big = String::from(KERNEL);
    for i in 0..30_000 {
        big.push_str(&format!("value_{i} = {i}\n"));
    }
    for debounce in [400, 0] {
        let mut c = Client::spawn();
        c.initialize(capabilities(&["utf-16"]), json!({"lint": {"debounceMs": debounce}}));
        c.open(URI, &big, 1);
        let hover = c.request_async("textDocument/hover", json!({"textDocument": {"uri": URI}, "position": {"line": 9, "character": 5}}));
        std::thread::sleep(Duration::from_millis(100));
        let edit = "import os\n";
        c.change(URI, 2, json!([{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": edit}]));
        let _ = c.response(hover);
        let expected = fresh_codes(&format!("{edit}{big}"));
        assert!(!expected.is_empty(), "the kernel has findings");
        let p = c.diagnostics_where(URI, |p| p["version"] == 2);
        assert_eq!(published_codes(&p), expected, "debounce {debounce}: version 2 published with another text's diagnostics");
        // Nothing else (a correction, or a stale result) follows for version 2.
        let later = c.take_within(Duration::from_millis(1200), |m| m["method"] == "textDocument/publishDiagnostics");
        if let Some(m) = later {
            assert_eq!(published_codes(&m["params"]), expected, "debounce {debounce}: a later publish differs");
        }
        assert_eq!(c.shutdown_and_exit(), Some(0));
    }
}

/// A large document left idle lets its tree and reuse data go (most of the server's memory); what
/// follows — a code action that needs a tree, an edit — works from a fresh parse, and the next
/// diagnostics are a fresh check's.
#[test]
fn a_large_idle_document_lets_its_tree_go_and_the_next_edit_is_right() {
    let mut big = String::from(KERNEL);
    for i in 0..30_000 {
        big.push_str(&format!("value_{i} = {i}\n"));
    }
    let mut c = Client::spawn();
    c.initialize(capabilities(&["utf-16"]), json!({"debug": true, "lint": {"idleReleaseMs": 200}}));
    c.open(URI, &big, 1);
    c.diagnostics_where(URI, |p| p["version"] == 1);
    let mut slim = false;
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(100));
        let dbg = c.request("xeforge/debugDocument", json!({"textDocument": {"uri": URI}}));
        if dbg["slim"] == true {
            slim = true;
            break;
        }
    }
    assert!(slim, "the idle large document kept its tree");
    let range = json!({"start": {"line": 9, "character": 0}, "end": {"line": 9, "character": 40}});
    let actions =
        c.request("textDocument/codeAction", json!({"textDocument": {"uri": URI}, "range": range, "context": {"diagnostics": []}}));
    assert!(actions.as_array().is_some_and(|a| !a.is_empty()), "code actions from a slim result: {actions}");
    let edit = "import os\n";
    c.change(URI, 2, json!([{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": edit}]));
    let p = c.diagnostics_where(URI, |p| p["version"] == 2);
    assert_eq!(published_codes(&p), fresh_codes(&format!("{edit}{big}")));
    assert_eq!(c.shutdown_and_exit(), Some(0));
}
