//! Stages in the editor, end to end: the real `xeforge lsp` binary over stdio runs the autotune stage
//! against a scripted HTTP harness (no GPU, no LLM). Lenses and the picker offer it; `xeforge.runStage`
//! reports `$/progress` and lands as a versioned `workspace/applyEdit`; edits elsewhere during the run
//! are rebased over, an edit to the kernel keeps the result back (offered again), cancel applies nothing.

#[path = "common/lsp_client.rs"]
mod lsp_client;
#[path = "common/openai_stub.rs"]
mod openai_stub;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lsp_client::{Client, capabilities};
use openai_stub::{Reply, Stub};
use serde_json::{Value, json};

const KERNEL_LINE: u32 = 6; // `def scale_kernel(...)`, 0-based
const BODY_LINE: u32 = 9; // `    mask = offs < n_elements`

fn verdict(v: &str, speedup: f64) -> Reply {
    Reply::Raw(
        200,
        json!({"id": 0, "verdict": v, "device": {"kind": "cuda", "name": "NVIDIA H200", "torch": "2.11.0", "triton": "3.6.0"},
            "correctness": {"ok": true, "variants": [{"name": "bench-gpu[0]", "seeds": 3, "max_abs": 1e-6, "rel_err": 1e-7, "rtol": 1e-4, "atol": 1e-4}]},
            "timing": {"meaningful": true, "baseline_us": 10.0, "candidate_us": 10.0 / speedup, "speedup": speedup,
                       "speedup_ci95": [speedup - 0.02, speedup + 0.02], "runs": 100}, "log": ""})
        .to_string(),
    )
}

/// The first request is held back `first_delay` (the window for the test's edits); every config (in
/// `sweep` requests) and the final list verify faster.
fn harness_script(first_delay: Duration) -> Vec<Reply> {
    let mut v = vec![Reply::After(first_delay, Box::new(Reply::Fn(faster)))];
    v.extend((0..40).map(|_| Reply::Fn(faster)));
    v
}

/// `accepted` at 1.2× for an `evaluate`; for a `sweep`, one such result per candidate, each faster.
fn faster(request: &Value) -> (u16, String) {
    let result = |s: f64| {
        let Reply::Raw(_, body) = verdict("accepted", s) else { unreachable!() };
        serde_json::from_str::<Value>(&body).unwrap()
    };
    if request["command"] != "sweep" {
        return (200, result(1.2).to_string());
    }
    let n = request["args"]["candidates"].as_array().map_or(0, |c| c.len());
    let results: Vec<Value> = (0..n).map(|i| result(1.2 + i as f64 / 100.0)).collect();
    (200, json!({"id": 0, "kind": "sweep", "device": {"kind": "cuda"}, "results": results, "stopped": null}).to_string())
}

struct Setup {
    _rt: tokio::runtime::Runtime,
    stub: Stub,
    dir: tempfile::TempDir,
    uri: String,
    text: String,
    client: Client,
}

fn setup(first_delay: Duration) -> Setup {
    setup_with("kernel.py", first_delay)
}

fn setup_with(fixture: &str, first_delay: Duration) -> Setup {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stub = rt.block_on(Stub::start(harness_script(first_delay)));
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cover").join(fixture)).unwrap();
    let file = dir.path().join(fixture);
    std::fs::write(&file, &text).unwrap();
    let uri = format!("file://{}", file.display());
    let mut client = Client::spawn();
    client.initialize(capabilities(&["utf-16"]), json!({"harness": {"url": stub.url, "device": "cuda"}}));
    client.open(&uri, &text, 1);
    Setup { _rt: rt, stub, dir, uri, text, client }
}

fn lenses(c: &mut Client, uri: &str) -> Vec<Value> {
    c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).as_array().cloned().unwrap_or_default()
}

fn run_stage_lens(c: &mut Client, uri: &str) -> Value {
    lenses(c, uri)
        .into_iter()
        .find(|l| l["command"]["command"] == "xeforge.runStage" && l["command"]["arguments"][0]["stage"] == "autotune")
        .expect("an autotune lens")
}

/// Run the lens's command; returns the progress token once the run has begun.
fn start_run(c: &mut Client, lens: &Value) -> Value {
    let id = c.request_async("workspace/executeCommand", json!({"command": "xeforge.runStage", "arguments": lens["command"]["arguments"]}));
    let r = c.response(id);
    assert!(r.get("error").is_none(), "{r}");
    let begin = c.take(|m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "begin").expect("progress begin");
    assert_eq!(begin["params"]["value"]["cancellable"], true);
    begin["params"]["token"].clone()
}

/// Progress until the end of the run; returns (report messages, end message).
fn progress_to_end(c: &Client, token: &Value) -> (Vec<String>, String) {
    let mut reports = Vec::new();
    loop {
        let m = c
            .take_within(Duration::from_secs(60), |m| m["method"] == "$/progress" && m["params"]["token"] == *token)
            .expect("progress until the end");
        let v = &m["params"]["value"];
        match v["kind"].as_str() {
            Some("report") => reports.push(v["message"].as_str().unwrap_or("").to_string()),
            Some("end") => return (reports, v["message"].as_str().unwrap_or("").to_string()),
            other => panic!("unexpected progress {other:?}"),
        }
    }
}

/// Byte offset of an LSP position (the fixture is ASCII, so UTF-16 units are bytes).
fn offset(text: &str, p: &Value) -> usize {
    let line = p["line"].as_u64().unwrap() as usize;
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    start + p["character"].as_u64().unwrap() as usize
}

/// Apply one applyEdit's text edits to `text`; returns the new text and the version it was stamped with.
fn apply_edit(text: &str, params: &Value) -> (String, i64) {
    let change = &params["edit"]["documentChanges"][0];
    let version = change["textDocument"]["version"].as_i64().expect("a versioned edit");
    let mut edits: Vec<(usize, usize, String)> = change["edits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (offset(text, &e["range"]["start"]), offset(text, &e["range"]["end"]), e["newText"].as_str().unwrap().to_string()))
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_string();
    for (a, b, t) in edits {
        out.replace_range(a..b, &t);
    }
    (out, version)
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn records(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir.join(".xeforge/runs")).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default()
}

fn line_insert(line: u32, character: u32, text: &str) -> Value {
    let p = json!({"line": line, "character": character});
    json!([{"range": {"start": p, "end": p}, "text": text}])
}

/// The tuned config written into the launch: its tile in the grid and the launch, its warps and stages.
fn assert_autotuned(text: &str) {
    assert!(!text.contains("@triton.autotune("), "one config, no autotuner: {text}");
    let launch = text.lines().find(|l| l.contains("scale_kernel[")).unwrap_or_else(|| panic!("{text}"));
    let block = launch.split("BLOCK_SIZE=").nth(1).and_then(|v| v.split(',').next()).unwrap_or_else(|| panic!("{launch}"));
    assert_ne!(block, "256", "{launch}");
    assert!(launch.contains(&format!("scale_kernel[(triton.cdiv(n, {block}),)](x, out, n, BLOCK_SIZE={block}, num_warps=")), "{launch}");
    assert!(launch.contains("num_stages="), "{launch}");
}

#[test]
fn kernels_get_an_autotune_lens_and_the_picker_lists_every_stage() {
    let mut s = setup(Duration::ZERO);
    let lens = run_stage_lens(&mut s.client, &s.uri);
    assert_eq!(lens["range"]["start"]["line"], KERNEL_LINE);
    // The fixture has no `@triton.autotune`, so XF501 selects the stage too; the title says so.
    assert_eq!(lens["command"]["title"], "Run stage: autotune (XF501; verify on cuda)");
    assert_eq!(lens["command"]["arguments"][0], json!({"uri": s.uri, "version": 1, "stage": "autotune", "kernel": "scale_kernel"}));

    let actions = s.client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": s.uri}, "range": {"start": {"line": BODY_LINE, "character": 4}, "end": {"line": BODY_LINE, "character": 4}},
               "context": {"diagnostics": [], "only": ["refactor"]}}),
    );
    let action = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "refactor.rewrite.xeforge.stage")
        .expect("a stage code action in the kernel");
    assert_eq!(action["command"], lens["command"], "the code action runs what the lens runs");

    let picker =
        s.client.request("xeforge/stages", json!({"textDocument": {"uri": s.uri}, "position": {"line": BODY_LINE, "character": 4}}));
    let kernels = picker["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 1);
    assert_eq!(kernels[0]["name"], "scale_kernel");
    let stages = kernels[0]["stages"].as_array().unwrap();
    assert_eq!(stages[0]["name"], "autotune");
    assert_eq!(stages[0]["recommended"], true);
    assert_eq!(stages[0]["command"], lens["command"], "the picker runs exactly what the lens runs");
    let names: Vec<&str> = stages.iter().filter_map(|x| x["name"].as_str()).collect();
    for stage in ["device-tuning", "memory-access", "fusion"] {
        assert!(names.contains(&stage), "{stage} missing from {names:?}");
    }
    assert_eq!(names.iter().filter(|n| **n == "autotune").count(), 1);
}

#[test]
fn a_run_reports_progress_and_applies_at_the_version_it_ran_on() {
    let mut s = setup(Duration::ZERO);
    let lens = run_stage_lens(&mut s.client, &s.uri);
    let token = start_run(&mut s.client, &lens);
    let (reports, end) = progress_to_end(&s.client, &token);
    assert!(reports.iter().any(|r| r.starts_with("autotune on scale_kernel")), "{reports:?}");
    assert!(reports.iter().any(|r| r.contains("verifying")), "{reports:?}");
    assert!(end.starts_with("autotune: verified"), "{end}");

    let edits = s.client.applied_edits();
    assert_eq!(edits.len(), 1);
    let (new, version) = apply_edit(&s.text, &edits[0]);
    assert_eq!(version, 1);
    assert_autotuned(&new);

    let shown = s.client.take(|m| m["method"] == "window/showMessage").expect("the result is shown");
    let message = shown["params"]["message"].as_str().unwrap();
    let record = records(s.dir.path());
    assert_eq!(record.len(), 1, "one evidence record");
    assert!(message.starts_with("autotune: verified"), "{message}");
    assert!(message.contains(&format!("evidence: file://{}", record[0].display())), "{message}");
    assert!(s.stub.requests.lock().unwrap().len() > 2);
}

#[test]
fn edits_elsewhere_during_the_run_are_rebased_over() {
    let mut s = setup(Duration::from_millis(1500));
    let lens = run_stage_lens(&mut s.client, &s.uri);
    let token = start_run(&mut s.client, &lens);
    // While the harness measures: a line above everything, and one at the end of the file.
    s.client.change(&s.uri, 2, line_insert(0, 0, "# tuned in the editor\n"));
    let lines = s.text.lines().count() as u32 + 1;
    s.client.change(&s.uri, 3, line_insert(lines, 0, "# end\n"));
    let v3 = format!("# tuned in the editor\n{}# end\n", s.text);
    let (_, end) = progress_to_end(&s.client, &token);
    assert!(end.starts_with("autotune: verified"), "{end}");

    let edits = s.client.applied_edits();
    assert_eq!(edits.len(), 1, "{end}");
    let (new, version) = apply_edit(&v3, &edits[0]);
    assert_eq!(version, 3, "stamped with the version it was rebased onto");
    assert!(new.starts_with("# tuned in the editor\nimport torch\n") && new.ends_with("# end\n"), "{new}");
    assert_autotuned(&new);
}

#[test]
fn an_edit_to_the_kernel_during_the_run_keeps_the_result_back_and_offers_it_again() {
    let mut s = setup(Duration::from_millis(1500));
    let lens = run_stage_lens(&mut s.client, &s.uri);
    let token = start_run(&mut s.client, &lens);
    s.client.change(&s.uri, 2, line_insert(BODY_LINE, 4, "# user edit\n    "));
    let (_, end) = progress_to_end(&s.client, &token);
    assert!(end.contains("not applied: the kernel was edited while the stage ran"), "{end}");
    assert!(s.client.applied_edits().is_empty(), "nothing applied behind the user's back");
    wait_for("the Apply anyway / Discard prompt", || s.client.server_requests().iter().any(|m| m == "window/showMessageRequest"));

    // The prompt was dismissed (the test client answers null): the result waits as a lens on the kernel.
    let kept = lenses(&mut s.client, &s.uri)
        .into_iter()
        .find(|l| l["command"]["command"] == "xeforge.applyStageResult")
        .expect("an 'Apply verified result' lens");
    assert!(kept["command"]["title"].as_str().unwrap().starts_with("Apply verified autotune result"), "{kept}");
    assert_eq!(kept["range"]["start"]["line"], KERNEL_LINE);

    let r = s
        .client
        .request("workspace/executeCommand", json!({"command": "xeforge.applyStageResult", "arguments": kept["command"]["arguments"]}));
    assert_eq!(r["applied"], true, "{r}");
    let v2 = s.text.replacen("    mask = offs < n_elements", "    # user edit\n    mask = offs < n_elements", 1);
    let edits = s.client.applied_edits();
    assert_eq!(edits.len(), 1);
    let (new, version) = apply_edit(&v2, &edits[0]);
    assert_eq!(version, 2);
    assert_autotuned(&new);
    assert!(!new.contains("# user edit"), "apply anyway puts the verified kernel in place of the edited one");
    assert!(
        lenses(&mut s.client, &s.uri).iter().all(|l| l["command"]["command"] != "xeforge.applyStageResult"),
        "the lens is gone once applied"
    );
}

#[test]
fn cancelling_a_run_applies_nothing() {
    let mut s = setup(Duration::from_millis(1500));
    let lens = run_stage_lens(&mut s.client, &s.uri);
    let token = start_run(&mut s.client, &lens);
    s.client.notify("window/workDoneProgress/cancel", json!({"token": token}));
    let (_, end) = progress_to_end(&s.client, &token);
    assert!(end.contains("cancelled"), "{end}");
    assert!(s.client.applied_edits().is_empty());
    assert!(s.stub.requests.lock().unwrap().len() <= 2, "the run stopped instead of measuring every config");
}

/// A wrapper-style file whose scalar `alpha` nothing in the code gives (`fixtures/cover/scale_wrapper.py`,
/// `def scale` on line 13): the server asks the editor once, writes the answer above the entry as a
/// versioned edit, and the same run goes on to a verified result.
#[test]
fn a_missing_size_is_asked_once_written_above_the_entry_and_the_run_goes_on() {
    let mut s = setup_with("scale_wrapper.py", Duration::ZERO);
    s.client.answer("xeforge/askProblem", json!({"answer": "alpha=2.5"}));
    let lens = run_stage_lens(&mut s.client, &s.uri);
    let token = start_run(&mut s.client, &lens);

    wait_for("the answer written into the file", || !s.client.applied_edits().is_empty());
    let asked = s.client.server_request_params("xeforge/askProblem");
    assert_eq!(asked.len(), 1, "asked once: {asked:?}");
    assert_eq!(asked[0]["entry"], "scale");
    assert_eq!(asked[0]["suggestion"], "alpha=<value>");
    assert!(asked[0]["message"].as_str().unwrap().contains("a value for the scalar `alpha`"), "{}", asked[0]);
    let (with_answer, version) = apply_edit(&s.text, &s.client.applied_edits()[0]);
    assert_eq!(version, 1);
    assert_eq!(with_answer.lines().nth(13), Some("# xeforge: dims alpha=2.5"));
    assert_eq!(with_answer.lines().nth(14), Some("def scale(x, alpha):"));
    // The editor applies it, as a real one does.
    s.client
        .notify("textDocument/didChange", json!({"textDocument": {"uri": s.uri, "version": 2}, "contentChanges": [{"text": with_answer}]}));

    let (_, end) = progress_to_end(&s.client, &token);
    assert!(end.starts_with("autotune: verified"), "{end}");
    let edits = s.client.applied_edits();
    assert_eq!(edits.len(), 2, "the answer, then the result");
    let (tuned, version) = apply_edit(&with_answer, &edits[1]);
    assert_eq!(version, 2);
    assert!(tuned.contains("# xeforge: dims alpha=2.5\ndef scale(x, alpha):") && tuned.contains("num_stages="), "{tuned}");
    // The harness got a spec with the answer in it.
    let spec = std::fs::read_to_string(s.dir.path().join(".xeforge/problems/scale_wrapper-scale.yaml")).unwrap();
    assert!(spec.contains("alpha"), "{spec}");
}

/// The user dismisses the prompt: nothing is written and the run ends saying what to add.
#[test]
fn a_dismissed_question_writes_nothing_and_says_what_to_add() {
    let mut s = setup_with("scale_wrapper.py", Duration::ZERO);
    let lens = run_stage_lens(&mut s.client, &s.uri);
    let token = start_run(&mut s.client, &lens);
    let (_, end) = progress_to_end(&s.client, &token);
    assert!(end.contains("# xeforge: dims alpha=<value>"), "{end}");
    assert_eq!(s.client.server_request_params("xeforge/askProblem").len(), 1);
    assert!(s.client.applied_edits().is_empty());
    assert!(s.stub.requests.lock().unwrap().is_empty(), "the harness ran nothing");
}

#[test]
fn after_a_run_the_kernel_has_an_evidence_lens_and_the_server_writes_its_report() {
    let mut s = setup(Duration::ZERO);
    let lens = run_stage_lens(&mut s.client, &s.uri);
    let token = start_run(&mut s.client, &lens);
    progress_to_end(&s.client, &token);
    let record = records(s.dir.path()).pop().expect("an evidence record");
    let evidence = lenses(&mut s.client, &s.uri)
        .into_iter()
        .find(|l| l["command"]["title"] == "Evidence report")
        .expect("an Evidence report lens over the kernel");
    // The lens names the client's own command; the client asks the server for the page.
    assert_eq!(evidence["command"]["command"], "xeforge.showReport");
    assert_eq!(evidence["command"]["arguments"][0]["record"], record.display().to_string());
    let page = s
        .client
        .request("workspace/executeCommand", json!({"command": "xeforge.renderReport", "arguments": evidence["command"]["arguments"]}));
    let html = page["html"].as_str().expect("the page");
    assert!(html.contains("<h1>autotune · <code>scale_kernel</code>"), "{}", &html[..html.len().min(400)]);
    assert_eq!(std::fs::read_to_string(page["path"].as_str().unwrap()).unwrap(), html, "written beside the record");
    // Anything but a record or a runs directory is refused: the command reads and writes nowhere else.
    let id = s
        .client
        .request_async("workspace/executeCommand", json!({"command": "xeforge.renderReport", "arguments": [{"record": "/etc/passwd"}]}));
    let refused = s.client.response(id);
    assert!(refused["error"]["message"].as_str().unwrap_or("").contains("not an evidence record"), "{refused}");
}
