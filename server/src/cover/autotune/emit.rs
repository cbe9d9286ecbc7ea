//! The config space the stage searches, as files: what `xeforge stage autotune --emit-space DIR`
//! writes so that a benchmark can time the whole pruned space (the sweep the stage is measured against).

use super::space::{self, TuneConfig, TuneTarget};
use super::{AutotuneError, Plan, budget};

/// The pruned space in the order the stage measures it; the start config first.
pub fn space_for(plan: &Plan, tt: &TuneTarget, max: usize, text: &str) -> Vec<TuneConfig> {
    let knobs = budget::Knobs::embedded();
    let warp = if tt.backend == space::TuneBackend::Cuda { 32 } else { 16 };
    if plan.input.kind == space::KernelKind::Other && plan.input.blocks.len() > 1 {
        let mut configs = space::build(&plan.input, tt, usize::MAX);
        budget::prune_tiles(&mut configs, &plan.input, &knobs, warp);
        configs.truncate(max.max(2));
        return configs;
    }
    // The per-thread rule holds for a 1-D tile: one `tl.arange` in the file.
    if !budget::prunes(&plan.input) || text.matches("tl.arange(").count() != 1 {
        return space::build(&plan.input, tt, max.max(2)); // thinned evenly over the whole space
    }
    // Pruning first, then the cut: the limit counts configs worth measuring, best-placed first.
    let mut configs = space::build(&plan.input, tt, usize::MAX);
    budget::prune(&mut configs, &plan.input, &knobs, warp);
    configs.truncate(max.max(2));
    configs
}

/// Each config of the space rendered as a whole file (the config written into the launches, as the
/// stage measures it), with its label.
pub fn files(plan: &Plan, tt: &TuneTarget, max: usize, text: &str) -> Result<Vec<(String, String)>, AutotuneError> {
    space_for(plan, tt, max, text)
        .iter()
        .map(|c| Ok((c.label(), plan.candidate(text, std::slice::from_ref(c), plan.first_reading())?)))
        .collect()
}
