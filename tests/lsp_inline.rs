//! Inline suggestions (`textDocument/inlineCompletion`, LSP 3.18) over the real `xeforge lsp` binary:
//! at a launch or config list with a finding, its quick fix's edit as ghost text; at the launch of a
//! kernel that `xeforge stage` verified (a scripted HTTP harness, no GPU), the verified result from its
//! evidence record while the kernel's text is the one verified, gone once the kernel is edited. An
//! accepted item's command (`xeforge.acceptInline`) completes the change only on the text the item left.
//! An answer is always for the version the request was sent at, however quickly edits follow it.

#[path = "common/lsp_client.rs"]
mod lsp_client;
#[path = "common/openai_stub.rs"]
mod openai_stub;

use std::path::Path;
use std::process::Command;

use lsp_client::{Client, capabilities};
use openai_stub::{Reply, Stub};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const FIX_URI: &str = "file:///tmp/xeforge-inline-test/k.py";

fn fixture(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(path)).unwrap()
}

/// Line and UTF-16 column just after `needle` (the fixtures are ASCII).
fn after(text: &str, needle: &str) -> Value {
    for (i, line) in text.lines().enumerate() {
        if let Some(at) = line.find(needle) {
            return json!({"line": i, "character": at + needle.len()});
        }
    }
    panic!("{needle} not in the text")
}

fn offset(text: &str, p: &Value) -> usize {
    let line = p["line"].as_u64().unwrap() as usize;
    text.split_inclusive('\n').take(line).map(str::len).sum::<usize>() + p["character"].as_u64().unwrap() as usize
}

/// `text` with one LSP range replaced.
fn replaced(text: &str, range: &Value, new: &str) -> String {
    let (a, b) = (offset(text, &range["start"]), offset(text, &range["end"]));
    format!("{}{new}{}", &text[..a], &text[b..])
}

fn inline(c: &mut Client, uri: &str, pos: Value) -> Vec<Value> {
    let r =
        c.request("textDocument/inlineCompletion", json!({"textDocument": {"uri": uri}, "position": pos, "context": {"triggerKind": 2}}));
    r["items"].as_array().cloned().unwrap_or_else(|| panic!("an InlineCompletionList: {r}"))
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_findings_fix_at_a_launch_or_config_is_offered_as_its_quick_fix_makes_it() {
    let text = fixture("rules/XF101_launch_and_config_fix.py");
    let mut c = Client::spawn();
    let init = c.initialize(capabilities(&["utf-16"]), json!({"device": "arc-pro-b70", "toolchain": "xpu-3.7"}));
    assert_eq!(init["capabilities"]["inlineCompletionProvider"], true, "{init}");
    assert!(init["capabilities"]["executeCommandProvider"]["commands"].as_array().unwrap().contains(&json!("xeforge.acceptInline")));
    c.open(FIX_URI, &text, 1);
    let _ = c.diagnostics_for_version(FIX_URI, 1);

    // At the launch with num_warps=0 (XF101): the item replaces `0` with the fix's `1`, one line, no
    // command (nothing else to change).
    let at = after(&text, "BLOCK=256, num_warps=0");
    let items = inline(&mut c, FIX_URI, at.clone());
    let item = items.first().expect("the fix is offered");
    assert_eq!(item["insertText"], "1", "{item}");
    assert_eq!(item["range"]["start"]["line"], item["range"]["end"]["line"], "one line");
    assert!(item["command"].is_null(), "{item}");
    let accepted = replaced(&text, &item["range"], "1");
    // The same text the quick fix gives.
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": FIX_URI}, "range": {"start": at, "end": at}, "context": {"diagnostics": [], "only": ["quickfix"]}}),
    );
    let fix = actions.as_array().unwrap().iter().find(|a| a["title"].as_str().unwrap().contains("XF101")).expect("a quick fix").clone();
    let mut quick = text.clone();
    let mut edits: Vec<Value> = fix["edit"]["documentChanges"][0]["edits"].as_array().unwrap().clone();
    edits.sort_by_key(|e| std::cmp::Reverse(offset(&text, &e["range"]["start"])));
    for e in &edits {
        quick = replaced(&quick, &e["range"], e["newText"].as_str().unwrap());
    }
    assert_eq!(accepted, quick, "the inline item is the quick fix");

    // In the config list: the config's fix (num_warps=6 → 8).
    let items = inline(&mut c, FIX_URI, after(&text, "{\"BLOCK\": 64}, num_warps="));
    assert_eq!(items.first().map(|i| i["insertText"].clone()), Some(json!("8")), "{items:?}");
    // Outside a config list or launch (the kernel body): nothing, though the file has findings.
    assert!(inline(&mut c, FIX_URI, after(&text, "x = tl.load(")).is_empty());

    // Computed on the current version: after an edit the item is for the new text.
    let p = after(&text, "BLOCK=256, num_warps=0");
    let zero = json!({"line": p["line"], "character": p["character"].as_u64().unwrap() - 1});
    c.change(FIX_URI, 2, json!([{"range": {"start": zero, "end": p}, "text": "3"}]));
    let items = inline(&mut c, FIX_URI, p);
    assert_eq!(items.first().map(|i| i["insertText"].clone()), Some(json!("4")), "num_warps=3 → 4: {items:?}");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

// ---------- a verified stage result ----------

fn result(speedup: f64) -> Value {
    json!({"id": 0, "verdict": "accepted", "device": {"kind": "cuda", "name": "NVIDIA H200", "torch": "2.11.0", "triton": "3.6.0"},
        "correctness": {"ok": true, "variants": [{"name": "bench-gpu[0]", "seeds": 3, "max_abs": 1e-6, "rel_err": 1e-7, "rtol": 1e-4, "atol": 1e-4}]},
        "timing": {"meaningful": true, "baseline_us": 10.0, "candidate_us": 10.0 / speedup, "speedup": speedup,
                   "speedup_ci95": [speedup - 0.02, speedup + 0.02], "runs": 100}, "log": ""})
}

/// Every config verifies faster; a `sweep` gets one result per candidate.
fn faster(request: &Value) -> (u16, String) {
    if request["command"] != "sweep" {
        return (200, result(1.8).to_string());
    }
    let n = request["args"]["candidates"].as_array().map_or(0, |c| c.len());
    let results: Vec<Value> = (0..n).map(|i| result(1.8 + i as f64 / 100.0)).collect();
    (200, json!({"id": 0, "kind": "sweep", "device": {"kind": "cuda"}, "results": results, "stopped": null}).to_string())
}

/// `xeforge stage autotune kernel.py` in `dir` (not applied: the CLI only writes the record); the record.
fn stage_run(dir: &Path) -> Value {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stub = rt.block_on(Stub::start((0..60).map(|_| Reply::Fn(faster)).collect()));
    let out = Command::new(env!("CARGO_BIN_EXE_xeforge"))
        .args(["stage", "autotune", "kernel.py", "--harness-url", &stub.url, "--device", "cuda", "--target", "h200", "--toolchain", "cuda"])
        .current_dir(dir)
        .env("XEFORGE_HARNESS_TOKEN", "t")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let runs: Vec<_> = std::fs::read_dir(dir.join(".xeforge/runs")).unwrap().filter_map(|e| e.ok()).map(|e| e.path()).collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&runs[0]).unwrap()).unwrap();
    assert!(record["diff"].is_string(), "a verified change: {record}");
    record
}

fn evidence_item<'a>(items: &'a [Value], summary: &str) -> Option<&'a Value> {
    items.iter().find(|i| i["command"]["title"] == summary)
}

#[test]
fn a_verified_stage_result_is_offered_while_the_kernel_is_the_one_verified() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"k\"\n").unwrap();
    // The grid in a variable: the verified result changes its line as well as the launch's, so that
    // accepting the launch's part leaves a rest to apply.
    let text = fixture("cover/kernel.py").replace(
        "        scale_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK_SIZE=256, num_warps=4)",
        "        grid = (triton.cdiv(n, 256),)\n        # one program per tile\n        scale_kernel[grid](x, out, n, BLOCK_SIZE=256, num_warps=4)",
    );
    assert!(text.contains("scale_kernel[grid]"));
    let file = dir.path().join("kernel.py");
    std::fs::write(&file, &text).unwrap();
    let record = stage_run(dir.path());
    let summary = record["summary"].as_str().unwrap().to_string();
    assert!(summary.starts_with("autotune: verified 1.8"), "{summary}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "the CLI did not apply it");

    let uri = format!("file://{}", file.display());
    let mut c = Client::spawn();
    c.initialize(capabilities(&["utf-16"]), json!({}));
    c.open(&uri, &text, 1);
    let launch = after(&text, "scale_kernel[grid](x, out, n");

    // At the launch: the verified result, titled with the evidence summary.
    let items = inline(&mut c, &uri, launch.clone());
    let item = evidence_item(&items, &summary).unwrap_or_else(|| panic!("the stage result is offered: {items:?}")).clone();
    assert_eq!(item["range"]["start"]["line"], launch["line"], "the launch's part is the item: {item}");
    assert_eq!(item["range"]["start"]["line"], item["range"]["end"]["line"]);
    assert_eq!(item["command"]["command"], "xeforge.acceptInline");
    // Not in the kernel body, which is neither a config list nor a launch.
    assert!(evidence_item(&inline(&mut c, &uri, after(&text, "mask = offs")), &summary).is_none());

    // Accepting, as an editor does: insert the item (a new version), then run its command. The rest
    // (the grid's line) comes back as an edit stamped with that version; the result is the verified file.
    let inserted = replaced(&text, &item["range"], item["insertText"].as_str().unwrap());
    c.change(&uri, 2, json!([{"text": inserted}]));
    let args = item["command"]["arguments"].clone();
    let reply = c.request("workspace/executeCommand", json!({"command": "xeforge.acceptInline", "arguments": args}));
    assert_eq!(reply["applied"], true, "{reply}");
    let shown = c.take(|m| m["method"] == "window/showMessage").expect("the evidence is said");
    let message = shown["params"]["message"].as_str().unwrap();
    assert!(message.starts_with(&summary) && message.contains(".xeforge/runs/"), "{message}");
    let deadline = std::time::Instant::now() + lsp_client::TIMEOUT;
    while c.applied_edits().is_empty() {
        assert!(std::time::Instant::now() < deadline, "no applyEdit for the rest");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let edit = &c.applied_edits()[0]["edit"]["documentChanges"][0];
    assert_eq!(edit["textDocument"]["version"], 2);
    let mut done = inserted.clone();
    let mut edits: Vec<Value> = edit["edits"].as_array().unwrap().clone();
    edits.sort_by_key(|e| std::cmp::Reverse(offset(&inserted, &e["range"]["start"])));
    for e in &edits {
        done = replaced(&done, &e["range"], e["newText"].as_str().unwrap());
    }
    assert_eq!(sha256(&done), record["file_sha256_after"].as_str().unwrap(), "the verified text:\n{done}");
    c.change(&uri, 3, json!([{"text": done}]));
    // Applied: the kernel is the verified one now, nothing is offered again.
    assert!(evidence_item(&inline(&mut c, &uri, after(&text, "scale_kernel[")), &summary).is_none());

    // Back to the original with a line added above the kernel: offered again (the kernel still matches).
    let moved = text.replacen("import torch\n", "import torch\n# tuned later\n", 1);
    c.change(&uri, 4, json!([{"text": moved}]));
    let items = inline(&mut c, &uri, after(&moved, "scale_kernel[grid](x, out, n"));
    let item = evidence_item(&items, &summary).expect("offered after an edit outside the kernel");
    // A command for another text (the one the item leaves after another edit) applies nothing.
    let stale = item["command"]["arguments"].clone();
    let edited = moved.replace("x * 2.0", "x * 3.0");
    c.change(&uri, 5, json!([{"text": edited}]));
    let reply = c.request("workspace/executeCommand", json!({"command": "xeforge.acceptInline", "arguments": stale}));
    assert_eq!(reply["applied"], false, "{reply}");
    // The kernel edited: the verified result is gone.
    let items = inline(&mut c, &uri, after(&edited, "scale_kernel[grid](x, out, n"));
    assert!(evidence_item(&items, &summary).is_none(), "{items:?}");
    assert_eq!(c.applied_edits().len(), 1, "nothing applied for a text the command was not made for");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn malformed_requests_and_commands_are_refused_without_harm() {
    let mut c = Client::spawn();
    c.initialize(capabilities(&["utf-16"]), json!({}));
    // A document that is not open, a position past the end: empty lists.
    assert!(inline(&mut c, "file:///nowhere.py", json!({"line": 0, "character": 0})).is_empty());
    let text = fixture("rules/XF101_launch_and_config_fix.py");
    c.open(FIX_URI, &text, 1);
    assert!(inline(&mut c, FIX_URI, json!({"line": 9999, "character": 9999})).is_empty());
    let bad = [
        json!([]),
        json!([{"uri": FIX_URI}]),
        json!([{"uri": FIX_URI, "expect": sha256(&text), "edits": [{"start": 5, "end": 1, "text": ""}]}]),
        json!([{"uri": FIX_URI, "expect": sha256(&text), "edits": [{"start": 0, "end": 99999, "text": ""}]}]),
    ];
    for args in bad {
        let id = c.request_async("workspace/executeCommand", json!({"command": "xeforge.acceptInline", "arguments": args}));
        assert!(c.response(id).get("error").is_some(), "refused: {args}");
    }
    assert!(c.applied_edits().is_empty());
    assert!(c.is_running());
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn an_answer_is_for_the_version_the_client_asked_about_or_none() {
    // A large file, so an edit sent right after the request lands while it is being answered.
    let base = fixture("rules/XF101_launch_and_config_fix.py");
    let filler: String = (0..1500).map(|i| format!("def helper_{i}(x):\n    return x + {i}\n\n\n")).collect();
    let text = format!("{filler}{base}").replace("BLOCK=256, num_warps=0)", "BLOCK=256, num_warps=6)");
    let mut c = Client::spawn();
    c.initialize(capabilities(&["utf-16"]), json!({"device": "arc-pro-b70", "toolchain": "xpu-3.7"}));
    c.open(FIX_URI, &text, 1);
    let _ = c.diagnostics_for_version(FIX_URI, 1);
    let at = after(&text, "BLOCK=256, num_warps=");
    let value_range = |v: &str| {
        let end = json!({"line": at["line"], "character": at["character"].as_u64().unwrap() + v.len() as u64});
        json!({"start": at, "end": end})
    };
    // num_warps=6 is fixed to 8, num_warps=12 to 16: an answer tells which version it was made for.
    let (mut current, mut answered, mut refused) = (text.clone(), 0, 0);
    for version in 2..42 {
        let id = c.request_async(
            "textDocument/inlineCompletion",
            json!({"textDocument": {"uri": FIX_URI}, "position": at, "context": {"triggerKind": 2}}),
        );
        let asked_on = current.clone();
        let (value, next) = if asked_on.contains("num_warps=6)") { ("6", "12") } else { ("12", "6") };
        c.change(FIX_URI, version, json!([{"range": value_range(value), "text": next}]));
        current = replaced(&current, &value_range(value), next);
        let r = c.response(id);
        if let Some(e) = r.get("error") {
            assert_eq!(e["code"], -32801, "only ContentModified: {r}");
            refused += 1;
            continue;
        }
        answered += 1;
        let want = if value == "6" { "num_warps=8)" } else { "num_warps=16)" };
        let first = r["result"]["items"].get(0).cloned().unwrap_or(Value::Null);
        let accepted = replaced(&asked_on, &first["range"], first["insertText"].as_str().unwrap_or("?"));
        assert!(accepted.contains(want), "asked at num_warps={value}, answered {first}");
    }
    eprintln!("{answered} answered, {refused} refused as modified");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}
