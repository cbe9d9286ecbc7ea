//! Protocol fuzz against the real binary: out-of-range and mid-surrogate positions, reversed ranges,
//! unknown documents, versions going backwards, wrong-typed params, malformed JSON. The server must
//! answer every request, keep the right text, and end cleanly.

#[path = "common/lsp_client.rs"]
mod lsp_client;

use lsp_client::{Client, capabilities};
use serde_json::{Value, json};

const URI: &str = "file:///tmp/xeforge-fuzz/k.py";
const TEXT: &str = "import triton\n\n@triton.jit\ndef k(x):\n    s = \"a🚀b\"\n\n\ndef run(x):\n    k[(1,)](x, num_warps=6)\n";

fn pos(line: u64, character: u64) -> Value {
    json!({"line": line, "character": character})
}

#[test]
fn hostile_traffic_never_panics_or_hangs() {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut c = Client::spawn();
    c.initialize(capabilities(&["utf-16"]), json!({"debug": true}));
    c.open(URI, TEXT, 5);

    // Versions going backwards or repeating are refused; the text stays.
    c.change(URI, 4, json!([{"text": "garbage"}]));
    c.change(URI, 5, json!([{"text": "garbage"}]));
    // Unknown document, malformed params, wrong types.
    c.change("file:///nowhere.py", 9, json!([{"text": "x"}]));
    c.notify("textDocument/didChange", json!({"textDocument": {"uri": URI}}));
    c.notify("textDocument/didOpen", json!({"textDocument": 42}));
    // Malformed JSON and a non-object body.
    c.send_raw(b"Content-Length: 9\r\n\r\n{\"jsonrp");
    c.send_raw(b"Content-Length: 2\r\n\r\n[]");
    let dbg = c.request("xeforge/debugDocument", json!({"textDocument": {"uri": URI}}));
    assert_eq!(dbg["text"], TEXT);
    assert_eq!(dbg["version"], 5);

    // Mid-surrogate (🚀 is at UTF-16 columns 10-11 of line 4) and out-of-range edits are clamped.
    c.change(URI, 6, json!([{"range": {"start": pos(4, 11), "end": pos(4, 11)}, "text": "Z"}]));
    c.change(URI, 7, json!([{"range": {"start": pos(999, 5), "end": pos(u32::MAX as u64, u32::MAX as u64)}, "text": "# end\n"}]));
    c.change(URI, 8, json!([{"range": {"start": pos(8, 99), "end": pos(8, 2)}, "text": ""}]));
    let dbg = c.request("xeforge/debugDocument", json!({"textDocument": {"uri": URI}}));
    let text = dbg["text"].as_str().unwrap();
    assert!(text.contains("\"aZ🚀b\""), "mid-surrogate insert lands before the character: {text}");
    assert!(text.ends_with("# end\n"));
    assert!(text.contains("\n  \n") || text.lines().nth(8) == Some("  "), "reversed range deleted: {text:?}");

    // Random requests at random (often absurd) positions on open and unknown documents.
    let methods = ["textDocument/hover", "textDocument/codeAction", "textDocument/inlayHint", "textDocument/codeLens"];
    let mut ids = Vec::new();
    for i in 0..300 {
        let uri = if i % 7 == 0 { "file:///unknown.py" } else { URI };
        let p = pos(rng.u64(0..20), rng.u64(0..200));
        let q = pos(rng.u64(0..u32::MAX as u64), rng.u64(0..u32::MAX as u64));
        let method = methods[i % methods.len()];
        let params = match method {
            "textDocument/hover" => json!({"textDocument": {"uri": uri}, "position": p}),
            "textDocument/codeLens" => json!({"textDocument": {"uri": uri}}),
            "textDocument/inlayHint" => json!({"textDocument": {"uri": uri}, "range": {"start": q, "end": p}}),
            _ => json!({"textDocument": {"uri": uri}, "range": {"start": q, "end": p}, "context": {"diagnostics": []}}),
        };
        ids.push(c.request_async(method, params));
        if i % 25 == 0 {
            let v = 9 + i as i64;
            c.change(URI, v, json!([{"range": {"start": p, "end": q}, "text": "🚀\r\n"}]));
        }
    }
    for id in ids {
        let r = c.response(id);
        if let Some(e) = r.get("error") {
            assert_ne!(e["code"], -32603, "internal error (a panic?): {e}");
        }
    }
    assert!(c.is_running());
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

/// The classes that once cost the connection or left a stale tree, mixed at random into traffic on
/// a large document: ids tower-lsp 0.20 cannot hold, `$/` requests, and requests and edits racing
/// the parses of a 20k-line file. The server answers everything, keeps the right text, and the
/// final diagnostics are those of a fresh check.
#[test]
fn bad_ids_dollar_requests_and_racing_parses_of_a_large_document() {
    let mut rng = fastrand::Rng::with_seed(16);
    let mut text = String::from(TEXT);
    for i in 0..20_000 {
        text.push_str(&format!("v{i} = {i}\n"));
    }
    let mut c = Client::spawn();
    c.initialize(capabilities(&["utf-8"]), json!({"debug": true}));
    c.open(URI, &text, 1);
    let bad_ids = ["1.5", "1e3", "9223372036854775808", "-0.0", "true", "[2]"];
    let mut ids = Vec::new();
    let mut bad = 0;
    for v in 2..60i64 {
        match rng.u8(0..6) {
            0 => {
                let id = bad_ids[rng.usize(0..bad_ids.len())];
                let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"textDocument/hover","params":{{}}}}"#);
                c.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
                bad += 1;
            }
            1 => ids.push((c.request_async("$/fuzz", json!({})), true)),
            _ => {}
        }
        // An edit at the top (shifting every line) or somewhere in the plain lines.
        let line = if rng.bool() { 0 } else { rng.usize(12..text.lines().count()) };
        let at = text.match_indices('\n').nth(line.wrapping_sub(1)).map_or(0, |(i, _)| i + 1);
        let insert = format!("w{v} = {v}\n");
        text.insert_str(at, &insert);
        c.change(URI, v, json!([{"range": {"start": pos(line as u64, 0), "end": pos(line as u64, 0)}, "text": insert}]));
        for _ in 0..rng.usize(0..3) {
            let p = pos(rng.u64(0..12), rng.u64(0..40));
            ids.push((c.request_async("textDocument/hover", json!({"textDocument": {"uri": URI}, "position": p})), false));
        }
        if rng.u8(0..4) == 0 {
            std::thread::sleep(std::time::Duration::from_millis(rng.u64(0..60)));
        }
    }
    for (id, dollar) in ids {
        let r = c.response(id);
        if dollar {
            assert_eq!(r["error"]["code"], -32601, "a $/ request gets MethodNotFound: {r}");
        } else if let Some(e) = r.get("error") {
            assert_ne!(e["code"], -32603, "internal error: {e}");
        }
    }
    for _ in 0..bad {
        let e = c.take(|m| m.get("id") == Some(&Value::Null) && m.get("error").is_some()).expect("one error reply per bad id");
        assert_eq!(e["error"]["code"], -32600);
    }
    let dbg = c.request("xeforge/debugDocument", json!({"textDocument": {"uri": URI}}));
    assert_eq!(dbg["version"], 59);
    assert!(dbg["text"].as_str() == Some(text.as_str()), "the server's text diverged");
    let fresh =
        xeforge::analysis::analyze(&text, xeforge::knowledge::Knowledge::embedded(), &xeforge::lint::LintOptions::default()).unwrap();
    let mut want: Vec<String> = fresh.diagnostics.iter().map(|d| format!("{} {:?}", d.code, d.message)).collect();
    let mut got: Vec<String> = dbg["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{} {:?}", d["code"].as_str().unwrap(), d["message"].as_str().unwrap()))
        .collect();
    want.sort();
    got.sort();
    assert!(!want.is_empty());
    assert_eq!(got, want);
    let p = c.diagnostics_where(URI, |p| p["version"] == 59);
    assert_eq!(p["diagnostics"].as_array().unwrap().len(), want.len(), "the last publish is the fresh check's");
    assert!(c.is_running());
    assert_eq!(c.shutdown_and_exit(), Some(0));
}
