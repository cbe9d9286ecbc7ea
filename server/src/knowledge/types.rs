//! Typed view of the knowledge base (`knowledge/` at the repository root, embedded at build time).
//! Every hardware number carries whether it is verified and where it came from.

use serde::{Deserialize, Serialize};

/// A knowledge value with its provenance. `value: None` means "unknown": rules that need it stay silent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fact<T> {
    pub value: Option<T>,
    #[serde(default = "yes")]
    pub verified: bool,
    #[serde(default)]
    pub source: String,
}

fn yes() -> bool {
    true
}

impl<T> Fact<T> {
    pub fn get(&self) -> Option<&T> {
        self.value.as_ref()
    }
}

/// An entry that does not state a fact knows nothing about it.
impl<T> Default for Fact<T> {
    fn default() -> Self {
        Fact { value: None, verified: false, source: String::new() }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Intel,
    Nvidia,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    /// Stable id used on the command line: "arc-pro-b70".
    pub id: String,
    /// Marketing name: "Intel Arc Pro B70".
    pub name: String,
    pub vendor: Vendor,
    /// Triton arch string ("bmg", "pvc", "dg2", "lnl") or CUDA capability ("sm90").
    pub arch: String,
    /// Generation: "Xe2-HPG", "Xe-HPC", "Hopper".
    pub generation: String,
    #[serde(default)]
    pub xe_cores: Fact<u32>,
    #[serde(default)]
    pub sub_group_sizes: Fact<Vec<u32>>,
    #[serde(default)]
    pub max_work_group_size: Fact<u32>,
    /// Max work-group size when the 256/large GRF mode is in effect.
    #[serde(default)]
    pub max_work_group_size_large_grf: Fact<u32>,
    #[serde(default)]
    pub max_num_sub_groups: Fact<u32>,
    /// Max shared local memory per work-group, bytes (Triton's `max_shared_mem`).
    #[serde(default)]
    pub slm_bytes: Fact<u64>,
    #[serde(default)]
    pub has_fp64: Fact<bool>,
    /// Triton's backend lowers `tl.dot` to DPAS (XMX) on this device.
    #[serde(default)]
    pub has_dpas: Fact<bool>,
    #[serde(default)]
    pub has_2d_block_io: Fact<bool>,
    #[serde(default)]
    pub has_large_grf: Fact<bool>,
    /// General registers per hardware thread in the default mode (128) and large mode (256).
    #[serde(default)]
    pub grf_regs_default: Fact<u32>,
    #[serde(default)]
    pub grf_regs_large: Fact<u32>,
    /// Register width in bytes (64 on Xe2/PVC).
    #[serde(default)]
    pub grf_bytes: Fact<u32>,
    #[serde(default)]
    pub memory_gb: Fact<f64>,
    #[serde(default)]
    pub bandwidth_gbs: Fact<f64>,
    #[serde(default)]
    pub peak_fp16_tflops: Fact<f64>,
    /// Free-form notes shown by `xeforge devices` and hovers.
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Xpu,
    Cuda,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Availability {
    Supported,
    Deprecated,
    Removed,
    /// Only an experimental spelling exists (`tl._experimental_make_tensor_descriptor` on 3.3).
    Experimental,
    Absent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Toolchain {
    /// "xpu-3.7", "cuda".
    pub id: String,
    pub name: String,
    pub backend: Backend,
    /// Valid `grf_mode` strings (empty on CUDA).
    pub grf_mode_values: Vec<String>,
    /// Values that mean 256-register (large) mode on this toolchain: ["256"] or ["large"].
    pub grf_large_values: Vec<String>,
    /// The value that means 128-register (small) mode: ["128"] or ["small"].
    #[serde(default)]
    pub grf_small_values: Vec<String>,
    /// The most warps a kernel may have in large-GRF mode (XF103; none where there is no such mode).
    #[serde(default)]
    pub grf_large_max_warps: Option<i64>,
    /// Renames offered by the XF104 fix: old -> new (e.g. "large" -> "256").
    pub grf_renames: Vec<(String, String)>,
    /// An invalid grf_mode is an error (true, 3.6+) or silently ignored (false, <= 3.5).
    pub grf_invalid_is_error: bool,
    /// Name of the sub-group size option: "warp_size" or "threads_per_warp" (None on CUDA where warp_size is fixed).
    pub subgroup_option: Option<String>,
    /// The other spelling, which this toolchain rejects.
    pub subgroup_option_wrong: Option<String>,
    /// Backend option names this toolchain accepts in a launch or Config.
    pub options: Vec<String>,
    /// Options of the *other* backend that this one rejects (XF107).
    pub foreign_options: Vec<String>,
    /// The entries of `foreign_options` that belong to AMD's HIP backend, so XF107 names the
    /// backend an option comes from (the rest belong to the CUDA or Intel XPU backend).
    #[serde(default)]
    pub hip_options: Vec<String>,
    pub block_pointers: Availability,
    pub tensor_descriptors: Availability,
    /// Minimum `tl.dot` M on this toolchain (8 on 3.3, 1 on main); N and K come from the device and dtype.
    pub dot_min_m: u32,
    /// Minimum `tl.dot` K by operand element bits: `(bits, k)` pairs; a missing width is unknown.
    #[serde(default)]
    pub dot_min_k: Vec<(u32, u32)>,
    /// Default `num_stages` at a plain launch (2 on XPU) vs in `triton.Config` (3).
    pub launch_num_stages_default: u32,
    pub config_num_stages_default: u32,
    /// Release date or commit, for messages.
    pub released: String,
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleInfo {
    /// "XF101"
    pub code: String,
    /// "num-warps-power-of-two"
    pub name: String,
    /// One-line summary for `xeforge rules`.
    pub summary: String,
    /// Default severity; rules lower or raise it per target in code, as docs/rules.md describes,
    /// unless an overlay sets it (`severity_pinned`): then every finding of the rule has this one.
    pub severity: Severity,
    /// An overlay wrote `severity` for this rule: the user's choice wins over the per-target one.
    #[serde(skip)]
    pub severity_pinned: bool,
    /// Identifier of the underlying fact in the project's research (`XPU-E001`, ...), kept for
    /// traceability only; the public sources for the fact are listed in `sources`.
    pub research_id: String,
    /// The optimisation stage that addresses it, if any ("autotune", "device-tuning", ...).
    pub fix_stage: Option<String>,
    /// Whether a deterministic fix exists and its applicability.
    pub fix: Option<String>,
    /// Markdown documentation: what, why, example, fix, sources.
    pub docs: String,
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stage {
    /// "autotune"
    pub name: String,
    pub title: String,
    /// What the stage changes, for `xeforge stages`.
    pub summary: String,
    /// Instructions given to the generator (markdown).
    pub instructions: String,
    /// Rule codes whose findings select this stage and whose docs go into its prompt.
    pub rules: Vec<String>,
    /// Edit scope: "kernels" (bodies, decorators, configs) or "kernels+launch" (also launch code in the file).
    pub scope: String,
    /// Stages that must run before this one (hard ordering constraints).
    pub after: Vec<String>,
    /// Whether the stage is about correctness (accepts `correct` without a speedup).
    pub correctness_only: bool,
    /// A deterministic generator exists ("autotune", "fixes") or None for LLM-only stages.
    pub deterministic: Option<String>,
    /// Original kernels may disappear, merged into others (fusion), as long as one kernel remains.
    #[serde(default)]
    pub allow_fusion: bool,
}

/// What a stage may edit (`Stage::scope`, validated against these spellings at load).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditScope {
    /// Kernel bodies, decorators, configs ("kernels").
    Kernels,
    /// Also launch code in the same file ("kernels+launch": fusion, persistent, algorithmic, autotune).
    KernelsAndLaunch,
}

/// A stage's deterministic generator (`Stage::deterministic`, validated at load).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generator {
    /// The autotune stage's config search (`cover::tune`).
    Autotune,
    /// The deterministic quick fixes of the stage's rules, before any model.
    Fixes,
}

impl Stage {
    /// The typed `scope`; the loader has checked the spelling.
    pub fn edit_scope(&self) -> EditScope {
        if self.scope == "kernels+launch" { EditScope::KernelsAndLaunch } else { EditScope::Kernels }
    }

    /// The typed `deterministic`; the loader has checked the spelling.
    pub fn generator(&self) -> Option<Generator> {
        match self.deterministic.as_deref() {
            Some("autotune") => Some(Generator::Autotune),
            Some("fixes") => Some(Generator::Fixes),
            _ => None,
        }
    }
}

/// A list of expert autotune configs for one kind of kernel (`knowledge/autotune/<name>.json`): the
/// autotune stage's space for that kind on the list's backend starts from it, in its order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedList {
    /// The file stem ("gemm"); an overlay's file of the same name replaces the list.
    #[serde(skip)]
    pub name: String,
    /// "gemm", "gemm-epilogue" (both seed GEMMs), "attention" or "rowwise".
    pub kind: String,
    /// The GPUs the configs are for: Intel (`xpu`, the default) or NVIDIA (`cuda`).
    #[serde(default = "xpu")]
    pub backend: Backend,
    /// Where the configs come from (a repository, commit and file).
    pub source: String,
    pub configs: Vec<SeedConfig>,
}

fn xpu() -> Backend {
    Backend::Xpu
}

/// One seed config: kwargs by the seed's own names (mapped onto a kernel's tile names by axis).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedConfig {
    pub kwargs: serde_json::Map<String, serde_json::Value>,
    pub num_warps: u32,
    pub num_stages: u32,
}
