//! What a rule produces: plain data, converted to text/JSON/SARIF by `output` and to LSP by `lsp`.

use crate::knowledge::Severity;
use crate::text::TextRange;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// Keeps the program's meaning: applied by `--fix` and preferred in editors.
    Safe,
    /// May change behaviour or numerics: only with `--unsafe-fixes`.
    Unsafe,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    pub range: TextRange,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fix {
    pub applicability: Applicability,
    pub message: String,
    /// Non-overlapping edits, sorted by start.
    pub edits: Vec<Edit>,
}

/// Another place in the same file that explains the diagnostic (the config that binds the value,
/// the launch that uses it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Related {
    pub range: TextRange,
    pub message: String,
}

/// Where a finding comes from: the static analysis of the text, or what compiling it on the harness
/// reported (`cover::compiled`). Editors show the two under different sources.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    #[default]
    Static,
    Compiled,
}

impl Origin {
    pub fn is_static(&self) -> bool {
        *self == Origin::Static
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub message: String,
    pub range: TextRange,
    /// The kernel the finding is about, when there is one.
    pub kernel: Option<String>,
    pub device: String,
    pub toolchain: String,
    pub related: Vec<Related>,
    pub fix: Option<Fix>,
    #[serde(skip_serializing_if = "Origin::is_static")]
    pub origin: Origin,
}
