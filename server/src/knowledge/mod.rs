//! The knowledge base: device profiles, toolchain profiles, rule catalogue and stages,
//! loaded from the embedded `knowledge/` directory plus optional user overlays.

mod types;
pub use types::*;

use std::path::Path;
use std::sync::OnceLock;

/// The whole knowledge base, after overlays. Cheap to share (`&'static` for the embedded one).
#[derive(Debug, Clone, Default)]
pub struct Knowledge {
    pub devices: Vec<Device>,
    pub toolchains: Vec<Toolchain>,
    pub rules: Vec<RuleInfo>,
    pub stages: Vec<Stage>,
    pub default_device: String,
    pub default_toolchain: String,
}

/// A malformed knowledge entry: always names the file, the line and the field.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {field}: {message}")]
pub struct KnowledgeError {
    pub file: String,
    pub line: usize,
    pub field: String,
    pub message: String,
}

impl Knowledge {
    /// The knowledge base compiled into the binary. Panics only if the embedded data is broken,
    /// which a unit test rules out.
    pub fn embedded() -> &'static Knowledge {
        static KB: OnceLock<Knowledge> = OnceLock::new();
        KB.get_or_init(|| Knowledge::load_embedded().expect("embedded knowledge base is valid"))
    }

    /// Parse the embedded data (owned by the knowledge loader).
    pub fn load_embedded() -> Result<Knowledge, KnowledgeError> {
        Ok(Knowledge::default())
    }

    /// Embedded data with the entries of `dir` added or overriding (same id/code/name).
    pub fn with_overlay(&self, _dir: &Path) -> Result<Knowledge, KnowledgeError> {
        Ok(self.clone())
    }

    pub fn device(&self, id: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.id == id)
    }
    pub fn toolchain(&self, id: &str) -> Option<&Toolchain> {
        self.toolchains.iter().find(|t| t.id == id)
    }
    pub fn rule(&self, code: &str) -> Option<&RuleInfo> {
        self.rules.iter().find(|r| r.code.eq_ignore_ascii_case(code) || r.name == code)
    }
    pub fn stage(&self, name: &str) -> Option<&Stage> {
        self.stages.iter().find(|s| s.name == name)
    }
}

/// The device and toolchain a check is for.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub device: &'a Device,
    pub toolchain: &'a Toolchain,
}
