//! Resolving the device and toolchain a check is for, with a "did you mean" for typos.

use super::suggest::did_you_mean;
use super::{Device, Knowledge, Target, Toolchain};
use std::fmt;

/// Which half of a target was not found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    Device,
    Toolchain,
}

impl TargetKind {
    fn noun(self) -> &'static str {
        match self {
            TargetKind::Device => "device",
            TargetKind::Toolchain => "toolchain",
        }
    }
}

/// An unknown device or toolchain id, with the closest known one and the full list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTarget {
    pub kind: TargetKind,
    pub given: String,
    pub suggestion: Option<String>,
    pub known: Vec<String>,
}

impl fmt::Display for UnknownTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} `{}`", self.kind.noun(), self.given)?;
        if let Some(s) = &self.suggestion {
            write!(f, "; did you mean `{s}`?")?;
        }
        write!(f, " (known {}s: {})", self.kind.noun(), self.known.join(", "))
    }
}

impl std::error::Error for UnknownTarget {}

impl UnknownTarget {
    fn new<'a>(kind: TargetKind, given: &str, known: impl Iterator<Item = &'a str>) -> Self {
        let known: Vec<String> = known.map(str::to_string).collect();
        let suggestion = did_you_mean(given, known.iter().map(String::as_str)).map(str::to_string);
        UnknownTarget { kind, given: given.to_string(), suggestion, known }
    }
}

impl<'a> Target<'a> {
    /// Look up a device and toolchain by id; an empty id means the knowledge base default.
    /// Ids match case-insensitively ("Arc-Pro-B70" is the B70).
    pub fn resolve(kb: &'a Knowledge, device_id: &str, toolchain_id: &str) -> Result<Target<'a>, UnknownTarget> {
        let device = find_device(kb, device_id)?;
        let toolchain = find_toolchain(kb, toolchain_id)?;
        Ok(Target { device, toolchain })
    }

    /// The knowledge base's default target.
    pub fn default_for(kb: &'a Knowledge) -> Result<Target<'a>, UnknownTarget> {
        Target::resolve(kb, "", "")
    }

    /// Minimum static `tl.dot` (M, N, K) for operands of `bits`-bit elements; `None` when any
    /// part is unknown for this target.
    pub fn dot_min_shape(&self, bits: u32) -> Option<(u32, u32, u32)> {
        Some((self.toolchain.dot_min_m, self.device.dot_min_n()?, self.toolchain.dot_min_k(bits)?))
    }

    /// "arc-pro-b70 / xpu-3.7", for messages.
    pub fn label(&self) -> String {
        format!("{} / {}", self.device.id, self.toolchain.id)
    }
}

fn find_device<'a>(kb: &'a Knowledge, id: &str) -> Result<&'a Device, UnknownTarget> {
    let id = if id.is_empty() { kb.default_device.as_str() } else { id };
    kb.devices
        .iter()
        .find(|d| d.id.eq_ignore_ascii_case(id))
        .ok_or_else(|| UnknownTarget::new(TargetKind::Device, id, kb.devices.iter().map(|d| d.id.as_str())))
}

fn find_toolchain<'a>(kb: &'a Knowledge, id: &str) -> Result<&'a Toolchain, UnknownTarget> {
    let id = if id.is_empty() { kb.default_toolchain.as_str() } else { id };
    kb.toolchains
        .iter()
        .find(|t| t.id.eq_ignore_ascii_case(id))
        .ok_or_else(|| UnknownTarget::new(TargetKind::Toolchain, id, kb.toolchains.iter().map(|t| t.id.as_str())))
}
