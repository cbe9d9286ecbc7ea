//! Pull diagnostics (`textDocument/diagnostic`). Push diagnostics are published by the document
//! workers; this answers clients that ask instead, from the same results.

use std::sync::Arc;

use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::{
    DocumentDiagnosticParams, DocumentDiagnosticReport, DocumentDiagnosticReportResult, FullDocumentDiagnosticReport,
    RelatedFullDocumentDiagnosticReport, RelatedUnchangedDocumentDiagnosticReport, UnchangedDocumentDiagnosticReport,
};

use super::super::session::Session;
use super::super::worker;
use crate::config::LintRun;

pub async fn pull(session: &Arc<Session>, p: DocumentDiagnosticParams) -> Result<DocumentDiagnosticReportResult> {
    let uri = p.text_document.uri;
    let Some(entry) = session.entry(&uri) else {
        // Not open (or already closed): nothing to report, and never an error the client shows.
        return Ok(full(None, Vec::new()));
    };
    let (items, result_id) = if session.lint_run(entry.path.as_deref()) == LintRun::OnSave {
        match worker::dirty_diagnostics(&entry) {
            Some((d, v)) => (d, format!("save:{v}")),
            None => (Vec::new(), "save:none".to_string()),
        }
    } else {
        let Some(c) = super::current(session, &uri).await else {
            return Err(Error::content_modified());
        };
        (c.lsp().to_vec(), c.result_id())
    };
    if p.previous_result_id.as_deref() == Some(result_id.as_str()) {
        return Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Unchanged(RelatedUnchangedDocumentDiagnosticReport {
            related_documents: None,
            unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport { result_id },
        })));
    }
    Ok(full(Some(result_id), items))
}

fn full(result_id: Option<String>, items: Vec<tower_lsp::lsp_types::Diagnostic>) -> DocumentDiagnosticReportResult {
    DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
        related_documents: None,
        full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id, items },
    }))
}
