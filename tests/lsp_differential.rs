//! Differential property test: thousands of random incremental edits (inserts, deletes,
//! replacements, CRLF, astral characters, positions past line ends) sent to the real server. After
//! every step the server's text equals a reference string edited by an independent implementation
//! of LSP positions, and its diagnostics equal a fresh `analysis::analyze` of that text.

#[path = "common/lsp_client.rs"]
mod lsp_client;

use lsp_client::{Client, capabilities};
use serde_json::{Value, json};
use xeforge::knowledge::Knowledge;
use xeforge::lint::LintOptions;

const URI: &str = "file:///tmp/xeforge-differential/kern.py";

const SEED: &str = "import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({'BLOCK': 64}, num_warps=6), triton.Config({'BLOCK': 128, 'grf_mode': 'large'}, num_warps=64)], key=['n'])
@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x, mask=offs < n)


def run(x, y, n):
    add_kernel[(triton.cdiv(n, 256),)](x, y, n, num_warps=6, grf_mode='large')
";

const SNIPPETS: &[&str] = &[
    "x",
    "6",
    "🚀",
    "é",
    "𝔘",
    "中文",
    "\r\n",
    "\n",
    "\r",
    "    ",
    "(",
    ")",
    ",",
    "num_warps=6",
    "'large'",
    "grf_mode='256', ",
    "tl.dot(a, b)",
    "# 🚀 comment\n",
    "",
    "\"\"\"",
    "\\",
];

/// Line starts under the LSP's line breaks: LF, CRLF, lone CR.
fn line_starts(t: &str) -> Vec<usize> {
    let b = t.as_bytes();
    let mut v = vec![0];
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
            i += 1;
            v.push(i + 1);
        } else if b[i] == b'\n' || b[i] == b'\r' {
            v.push(i + 1);
        }
        i += 1;
    }
    v
}

fn line_content_end(t: &str, starts: &[usize], line: usize) -> usize {
    let mut end = starts.get(line + 1).copied().unwrap_or(t.len());
    while end > starts[line] && matches!(t.as_bytes()[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    end
}

fn units(s: &str, utf8: bool) -> usize {
    if utf8 { s.len() } else { s.encode_utf16().count() }
}

/// Reference LSP position → byte offset, clamping like the spec says.
fn offset(t: &str, line: usize, col: usize, utf8: bool) -> usize {
    let starts = line_starts(t);
    if line >= starts.len() {
        return t.len();
    }
    let (start, end) = (starts[line], line_content_end(t, &starts, line));
    // A column inside a character (mid-surrogate, mid-UTF-8) rounds down to that character.
    let mut n = 0;
    for (i, ch) in t[start..end].char_indices() {
        let w = if utf8 { ch.len_utf8() } else { ch.len_utf16() };
        if n + w > col {
            return start + i;
        }
        n += w;
    }
    end
}

fn position(t: &str, byte: usize, utf8: bool) -> (usize, usize) {
    let starts = line_starts(t);
    let line = starts.partition_point(|&s| s <= byte) - 1;
    (line, units(&t[starts[line]..byte], utf8))
}

fn random_boundary(rng: &mut fastrand::Rng, t: &str) -> usize {
    let mut b = rng.usize(0..=t.len());
    while !t.is_char_boundary(b) {
        b -= 1;
    }
    b
}

/// A random LSP position: usually on a char boundary, sometimes past the line end or the document.
fn random_position(rng: &mut fastrand::Rng, t: &str, utf8: bool) -> (usize, usize) {
    let (line, col) = position(t, random_boundary(rng, t), utf8);
    match rng.u8(0..20) {
        0 => (line, col + rng.usize(1..50)),
        1 => (line + rng.usize(1..5) + line_starts(t).len(), rng.usize(0..10)),
        _ => (line, col),
    }
}

fn fresh_diagnostics(text: &str, utf8: bool) -> Vec<(String, (usize, usize), (usize, usize), String)> {
    let a = xeforge::analysis::analyze(text, Knowledge::embedded(), &LintOptions::default()).expect("default target");
    a.diagnostics
        .iter()
        .map(|d| (d.code.to_string(), position(text, d.range.start, utf8), position(text, d.range.end, utf8), d.message.clone()))
        .collect()
}

fn server_diagnostics(v: &Value) -> Vec<(String, (usize, usize), (usize, usize), String)> {
    let p = |x: &Value| (x["line"].as_u64().unwrap() as usize, x["character"].as_u64().unwrap() as usize);
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                p(&d["range"]["start"]),
                p(&d["range"]["end"]),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Requests a handler answers from the document it has at that moment: sent without waiting, they
/// race the worker's parses of the edits around them.
const RACING: &[&str] = &["textDocument/hover", "textDocument/codeAction", "textDocument/inlayHint", "textDocument/codeLens"];

fn racing_request(c: &mut Client, rng: &mut fastrand::Rng, text: &str, utf8: bool) -> i64 {
    let (l0, c0) = random_position(rng, text, utf8);
    let (l1, c1) = random_position(rng, text, utf8);
    let p = json!({"line": l0, "character": c0});
    let q = json!({"line": l1, "character": c1});
    let method = RACING[rng.usize(0..RACING.len())];
    let params = match method {
        "textDocument/hover" => json!({"textDocument": {"uri": URI}, "position": p}),
        "textDocument/codeLens" => json!({"textDocument": {"uri": URI}}),
        "textDocument/inlayHint" => json!({"textDocument": {"uri": URI}, "range": {"start": p, "end": q}}),
        _ => json!({"textDocument": {"uri": URI}, "range": {"start": p, "end": q}, "context": {"diagnostics": []}}),
    };
    c.request_async(method, params)
}

/// `concurrent`: after every edit, up to three requests are sent without waiting, and the server's
/// state is compared only every fifth step, so edits, parses and requests overlap.
fn run(encodings: &[&str], steps: usize, seed: u64, concurrent: bool) {
    let utf8 = encodings.contains(&"utf-8");
    let mut racing = Vec::new();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut c = Client::spawn();
    c.initialize(capabilities(encodings), json!({"debug": true}));
    let mut text = SEED.to_string();
    let mut version = 0i64;
    c.open(URI, &text, version);
    let mut with_findings = 0;
    for step in 0..steps {
        version += rng.i64(1..3);
        let mut changes = Vec::new();
        if rng.u8(0..10) == 0 {
            text = SEED.to_string();
            changes.push(json!({"text": text}));
        } else {
            for _ in 0..rng.usize(1..4) {
                let (l0, c0) = random_position(&mut rng, &text, utf8);
                let (l1, c1) = match rng.u8(0..10) {
                    0..=4 => (l0, c0),
                    5 => random_position(&mut rng, &text, utf8),
                    // A short deletion or replacement near the start, possibly across a line break.
                    _ => {
                        let a = offset(&text, l0, c0, utf8);
                        let mut b = (a + rng.usize(1..8)).min(text.len());
                        while !text.is_char_boundary(b) {
                            b += 1;
                        }
                        position(&text, b, utf8)
                    }
                };
                let a = offset(&text, l0, c0, utf8);
                let b = offset(&text, l1, c1, utf8);
                let (lo, hi) = (a.min(b), a.max(b));
                let (s, e) = if a <= b { ((l0, c0), (l1, c1)) } else { ((l1, c1), (l0, c0)) };
                let snippet = SNIPPETS[rng.usize(0..SNIPPETS.len())];
                text.replace_range(lo..hi, snippet);
                changes.push(json!({
                    "range": {"start": {"line": s.0, "character": s.1}, "end": {"line": e.0, "character": e.1}},
                    "text": snippet
                }));
            }
        }
        c.change(URI, version, Value::Array(changes));
        if concurrent {
            for _ in 0..rng.usize(0..4) {
                racing.push(racing_request(&mut c, &mut rng, &text, utf8));
            }
            if step % 5 != 4 {
                continue;
            }
        }
        let dbg = c.request("xeforge/debugDocument", json!({"textDocument": {"uri": URI}}));
        assert_eq!(dbg["version"], version, "step {step}");
        assert_eq!(dbg["text"].as_str().unwrap(), text, "step {step}: text diverged");
        let expected = fresh_diagnostics(&text, utf8);
        with_findings += usize::from(!expected.is_empty());
        assert_eq!(server_diagnostics(&dbg["diagnostics"]), expected, "step {step}: diagnostics differ for {text:?}");
    }
    let checked = if concurrent { steps / 5 } else { steps };
    assert!(with_findings > checked / 4, "the walk must stay in Triton code with findings ({with_findings}/{checked})");
    for id in racing {
        let r = c.response(id);
        if let Some(e) = r.get("error") {
            assert_ne!(e["code"], -32603, "internal error while racing edits: {e}");
        }
    }
    assert_eq!(c.shutdown_and_exit(), Some(0));
}

#[test]
fn random_edits_in_utf16_match_a_fresh_check() {
    run(&["utf-16"], 1500, 0x5eed_0016, false);
}

#[test]
fn random_edits_raced_by_requests_match_a_fresh_check() {
    run(&["utf-16"], 1500, 0x5eed_1016, true);
}

#[test]
fn random_edits_in_utf8_match_a_fresh_check() {
    run(&["utf-8"], 1000, 0x5eed_0008, false);
}

/// An edit whose incremental tree is not the one a fresh parse gives (found by a random walk: a
/// backslash typed into text with unterminated strings). Pushed diagnostics come from the
/// incremental tree at once; once the document is idle the server parses afresh and publishes
/// again, so the last word for that version is what `xeforge check` says.
#[test]
fn a_diverging_incremental_tree_is_corrected_once_the_document_is_idle() {
    // The seed with an unterminated `"""` in the kernel; then a backslash typed in `run`.
    let before = SEED.replacen("tl.load(x_ptr + offs", "tl.load(x_ptr\"\"\" + offs", 1);
    let mut c = Client::spawn();
    c.initialize(capabilities(&["utf-16"]), json!({}));
    c.open(URI, &before, 0);
    c.diagnostics_for_version(URI, 0);
    c.change(URI, 1, json!([{"range": {"start": {"line": 14, "character": 23}, "end": {"line": 14, "character": 23}}, "text": "\\"}]));
    let mut text = before.clone();
    let at = text.match_indices('\n').nth(13).unwrap().0 + 1 + 23;
    text.insert(at, '\\');
    let expected = fresh_diagnostics(&text, false);
    let first = c.diagnostics_for_version(URI, 1);
    // Every later publish for version 1 (the idle-time check), the last one wins.
    let mut last = Value::Array(first.clone());
    while let Some(n) = c.take_within(std::time::Duration::from_millis(1500), |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == json!(1)
    }) {
        last = n["params"]["diagnostics"].clone();
    }
    assert_ne!(server_diagnostics(&Value::Array(first)), expected, "the incremental tree's findings differ (else this edit tests nothing)");
    assert_eq!(server_diagnostics(&last), expected);
    assert_eq!(c.shutdown_and_exit(), Some(0));
}
