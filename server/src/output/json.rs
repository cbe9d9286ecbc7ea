//! `--format json`: exactly the array of docs/rules.md (1-based rows/columns, columns in chars, end exclusive).

use super::FileResult;
use crate::lint::Applicability;
use crate::text::SourceLocation;
use serde::Serialize;

#[derive(Serialize)]
struct Location {
    row: usize,
    column: usize,
}

impl From<SourceLocation> for Location {
    fn from(l: SourceLocation) -> Self {
        Location { row: l.row, column: l.column }
    }
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    content: &'a str,
    location: Location,
    end_location: Location,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    applicability: Applicability,
    message: &'a str,
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'a str,
    name: &'a str,
    severity: &'a str,
    message: &'a str,
    filename: &'a str,
    location: Location,
    end_location: Location,
    kernel: Option<&'a str>,
    device: &'a str,
    toolchain: &'a str,
    fix: Option<JsonFix<'a>>,
}

/// The whole report as one pretty-printed JSON array (ends with a newline).
pub fn render(files: &[FileResult], out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut all = Vec::new();
    for f in files {
        for d in &f.diagnostics {
            let (start, end) = f.span(d.range);
            let fix = d.fix.as_ref().map(|fix| JsonFix {
                applicability: fix.applicability,
                message: &fix.message,
                edits: fix
                    .edits
                    .iter()
                    .map(|e| {
                        let (s, t) = f.span(e.range);
                        JsonEdit { content: &e.content, location: s.into(), end_location: t.into() }
                    })
                    .collect(),
            });
            all.push(JsonDiagnostic {
                code: d.code,
                name: d.name,
                severity: d.severity.as_str(),
                message: &d.message,
                filename: &f.display,
                location: start.into(),
                end_location: end.into(),
                kernel: d.kernel.as_deref(),
                device: &d.device,
                toolchain: &d.toolchain,
                fix,
            });
        }
    }
    serde_json::to_writer_pretty(&mut *out, &all).map_err(std::io::Error::other)?;
    writeln!(out)
}
