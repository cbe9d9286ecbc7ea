//! The real `xeforge lsp` binary with LSP 3.17 notebook documents: the capability, a kernel in one
//! cell checked at its launch in another, diagnostics on the launch cell's URI stamped with that
//! cell's version and following `notebookDocument/didChange` (text edits in either cell, cells added
//! and removed), never for a version that is gone; hover and quick fixes on a cell; malformed
//! notifications ignored; pull clients get the cells' diagnostics pushed.

#[path = "common/lsp_client.rs"]
mod lsp_client;

use lsp_client::{Client, capabilities};
use serde_json::{Value, json};

const NB: &str = "file:///tmp/xeforge-nb-test/vector_add.ipynb";
const TITLE: &str = "vscode-notebook-cell:/tmp/xeforge-nb-test/vector_add.ipynb#W0sZmlsZQ%3D%3D";
const KERNEL: &str = "vscode-notebook-cell:/tmp/xeforge-nb-test/vector_add.ipynb#W1sZmlsZQ%3D%3D";
const LAUNCH: &str = "vscode-notebook-cell:/tmp/xeforge-nb-test/vector_add.ipynb#W2sZmlsZQ%3D%3D";
const EXTRA: &str = "vscode-notebook-cell:/tmp/xeforge-nb-test/vector_add.ipynb#W3sZmlsZQ%3D%3D";

const KERNEL_CELL: &str = "%load_ext autoreload
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x, mask=offs < n)";

/// XF101 (num_warps=6) and XF104 (grf_mode='large' on xpu-3.7) on row 2 of the cell.
const LAUNCH_CELL: &str = "!nvidia-smi -L
def run(x, y, n):
    add_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256, num_warps=6, grf_mode='large')
";

fn start(caps: Value) -> Client {
    let mut c = Client::spawn();
    let init = c.initialize(caps, json!({}));
    let sync = &init["capabilities"]["notebookDocumentSync"];
    assert_eq!(sync["notebookSelector"][0]["notebook"]["notebookType"], "jupyter-notebook", "{init:#}");
    assert_eq!(sync["notebookSelector"][0]["cells"], json!([{"language": "python"}]));
    c
}

fn cell_item(uri: &str, language: &str, version: i64, text: &str) -> Value {
    json!({"uri": uri, "languageId": language, "version": version, "text": text})
}

fn open_notebook(c: &Client) {
    c.notify(
        "notebookDocument/didOpen",
        json!({
            "notebookDocument": {
                "uri": NB, "notebookType": "jupyter-notebook", "version": 0, "metadata": {},
                "cells": [
                    {"kind": 1, "document": TITLE},
                    {"kind": 2, "document": KERNEL, "executionSummary": {"executionOrder": 1, "success": true}},
                    {"kind": 2, "document": LAUNCH}
                ]
            },
            "cellTextDocuments": [
                cell_item(TITLE, "markdown", 1, "# Vector add\nlaunch with num_warps=6"),
                cell_item(KERNEL, "python", 1, KERNEL_CELL),
                cell_item(LAUNCH, "python", 1, LAUNCH_CELL)
            ]
        }),
    );
}

fn text_change(c: &Client, nb_version: i64, cell: &str, cell_version: i64, changes: Value) {
    c.notify(
        "notebookDocument/didChange",
        json!({
            "notebookDocument": {"uri": NB, "version": nb_version},
            "change": {"cells": {"textContent": [{"document": {"uri": cell, "version": cell_version}, "changes": changes}]}}
        }),
    );
}

fn range(l0: u32, c0: u32, l1: u32, c1: u32) -> Value {
    json!({"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}})
}

fn codes(diags: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = diags.iter().map(|d| d["code"].as_str().unwrap().to_string()).collect();
    v.sort();
    v
}

/// The launch line's column of `needle` (ASCII line: UTF-16 and UTF-8 agree).
fn col(needle: &str) -> u32 {
    LAUNCH_CELL.lines().nth(2).unwrap().find(needle).unwrap() as u32
}

#[test]
fn a_launch_cell_is_checked_against_a_kernel_cell_and_follows_edits() {
    let c = start(capabilities(&["utf-16"]));
    open_notebook(&c);

    let launch = c.diagnostics_for_version(LAUNCH, 1);
    assert_eq!(codes(&launch), ["XF101", "XF104", "XF501"], "{launch:#?}");
    let xf101 = launch.iter().find(|d| d["code"] == "XF101").unwrap();
    let at = col("num_warps=6") + "num_warps=".len() as u32;
    assert_eq!(xf101["range"], range(2, at, 2, at + 1));
    assert_eq!(xf101["data"]["version"], 1);
    // The note names the launch, in the launch cell.
    assert_eq!(xf101["relatedInformation"][0]["location"]["uri"], LAUNCH);
    // The kernel cell is published too (nothing in it), the markdown cell never.
    assert!(c.diagnostics_for_version(KERNEL, 1).is_empty());

    // Edit the launch cell: num_warps=6 → 8.
    text_change(&c, 1, LAUNCH, 2, json!([{"range": range(2, at, 2, at + 1), "text": "8"}]));
    let launch = c.diagnostics_for_version(LAUNCH, 2);
    assert_eq!(codes(&launch), ["XF104", "XF501"], "{launch:#?}");

    // Edit the kernel cell: the launch no longer names a kernel, so the launch cell (still at its
    // version 2) is published again, empty. The notebook's version stays (VS Code keeps it through
    // cell text edits).
    text_change(&c, 1, KERNEL, 2, json!([{"range": range(6, 4, 6, 14), "text": "sub_kernel"}]));
    let p = c.diagnostics_where(LAUNCH, |p| p["version"] == 2 && p["diagnostics"].as_array().unwrap().is_empty());
    assert_eq!(p["version"], 2);
    // And back.
    text_change(&c, 1, KERNEL, 3, json!([{"range": range(6, 4, 6, 14), "text": "add_kernel"}]));
    c.diagnostics_where(LAUNCH, |p| p["version"] == 2 && codes(p["diagnostics"].as_array().unwrap()) == ["XF104", "XF501"]);

    // A cell added between them, with a launch of its own; then the launch cell removed.
    c.notify(
        "notebookDocument/didChange",
        json!({
            "notebookDocument": {"uri": NB, "version": 4},
            "change": {"cells": {"structure": {
                "array": {"start": 2, "deleteCount": 0, "cells": [{"kind": 2, "document": EXTRA}]},
                "didOpen": [cell_item(EXTRA, "python", 1, "add_kernel[(1,)](x, x, 1, BLOCK=64, num_warps=3)\n")]
            }}}
        }),
    );
    let extra = c.diagnostics_for_version(EXTRA, 1);
    assert!(codes(&extra).contains(&"XF101".to_string()), "{extra:#?}");
    assert_eq!(extra.iter().find(|d| d["code"] == "XF101").unwrap()["range"]["start"]["line"], 0);
    c.notify(
        "notebookDocument/didChange",
        json!({
            "notebookDocument": {"uri": NB, "version": 5},
            "change": {"cells": {"structure": {
                "array": {"start": 3, "deleteCount": 1},
                "didClose": [{"uri": LAUNCH}]
            }}}
        }),
    );
    let cleared = c.diagnostics_where(LAUNCH, |p| p["diagnostics"].as_array().unwrap().is_empty());
    assert!(cleared.get("version").is_none_or(Value::is_null), "a cell that is gone gets an unversioned clear: {cleared}");

    // Closing the notebook clears every cell.
    c.notify("notebookDocument/didClose", json!({"notebookDocument": {"uri": NB}, "cellTextDocuments": [{"uri": KERNEL}, {"uri": EXTRA}]}));
    c.diagnostics_where(EXTRA, |p| p["diagnostics"].as_array().unwrap().is_empty());
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn never_published_for_a_version_that_is_gone() {
    let c = start(capabilities(&["utf-16"]));
    open_notebook(&c);
    c.diagnostics_for_version(LAUNCH, 1);
    // num_warps=6 → 5 → 7 → 3 → 8, sent at once: every publish of the launch cell must be that of
    // the text at its version, the last one of version 5.
    let at = col("num_warps=6") + "num_warps=".len() as u32;
    let values = ["5", "7", "3", "8"];
    for (i, v) in values.iter().enumerate() {
        let (nb, cell) = (i as i64 + 1, i as i64 + 2);
        text_change(&c, nb, LAUNCH, cell, json!([{"range": range(2, at, 2, at + 1), "text": v}]));
    }
    loop {
        let p = c
            .take(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == LAUNCH)
            .expect("the last version is published")["params"]
            .clone();
        let version = p["version"].as_i64().unwrap();
        if version == 1 {
            continue;
        }
        let value = values[version as usize - 2];
        let xf101: Vec<&Value> = p["diagnostics"].as_array().unwrap().iter().filter(|d| d["code"] == "XF101").collect();
        if value == "8" {
            assert!(xf101.is_empty(), "version {version}: {p}");
            break;
        }
        assert!(xf101[0]["message"].as_str().unwrap().starts_with(&format!("num_warps={value} ")), "version {version}: {p}");
    }
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn hover_and_quick_fixes_on_a_cell() {
    let mut c = start(capabilities(&["utf-16"]));
    open_notebook(&c);
    c.diagnostics_for_version(LAUNCH, 1);
    let grf = col("'large'") + 1;

    let h = c.request("textDocument/hover", json!({"textDocument": {"uri": LAUNCH}, "position": {"line": 2, "character": grf}}));
    assert!(h["contents"]["value"].as_str().unwrap().contains("XF104"), "{h:#}");
    assert_eq!(h["range"]["start"]["line"], 2);

    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": LAUNCH}, "range": range(2, grf, 2, grf), "context": {"diagnostics": []}}),
    );
    let fix = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"].as_str().unwrap().contains("XF104") && a["isPreferred"] == true)
        .unwrap_or_else(|| panic!("XF104's fix in {actions:#}"));
    let doc = &fix["edit"]["documentChanges"][0];
    assert_eq!(doc["textDocument"], json!({"uri": LAUNCH, "version": 1}));
    assert!(doc["edits"][0]["newText"].as_str().unwrap().contains("256"), "{doc:#}");
    assert_eq!(doc["edits"][0]["range"]["start"]["line"], 2);
    assert!(actions.as_array().unwrap().iter().all(|a| a.get("command").is_none()), "no stage actions on a cell: {actions:#}");

    // Applied by the client as a cell edit, the finding goes.
    let e = &doc["edits"][0];
    text_change(&c, 1, LAUNCH, 2, json!([{"range": e["range"], "text": e["newText"]}]));
    assert!(!codes(&c.diagnostics_for_version(LAUNCH, 2)).contains(&"XF104".to_string()));
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn malformed_and_unknown_notebook_notifications_are_ignored() {
    let mut c = start(capabilities(&["utf-16"]));
    for (method, params) in [
        ("notebookDocument/didOpen", json!({"notebookDocument": {"uri": 3}})),
        ("notebookDocument/didOpen", json!({})),
        ("notebookDocument/didChange", json!({"notebookDocument": {"uri": NB, "version": 2}, "change": {}})),
        ("notebookDocument/didChange", json!({"notebookDocument": {"uri": NB}, "change": {"cells": 3}})),
        ("notebookDocument/didSave", json!({"notebookDocument": {"uri": NB}})),
        ("notebookDocument/didClose", json!({"notebookDocument": {"uri": NB}})),
        ("notebookDocument/didClose", json!(null)),
    ] {
        c.notify(method, params);
    }
    open_notebook(&c);
    c.diagnostics_for_version(LAUNCH, 1);
    let at = col("num_warps=6") + "num_warps=".len() as u32;
    // A stale notebook version, a cell that is not open, an out-of-range structure change, a
    // change past the end of a cell: refused or clamped, never a crash.
    text_change(&c, -1, LAUNCH, 9, json!([{"range": range(2, at, 2, at + 1), "text": "8"}]));
    // A stale cell version under a current notebook version: refused too.
    text_change(&c, 0, LAUNCH, 1, json!([{"range": range(2, at, 2, at + 1), "text": "8"}]));
    text_change(&c, 1, "vscode-notebook-cell:/elsewhere#x", 1, json!([{"text": "x"}]));
    c.notify(
        "notebookDocument/didChange",
        json!({"notebookDocument": {"uri": NB, "version": 2},
               "change": {"cells": {"structure": {"array": {"start": 99, "deleteCount": 7}}}}}),
    );
    text_change(&c, 3, LAUNCH, 2, json!([{"range": range(40, 0, 41, 3), "text": "\n"}]));
    let p = c.diagnostics_for_version(LAUNCH, 2);
    assert!(codes(&p).contains(&"XF101".to_string()), "the stale change was not applied: {p:#?}");
    // Text sync for a cell (a client sending both) is ignored: the cell is not analysed alone.
    c.open(LAUNCH, "add_kernel = 1\n", 7);
    text_change(&c, 4, LAUNCH, 3, json!([{"range": range(0, 0, 0, 0), "text": "x = 1\n"}]));
    let p = c.diagnostics_for_version(LAUNCH, 3);
    assert!(codes(&p).contains(&"XF101".to_string()), "{p:#?}");
    assert_eq!(p.iter().find(|d| d["code"] == "XF101").unwrap()["range"]["start"]["line"], 3);
    let alone = c.take_within(std::time::Duration::from_millis(500), |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == LAUNCH && m["params"]["version"] == 7
    });
    assert!(alone.is_none(), "{alone:?}");
    // Still answering.
    let h = c.request("textDocument/hover", json!({"textDocument": {"uri": LAUNCH}, "position": {"line": 0, "character": 0}}));
    assert!(h.is_null() || h.is_object());
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn pull_clients_get_the_cells_diagnostics_pushed() {
    let mut caps = capabilities(&["utf-16"]);
    caps["textDocument"]["diagnostic"] = json!({"dynamicRegistration": false});
    let mut c = start(caps);
    open_notebook(&c);
    assert_eq!(codes(&c.diagnostics_for_version(LAUNCH, 1)), ["XF101", "XF104", "XF501"]);
    // A pull of the cell answers nothing more, so nothing shows twice.
    let r = c.request("textDocument/diagnostic", json!({"textDocument": {"uri": LAUNCH}}));
    assert_eq!(r["items"], json!([]), "{r:#}");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn a_cell_opened_as_a_text_document_first_becomes_the_notebooks() {
    let c = start(capabilities(&["utf-16"]));
    // A client that syncs the cell as text too, before the notebook: analysed alone it has no kernel.
    c.open(LAUNCH, LAUNCH_CELL, 1);
    c.diagnostics_where(LAUNCH, |p| p["diagnostics"].as_array().unwrap().is_empty());
    open_notebook(&c);
    let launch = c.diagnostics_where(LAUNCH, |p| !p["diagnostics"].as_array().unwrap().is_empty());
    assert_eq!(codes(launch["diagnostics"].as_array().unwrap()), ["XF101", "XF104", "XF501"]);
    // The text document's worker does not clear them afterwards.
    let cleared = c.take_within(std::time::Duration::from_millis(800), |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == LAUNCH
    });
    assert!(cleared.is_none(), "{cleared:?}");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}
