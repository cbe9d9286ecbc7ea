//! Typed configuration errors: every one names the file, and where the TOML said it, the line and key.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Malformed TOML, an unknown key or a bad value. `line`/`column` are 1-based.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        /// The offending key when the error is about one (an unknown key, a bad value's key).
        key: Option<String>,
        message: String,
    },
}

impl ConfigError {
    pub fn path(&self) -> &std::path::Path {
        match self {
            ConfigError::Io { path, .. } | ConfigError::Invalid { path, .. } => path,
        }
    }
}
