//! The real `xeforge lsp` binary over stdio: diagnostics appear, move with edits in both position
//! encodings, clear when fixed and on close; quick fixes round-trip; hover, inlay hints and lenses;
//! configuration changes re-lint; shutdown/exit end the process.

#[path = "common/lsp_client.rs"]
mod lsp_client;

use lsp_client::{Client, capabilities};
use serde_json::{Value, json};

const URI: &str = "file:///tmp/xeforge-lsp-test/kern.py";

/// XF101 (num_warps=6, unsafe fix) and XF104 (grf_mode='large' on xpu-3.7, safe rename) on one launch.
const KERNEL: &str = "import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x, mask=offs < n)


def run(x, y, n):
    add_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256, num_warps=6, grf_mode='large')
";

const LAUNCH_LINE: u32 = 13;

fn start(encodings: &[&str], options: Value) -> Client {
    let mut c = Client::spawn();
    let init = c.initialize(capabilities(encodings), options);
    let expected = if encodings.contains(&"utf-8") { "utf-8" } else { "utf-16" };
    assert_eq!(init["capabilities"]["positionEncoding"], expected);
    c
}

fn with_code<'a>(diags: &'a [Value], code: &str) -> Vec<&'a Value> {
    diags.iter().filter(|d| d["code"] == code).collect()
}

fn position(line: u32, character: u32) -> Value {
    json!({"line": line, "character": character})
}

fn range(l0: u32, c0: u32, l1: u32, c1: u32) -> Value {
    json!({"start": position(l0, c0), "end": position(l1, c1)})
}

/// Column of `needle` on the launch line, in the given encoding's units.
fn column(line: &str, needle: &str, utf8: bool) -> u32 {
    let byte = line.find(needle).expect("needle on line");
    if utf8 { byte as u32 } else { line[..byte].encode_utf16().count() as u32 }
}

fn diagnostics_move_with_edits_and_clear(encodings: &[&str]) {
    let utf8 = encodings.contains(&"utf-8");
    let c = start(encodings, json!({}));
    c.open(URI, KERNEL, 1);
    let v1 = c.diagnostics_for_version(URI, 1);
    let xf101 = with_code(&v1, "XF101");
    assert_eq!(xf101.len(), 1, "one XF101 in {v1:#?}");
    let launch = KERNEL.lines().nth(LAUNCH_LINE as usize).unwrap();
    assert_eq!(xf101[0]["range"]["start"], position(LAUNCH_LINE, column(launch, "num_warps=6", utf8) + 10));
    assert_eq!(xf101[0]["source"], "xeforge");
    assert_eq!(xf101[0]["codeDescription"]["href"], "https://xeforge.dev/rules/XF101");
    assert_eq!(xf101[0]["data"]["version"], 1);

    // Insert astral and multi-byte characters before the flagged literal on the same line, and a
    // line above it: the diagnostic must follow, counted in the negotiated encoding.
    let x_col = column(launch, "(x, y", utf8) + 1;
    let inserted = "\"🚀𝔘é\", ";
    c.change(
        URI,
        2,
        json!([
            {"range": range(LAUNCH_LINE, x_col, LAUNCH_LINE, x_col), "text": inserted},
            {"range": range(0, 0, 0, 0), "text": "# héllo 🚀\n"},
        ]),
    );
    let v2 = c.diagnostics_for_version(URI, 2);
    let moved = with_code(&v2, "XF101");
    assert_eq!(moved.len(), 1);
    let new_launch = launch.replacen("(x, y", &format!("({inserted}x, y"), 1);
    assert_eq!(moved[0]["range"]["start"], position(LAUNCH_LINE + 1, column(&new_launch, "num_warps=6", utf8) + 10));

    // Fix it by hand: XF101 disappears, XF104 stays.
    let six = column(&new_launch, "num_warps=6", utf8) + 10;
    c.change(URI, 3, json!([{"range": range(LAUNCH_LINE + 1, six, LAUNCH_LINE + 1, six + 1), "text": "8"}]));
    let v3 = c.diagnostics_for_version(URI, 3);
    assert!(with_code(&v3, "XF101").is_empty(), "{v3:#?}");
    assert_eq!(with_code(&v3, "XF104").len(), 1);

    // Closing clears everything.
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": URI}}));
    let cleared = c.diagnostics_where(URI, |p| p["diagnostics"].as_array().is_some_and(Vec::is_empty));
    assert!(cleared["diagnostics"].as_array().unwrap().is_empty());
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn diagnostics_move_with_edits_and_clear_in_utf16() {
    diagnostics_move_with_edits_and_clear(&["utf-16"]);
}

#[test]
fn diagnostics_move_with_edits_and_clear_in_utf8() {
    diagnostics_move_with_edits_and_clear(&["utf-8", "utf-16"]);
}

/// Apply one TextEdit (UTF-16 positions, single line) to `text`.
fn apply_edit(text: &str, edit: &Value) -> String {
    let offset = |p: &Value| -> usize {
        let line = p["line"].as_u64().unwrap() as usize;
        let ch = p["character"].as_u64().unwrap() as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        let l = &text[start..];
        let mut units = 0;
        for (i, c) in l.char_indices() {
            if units >= ch || c == '\n' {
                return start + i;
            }
            units += c.len_utf16();
        }
        text.len()
    };
    let (a, b) = (offset(&edit["range"]["start"]), offset(&edit["range"]["end"]));
    format!("{}{}{}", &text[..a], edit["newText"].as_str().unwrap(), &text[b..])
}

#[test]
fn preferred_quick_fix_round_trips_and_fix_all_and_ignore_are_offered() {
    let mut c = start(&["utf-16"], json!({}));
    c.open(URI, KERNEL, 1);
    let v1 = c.diagnostics_for_version(URI, 1);
    let xf104 = with_code(&v1, "XF104")[0].clone();
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": xf104["range"], "context": {"diagnostics": [xf104]}}),
    );
    let actions = actions.as_array().unwrap();
    let fix = actions
        .iter()
        .find(|a| a["isPreferred"] == true && a["title"].as_str().unwrap().contains("XF104"))
        .unwrap_or_else(|| panic!("a preferred XF104 fix in {actions:#?}"));
    let doc_edit = &fix["edit"]["documentChanges"][0];
    assert_eq!(doc_edit["textDocument"]["version"], 1, "edits carry the version they were computed for");
    assert!(actions.iter().any(|a| a["title"] == "Ignore XF104 for this line"));
    assert!(actions.iter().any(|a| a["kind"] == "source.fixAll.xeforge"));

    let mut text = KERNEL.to_string();
    for e in doc_edit["edits"].as_array().unwrap() {
        text = apply_edit(&text, e);
    }
    assert!(text.contains("grf_mode='256'"), "{text}");
    c.change(URI, 2, json!([{"text": text}]));
    let v2 = c.diagnostics_for_version(URI, 2);
    assert!(with_code(&v2, "XF104").is_empty(), "{v2:#?}");

    // The unsafe XF101 fix is offered but not preferred; "ignore" silences it.
    let xf101 = with_code(&v2, "XF101")[0].clone();
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": xf101["range"], "context": {"diagnostics": [xf101], "only": ["quickfix"]}}),
    );
    let actions = actions.as_array().unwrap();
    let unsafe_fix = actions
        .iter()
        .find(|a| a["title"].as_str().unwrap().contains("XF101") && !a["title"].as_str().unwrap().starts_with("Ignore"))
        .unwrap();
    assert_eq!(unsafe_fix["isPreferred"], false);
    let ignore = actions.iter().find(|a| a["title"] == "Ignore XF101 for this line").unwrap();
    for e in ignore["edit"]["documentChanges"][0]["edits"].as_array().unwrap() {
        text = apply_edit(&text, e);
    }
    assert!(text.contains("# xeforge: ignore[XF101]"));
    c.change(URI, 3, json!([{"text": text}]));
    let v3 = c.diagnostics_for_version(URI, 3);
    assert!(with_code(&v3, "XF101").is_empty(), "suppressed: {v3:#?}");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn hover_inlay_hints_and_code_lens_describe_the_target() {
    let mut c = start(&["utf-16"], json!({}));
    c.open(URI, KERNEL, 1);
    let _ = c.diagnostics_for_version(URI, 1);
    let launch = KERNEL.lines().nth(LAUNCH_LINE as usize).unwrap();

    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": position(LAUNCH_LINE, column(launch, "num_warps", false) + 2)}),
    );
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(md.contains("num_warps") && md.contains("work-group"), "{md}");

    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": position(LAUNCH_LINE, column(launch, "num_warps=6", false) + 10)}),
    );
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(md.contains("XF101"), "{md}");

    let h = c.request("textDocument/hover", json!({"textDocument": {"uri": URI}, "position": position(7, 26)}));
    assert!(h["contents"]["value"].as_str().unwrap().contains("tl.arange"), "{h}");

    let hints = c.request("textDocument/inlayHint", json!({"textDocument": {"uri": URI}, "range": range(0, 0, 20, 0)}));
    let labels: Vec<&str> = hints.as_array().unwrap().iter().filter_map(|h| h["label"].as_str()).collect();
    assert!(labels.iter().any(|l| l.starts_with("wg 192")), "6 warps × 32 = 192 work-items: {labels:?}");

    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}}));
    let titles: Vec<&str> = lenses.as_array().unwrap().iter().filter_map(|l| l["command"]["title"].as_str()).collect();
    assert!(titles.iter().any(|t| t.contains("xpu-3.7")), "{titles:?}");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn configuration_changes_and_device_selection_relint_open_documents() {
    let mut c = start(&["utf-16"], json!({}));
    c.open(URI, KERNEL, 1);
    let v1 = c.diagnostics_for_version(URI, 1);
    assert_eq!(with_code(&v1, "XF101").len(), 1);

    // Pull-style change: the server asks workspace/configuration and re-lints with `ignore`.
    *c.settings.lock().unwrap() = json!({"ignore": ["XF101"]});
    c.notify("workspace/didChangeConfiguration", json!({"settings": null}));
    let p = c.diagnostics_where(URI, |p| p["diagnostics"].as_array().unwrap().iter().all(|d| d["code"] != "XF101"));
    assert_eq!(p["version"], 1);

    // Device list for pickers, then a switch at run time.
    let devices = c.request("xeforge/devices", json!({}));
    assert!(devices["devices"].as_array().unwrap().iter().any(|d| d["id"] == "arc-a770"));
    let r = c.request("workspace/executeCommand", json!({"command": "xeforge.selectDevice", "arguments": ["arc-a770", "xpu-3.5"]}));
    assert_eq!(r["device"], "arc-a770");
    assert_eq!(r["toolchain"], "xpu-3.5");
    // On xpu-3.5, grf_mode='large' is valid: XF104 goes away after the re-lint.
    c.diagnostics_where(URI, |p| p["diagnostics"].as_array().unwrap().iter().all(|d| d["code"] != "XF104"));
    let bad = c.request_async("workspace/executeCommand", json!({"command": "xeforge.selectDevice", "arguments": ["arc-a77"]}));
    let r = c.response(bad);
    assert!(r["error"]["message"].as_str().unwrap().contains("unknown device"), "{r}");
    assert!(c.server_requests().iter().any(|m| m == "client/registerCapability"), "project files are watched");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn pull_diagnostics_when_the_client_supports_them() {
    let mut caps = capabilities(&["utf-16"]);
    caps["textDocument"]["diagnostic"] = json!({"dynamicRegistration": false});
    let mut c = Client::spawn();
    let init = c.initialize(caps, json!({}));
    assert_eq!(init["capabilities"]["diagnosticProvider"]["identifier"], "xeforge");
    c.open(URI, KERNEL, 1);
    let r = c.request("textDocument/diagnostic", json!({"textDocument": {"uri": URI}}));
    assert_eq!(r["kind"], "full");
    assert_eq!(r["items"][0]["data"]["version"], 1);
    assert!(r["items"].as_array().unwrap().iter().any(|d| d["code"] == "XF101"));
    let id = r["resultId"].clone();
    let again = c.request("textDocument/diagnostic", json!({"textDocument": {"uri": URI}, "previousResultId": id}));
    assert_eq!(again["kind"], "unchanged");
    let fixed = KERNEL.replace("num_warps=6", "num_warps=8");
    c.change(URI, 2, json!([{"text": fixed}]));
    let r = c.request("textDocument/diagnostic", json!({"textDocument": {"uri": URI}}));
    assert!(r["items"].as_array().unwrap().iter().all(|d| d["code"] != "XF101"));
    assert!(
        c.take_within(std::time::Duration::from_millis(300), |m| m["method"] == "textDocument/publishDiagnostics").is_none(),
        "no push to a pull client"
    );
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn on_save_mode_lints_on_save_and_never_shows_misplaced_diagnostics() {
    let c = start(&["utf-16"], json!({"lint": {"run": "onSave"}}));
    c.open(URI, KERNEL, 1);
    assert_eq!(with_code(&c.diagnostics_for_version(URI, 1), "XF101").len(), 1);
    // Typing above the launch: its diagnostics would be misplaced, so they are withdrawn until save.
    c.change(URI, 2, json!([{"range": range(12, 0, 12, 0), "text": "# note\n"}]));
    let v2 = c.diagnostics_for_version(URI, 2);
    assert!(with_code(&v2, "XF101").is_empty(), "{v2:#?}");
    c.notify("textDocument/didSave", json!({"textDocument": {"uri": URI}}));
    let after_save = c.diagnostics_where(URI, |p| p["diagnostics"].as_array().unwrap().iter().any(|d| d["code"] == "XF101"));
    let d = after_save["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "XF101").unwrap().clone();
    assert_eq!(d["range"]["start"]["line"], LAUNCH_LINE + 1);
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn exit_without_shutdown_ends_with_status_1_and_version_flag_works() {
    let mut c = start(&["utf-16"], json!({}));
    c.notify("exit", Value::Null);
    assert_eq!(c.wait_exit(), Some(1));

    let out = std::process::Command::new(lsp_client::binary()).args(["lsp", "--version"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
}
