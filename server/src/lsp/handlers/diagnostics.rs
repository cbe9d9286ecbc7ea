//! Pull diagnostics (`textDocument/diagnostic`). Push diagnostics are published by the document
//! workers; this answers clients that ask instead, from the same results.

use std::sync::Arc;

use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::{
    DocumentDiagnosticParams, DocumentDiagnosticReport, DocumentDiagnosticReportResult, FullDocumentDiagnosticReport,
    RelatedFullDocumentDiagnosticReport, RelatedUnchangedDocumentDiagnosticReport, UnchangedDocumentDiagnosticReport,
};

use super::super::session::{DocEntry, Session};
use super::super::worker;
use crate::config::LintRun;

pub async fn pull(session: &Arc<Session>, p: DocumentDiagnosticParams) -> Result<DocumentDiagnosticReportResult> {
    let uri = p.text_document.uri;
    let Some(entry) = session.entry(&uri) else {
        // Not open (or already closed): nothing to report, and never an error the client shows.
        return Ok(full(None, Vec::new()));
    };
    let Some(report) = document_report(session, &entry).await else {
        return Err(Error::content_modified());
    };
    if p.previous_result_id.as_deref() == Some(report.result_id.as_str()) {
        return Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Unchanged(RelatedUnchangedDocumentDiagnosticReport {
            related_documents: None,
            unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport { result_id: report.result_id },
        })));
    }
    Ok(full(Some(report.result_id), report.items))
}

/// What an open document reports, to a document pull and in a workspace pull alike.
pub struct Report {
    pub items: Vec<tower_lsp::lsp_types::Diagnostic>,
    pub result_id: String,
    pub version: i32,
}

/// The current version's diagnostics (in onSave mode, the saved ones kept above the first unsaved
/// edit); `None` when the document could not be analysed.
pub async fn document_report(session: &Arc<Session>, entry: &Arc<DocEntry>) -> Option<Report> {
    if session.lint_run(entry.path.as_deref()) == LintRun::OnSave {
        let version = entry.latest.load(std::sync::atomic::Ordering::SeqCst);
        return Some(match worker::dirty_diagnostics(entry) {
            Some((items, v)) => Report { items, result_id: format!("save:{v}"), version: v },
            None => Report { items: Vec::new(), result_id: "save:none".to_string(), version },
        });
    }
    let c = super::current(session, &entry.uri).await?;
    Some(Report { items: c.lsp().to_vec(), result_id: c.result_id(), version: c.version })
}

fn full(result_id: Option<String>, items: Vec<tower_lsp::lsp_types::Diagnostic>) -> DocumentDiagnosticReportResult {
    DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
        related_documents: None,
        full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id, items },
    }))
}
