//! The knowledge base: device profiles, toolchain profiles, rule catalogue and stages,
//! loaded from the embedded `knowledge/` directory plus optional user overlays.
//!
//! Layout and schema: `knowledge/README.md`. Loading: `load` (files to typed entries, overlays
//! merged per top-level key), `validate` (cross-references, stage cycles). Lookups and the
//! target resolution other modules use are here, in `target` and in `query`.

pub mod api;
mod load;
mod query;
pub mod suggest;
mod target;
mod types;
mod validate;

pub use api::{Api, ApiModule, ApiParam, ApiRelease, ApiReleases, ApiStatus, ApiSymbol};
pub use target::{TargetKind, UnknownTarget};
pub use types::*;

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The whole knowledge base, after overlays. Cheap to share (`&'static` for the embedded one).
#[derive(Debug, Clone, Default)]
pub struct Knowledge {
    pub devices: Vec<Device>,
    pub toolchains: Vec<Toolchain>,
    pub rules: Vec<RuleInfo>,
    /// In canonical order (`defaults.toml` `stage_order`), which breaks ties in `stage_order`.
    pub stages: Vec<Stage>,
    pub default_device: String,
    pub default_toolchain: String,
    /// The device a stage measured on an NVIDIA GPU is checked for, when none is named
    /// (`defaults.toml` `cuda_device`).
    pub default_cuda_device: String,
    /// Autotune seed lists (`autotune/*.json` but `stage.json`), sorted by name.
    pub autotune_seeds: Vec<SeedList>,
    /// The Triton API per toolchain (`api/*.toml`).
    pub api: Api,
}

/// A malformed knowledge entry: always names the file, the line and the field.
/// `line` is 1-based; 0 when the problem is with the file as a whole (it cannot be read).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct KnowledgeError {
    pub file: String,
    pub line: usize,
    pub field: String,
    pub message: String,
}

impl fmt::Display for KnowledgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        if !self.field.is_empty() {
            write!(f, ": {}", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl KnowledgeError {
    pub fn new(file: impl Into<String>, line: usize, field: impl Into<String>, message: impl Into<String>) -> Self {
        KnowledgeError { file: file.into(), line, field: field.into(), message: message.into() }
    }

    fn io(path: &Path, message: &str) -> Self {
        KnowledgeError::new(path.display().to_string(), 0, "", message)
    }
}

impl Knowledge {
    /// The knowledge base compiled into the binary, parsed once. Panics only if the embedded data
    /// is broken, which the unit test `embedded_knowledge_is_valid` rules out.
    pub fn embedded() -> &'static Knowledge {
        static KB: OnceLock<Knowledge> = OnceLock::new();
        KB.get_or_init(|| match Knowledge::load_embedded() {
            Ok(kb) => kb,
            Err(e) => panic!("embedded knowledge base is invalid: {e}"),
        })
    }

    /// Parse and validate the embedded data (prefer `embedded()`, which does this once).
    pub fn load_embedded() -> Result<Knowledge, KnowledgeError> {
        let mut kb = Knowledge::default();
        let mut origins = load::Origins::default();
        load::apply(&mut kb, load::Layer::embedded(), &mut origins)?;
        validate::validate(&kb, &origins)?;
        Ok(kb)
    }

    /// This knowledge base with the entries of `dir` (same layout as `knowledge/`) added, or
    /// overriding entries with the same id/code/name key by key.
    pub fn with_overlay(&self, dir: &Path) -> Result<Knowledge, KnowledgeError> {
        let layer = load::Layer::from_dir(dir)?;
        let mut kb = self.clone();
        let mut origins = load::Origins::default();
        load::apply(&mut kb, layer, &mut origins)?;
        validate::validate(&kb, &origins)?;
        Ok(kb)
    }

    /// The embedded knowledge base with each overlay applied in order; borrowed when there are none.
    pub fn embedded_with(overlays: &[PathBuf]) -> Result<Cow<'static, Knowledge>, KnowledgeError> {
        let mut kb = Cow::Borrowed(Knowledge::embedded());
        for dir in overlays {
            kb = Cow::Owned(kb.with_overlay(dir)?);
        }
        Ok(kb)
    }

    pub fn device(&self, id: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.id == id)
    }
    /// The profile of a device a harness reported by name ("NVIDIA H200", "Intel(R) Data Center GPU
    /// Max 1550"): the one whose name the reported name contains, or the other way round.
    pub fn device_named(&self, reported: &str) -> Option<&Device> {
        let reported = reported.to_lowercase();
        if reported.trim().is_empty() {
            return None;
        }
        self.devices.iter().find(|d| {
            let name = d.name.to_lowercase();
            reported.contains(&name) || name.contains(&reported)
        })
    }
    pub fn toolchain(&self, id: &str) -> Option<&Toolchain> {
        self.toolchains.iter().find(|t| t.id == id)
    }
    /// A rule by code (any case: "xf101") or by name ("num-warps-power-of-two").
    pub fn rule(&self, code: &str) -> Option<&RuleInfo> {
        self.rules.iter().find(|r| r.code.eq_ignore_ascii_case(code) || r.name == code)
    }
    pub fn stage(&self, name: &str) -> Option<&Stage> {
        self.stages.iter().find(|s| s.name == name)
    }

    /// The named stages in an order that respects every `after` constraint, including ones that
    /// hold only through stages not named (`memory-access` before `autotune` via `block-pointers`
    /// and `device-tuning`). Ties keep the canonical order. Unknown names and repeats are dropped.
    pub fn stage_order(&self, names: &[&str]) -> Vec<&Stage> {
        let mut wanted: Vec<usize> = Vec::new();
        for name in names {
            if let Some(i) = self.stages.iter().position(|s| s.name == *name)
                && !wanted.contains(&i)
            {
                wanted.push(i);
            }
        }
        wanted.sort_unstable();
        let mut placed: Vec<&Stage> = Vec::with_capacity(wanted.len());
        let mut remaining = wanted;
        while !remaining.is_empty() {
            // The first stage (canonical order) that no other remaining stage must precede.
            let next = remaining
                .iter()
                .position(|&i| !remaining.iter().any(|&j| j != i && self.must_precede(&self.stages[j].name, &self.stages[i].name)))
                .unwrap_or(0); // unreachable on validated data (no cycles); keeps going regardless
            placed.push(&self.stages[remaining.remove(next)]);
        }
        placed
    }

    /// Whether stage `first` must run before `second`: `second` runs after it, directly or through
    /// a chain of `after` constraints.
    pub fn must_precede(&self, first: &str, second: &str) -> bool {
        let mut seen = HashSet::new();
        let mut stack = vec![second];
        while let Some(name) = stack.pop() {
            let Some(stage) = self.stage(name) else { continue };
            for dep in &stage.after {
                if dep == first {
                    return true;
                }
                if seen.insert(dep.as_str()) {
                    stack.push(dep);
                }
            }
        }
        false
    }
}

/// The device and toolchain a check is for.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub device: &'a Device,
    pub toolchain: &'a Toolchain,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_knowledge_is_valid() {
        let kb = Knowledge::load_embedded().unwrap_or_else(|e| panic!("{e}"));
        assert!(kb.device(&kb.default_device).is_some());
        assert!(kb.toolchain(&kb.default_toolchain).is_some());
    }

    #[test]
    fn default_target_is_b70_on_3_7() {
        let t = Target::default_for(Knowledge::embedded()).expect("defaults resolve");
        assert_eq!(t.label(), "arc-pro-b70 / xpu-3.7");
    }

    #[test]
    fn stage_order_follows_transitive_constraints() {
        let kb = Knowledge::embedded();
        let names: Vec<&str> = kb.stage_order(&["autotune", "memory-access"]).iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["memory-access", "autotune"]);
    }

    #[test]
    fn stage_order_drops_unknown_and_repeated_names() {
        let kb = Knowledge::embedded();
        let names: Vec<&str> = kb.stage_order(&["fusion", "nope", "fusion"]).iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["fusion"]);
    }
}
