//! Completion and signature help over the real `xeforge lsp` binary: `tl.` members as the target
//! toolchain has them (removed ones tagged Deprecated, absent ones left out), documentation on
//! `completionItem/resolve`, call keywords of that toolchain's signature, option values, Config dict
//! keys, launch signature help with constexpr and autotuned parameters marked.

#[path = "common/lsp_client.rs"]
mod lsp_client;

use lsp_client::{Client, capabilities};
use serde_json::{Value, json};

const URI: &str = "file:///tmp/xeforge-completion-test/kern.py";

const KERNEL: &str = "import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({'BLOCK': 64, }, num_warps=4)], key=['n'])
@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, SCALE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.
    tl.store(y_ptr + offs, x, mask=offs < n)


def run(x, y, n):
    add_kernel[(triton.cdiv(n, 64),)](x, y, n, SCALE=2, grf_mode=\"\")
";

fn start(toolchain: &str) -> Client {
    let mut c = Client::spawn();
    c.initialize(capabilities(&["utf-16"]), json!({"toolchain": toolchain}));
    c.open(URI, KERNEL, 1);
    let _ = c.diagnostics_for_version(URI, 1);
    c
}

/// Line and UTF-16 column just after `needle` (its `nth` occurrence on a line containing it).
fn after(needle: &str) -> Value {
    for (i, line) in KERNEL.lines().enumerate() {
        if let Some(at) = line.find(needle) {
            return json!({"line": i, "character": (at + needle.len()) as u32});
        }
    }
    panic!("{needle} not in the kernel")
}

fn complete(c: &mut Client, pos: Value) -> Vec<Value> {
    let r = c.request("textDocument/completion", json!({"textDocument": {"uri": URI}, "position": pos}));
    r["items"].as_array().cloned().unwrap_or_default()
}

fn find<'a>(items: &'a [Value], label: &str) -> Option<&'a Value> {
    items.iter().find(|i| i["label"] == label)
}

#[test]
fn tl_members_follow_the_toolchain_and_resolve_with_docs() {
    let mut c = start("xpu-main");
    let items = complete(&mut c, after("y = tl."));
    let load = find(&items, "load").expect("tl.load offered");
    assert!(load["tags"].is_null());
    // Removed on xpu-main (exists, raises): offered, tagged Deprecated; absent there: not offered.
    let bp = find(&items, "make_block_ptr").expect("make_block_ptr offered");
    assert_eq!(bp["tags"], json!([1]), "{bp}");
    assert!(bp["detail"].as_str().unwrap().contains("removed on xpu-main"));
    assert!(find(&items, "advance").is_none(), "tl.advance is not exported on xpu-main");
    assert!(find(&items, "_experimental_make_tensor_descriptor").is_none());
    assert!(load["documentation"].is_null(), "documentation comes on resolve");
    let resolved = c.request("completionItem/resolve", load.clone());
    let md = resolved["documentation"]["value"].as_str().unwrap();
    assert!(md.contains("tl.load(pointer") && md.contains("Available on:"), "{md}");
    assert!(!md.contains("boundary_check"), "xpu-main's tl.load has no boundary_check: {md}");

    // The same file on xpu-3.7: tl.advance is there, deprecated.
    let mut c37 = start("xpu-3.7");
    let items = complete(&mut c37, after("y = tl."));
    assert_eq!(find(&items, "advance").expect("advance on 3.7")["tags"], json!([1]));
    assert_eq!(c.shutdown_and_exit(), Some(0));
    assert_eq!(c37.shutdown_and_exit(), Some(0));
}

#[test]
fn keywords_values_and_config_keys() {
    let mut c = start("xpu-3.7");
    // tl.load( … , |: keywords of 3.7's signature not given yet.
    let items = complete(&mut c, after("mask=offs < n"));
    let _ = items;
    let pos = after("x = tl.load(x_ptr + offs, ");
    let items = complete(&mut c, pos);
    let labels: Vec<&str> = items.iter().filter_map(|i| i["label"].as_str()).collect();
    assert!(labels.contains(&"boundary_check=") && labels.contains(&"eviction_policy="), "{labels:?}");

    // grf_mode="|" at a launch: the toolchain's values.
    let items = complete(&mut c, after("grf_mode=\""));
    let labels: Vec<&str> = items.iter().filter_map(|i| i["label"].as_str()).collect();
    assert_eq!(labels, ["default", "128", "256", "512", "auto"]);

    // Launch keywords: the kernel's parameters the autotuner does not set, and options it does not.
    let items = complete(&mut c, after("(x, y, n, "));
    let labels: Vec<&str> = items.iter().filter_map(|i| i["label"].as_str()).collect();
    assert!(labels.contains(&"grf_mode=") && labels.contains(&"warp_size="), "{labels:?}");
    assert!(!labels.contains(&"BLOCK=") && !labels.contains(&"num_warps="), "set by autotune: {labels:?}");
    assert!(find(&items, "threads_per_warp=").is_some_and(|i| i["tags"] == json!([1])), "{labels:?}");

    // triton.Config({'BLOCK': 64, |}): constexpr names not written yet and backend options.
    let items = complete(&mut c, after("{'BLOCK': 64, "));
    let labels: Vec<&str> = items.iter().filter_map(|i| i["label"].as_str()).collect();
    assert!(labels.contains(&"SCALE") && labels.contains(&"grf_mode") && !labels.contains(&"BLOCK"), "{labels:?}");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn signature_help_for_tl_calls_and_launches() {
    let mut c = start("xpu-3.7");
    let h = c.request("textDocument/signatureHelp", json!({"textDocument": {"uri": URI}, "position": after("x = tl.load(x_ptr + offs, ")}));
    let sig = &h["signatures"][0];
    assert!(sig["label"].as_str().unwrap().starts_with("tl.load(pointer, mask=None"), "{sig}");
    assert_eq!(h["activeParameter"], 1);

    let h = c.request("textDocument/signatureHelp", json!({"textDocument": {"uri": URI}, "position": after("(x, y, n, SCALE=")}));
    let sig = &h["signatures"][0];
    let label = sig["label"].as_str().unwrap();
    assert_eq!(label, "add_kernel[grid](x_ptr, y_ptr, n, BLOCK: tl.constexpr, SCALE: tl.constexpr)");
    assert_eq!(h["activeParameter"], 4, "SCALE=");
    let block = &sig["parameters"][3];
    assert_eq!(block["documentation"], "set by autotune", "{block}");
    assert_eq!(sig["parameters"][4]["documentation"], "tl.constexpr");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn device_ids_in_tool_xeforge() {
    let mut c = Client::spawn();
    c.initialize(capabilities(&["utf-16"]), json!({}));
    let uri = "file:///tmp/xeforge-completion-test/pyproject.toml";
    let text = "[project]\nname = \"k\"\n\n[tool.xeforge]\ndevice = \"\"\n";
    c.open(uri, text, 1);
    let r = c.request("textDocument/completion", json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": 10}}));
    let labels: Vec<&str> = r["items"].as_array().unwrap().iter().filter_map(|i| i["label"].as_str()).collect();
    assert!(labels.contains(&"arc-pro-b70") && labels.contains(&"max-1550"), "{labels:?}");
    let r = c.request("textDocument/completion", json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 8}}));
    assert!(r.is_null(), "not in [tool.xeforge]: {r}");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}
