//! `textDocument/publishDiagnostics` written straight from the checker's diagnostics as JSON text.
//!
//! Publishing is the hot path of every edit. Going through `lsp_types` costs a conversion per
//! diagnostic, a deep clone, tower-lsp's detour through `serde_json::Value` and the drop of both
//! trees — more than the analysis of a typing edit. These borrowed mirrors of the `lsp_types`
//! structs serialize the same JSON (same keys, same order, same omissions; a test compares them on
//! every fixture) directly into one string, which the transport's outbox writes as a frame.

use ropey::Rope;
use serde::Serialize;
use tower_lsp::lsp_types::{Range, Url};

use super::convert::{self, SOURCE};
use super::encoding::{Encoding, range_to_lsp};
use crate::lint::Diagnostic;

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
    rope: &'a Rope,
    enc: Encoding,
    version: i32,
}

impl Serialize for Diagnostics<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.list.len()))?;
        for d in self.list {
            seq.serialize_element(&wire_diagnostic(d, self.uri, self.rope, self.enc, self.version))?;
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

fn wire_diagnostic<'a>(d: &'a Diagnostic, uri: &'a str, rope: &Rope, enc: Encoding, version: i32) -> WireDiagnostic<'a> {
    let href = convert::rule_url(d.code);
    WireDiagnostic {
        range: range_to_lsp(rope, d.range, enc),
        severity: convert::severity(d.severity),
        code: d.code,
        // What `Url` would print; the rule address is plain ASCII, so parsing is only the check.
        code_description: Url::parse(&href).ok().map(|u| CodeDescription { href: u.into() }),
        source: SOURCE,
        message: &d.message,
        related_information: d
            .related
            .iter()
            .map(|r| Related { location: Location { uri, range: range_to_lsp(rope, r.range, enc) }, message: &r.message })
            .collect(),
        data: Data {
            name: d.name,
            version,
            fix: d.fix.as_ref().map(|f| FixData {
                title: &f.message,
                applicability: convert::applicability(f.applicability),
                edits: f
                    .edits
                    .iter()
                    .map(|e| TextEdit { range: range_to_lsp(rope, e.range, enc), new_text: &e.content })
                    .collect(),
            }),
        },
    }
}

/// The JSON-RPC body of a `textDocument/publishDiagnostics` notification for `diagnostics`,
/// computed on `rope`, stamped with `version` (in each diagnostic's data, and in the params when
/// `stamp` is set).
pub fn publish_diagnostics(
    uri: &Url,
    diagnostics: &[Diagnostic],
    rope: &Rope,
    enc: Encoding,
    version: i32,
    stamp: bool,
) -> String {
    let n = Notification {
        jsonrpc: "2.0",
        method: "textDocument/publishDiagnostics",
        params: Params {
            uri: uri.as_str(),
            diagnostics: Diagnostics { list: diagnostics, uri: uri.as_str(), rope, enc, version },
            version: stamp.then_some(version),
        },
    };
    // Serializing borrowed strings and numbers into a String cannot fail.
    serde_json::to_string(&n).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::Knowledge;
    use crate::lint::LintOptions;
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
            // Multi-byte text ahead of every range, so the encodings differ.
            let text = format!("# é🚀\n{}", std::fs::read_to_string(&path).unwrap());
            let rope = Rope::from_str(&text);
            for device in ["arc-pro-b70", "max-1550", "arc-a770"] {
                let opts = LintOptions { device: device.into(), ..LintOptions::default() };
                let a = crate::analysis::analyze(&text, kb, &opts).expect("known device");
                seen += a.diagnostics.len();
                for enc in [Encoding::Utf8, Encoding::Utf16] {
                    let ours: serde_json::Value =
                        serde_json::from_str(&publish_diagnostics(&uri, &a.diagnostics, &rope, enc, 7, true)).unwrap();
                    assert_eq!(ours, via_lsp_types(&uri, &a.diagnostics, &rope, enc, 7), "{}", path.display());
                }
            }
        }
        assert!(seen > 100, "the fixtures produce diagnostics ({seen})");
    }

    #[test]
    fn unstamped_publish_has_no_version_and_empty_list_is_an_array() {
        let uri = Url::parse("file:///k.py").unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&publish_diagnostics(&uri, &[], &Rope::from_str(""), Encoding::Utf16, 3, false)).unwrap();
        assert_eq!(v, serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
            "params": {"uri": "file:///k.py", "diagnostics": []}}));
    }
}
