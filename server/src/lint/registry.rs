//! The rule table: code → name → the function that checks it.
//!
//! Codes and names are the rules contract (`knowledge/rules/*.toml` holds them); severities live with the checks
//! (they depend on the target) and in the knowledge base for `xeforge rules`.
//!
//! Adding a rule: its `knowledge/rules/XFnnn.toml` (and the row in `docs/rules.md`), one check
//! function in its family's file, its line in [`RULES`] with a [`Scope`], and a fixture
//! `tests/fixtures/rules/XFnnn_*.py` whose `# expect: XFnnn` comments mark the findings. Tests fail
//! until the TOML, this table and `docs/rules.md` agree.
//!
//! **A kernel-scoped rule reads nothing outside its kernel**: only `Ctx::kernels()` (the kernel in
//! scope), its launches, the module constants and the text under their ranges — never another
//! kernel, another kernel's launches or arbitrary text of the file. The language server runs such
//! rules one kernel at a time and carries an unchanged kernel's findings to the next version
//! (`lint::memo`); a rule that looks further gives answers that depend on which kernels were
//! edited. A rule that needs the whole file is `Scope::File` and runs on every check. Checked:
//! `kernel_scoped_rules_see_only_their_kernel` (every fixture) and, over the third-party corpus
//! of `tests/corpus/fetch.sh`, `XF_SCOPE_FILES` in `tests/bench/edit_pipeline.rs`.

use super::context::Ctx;
use super::{api, dtypes, memory, options, resources, security, shapes, tuning, warps};
use crate::lint::Diagnostic;

/// A rule's stable identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleId {
    pub code: &'static str,
    pub name: &'static str,
}

/// A rule: its identity and the check. A check pushes every finding for the kernels
/// `Ctx::kernels` yields (or for the file); the engine sorts, dedupes, filters and suppresses afterwards.
#[derive(Clone, Copy)]
pub struct Rule {
    pub id: RuleId,
    pub check: fn(&Ctx, &mut Vec<Diagnostic>),
    pub scope: Scope,
}

/// What a rule's findings depend on, which decides what the engine may reuse between versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One kernel at a time: its definition, its launches, the module constants (and the text
    /// under their ranges). Checked per kernel, so an unchanged kernel's findings are reused.
    Kernel,
    /// The whole file, on every check.
    File,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.id.code, self.id.name)
    }
}

macro_rules! rule_ids {
    ($($c:ident = $name:literal;)*) => {
        $(pub const $c: RuleId = RuleId { code: stringify!($c), name: $name };)*
    };
}

rule_ids! {
    XF101 = "num-warps-power-of-two";
    XF102 = "work-group-too-large";
    XF103 = "large-grf-warp-limit";
    XF104 = "grf-mode-value";
    XF105 = "subgroup-option-name";
    XF106 = "subgroup-size-value";
    XF107 = "foreign-backend-option";
    XF108 = "arange-power-of-two";
    XF109 = "autotune-conflicting-launch-arg";
    XF110 = "dot-min-shape";
    XF201 = "slm-capacity";
    XF202 = "grf-pressure";
    XF203 = "int32-offset-overflow";
    XF301 = "fp64-unsupported";
    XF302 = "fp64-slow";
    XF303 = "dot-ieee-fallback";
    XF304 = "dot-without-dpas";
    XF401 = "block-pointer-removed";
    XF402 = "tensor-descriptor-unavailable";
    XF403 = "boundary-check-bools";
    XF404 = "dot-accumulate-inplace";
    XF405 = "api-unavailable";
    XF501 = "hardcoded-launch-config";
    XF502 = "grf-mode-not-swept";
    XF503 = "config-num-stages-default";
    XF505 = "hardcoded-program-count";
    XF901 = "obfuscated-call";
}

/// Every rule, in code order.
pub static RULES: &[Rule] = &[
    Rule { id: XF101, check: warps::num_warps_power_of_two, scope: Scope::Kernel },
    Rule { id: XF102, check: warps::work_group_too_large, scope: Scope::Kernel },
    Rule { id: XF103, check: warps::large_grf_warp_limit, scope: Scope::Kernel },
    Rule { id: XF104, check: options::grf_mode_value, scope: Scope::Kernel },
    Rule { id: XF105, check: options::subgroup_option_name, scope: Scope::Kernel },
    Rule { id: XF106, check: options::subgroup_size_value, scope: Scope::Kernel },
    Rule { id: XF107, check: options::foreign_backend_option, scope: Scope::Kernel },
    Rule { id: XF108, check: shapes::arange_power_of_two, scope: Scope::Kernel },
    Rule { id: XF109, check: options::autotune_conflicting_launch_arg, scope: Scope::Kernel },
    Rule { id: XF110, check: shapes::dot_min_shape, scope: Scope::Kernel },
    Rule { id: XF201, check: resources::slm_capacity, scope: Scope::Kernel },
    Rule { id: XF202, check: resources::grf_pressure, scope: Scope::Kernel },
    Rule { id: XF203, check: resources::int32_offset_overflow, scope: Scope::Kernel },
    Rule { id: XF301, check: dtypes::fp64_unsupported, scope: Scope::Kernel },
    Rule { id: XF302, check: dtypes::fp64_slow, scope: Scope::Kernel },
    Rule { id: XF303, check: dtypes::dot_ieee_fallback, scope: Scope::Kernel },
    Rule { id: XF304, check: dtypes::dot_without_dpas, scope: Scope::Kernel },
    Rule { id: XF401, check: memory::block_pointer_removed, scope: Scope::Kernel },
    Rule { id: XF402, check: memory::tensor_descriptor_unavailable, scope: Scope::Kernel },
    Rule { id: XF403, check: memory::boundary_check_bools, scope: Scope::Kernel },
    Rule { id: XF404, check: memory::dot_accumulate_inplace, scope: Scope::Kernel },
    Rule { id: XF405, check: api::api_availability, scope: Scope::Kernel },
    Rule { id: XF501, check: tuning::hardcoded_launch_config, scope: Scope::Kernel },
    Rule { id: XF502, check: tuning::grf_mode_not_swept, scope: Scope::Kernel },
    Rule { id: XF503, check: tuning::config_num_stages_default, scope: Scope::Kernel },
    Rule { id: XF505, check: tuning::hardcoded_program_count, scope: Scope::Kernel },
    Rule { id: XF901, check: security::obfuscated_call, scope: Scope::File },
];

/// The rule with this code (case-insensitive) or name.
pub fn rule(code_or_name: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id.code.eq_ignore_ascii_case(code_or_name) || r.id.name == code_or_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_sorted_and_unique() {
        for pair in RULES.windows(2) {
            assert!(pair[0].id.code < pair[1].id.code, "{:?} before {:?}", pair[0], pair[1]);
        }
        let mut names: Vec<_> = RULES.iter().map(|r| r.id.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RULES.len());
    }

    #[test]
    fn lookup_by_code_or_name() {
        assert_eq!(rule("xf101").map(|r| r.id), Some(XF101));
        assert_eq!(rule("grf-pressure").map(|r| r.id), Some(XF202));
        assert!(rule("XF504").is_none());
    }
}
