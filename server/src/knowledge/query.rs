//! Derived answers the rules ask of a device or toolchain, kept next to the data they read so the
//! backend's logic (which sub-group size applies, which GRF string means "large") lives in one place.

use super::{Availability, Device, Fact, Toolchain, Vendor};

impl Device {
    /// The sub-group size a kernel gets when it does not choose one: Intel's backend compiles with
    /// 32, then re-annotates kernels whose `tl.dot`s all map to DPAS to the minimum sub-group size
    /// (16). NVIDIA warps are always 32. `None` when the device facts needed are unknown.
    pub fn sub_group_default(&self, has_dot: bool) -> Option<u32> {
        match self.vendor {
            Vendor::Nvidia => self.sub_group_sizes.get().and_then(|s| s.first().copied()),
            Vendor::Intel if !has_dot => Some(32),
            Vendor::Intel => match self.has_dpas.get()? {
                true => self.min_sub_group_size(),
                false => Some(32),
            },
        }
    }

    /// Smallest supported sub-group size (the DPAS execution size on PVC/BMG/LNL).
    pub fn min_sub_group_size(&self) -> Option<u32> {
        self.sub_group_sizes.get().and_then(|s| s.iter().copied().min())
    }

    /// The work-group limit under the given GRF mode: large GRF halves threads per XVE.
    pub fn max_work_group(&self, large_grf: bool) -> &Fact<u32> {
        if large_grf { &self.max_work_group_size_large_grf } else { &self.max_work_group_size }
    }

    /// Registers per hardware thread under the given GRF mode.
    pub fn grf_regs(&self, large_grf: bool) -> &Fact<u32> {
        if large_grf { &self.grf_regs_large } else { &self.grf_regs_default }
    }

    /// Minimum `tl.dot` N: Intel's `min_dot_size` uses the minimum sub-group size; unknown elsewhere.
    pub fn dot_min_n(&self) -> Option<u32> {
        match self.vendor {
            Vendor::Intel => self.min_sub_group_size(),
            Vendor::Nvidia => Some(1),
        }
    }

    pub fn is_intel(&self) -> bool {
        self.vendor == Vendor::Intel
    }
}

impl Toolchain {
    /// Whether `value` selects 256 (or more) registers per thread on this toolchain.
    pub fn is_large_grf(&self, value: &str) -> bool {
        self.grf_large_values.iter().any(|v| v == value)
    }

    /// Whether this toolchain accepts `value` as a `grf_mode`.
    pub fn is_valid_grf(&self, value: &str) -> bool {
        self.grf_mode_values.iter().any(|v| v == value)
    }

    /// This toolchain's spelling of a `grf_mode` written for another release ("large" -> "256").
    pub fn grf_rename(&self, value: &str) -> Option<&str> {
        self.grf_renames.iter().find(|(from, _)| from == value).map(|(_, to)| to.as_str())
    }

    /// Whether `value` means large GRF on *some* release, for rules that read values written for
    /// another toolchain ("large" on 3.7 still asks for 256 registers).
    pub fn means_large_grf(&self, value: &str) -> bool {
        self.is_large_grf(value) || self.grf_rename(value).is_some_and(|v| self.is_large_grf(v))
    }

    /// Minimum `tl.dot` K for operands of `bits`-bit elements (`None`: unknown for that width).
    pub fn dot_min_k(&self, bits: u32) -> Option<u32> {
        self.dot_min_k.iter().find(|(b, _)| *b == bits).map(|(_, k)| *k)
    }

    /// Whether block pointers still compile (supported or deprecated).
    pub fn has_block_pointers(&self) -> bool {
        matches!(self.block_pointers, Availability::Supported | Availability::Deprecated)
    }

    pub fn is_xpu(&self) -> bool {
        self.backend == super::Backend::Xpu
    }
}

#[cfg(test)]
mod tests {
    use crate::knowledge::Knowledge;

    fn kb() -> &'static Knowledge {
        Knowledge::embedded()
    }

    #[test]
    fn dot_kernels_use_sub_group_16_where_dpas_exists() {
        let b70 = kb().device("arc-pro-b70").expect("b70");
        assert_eq!(b70.sub_group_default(true), Some(16));
        assert_eq!(b70.sub_group_default(false), Some(32));
    }

    #[test]
    fn a770_without_dpas_keeps_sub_group_32() {
        let a770 = kb().device("arc-a770").expect("a770");
        assert_eq!(a770.sub_group_default(true), Some(32));
        assert_eq!(a770.min_sub_group_size(), Some(8));
    }

    #[test]
    fn nvidia_warp_is_32() {
        let h100 = kb().device("h100").expect("h100");
        assert_eq!(h100.sub_group_default(true), Some(32));
        assert_eq!(h100.max_work_group(false).get(), Some(&1024));
    }

    #[test]
    fn large_grf_halves_the_work_group() {
        let pvc = kb().device("max-1550").expect("pvc");
        assert_eq!(pvc.max_work_group(true).get(), Some(&512));
        assert_eq!(pvc.grf_regs(true).get(), Some(&256));
    }

    #[test]
    fn grf_spellings_follow_the_release() {
        let old = kb().toolchain("xpu-3.3").expect("3.3");
        let new = kb().toolchain("xpu-3.7").expect("3.7");
        assert!(old.is_large_grf("large") && !old.is_large_grf("256"));
        assert!(new.is_large_grf("256") && new.is_large_grf("512") && !new.is_large_grf("large"));
        assert_eq!(new.grf_rename("large"), Some("256"));
        assert_eq!(old.grf_rename("128"), Some("small"));
        assert!(new.means_large_grf("large") && old.means_large_grf("256"));
        assert!(!new.is_valid_grf("large") && old.is_valid_grf("large"));
    }

    #[test]
    fn dot_minimum_k_depends_on_element_width() {
        let t = kb().toolchain("xpu-3.7").expect("3.7");
        assert_eq!((t.dot_min_k(16), t.dot_min_k(8), t.dot_min_k(32)), (Some(16), Some(32), Some(8)));
        assert_eq!(t.dot_min_k(64), None);
        assert_eq!(kb().toolchain("xpu-3.3").expect("3.3").dot_min_m, 8);
    }

    #[test]
    fn block_pointers_removed_only_on_main() {
        assert!(kb().toolchain("xpu-3.7").expect("3.7").has_block_pointers());
        assert!(!kb().toolchain("xpu-main").expect("main").has_block_pointers());
    }
}
