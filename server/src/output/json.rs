//! `--format json`: exactly the array of docs/rules.md (1-based rows/columns, columns in chars, end exclusive).
//! In a notebook each diagnostic and edit also has `cell` (numbered from 1, every cell counted, as
//! ruff's JSON has it) and its rows are counted within that cell.

use super::{FileResult, Place};
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

impl From<Place> for Location {
    fn from(p: Place) -> Self {
        p.location().into()
    }
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    content: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cell: Option<usize>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    cell: Option<usize>,
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
            let (start, end) = f.places(d.range);
            let fix = d.fix.as_ref().map(|fix| JsonFix {
                applicability: fix.applicability,
                message: &fix.message,
                edits: fix
                    .edits
                    .iter()
                    .map(|e| {
                        let (s, t) = f.places(e.range);
                        JsonEdit { content: &e.content, cell: s.cell, location: s.into(), end_location: t.into() }
                    })
                    .collect(),
            });
            all.push(JsonDiagnostic {
                code: d.code,
                name: d.name,
                severity: d.severity.as_str(),
                message: &d.message,
                filename: &f.display,
                cell: start.cell,
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
