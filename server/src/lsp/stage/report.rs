//! The evidence of stage runs in the editor: an "Evidence report" lens over each kernel that has a
//! run's record, and `xeforge.renderReport`, which writes the record's (or a runs directory's) HTML
//! report beside it and returns it, for the client to show (VS Code in a webview, Neovim through
//! `vim.ui.open`). The lens names `xeforge.showReport`, a command of the client's own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::{CodeLens, Command, Url};

use crate::lsp::encoding::range_to_lsp;
use crate::lsp::engine::Computed;
use crate::lsp::session::lock;
use crate::text::TextRange;

pub const RENDER_REPORT_COMMAND: &str = "xeforge.renderReport";
/// Client-side: asks the server for the page (`xeforge.renderReport`) and shows it.
pub const SHOW_REPORT_COMMAND: &str = "xeforge.showReport";

/// The latest evidence record of each (document, kernel).
#[derive(Default)]
pub struct Evidence(Mutex<HashMap<(Url, String), PathBuf>>);

impl Evidence {
    pub fn record(&self, uri: &Url, kernel: &str, path: PathBuf) {
        lock(&self.0).insert((uri.clone(), kernel.to_string()), path);
    }

    pub fn forget(&self, uri: &Url) {
        lock(&self.0).retain(|(u, _), _| u != uri);
    }

    /// A lens over each kernel of the document that has a record.
    pub fn lenses(&self, c: &Computed, uri: &Url, encoding: crate::lsp::encoding::Encoding) -> Vec<CodeLens> {
        let map = lock(&self.0);
        c.model
            .kernels
            .iter()
            .filter_map(|k| {
                let path = map.get(&(uri.clone(), k.name.clone()))?;
                Some(CodeLens {
                    range: range_to_lsp(&c.rope, TextRange::empty(k.def_range.start), encoding),
                    command: Some(Command {
                        title: "Evidence report".into(),
                        command: SHOW_REPORT_COMMAND.into(),
                        arguments: Some(vec![json!({"record": path})]),
                    }),
                    data: None,
                })
            })
            .collect()
    }
}

#[derive(Deserialize)]
struct RenderArg {
    /// One record (`…/.xeforge/runs/*.json`).
    record: Option<PathBuf>,
    /// A runs directory (`…/.xeforge/runs`): the index of all its runs.
    dir: Option<PathBuf>,
}

/// Only evidence records are read and only beside them is written: a command from the client cannot
/// make the server read or write anywhere else.
fn runs_dir_of(path: &Path) -> Option<&Path> {
    let dir = if path.extension().is_some_and(|e| e == "json") { path.parent()? } else { path };
    let is_runs = dir.file_name().is_some_and(|n| n == "runs") && dir.parent()?.file_name().is_some_and(|n| n == ".xeforge");
    is_runs.then_some(dir)
}

/// `xeforge.renderReport {record} | {dir}` → `{path, html}`.
pub fn command_render(args: &[Value]) -> Result<Option<Value>> {
    let v = args.first().cloned().ok_or_else(|| Error::invalid_params("expected {\"record\": PATH} or {\"dir\": PATH}"))?;
    let arg: RenderArg = serde_json::from_value(v).map_err(|e| Error::invalid_params(e.to_string()))?;
    let input = arg.record.or(arg.dir).ok_or_else(|| Error::invalid_params("expected {\"record\": PATH} or {\"dir\": PATH}"))?;
    if runs_dir_of(&input).is_none() {
        return Err(Error::invalid_params(format!("{} is not an evidence record or a .xeforge/runs directory", input.display())));
    }
    let runs = crate::report::load(&input).map_err(|e| Error::invalid_params(e.to_string()))?;
    // Device peaks for the roofline come from the embedded knowledge base (overlays are per document).
    let html = crate::report::render(&runs, crate::knowledge::Knowledge::embedded());
    let out = if input.is_dir() { input.join("index.html") } else { input.with_extension("html") };
    std::fs::write(&out, &html).map_err(|e| Error::invalid_params(format!("{}: {e}", out.display())))?;
    Ok(Some(json!({"path": out, "html": html})))
}

#[cfg(test)]
mod tests {
    use super::runs_dir_of;
    use std::path::Path;

    #[test]
    fn only_records_under_a_runs_directory_are_reported() {
        assert!(runs_dir_of(Path::new("/p/.xeforge/runs/20261205T0000Z-autotune-k.json")).is_some());
        assert!(runs_dir_of(Path::new("/p/.xeforge/runs")).is_some());
        assert!(runs_dir_of(Path::new("/etc/passwd")).is_none());
        assert!(runs_dir_of(Path::new("/p/runs/x.json")).is_none());
        assert!(runs_dir_of(Path::new("/p/.xeforge/problems/x.json")).is_none());
    }
}
