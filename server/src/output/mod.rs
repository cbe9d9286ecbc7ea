//! Rendering diagnostics for `xeforge check`: human text with code frames, the JSON of docs/rules.md,
//! SARIF 2.1.0 for code scanning, and GitHub Actions workflow commands.

pub mod github;
pub mod json;
pub mod sarif;
pub mod text;

use crate::knowledge::Severity;
use crate::lint::Diagnostic;
use crate::notebook::Part;
use crate::text::{LineIndex, SourceLocation, TextRange};
use std::path::PathBuf;

/// The documentation page of a rule (also the LSP's `codeDescription`).
pub fn rule_url(code: &str) -> String {
    format!("https://xeforge.dev/rules/{code}")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
    Sarif,
    Github,
}

/// One checked file: its text (code frames and row/column need it) and its sorted diagnostics.
#[derive(Debug, Clone)]
pub struct FileResult {
    pub path: PathBuf,
    /// The name shown to users and written into JSON/SARIF: relative to the working directory when
    /// the file lies under it, with `/` separators.
    pub display: String,
    pub source: String,
    pub index: LineIndex,
    pub diagnostics: Vec<Diagnostic>,
    /// A notebook's Python cells, one after another in `source`: where each starts. Positions
    /// shown to users are then a cell and a row within it.
    pub cells: Option<Vec<Part>>,
}

/// A position as users read it: in a notebook, the cell (numbered from 1, every cell counted) and
/// the row within that cell; in a file, the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub cell: Option<usize>,
    pub row: usize,
    pub column: usize,
}

impl Place {
    pub fn location(&self) -> SourceLocation {
        SourceLocation { row: self.row, column: self.column }
    }
}

impl FileResult {
    pub fn new(path: PathBuf, display: String, source: String, mut diagnostics: Vec<Diagnostic>) -> Self {
        diagnostics.sort_by(|a, b| (a.range.start, a.range.end, a.code, &a.message).cmp(&(b.range.start, b.range.end, b.code, &b.message)));
        let index = LineIndex::new(&source);
        Self { path, display, source, index, diagnostics, cells: None }
    }

    /// The same result for a notebook whose Python cells `source` holds as `parts` place them.
    pub fn in_cells(mut self, parts: Vec<Part>) -> Self {
        self.cells = Some(parts);
        self
    }

    /// 1-based start and end (exclusive) of a range in `source`, columns in chars.
    pub fn span(&self, r: TextRange) -> (SourceLocation, SourceLocation) {
        (self.index.location(&self.source, r.start), self.index.location(&self.source, r.end))
    }

    /// The cell holding `offset`: its number (from 1) and its first and last rows in `source` (0-based).
    pub fn cell_rows(&self, offset: usize) -> Option<(usize, usize, usize)> {
        let parts = self.cells.as_ref()?;
        let k = crate::notebook::Concat::part_at_of(parts, offset)?;
        let last = parts.get(k + 1).map_or(usize::MAX, |next| next.row.saturating_sub(1).max(parts[k].row));
        Some((parts[k].cell + 1, parts[k].row, last))
    }

    /// Where `offset` is, as users read it (see [`Place`]).
    pub fn place(&self, offset: usize) -> Place {
        self.place_in(offset, offset)
    }

    /// Where `offset` is, counted from the cell that holds `anchor` (a range's end from its start's cell).
    pub fn place_in(&self, offset: usize, anchor: usize) -> Place {
        let l = self.index.location(&self.source, offset);
        match self.cell_rows(anchor) {
            Some((cell, first, _)) => Place { cell: Some(cell), row: l.row.saturating_sub(first).max(1), column: l.column },
            None => Place { cell: None, row: l.row, column: l.column },
        }
    }

    /// A range's start and end as users read them, both counted in the start's cell.
    pub fn places(&self, r: TextRange) -> (Place, Place) {
        (self.place(r.start), self.place_in(r.end, r.start))
    }

    /// `path:row:col`, or `path:cell N:row:col` in a notebook (ruff's notation).
    pub fn at(&self, offset: usize) -> String {
        let p = self.place(offset);
        format!("{}:{}{}:{}", self.display, cell_label(p.cell), p.row, p.column)
    }
}

/// `cell N:` for a position in a notebook, nothing in a file.
pub fn cell_label(cell: Option<usize>) -> String {
    cell.map(|c| format!("cell {c}:")).unwrap_or_default()
}

/// Counts for the summary line and the exit status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    /// Diagnostics with a safe fix (`--fix` applies them).
    pub fixable: usize,
    /// Diagnostics whose fix is unsafe (`--unsafe-fixes`).
    pub unsafe_fixable: usize,
}

impl Counts {
    pub fn of(files: &[FileResult]) -> Counts {
        let mut c = Counts::default();
        for d in files.iter().flat_map(|f| &f.diagnostics) {
            match d.severity {
                Severity::Error => c.errors += 1,
                Severity::Warning => c.warnings += 1,
                Severity::Info => c.infos += 1,
            }
            match d.fix.as_ref().map(|f| f.applicability) {
                Some(crate::lint::Applicability::Safe) => c.fixable += 1,
                Some(crate::lint::Applicability::Unsafe) => c.unsafe_fixable += 1,
                None => {}
            }
        }
        c
    }

    pub fn total(&self) -> usize {
        self.errors + self.warnings + self.infos
    }
}
