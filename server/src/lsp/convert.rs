//! The checker's plain data → LSP types. Byte ranges become positions through the rope of the very
//! version the diagnostics were computed on, never the current one.

use ropey::Rope;
use serde::{Deserialize, Serialize};
use tower_lsp::lsp_types::{self as lsp, CodeDescription, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Url};

use super::encoding::{Encoding, range_to_lsp};
use crate::knowledge::Severity;
use crate::lint::{Applicability, Diagnostic, Origin};

/// The `source` editors show beside a diagnostic: compiled facts apart from the static analysis.
pub fn source(origin: Origin) -> &'static str {
    match origin {
        Origin::Static => "xeforge",
        Origin::Compiled => "xeforge (compiled)",
    }
}

/// The documentation page of a rule; the same address SARIF's `helpUri` carries.
pub fn rule_url(code: &str) -> String {
    format!("https://xeforge.dev/rules/{code}")
}

/// What a diagnostic carries in `data`, so a client (or a later request) can tell which version and
/// which fix it was computed for.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DiagnosticData {
    pub name: String,
    pub version: i32,
    pub fix: Option<FixData>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FixData {
    pub title: String,
    pub applicability: String,
    pub edits: Vec<lsp::TextEdit>,
}

pub fn severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    }
}

pub fn applicability(a: Applicability) -> &'static str {
    match a {
        Applicability::Safe => "safe",
        Applicability::Unsafe => "unsafe",
    }
}

pub fn diagnostic(d: &Diagnostic, uri: &Url, rope: &Rope, enc: Encoding, version: i32) -> lsp::Diagnostic {
    let related: Vec<_> = d
        .related
        .iter()
        .map(|r| DiagnosticRelatedInformation {
            location: Location { uri: uri.clone(), range: range_to_lsp(rope, r.range, enc) },
            message: r.message.clone(),
        })
        .collect();
    let fix = d.fix.as_ref().map(|f| FixData {
        title: f.message.clone(),
        applicability: applicability(f.applicability).into(),
        edits: f.edits.iter().map(|e| lsp::TextEdit { range: range_to_lsp(rope, e.range, enc), new_text: e.content.clone() }).collect(),
    });
    let data = DiagnosticData { name: d.name.to_string(), version, fix };
    lsp::Diagnostic {
        range: range_to_lsp(rope, d.range, enc),
        severity: Some(severity(d.severity)),
        code: Some(NumberOrString::String(d.code.to_string())),
        code_description: Url::parse(&rule_url(d.code)).ok().map(|href| CodeDescription { href }),
        source: Some(source(d.origin).to_string()),
        message: d.message.clone(),
        related_information: if related.is_empty() { None } else { Some(related) },
        tags: None,
        data: serde_json::to_value(data).ok(),
    }
}
