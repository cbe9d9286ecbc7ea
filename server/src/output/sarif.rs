//! `--format sarif`: SARIF 2.1.0 as GitHub code scanning accepts it
//! (<https://docs.github.com/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning>).
//! Columns are Unicode code points (declared through `columnKind`), URIs relative to `%SRCROOT%`.

use super::{FileResult, rule_url};
use crate::knowledge::{Knowledge, Severity};
use crate::text::TextRange;
use serde_json::{Value, json};
use std::collections::BTreeMap;

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// Percent-encode a relative path for a URI reference (keeps `/` and RFC 3986 unreserved characters).
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn artifact(f: &FileResult) -> Value {
    json!({ "uri": uri(&f.display), "uriBaseId": "%SRCROOT%" })
}

/// Lines and columns; in a notebook, counted within the cell (`properties.cell` of the result says which).
fn region(f: &FileResult, r: TextRange) -> Value {
    let (s, e) = f.places(r);
    json!({ "startLine": s.row, "startColumn": s.column, "endLine": e.row, "endColumn": e.column })
}

/// Rule metadata for `tool.driver.rules`: every rule of the knowledge base, plus any code that only a
/// diagnostic names (so every result has a `ruleIndex`).
fn rules(files: &[FileResult], kb: &Knowledge) -> (Vec<Value>, BTreeMap<String, usize>) {
    let mut by_code: BTreeMap<String, Value> = BTreeMap::new();
    for r in &kb.rules {
        let docs = if r.docs.trim().is_empty() { r.summary.clone() } else { r.docs.clone() };
        by_code.insert(
            r.code.clone(),
            json!({
                "id": r.code,
                "name": r.name,
                "shortDescription": { "text": r.summary },
                "fullDescription": { "text": docs },
                "helpUri": rule_url(&r.code),
                "help": { "text": r.summary, "markdown": docs },
                "defaultConfiguration": { "level": level(r.severity) },
            }),
        );
    }
    for d in files.iter().flat_map(|f| &f.diagnostics) {
        by_code.entry(d.code.to_string()).or_insert_with(|| {
            json!({
                "id": d.code,
                "name": d.name,
                "shortDescription": { "text": d.name },
                "fullDescription": { "text": d.name },
                "helpUri": rule_url(d.code),
                "help": { "text": d.name, "markdown": format!("See {}", rule_url(d.code)) },
                "defaultConfiguration": { "level": level(d.severity) },
            })
        });
    }
    let index = by_code.keys().enumerate().map(|(i, c)| (c.clone(), i)).collect();
    (by_code.into_values().collect(), index)
}

pub fn render(files: &[FileResult], kb: &Knowledge, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let (rules, index) = rules(files, kb);
    let mut results = Vec::new();
    for f in files {
        for d in &f.diagnostics {
            let related: Vec<Value> = d
                .related
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    json!({
                        "id": i,
                        "message": { "text": r.message },
                        "physicalLocation": { "artifactLocation": artifact(f), "region": region(f, r.range) },
                    })
                })
                .collect();
            let mut result = json!({
                "ruleId": d.code,
                "ruleIndex": index.get(d.code).copied().unwrap_or(0),
                "level": level(d.severity),
                "message": { "text": d.message },
                "locations": [{
                    "physicalLocation": { "artifactLocation": artifact(f), "region": region(f, d.range) },
                }],
            });
            if !related.is_empty() {
                result["relatedLocations"] = Value::Array(related);
            }
            if let Some(fix) = &d.fix {
                let replacements: Vec<Value> = fix
                    .edits
                    .iter()
                    .map(|e| json!({ "deletedRegion": region(f, e.range), "insertedContent": { "text": e.content } }))
                    .collect();
                result["fixes"] = json!([{
                    "description": { "text": format!("{} ({} fix)", fix.message, match fix.applicability {
                        crate::lint::Applicability::Safe => "safe",
                        crate::lint::Applicability::Unsafe => "unsafe",
                    }) },
                    "artifactChanges": [{ "artifactLocation": artifact(f), "replacements": replacements }],
                }]);
            }
            result["properties"] = json!({ "name": d.name, "device": d.device, "toolchain": d.toolchain });
            if let Some(k) = &d.kernel {
                result["properties"]["kernel"] = json!(k);
            }
            if let Some(cell) = f.place(d.range.start).cell {
                result["properties"]["cell"] = json!(cell);
            }
            results.push(result);
        }
    }
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "xeforge",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://xeforge.dev",
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    serde_json::to_writer_pretty(&mut *out, &log).map_err(std::io::Error::other)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_percent_encoded_relative_references() {
        assert_eq!(uri("kernels/my kernel#1.py"), "kernels/my%20kernel%231.py");
        assert_eq!(uri("é.py"), "%C3%A9.py");
    }
}
