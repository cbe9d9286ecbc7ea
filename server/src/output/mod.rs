//! Rendering diagnostics for `xeforge check`: human text with code frames, the JSON of docs/rules.md,
//! SARIF 2.1.0 for code scanning, and GitHub Actions workflow commands.

pub mod github;
pub mod json;
pub mod sarif;
pub mod text;

use crate::knowledge::Severity;
use crate::lint::Diagnostic;
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
}

impl FileResult {
    pub fn new(path: PathBuf, display: String, source: String, mut diagnostics: Vec<Diagnostic>) -> Self {
        diagnostics.sort_by(|a, b| (a.range.start, a.range.end, a.code, &a.message).cmp(&(b.range.start, b.range.end, b.code, &b.message)));
        let index = LineIndex::new(&source);
        Self { path, display, source, index, diagnostics }
    }

    /// 1-based start and end (exclusive) of a range, columns in chars.
    pub fn span(&self, r: TextRange) -> (SourceLocation, SourceLocation) {
        (self.index.location(&self.source, r.start), self.index.location(&self.source, r.end))
    }
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
