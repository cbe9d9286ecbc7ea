//! Compiled facts in the editor, end to end: the real `xeforge lsp` binary over stdio runs
//! `xeforge.verifyCompiled` against a scripted HTTP harness that reports an Intel Arc Pro B70's compile
//! metadata (the numbers are the script's, not a measurement). The findings arrive under the source
//! `xeforge (compiled)` on the config that was compiled, replace the static estimate they settle,
//! follow edits elsewhere, go with an edit to the kernel (also one made while the harness compiled),
//! and the cache is the one `xeforge verify` reads. On the interpreter the user is told why there are none;
//! a cancelled run shows nothing; malformed arguments and documents with nothing to compile are refused
//! without a harness run.

#[path = "common/lsp_client.rs"]
mod lsp_client;
#[path = "common/openai_stub.rs"]
mod openai_stub;

use std::process::Command;
use std::time::Duration;

use lsp_client::{Client, capabilities};
use openai_stub::{Reply, Stub};
use serde_json::{Value, json};

/// A GEMM with two autotune configs; the static analysis estimates XF202 on its `tl.dot` for the
/// first config on the Arc Pro B70 (xpu-3.7).
const KERNEL: &str = include_str!("fixtures/cover/mm_compiled.py");
const COMPILED: &str = "xeforge (compiled)";

/// 0-based line of the first line of `text` that contains `needle`.
fn line_of(text: &str, needle: &str) -> u64 {
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("no `{needle}`")) as u64
}

/// The B70 compiled both configs: the first spills and needs more shared memory than the device has.
fn b70(request: &Value) -> (u16, String) {
    assert_eq!(request["command"], "evaluate");
    let cfg = |bm: u64, bk: u64, warps: u64, stages: u64, regs: u64, spills: u64, shared: u64| {
        json!({"kernel": "mm_kernel", "config": {"BLOCK_M": bm, "BLOCK_N": bm, "BLOCK_K": bk, "num_warps": warps, "num_stages": stages},
               "shared_bytes": shared, "registers": regs, "spills": spills, "sub_group_size": 16, "grf_mode_built": "default"})
    };
    let body = json!({"id": 0, "verdict": "correct",
        "device": {"kind": "xpu", "name": "Intel Arc Pro B70", "torch": "2.11.0", "triton": "3.7.0"},
        "compile": {"ok": true, "metadata_available": true,
                    "configs": [cfg(256, 64, 8, 4, 128, 4096, 262144), cfg(64, 32, 4, 3, 96, 0, 32768)]},
        "correctness": {"ok": true, "variants": [{"name": "ci[0]", "seeds": 3, "max_abs": 0.0, "rel_err": 0.0, "rtol": 1e-4, "atol": 1e-4}]},
        "timing": {"meaningful": false, "reason": "timing was not requested"}, "log": ""});
    (200, body.to_string())
}

/// The Triton interpreter: a verdict, and no compile metadata.
fn interpreter(_: &Value) -> (u16, String) {
    let body = json!({"id": 0, "verdict": "correct",
        "device": {"kind": "cpu", "name": "x86_64", "torch": "2.11.0", "triton": "3.7.0"},
        "compile": {"ok": true, "metadata_available": false, "configs": [],
                    "note": "the Triton interpreter runs the kernel in Python: no registers, spills or shared memory to report"},
        "correctness": {"ok": true, "variants": [{"name": "ci[0]", "seeds": 3, "max_abs": 0.0, "rel_err": 0.0, "rtol": 1e-4, "atol": 1e-4}]},
        "timing": {"meaningful": false, "reason": "timing was not requested"}, "log": ""});
    (200, body.to_string())
}

struct Setup {
    _rt: tokio::runtime::Runtime,
    stub: Stub,
    dir: tempfile::TempDir,
    uri: String,
    client: Client,
}

fn setup(script: Vec<Reply>, harness_device: &str) -> Setup {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stub = rt.block_on(Stub::start(script));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[tool.xeforge]\n").unwrap();
    let file = dir.path().join("mm.py");
    std::fs::write(&file, KERNEL).unwrap();
    let uri = format!("file://{}", file.display());
    let mut client = Client::spawn();
    client.initialize(
        capabilities(&["utf-16"]),
        json!({"device": "arc-pro-b70", "toolchain": "xpu-3.7", "harness": {"url": stub.url, "device": harness_device}}),
    );
    client.open(&uri, KERNEL, 1);
    Setup { _rt: rt, stub, dir, uri, client }
}

fn compiled(diags: &[Value]) -> Vec<Value> {
    diags.iter().filter(|d| d["source"] == COMPILED).cloned().collect()
}

fn has_compiled(p: &Value) -> bool {
    p["diagnostics"].as_array().is_some_and(|d| !compiled(d).is_empty())
}

fn insert(line: u64, text: &str) -> Value {
    let p = json!({"line": line, "character": 0});
    json!([{"range": {"start": p, "end": p}, "text": text}])
}

fn code_actions(c: &mut Client, uri: &str, at: &Value) -> Vec<Value> {
    c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": at, "context": {"diagnostics": [], "only": ["quickfix"]}}),
    )
    .as_array()
    .cloned()
    .unwrap_or_default()
}

fn reverify(actions: &[Value]) -> Value {
    actions.iter().find(|a| a["title"] == "Re-verify on the harness").cloned().expect("a 'Re-verify on the harness' action")
}

/// Run `xeforge.verifyCompiled` with `arg` and return the progress end's message.
fn run_verify(c: &mut Client, arg: Value) -> String {
    let r = c.request("workspace/executeCommand", json!({"command": "xeforge.verifyCompiled", "arguments": [arg]}));
    assert!(r.is_null(), "answered at once: {r}");
    let begin = c.take(|m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "begin").expect("progress begins");
    assert_eq!(begin["params"]["value"]["cancellable"], true);
    let token = begin["params"]["token"].clone();
    let end = c
        .take_within(Duration::from_secs(60), |m| {
            m["method"] == "$/progress" && m["params"]["token"] == token && m["params"]["value"]["kind"] == "end"
        })
        .expect("progress ends");
    let message = end["params"]["value"]["message"].as_str().unwrap_or("").to_string();
    let shown = c.take(|m| m["method"] == "window/showMessage").expect("the outcome is shown");
    assert_eq!(shown["params"]["message"], format!("xeforge: {message}"));
    message
}

#[test]
fn compiled_findings_land_on_the_config_follow_edits_elsewhere_and_go_with_an_edit_to_the_kernel() {
    let mut s = setup(vec![Reply::Fn(b70)], "xpu");
    let (config_line, dot_line) = (line_of(KERNEL, "\"BLOCK_M\": 256"), line_of(KERNEL, "tl.dot("));

    // Before: the static estimate on the `tl.dot`, and the action that asks the harness.
    let v1 = s.client.diagnostics_for_version(&s.uri, 1);
    let estimate = v1.iter().find(|d| d["code"] == "XF202").expect("the static XF202 estimate").clone();
    assert_eq!((estimate["source"].as_str(), estimate["range"]["start"]["line"].as_u64()), (Some("xeforge"), Some(dot_line)));
    let action = reverify(&code_actions(&mut s.client, &s.uri, &estimate["range"]));
    assert_eq!(action["command"]["command"], "xeforge.verifyCompiled");
    assert_eq!(action["command"]["arguments"][0], json!({"uri": s.uri, "version": 1}));

    let end = run_verify(&mut s.client, action["command"]["arguments"][0].clone());
    assert!(end.starts_with("mm.py: correct on xpu Intel Arc Pro B70; 4 compiled findings"), "{end}");
    let p = s.client.diagnostics_where(&s.uri, |p| p["version"] == 1 && has_compiled(p));
    let all = p["diagnostics"].as_array().unwrap();
    let found = compiled(all);
    let on_config = |code: &str| found.iter().find(|d| d["code"] == code && d["range"]["start"]["line"] == config_line).cloned();
    let regs = on_config("XF202").expect("the spilling config's registers, on its triton.Config");
    assert_eq!(regs["severity"], 2);
    let message = regs["message"].as_str().unwrap();
    assert!(message.contains("compiled on Intel Arc Pro B70") && message.contains("4096 B spilled"), "{message}");
    assert!(message.contains("the static estimate said") && message.contains("the compiled fact wins"), "{message}");
    assert!(all.iter().all(|d| d["code"] != "XF202" || d["source"] == COMPILED), "the estimate is settled: {all:?}");
    assert_eq!(on_config("XF201").expect("shared memory over the B70's")["severity"], 1);
    // Over a compiled finding the action asks the harness again instead of reading the cache.
    let again = reverify(&code_actions(&mut s.client, &s.uri, &regs["range"]));
    assert_eq!(again["command"]["arguments"][0], json!({"uri": s.uri, "version": 1, "refresh": true}));
    assert_eq!(again["diagnostics"][0]["source"], COMPILED);

    // An edit above the kernel: the findings move with their config.
    s.client.change(&s.uri, 2, insert(0, "# a note\n"));
    let v2 = s.client.diagnostics_for_version(&s.uri, 2);
    let moved: Vec<u64> = compiled(&v2).iter().filter_map(|d| d["range"]["start"]["line"].as_u64()).collect();
    assert!(moved.len() == 4 && moved.contains(&(config_line + 1)), "{moved:?}");
    // A command for a version the document has left is refused.
    let id = s.client.request_async(
        "workspace/executeCommand",
        json!({"command": "xeforge.verifyCompiled", "arguments": [{"uri": s.uri, "version": 1}]}),
    );
    assert_eq!(s.client.response(id)["error"]["code"], -32801, "content modified");

    // An edit inside the kernel (below the `tl.dot`, now on line dot_line + 1): its compiled
    // findings go and the static estimate is back.
    s.client.change(&s.uri, 3, insert(dot_line + 2, "    # tiles by hand\n"));
    let v3 = s.client.diagnostics_for_version(&s.uri, 3);
    assert!(compiled(&v3).is_empty(), "{v3:?}");
    assert!(v3.iter().any(|d| d["code"] == "XF202" && d["source"] == "xeforge" && d["range"]["start"]["line"] == dot_line + 1), "{v3:?}");
    // Undoing the edit does not bring back what was dropped.
    s.client.change(&s.uri, 4, json!([{"text": format!("# a note\n{KERNEL}")}]));
    assert!(compiled(&s.client.diagnostics_for_version(&s.uri, 4)).is_empty());
    assert_eq!(s.stub.requests.lock().unwrap().len(), 1);

    // The editor's verification filled the cache `xeforge verify` reads: no second harness run.
    let out = Command::new(lsp_client::binary())
        .args(["verify", "mm.py", "--harness-url", &s.stub.url, "--device", "xpu", "--target", "arc-pro-b70", "--toolchain", "xpu-3.7"])
        .args(["--format", "json"])
        .current_dir(s.dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cli["compiled"]["cached"], true);
    assert_eq!(s.stub.requests.lock().unwrap().len(), 1);
}

#[test]
fn a_result_moves_over_edits_made_while_it_compiled_but_never_onto_an_edited_kernel() {
    let slow = |f| Reply::After(Duration::from_millis(1500), Box::new(Reply::Fn(f)));
    let mut s = setup(vec![slow(b70), slow(b70)], "xpu");
    let config_line = line_of(KERNEL, "\"BLOCK_M\": 256");
    s.client.diagnostics_for_version(&s.uri, 1);

    // While the harness compiles version 1, a line goes in above the kernel (version 2).
    let id = s.client.request_async(
        "workspace/executeCommand",
        json!({"command": "xeforge.verifyCompiled", "arguments": [{"uri": s.uri, "version": 1}]}),
    );
    assert!(s.client.response(id)["result"].is_null());
    s.client.change(&s.uri, 2, insert(0, "# a note\n"));
    let v2 = s.client.diagnostics_where(&s.uri, |p| p["version"] == 2 && has_compiled(p));
    let lines: Vec<u64> =
        compiled(v2["diagnostics"].as_array().unwrap()).iter().filter_map(|d| d["range"]["start"]["line"].as_u64()).collect();
    assert!(lines.contains(&(config_line + 1)), "placed on version 2's config line: {lines:?}");
    let shown = s.client.take(|m| m["method"] == "window/showMessage").expect("the outcome is shown");
    assert!(shown["params"]["message"].as_str().unwrap().contains("4 compiled findings"), "{shown}");

    // Version 2 (unsaved) is compiled again; meanwhile the kernel is edited (version 3).
    let dot_line = line_of(KERNEL, "tl.dot(") + 1;
    let id = s.client.request_async(
        "workspace/executeCommand",
        json!({"command": "xeforge.verifyCompiled", "arguments": [{"uri": s.uri, "version": 2}]}),
    );
    assert!(s.client.response(id)["result"].is_null());
    s.client.change(&s.uri, 3, insert(dot_line + 1, "    # tiles by hand\n"));
    assert!(compiled(&s.client.diagnostics_for_version(&s.uri, 3)).is_empty(), "the first result is gone with the kernel edit");
    let shown = s.client.take_within(Duration::from_secs(60), |m| m["method"] == "window/showMessage").expect("the outcome is shown");
    let message = shown["params"]["message"].as_str().unwrap();
    assert!(message.contains("0 compiled findings (none for mm_kernel: edited while it compiled"), "{message}");
    // Nothing published after it carries a compiled finding.
    std::thread::sleep(Duration::from_millis(500));
    while let Some(p) = s.client.take_within(Duration::ZERO, |m| m["method"] == "textDocument/publishDiagnostics") {
        assert!(!has_compiled(&p["params"]), "a result for version 2 was shown on version 3: {p}");
    }
    // The harness compiled the buffer's text, not the file on disk.
    let requests = s.stub.requests.lock().unwrap();
    assert_eq!(requests.len(), 2);
    assert!(requests[1]["args"]["candidate"]["content"].as_str().unwrap().starts_with("# a note\n"), "{}", requests[1]);
    assert!(!s.dir.path().join(".xeforge/work").read_dir().is_ok_and(|mut d| d.next().is_some()), "the buffer's copy is removed");
}

#[test]
fn on_the_interpreter_the_user_is_told_there_is_no_compile_metadata() {
    let mut s = setup(vec![Reply::Fn(interpreter)], "cpu");
    s.client.diagnostics_for_version(&s.uri, 1);
    let end = run_verify(&mut s.client, json!({"uri": s.uri}));
    assert!(end.contains("no compile metadata on this device (cpu x86_64): the Triton interpreter runs the kernel in Python"), "{end}");
    assert!(end.starts_with("mm.py: correct on cpu x86_64"), "{end}");
    assert_eq!(s.stub.requests.lock().unwrap().len(), 1);
}

#[test]
fn a_cancelled_verification_shows_nothing_and_says_so() {
    let mut s = setup(vec![Reply::After(Duration::from_secs(20), Box::new(Reply::Fn(b70)))], "xpu");
    s.client.diagnostics_for_version(&s.uri, 1);
    let r = s.client.request("workspace/executeCommand", json!({"command": "xeforge.verifyCompiled", "arguments": [{"uri": s.uri}]}));
    assert!(r.is_null());
    let begin = s.client.take(|m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "begin").expect("progress begins");
    let token = begin["params"]["token"].clone();
    // Cancelled once the harness has the request, long before it answers.
    wait_for(|| !s.stub.requests.lock().unwrap().is_empty());
    s.client.notify("window/workDoneProgress/cancel", json!({"token": token}));
    let end = s
        .client
        .take_within(Duration::from_secs(10), |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end")
        .expect("the run ends at once");
    assert_eq!(end["params"]["value"]["message"], "mm.py: verification cancelled");
    std::thread::sleep(Duration::from_millis(300));
    while let Some(p) = s.client.take_within(Duration::ZERO, |m| m["method"] == "textDocument/publishDiagnostics") {
        assert!(!has_compiled(&p["params"]), "{p}");
    }
}

fn wait_for(mut f: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(std::time::Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Arguments a client should not send, and documents there is nothing to compile in: an error or a
/// message, never a harness run, and the server goes on.
#[test]
fn malformed_arguments_and_documents_without_a_kernel_are_refused_without_a_harness_run() {
    let mut s = setup(vec![], "xpu");
    s.client.diagnostics_for_version(&s.uri, 1);
    for args in [json!([]), json!([42]), json!([{"uri": "not a uri"}]), json!([{"uri": "file:///nowhere/x.py"}]), json!([{"version": 1}])] {
        let id = s.client.request_async("workspace/executeCommand", json!({"command": "xeforge.verifyCompiled", "arguments": args}));
        let r = s.client.response(id);
        assert_eq!(r["error"]["code"], -32602, "{args}: {r}");
    }
    let untitled = "untitled:Untitled-1";
    s.client.open(untitled, KERNEL, 1);
    let plain = format!("file://{}", s.dir.path().join("plain.py").display());
    s.client.open(&plain, "print('no kernel here')\n", 1);
    for (uri, why) in [(untitled, "needs a file on disk"), (plain.as_str(), "defines no Triton kernel")] {
        let r = s.client.request("workspace/executeCommand", json!({"command": "xeforge.verifyCompiled", "arguments": [{"uri": uri}]}));
        assert!(r.is_null());
        let shown = s.client.take(|m| m["method"] == "window/showMessage").expect("the user is told why");
        assert!(shown["params"]["message"].as_str().unwrap().contains(why), "{shown}");
    }
    assert!(s.stub.requests.lock().unwrap().is_empty());
    assert!(s.client.is_running());
    assert!(
        !s.client
            .request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": s.uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}})
            )
            .is_null()
    );
}
