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
