//! The rule engine: model × target → diagnostics.

mod diagnostic;
pub use diagnostic::*;

/// What to check for, after config files, CLI flags and editor settings were merged.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LintOptions {
    /// Device id ("arc-pro-b70"); empty = the knowledge base default.
    pub device: String,
    /// Toolchain id ("xpu-3.7"); empty = the knowledge base default.
    pub toolchain: String,
    /// Rule codes or prefixes to enable ("XF1", "XF203"); empty = all.
    pub select: Vec<String>,
    /// Rule codes or prefixes to disable.
    pub ignore: Vec<String>,
}
