//! The stage's time budget and the knowledge-based pruning before any timing, from
//! `knowledge/autotune/stage.json`: how long an evaluation takes (a prior, then measured), how many
//! configs fit, and which element-wise configs are not worth a measurement.

use super::space::{KernelKind, TuneConfig, TuneInput};
use serde::Deserialize;

const STAGE: &str = include_str!("../../../../knowledge/autotune/stage.json");

#[derive(Debug, Clone, Deserialize)]
pub struct Knobs {
    pub budget: Budget,
    pub elementwise: Elementwise,
    #[serde(default)]
    pub tiles: Tiles,
}

/// Kernels without `tl.dot` that tune several tile names (transposes, 2-D reductions): a config whose
/// tile gives a thread fewer than `min` or more than `max` elements is not worth compiling.
#[derive(Debug, Clone, Deserialize)]
pub struct Tiles {
    pub min_elems_per_thread: f64,
    pub max_elems_per_thread: f64,
}

impl Default for Tiles {
    fn default() -> Self {
        Tiles { min_elems_per_thread: 1.0, max_elems_per_thread: 256.0 }
    }
}

/// What the screen (the whole space in one `@triton.autotune` list, for the autotuner's timings) is
/// checked on. `Check` (default): the check family, its calls taking the list's first config without a
/// search, then one untimed call on each timed variant (`search_timed`), where the autotuner compiles
/// and searches the timed shape. `Timed`: the timed family, every seed, its large outputs compared on
/// the host, the search in the first checked call. The search is the same in both; `Check` leaves out
/// the large references and comparisons (on an H100 the screen's reference on the timed family alone
/// took 1.4-13 s, tests/bench/results/autotune_general_h100.md). `XEFORGE_AUTOTUNE_SCREEN=timed` in the
/// CLI for the other.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Screen {
    Timed,
    #[default]
    Check,
}

impl Screen {
    /// `timed` or `check`; anything else (or nothing) is the default.
    pub fn parse(s: Option<&str>) -> Screen {
        match s.map(str::trim) {
            Some("timed") => Screen::Timed,
            _ => Screen::Check,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Budget {
    pub stage_s: f64,
    pub eval_s: std::collections::BTreeMap<String, f64>,
    pub final_factor: f64,
    /// Timed pairs for the final list (its interval is the evidence attached to the edit).
    #[serde(default = "default_final_runs")]
    pub final_runs: u32,
    /// The final round is skipped when its list is one config already judged `accepted` in the sweep,
    /// byte for byte, with an interval no wider than this (hi / lo - 1).
    #[serde(default = "default_final_reuse_width")]
    pub final_reuse_width: f64,
    pub sweep_runs: u32,
    pub min_configs: usize,
    /// Configs judged in one `sweep` request (one trusted-side setup); spills prune between batches.
    #[serde(default = "default_sweep_batch")]
    pub sweep_batch: usize,
    /// The screen (the whole space as one autotune list) in evaluations: its compiles and searches.
    #[serde(default = "default_screen_factor")]
    pub screen_factor: f64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Elementwise {
    pub min_elems_per_thread: f64,
    pub max_elems_per_thread: f64,
    pub preferred_bytes_per_thread: f64,
}

fn default_final_runs() -> u32 {
    40
}

fn default_final_reuse_width() -> f64 {
    0.10
}

fn default_screen_factor() -> f64 {
    1.0
}

fn default_sweep_batch() -> usize {
    8
}

impl Knobs {
    /// The embedded file (covered by a unit test); defaults if it were ever unreadable, never a panic.
    pub fn embedded() -> Knobs {
        serde_json::from_str(STAGE).unwrap_or(Knobs {
            budget: Budget {
                stage_s: 60.0,
                eval_s: Default::default(),
                final_factor: 1.6,
                final_runs: 40,
                final_reuse_width: default_final_reuse_width(),
                sweep_runs: 20,
                min_configs: 3,
                sweep_batch: 8,
                screen_factor: default_screen_factor(),
            },
            elementwise: Elementwise { min_elems_per_thread: 1.0, max_elems_per_thread: 16.0, preferred_bytes_per_thread: 16.0 },
            tiles: Tiles::default(),
        })
    }

    pub fn eval_prior(&self, device: &str) -> f64 {
        self.budget.eval_s.get(device).copied().unwrap_or(5.0)
    }
}

/// How many sweep configs fit: what is left of `budget_s` after `spent_s`, the final round and the
/// screening rounds, at `eval_s` each; at least `min_configs`, at most `available`.
pub fn plan(k: &Knobs, budget_s: f64, spent_s: f64, eval_s: f64, screening: usize, available: usize) -> (usize, f64) {
    let final_s = eval_s * k.budget.final_factor;
    let room = budget_s - spent_s - final_s - screening as f64 * eval_s;
    let n = ((room / eval_s.max(0.1)).floor().max(0.0) as usize).max(k.budget.min_configs).min(available);
    (n, spent_s + screening as f64 * eval_s + n as f64 * eval_s + final_s)
}

/// The sweep as announced before it starts: how many configs, in about how many seconds of the whole
/// stage, and whether a screen comes first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepPlan {
    pub configs: usize,
    pub expected_s: f64,
    /// Fewer configs fit than the space holds: the whole space is screened first, as one autotune list.
    pub screen: bool,
}

/// [`plan`] for the sweep of `available` configs, the screen's own time taken from the budget where one
/// is needed (so the announced time stays within it unless `min_configs` asks for more).
pub fn sweep_plan(k: &Knobs, budget_s: f64, spent_s: f64, eval_s: f64, available: usize) -> SweepPlan {
    let (configs, expected_s) = plan(k, budget_s, spent_s, eval_s, 0, available);
    if configs >= available {
        return SweepPlan { configs, expected_s, screen: false };
    }
    let screen_s = eval_s * k.budget.screen_factor;
    let (configs, expected_s) = plan(k, budget_s, spent_s + screen_s, eval_s, 0, available);
    SweepPlan { configs, expected_s, screen: true }
}

/// Whether [`prune`] applies: an element-wise kernel (one tile name, no `tl.dot`).
pub fn prunes(input: &TuneInput) -> bool {
    input.kind == KernelKind::Other && input.blocks.len() == 1
}

/// Kernels without `tl.dot` with several tile names: drop configs (never the start) whose tiles, all
/// together, give a thread fewer or more elements than `tiles` allows. Only the tuned names are
/// counted: that undercounts a tile with literal dims beside them, which the upper bound never drops
/// wrongly but the lower bound can (a known limit: the plan does not carry literal tile dims).
pub fn prune_tiles(configs: &mut Vec<TuneConfig>, input: &TuneInput, k: &Knobs, warp: u32) {
    if input.kind != KernelKind::Other || input.blocks.len() < 2 || configs.is_empty() {
        return;
    }
    let per_thread = |c: &TuneConfig| -> Option<f64> {
        let tile: i64 = input.blocks.iter().map(|(n, _)| c.get(n).and_then(|v| v.as_int())).product::<Option<i64>>()?;
        Some(tile as f64 / (c.num_warps * warp).max(1) as f64)
    };
    let start = configs[0].clone();
    let t = &k.tiles;
    configs.retain(|c| *c == start || per_thread(c).is_none_or(|p| p >= t.min_elems_per_thread && p <= t.max_elems_per_thread));
}

/// Element-wise kernels (one tile name, no `tl.dot`): drop configs whose tile gives a thread fewer than
/// one or more than `max` elements, and put those near a 16-byte vector per thread first.
pub fn prune(configs: &mut Vec<TuneConfig>, input: &TuneInput, k: &Knobs, warp: u32) {
    if !prunes(input) || configs.is_empty() {
        return;
    }
    let name = input.blocks[0].0.clone();
    let per_thread = |c: &TuneConfig| c.get(&name).and_then(|v| v.as_int()).map(|b| b as f64 / (c.num_warps * warp).max(1) as f64);
    let start = configs[0].clone();
    let e = &k.elementwise;
    configs.retain(|c| *c == start || per_thread(c).is_some_and(|p| p >= e.min_elems_per_thread && p <= e.max_elems_per_thread));
    let want = (e.preferred_bytes_per_thread / input.elem_bytes.max(1) as f64).max(1.0);
    let rest = &mut configs[1..];
    rest.sort_by(|a, b| {
        let d = |c: &TuneConfig| per_thread(c).map(|p| (p / want).log2().abs()).unwrap_or(f64::MAX);
        d(a).total_cmp(&d(b)).then(b.num_warps.cmp(&a.num_warps))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cover::autotune::space::ConfigValue;

    #[test]
    fn the_screen_knob_reads_timed_and_falls_back_to_the_check_family() {
        assert_eq!(Screen::parse(Some("timed")), Screen::Timed);
        assert_eq!(Screen::parse(Some(" timed\n")), Screen::Timed);
        for other in [None, Some(""), Some("check"), Some("TIMED"), Some("small")] {
            assert_eq!(Screen::parse(other), Screen::Check, "{other:?}");
        }
        assert_eq!(Screen::default(), Screen::Check);
    }

    #[test]
    fn the_embedded_file_parses() {
        let k: Knobs = serde_json::from_str(STAGE).unwrap();
        assert!(k.budget.stage_s <= 90.0 && k.eval_prior("cuda") > 0.0);
    }

    #[test]
    fn configs_that_fit_the_budget() {
        let k = Knobs::embedded();
        let (n, total) = plan(&k, 60.0, 0.0, 4.0, 0, 30);
        assert_eq!(n, 13); // 60 - 6.4 (the final list, 1.6 evaluations) = 53.6 → 13 at 4 s
        assert!(total <= 60.0);
        assert_eq!(plan(&k, 60.0, 0.0, 4.0, 0, 5).0, 5);
        assert_eq!(plan(&k, 60.0, 80.0, 4.0, 0, 30).0, k.budget.min_configs);
    }

    #[test]
    fn a_sweep_that_needs_a_screen_fits_it_into_the_budget() {
        let k = Knobs::embedded();
        let eval = k.eval_prior("cuda");
        // Twelve configs do not fit a minute at the prior: the screen's time comes out of the budget,
        // and what is announced stays within it.
        let p = sweep_plan(&k, 60.0, 12.0, eval, 12);
        assert!(p.screen && p.configs >= k.budget.min_configs && p.configs < 12, "{p:?}");
        assert!(p.expected_s <= 60.0, "{p:?}");
        let (without, _) = plan(&k, 60.0, 12.0, eval, 0, 12);
        assert!(p.configs <= without, "{p:?}");
        // A space that fits whole needs no screen.
        let small = sweep_plan(&k, 60.0, 0.0, 4.0, 5);
        assert_eq!((small.configs, small.screen), (5, false));
        // Past the budget already: the minimum, and a time that says so.
        let late = sweep_plan(&k, 60.0, 70.0, eval, 12);
        assert_eq!(late.configs, k.budget.min_configs);
        assert!(late.expected_s > 70.0, "{late:?}");
    }

    #[test]
    fn elementwise_configs_keep_a_sane_load_per_thread() {
        let cfg = |b: i64, w: u32| TuneConfig { kwargs: vec![("BLOCK".into(), ConfigValue::Int(b))], num_warps: w, num_stages: 3 };
        let input = TuneInput { kind: KernelKind::Other, blocks: vec![("BLOCK".into(), 128)], start: cfg(128, 4), elem_bytes: 4 };
        let mut v = vec![cfg(128, 4), cfg(32, 8), cfg(1024, 4), cfg(4096, 1), cfg(512, 4)];
        prune(&mut v, &input, &Knobs::embedded(), 32);
        // 32 over 256 threads (< 1 each) and 4096 over 32 (128 each) go; 4 fp32 per thread first.
        assert_eq!(v, vec![cfg(128, 4), cfg(512, 4), cfg(1024, 4)]);
    }

    /// A transpose's corners: 512×512 with one warp (8192 elements a thread, a slow compile and a 4×
    /// slower kernel on the H200) and 16×16 with 16 warps (half an element a thread) go; the start
    /// stays whatever it holds.
    #[test]
    fn tiled_kernels_without_dot_drop_configs_no_register_file_holds() {
        let cfg = |m: i64, n: i64, w: u32| TuneConfig {
            kwargs: vec![("BLOCK_M".into(), ConfigValue::Int(m)), ("BLOCK_N".into(), ConfigValue::Int(n))],
            num_warps: w,
            num_stages: 3,
        };
        let input = TuneInput {
            kind: KernelKind::Other,
            blocks: vec![("BLOCK_M".into(), 32), ("BLOCK_N".into(), 32)],
            start: cfg(32, 32, 4),
            elem_bytes: 2,
        };
        let mut v = vec![cfg(32, 32, 4), cfg(512, 512, 1), cfg(128, 128, 8), cfg(16, 16, 16), cfg(32, 512, 2)];
        prune_tiles(&mut v, &input, &Knobs::embedded(), 32);
        assert_eq!(v, vec![cfg(32, 32, 4), cfg(128, 128, 8), cfg(32, 512, 2)]);
        // One tile name, or a GEMM: not this rule's business.
        let gemm = TuneInput { kind: KernelKind::Gemm, ..input.clone() };
        let mut w = vec![cfg(32, 32, 4), cfg(512, 512, 1)];
        prune_tiles(&mut w, &gemm, &Knobs::embedded(), 32);
        assert_eq!(w.len(), 2);
    }
}
