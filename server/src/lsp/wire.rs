//! `textDocument/publishDiagnostics` written straight from the checker's diagnostics as JSON text.
//!
//! Publishing is the hot path of every edit. Going through `lsp_types` costs a conversion per
//! diagnostic, a deep clone, tower-lsp's detour through `serde_json::Value` and the drop of both
//! trees — more than the analysis of a typing edit. These borrowed mirrors of the `lsp_types`
//! structs serialize the same JSON (same keys, same order, same omissions; a test compares them on
//! every fixture) directly into one string, which the transport's outbox writes as a frame.

use serde::Serialize;
use tower_lsp::lsp_types::{Position, Range, Url};

use super::convert;
use super::encoding::Encoding;
use crate::lint::Diagnostic;
use crate::text::{LineIndex, TextRange, clamp_to_char_boundary};

/// Byte offsets to LSP positions over the text itself: one line table per publish instead of a
/// rope walk per position. Agrees with `encoding::byte_to_position` (same line breaks, same
/// rounding down to a character; the test below compares every published range).
struct Positions<'a> {
    text: &'a str,
    lines: LineIndex,
    enc: Encoding,
}

impl Positions<'_> {
    fn position(&self, byte: usize) -> Position {
        let b = clamp_to_char_boundary(self.text, byte.min(self.text.len()));
        let line = self.lines.line_of(b);
        let seg = &self.text[self.lines.line_start(line)..b];
        let character = match self.enc {
            Encoding::Utf8 => seg.len(),
            Encoding::Utf16 if seg.is_ascii() => seg.len(),
            Encoding::Utf16 => seg.encode_utf16().count(),
            Encoding::Utf32 => seg.chars().count(),
        };
        Position { line: line as u32, character: character as u32 }
    }

    fn range(&self, r: TextRange) -> Range {
        Range { start: self.position(r.start), end: self.position(r.end) }
    }
}

#[derive(Serialize)]
struct Notification<'a> {
    jsonrpc: &'static str,
    method: &'static str,
    params: Params<'a>,
}

#[derive(Serialize)]
struct Params<'a> {
    uri: &'a str,
    diagnostics: Diagnostics<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<i32>,
}

/// Serialized one by one from the checker's list, so no intermediate list is built.
struct Diagnostics<'a> {
    list: &'a [Diagnostic],
    uri: &'a str,
    positions: Positions<'a>,
    version: i32,
}

impl Serialize for Diagnostics<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.list.len()))?;
        for d in self.list {
            seq.serialize_element(&wire_diagnostic(d, self.uri, &self.positions, self.version))?;
        }
        seq.end()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireDiagnostic<'a> {
    range: Range,
    severity: tower_lsp::lsp_types::DiagnosticSeverity,
    code: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    code_description: Option<CodeDescription>,
    source: &'static str,
    message: &'a str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_information: Vec<Related<'a>>,
    data: Data<'a>,
}

#[derive(Serialize)]
struct CodeDescription {
    href: String,
}

#[derive(Serialize)]
struct Related<'a> {
    location: Location<'a>,
    message: &'a str,
}

#[derive(Serialize)]
struct Location<'a> {
    uri: &'a str,
    range: Range,
}

/// Mirrors [`convert::DiagnosticData`].
#[derive(Serialize)]
struct Data<'a> {
    name: &'a str,
    version: i32,
    fix: Option<FixData<'a>>,
}

/// Mirrors [`convert::FixData`].
#[derive(Serialize)]
struct FixData<'a> {
    title: &'a str,
    applicability: &'static str,
    edits: Vec<TextEdit<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TextEdit<'a> {
    range: Range,
    new_text: &'a str,
}

fn wire_diagnostic<'a>(d: &'a Diagnostic, uri: &'a str, pos: &Positions, version: i32) -> WireDiagnostic<'a> {
    let href = convert::rule_url(d.code);
    WireDiagnostic {
        range: pos.range(d.range),
        severity: convert::severity(d.severity),
        code: d.code,
        // What `Url` would print; the rule address is plain ASCII, so parsing is only the check.
        code_description: Url::parse(&href).ok().map(|u| CodeDescription { href: u.into() }),
        source: convert::source(d.origin),
        message: &d.message,
        related_information: d
            .related
            .iter()
            .map(|r| Related { location: Location { uri, range: pos.range(r.range) }, message: &r.message })
            .collect(),
        data: Data {
            name: d.name,
            version,
            fix: d.fix.as_ref().map(|f| FixData {
                title: &f.message,
                applicability: convert::applicability(f.applicability),
                edits: f.edits.iter().map(|e| TextEdit { range: pos.range(e.range), new_text: &e.content }).collect(),
            }),
        },
    }
}

/// The JSON-RPC body of a `textDocument/publishDiagnostics` notification for `diagnostics`,
/// computed on `text`, stamped with `version` (in each diagnostic's data, and in the params when
/// `stamp` is set).
pub fn publish_diagnostics(uri: &Url, diagnostics: &[Diagnostic], text: &str, enc: Encoding, version: i32, stamp: bool) -> String {
    let n = Notification {
        jsonrpc: "2.0",
        method: "textDocument/publishDiagnostics",
        params: Params {
            uri: uri.as_str(),
            diagnostics: Diagnostics {
                list: diagnostics,
                uri: uri.as_str(),
                positions: Positions { text, lines: LineIndex::new(text), enc },
                version,
            },
            version: stamp.then_some(version),
        },
    };
    // Serializing borrowed strings and numbers into a String cannot fail.
    serde_json::to_string(&n).unwrap_or_default()
}

/// The JSON-RPC body of any notification, through `serde_json` (for the rare publishes that are
/// not a plain analysed version: a cleared or filtered list).
pub fn notification<N: tower_lsp::lsp_types::notification::Notification>(params: &N::Params) -> String {
    serde_json::json!({"jsonrpc": "2.0", "method": N::METHOD, "params": params}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::Knowledge;
    use crate::lint::{LintOptions, Origin};
    use ropey::Rope;
    use tower_lsp::lsp_types::{PublishDiagnosticsParams, notification::Notification as _, notification::PublishDiagnostics};

    /// What tower-lsp would have written for the same diagnostics.
    fn via_lsp_types(uri: &Url, diags: &[Diagnostic], rope: &Rope, enc: Encoding, version: i32) -> serde_json::Value {
        let params = PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics: diags.iter().map(|d| convert::diagnostic(d, uri, rope, enc, version)).collect(),
            version: Some(version),
        };
        serde_json::json!({"jsonrpc": "2.0", "method": PublishDiagnostics::METHOD, "params": params})
    }

    #[test]
    fn same_json_as_lsp_types_on_every_rules_fixture() {
        let kb = Knowledge::embedded();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules");
        let uri = Url::parse("file:///tmp/a%20b/kern%C3%A9l.py").unwrap();
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("py") {
                continue;
            }
            // Multi-byte text ahead of every range, so the encodings differ; CRLF and lone CR
            // line breaks in two of the three runs.
            let src = std::fs::read_to_string(&path).unwrap();
            for (device, eol) in [("arc-pro-b70", "\n"), ("max-1550", "\r\n"), ("arc-a770", "\r")] {
                let text = format!("# é🚀{eol}{}", src.replace('\n', eol));
                let rope = Rope::from_str(&text);
                let opts = LintOptions { device: device.into(), ..LintOptions::default() };
                let mut diags = crate::analysis::analyze(&text, kb, &opts).expect("known device").diagnostics;
                seen += diags.len();
                // Every other one as a compiled fact, so both sources go through both paths.
                for d in diags.iter_mut().step_by(2) {
                    d.origin = Origin::Compiled;
                }
                for enc in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
                    let ours: serde_json::Value = serde_json::from_str(&publish_diagnostics(&uri, &diags, &text, enc, 7, true)).unwrap();
                    assert_eq!(ours, via_lsp_types(&uri, &diags, &rope, enc, 7), "{}", path.display());
                }
                if let [first, second, ..] = diags.as_slice() {
                    let json = publish_diagnostics(&uri, &[first.clone(), second.clone()], &text, Encoding::Utf16, 7, true);
                    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
                    assert_eq!(v["params"]["diagnostics"][0]["source"], "xeforge (compiled)");
                    assert_eq!(v["params"]["diagnostics"][1]["source"], "xeforge");
                }
            }
        }
        assert!(seen > 100, "the fixtures produce diagnostics ({seen})");
    }

    #[test]
    fn unstamped_publish_has_no_version_and_empty_list_is_an_array() {
        let uri = Url::parse("file:///k.py").unwrap();
        let v: serde_json::Value = serde_json::from_str(&publish_diagnostics(&uri, &[], "", Encoding::Utf16, 3, false)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
            "params": {"uri": "file:///k.py", "diagnostics": []}})
        );
    }
}
