//! The config space the autotune stage measures: the knowledge base's seed lists (Intel's expert
//! configs for GEMM, attention and row-wise kernels on XPU, upstream's GEMM list on CUDA), generated
//! NVIDIA-sensible spaces for the other CUDA kinds, power-of-two grids elsewhere; all pruned
//! by the limits the XF rules check (num_warps power of two, work-group size, large-GRF warp limit,
//! shared memory estimate, `tl.dot` minimum tile).

use crate::knowledge::{Backend, SeedConfig};
use std::fmt::Write as _;

#[derive(Debug, Clone, PartialEq)]
pub enum ConfigValue {
    Int(i64),
    Str(String),
    Bool(bool),
}

impl ConfigValue {
    pub fn render(&self) -> String {
        match self {
            ConfigValue::Int(i) => i.to_string(),
            ConfigValue::Str(s) => format!("'{s}'"),
            ConfigValue::Bool(b) => {
                if *b {
                    "True".into()
                } else {
                    "False".into()
                }
            }
        }
    }
    pub fn as_int(&self) -> Option<i64> {
        if let ConfigValue::Int(i) = self { Some(*i) } else { None }
    }
    fn from_json(v: &serde_json::Value) -> Option<ConfigValue> {
        match v {
            serde_json::Value::Number(n) => n.as_i64().map(ConfigValue::Int),
            serde_json::Value::String(s) => Some(ConfigValue::Str(s.clone())),
            serde_json::Value::Bool(b) => Some(ConfigValue::Bool(*b)),
            _ => None,
        }
    }
}

/// One `triton.Config(...)`.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneConfig {
    pub kwargs: Vec<(String, ConfigValue)>,
    pub num_warps: u32,
    pub num_stages: u32,
}

impl TuneConfig {
    pub fn get(&self, name: &str) -> Option<&ConfigValue> {
        self.kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    pub fn render(&self) -> String {
        let mut s = String::from("triton.Config({");
        for (i, (k, v)) in self.kwargs.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "'{k}': {}", v.render());
        }
        let _ = write!(s, "}}, num_warps={}, num_stages={})", self.num_warps, self.num_stages);
        s
    }

    /// Short form for evidence and progress: `BLOCK_M=128 BLOCK_N=64 w8 s3`.
    /// Whether a config as the harness reports it (an autotuner's pick: kwargs, `num_warps`,
    /// `num_stages` in one map) is this one.
    pub fn matches(&self, reported: &serde_json::Map<String, serde_json::Value>) -> bool {
        let int = |k: &str| reported.get(k).and_then(serde_json::Value::as_i64);
        int("num_warps") == Some(self.num_warps as i64)
            && int("num_stages") == Some(self.num_stages as i64)
            && self.kwargs.iter().all(|(k, v)| reported.get(k).and_then(ConfigValue::from_json).as_ref() == Some(v))
    }

    pub fn label(&self) -> String {
        let mut s: Vec<String> = self.kwargs.iter().map(|(k, v)| format!("{k}={}", v.render().trim_matches('\''))).collect();
        s.push(format!("w{}", self.num_warps));
        s.push(format!("s{}", self.num_stages));
        s.join(" ")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuneBackend {
    Xpu,
    Cuda,
}

/// The limits pruning uses, from the knowledge base's device and toolchain (or backend defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct TuneTarget {
    pub backend: TuneBackend,
    /// `warp_size` (3.6+) or `threads_per_warp` (≤3.5); None on CUDA.
    pub subgroup_option: Option<String>,
    /// The spelling of 256-register mode on this toolchain ("256" or "large"); None where there is none.
    pub grf_large: Option<String>,
    /// Every value that means large GRF ("256" and "512" on 3.7): the XF103 warp limit applies to each.
    pub grf_large_values: Vec<String>,
    /// The most warps in large-GRF mode (the toolchain's `grf_large_max_warps`).
    pub grf_large_max_warps: Option<u32>,
    pub grf_small: Option<String>,
    pub max_work_group: u32,
    pub max_work_group_large_grf: u32,
    pub sub_group_sizes: Vec<u32>,
    pub shared_bytes: u64,
    pub has_dpas: bool,
    /// Expert seed lists (the knowledge base's `autotune/*.json`, overlays included).
    pub seeds: Vec<crate::knowledge::SeedList>,
}

impl TuneTarget {
    pub fn cuda() -> Self {
        Self {
            backend: TuneBackend::Cuda,
            subgroup_option: None,
            grf_large: None,
            grf_large_values: Vec::new(),
            grf_large_max_warps: None,
            grf_small: None,
            max_work_group: 1024,
            max_work_group_large_grf: 1024,
            sub_group_sizes: vec![32],
            // Hopper's opt-in shared memory per block (227 KiB).
            shared_bytes: 232_448,
            has_dpas: true,
            seeds: crate::knowledge::Knowledge::embedded().autotune_seeds.clone(),
        }
    }

    /// Xe2 (BMG) with a 3.6+ toolchain: the default target of the knowledge base.
    pub fn xpu_default() -> Self {
        Self {
            backend: TuneBackend::Xpu,
            subgroup_option: Some("warp_size".into()),
            grf_large: Some("256".into()),
            grf_large_values: vec!["256".into(), "512".into()],
            grf_large_max_warps: Some(32),
            grf_small: Some("128".into()),
            max_work_group: 1024,
            max_work_group_large_grf: 512,
            sub_group_sizes: vec![16, 32],
            shared_bytes: 128 * 1024,
            has_dpas: true,
            seeds: crate::knowledge::Knowledge::embedded().autotune_seeds.clone(),
        }
    }

    /// What the autotune stage builds its space for: the target's device and toolchain and the
    /// knowledge base's seed lists (overlays included). Measuring on an NVIDIA GPU (`on_cuda`) for an
    /// Intel toolchain, CUDA's own limits: the configs must run where they are timed.
    pub fn for_stage(kb: &crate::knowledge::Knowledge, t: &crate::knowledge::Target, on_cuda: bool) -> Self {
        let mut tt = if on_cuda && t.toolchain.backend != Backend::Cuda { Self::cuda() } else { Self::from_knowledge(t) };
        tt.seeds = kb.autotune_seeds.clone();
        tt
    }

    pub fn from_knowledge(t: &crate::knowledge::Target) -> Self {
        if t.toolchain.backend == Backend::Cuda {
            let mut c = Self::cuda();
            if let Some(s) = t.device.slm_bytes.get() {
                c.shared_bytes = *s;
            }
            return c;
        }
        let d = Self::xpu_default();
        Self {
            backend: TuneBackend::Xpu,
            subgroup_option: t.toolchain.subgroup_option.clone(),
            grf_large: t.toolchain.grf_large_values.first().cloned().filter(|_| t.device.has_large_grf.get().copied().unwrap_or(true)),
            grf_large_values: t.toolchain.grf_large_values.clone(),
            grf_large_max_warps: t.toolchain.grf_large_max_warps.and_then(|m| u32::try_from(m).ok()),
            grf_small: t.toolchain.grf_small_values.first().cloned(),
            max_work_group: t.device.max_work_group_size.get().copied().unwrap_or(d.max_work_group),
            max_work_group_large_grf: t.device.max_work_group_size_large_grf.get().copied().unwrap_or(d.max_work_group_large_grf),
            sub_group_sizes: t.device.sub_group_sizes.get().cloned().unwrap_or(d.sub_group_sizes),
            shared_bytes: t.device.slm_bytes.get().copied().unwrap_or(d.shared_bytes),
            has_dpas: t.device.has_dpas.get().copied().unwrap_or(true),
            seeds: d.seeds,
        }
    }
}

/// What the kernel looks like to the space builder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelKind {
    /// `tl.dot` with M, N and K tiles.
    Gemm,
    /// `tl.dot` with M and N tiles only (the K extent is the head dimension).
    Attention,
    /// A row reduction whose block spans the row: only launch options are tuned.
    RowWise,
    Other,
}

/// The tunable names of a kernel and the values it starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneInput {
    pub kind: KernelKind,
    /// Constexpr names tuned, with their starting values (first config or launch literal).
    pub blocks: Vec<(String, i64)>,
    pub start: TuneConfig,
    /// Bytes per element of the floating data the kernel loads (a `tl.dot`'s operands, an element-wise
    /// tile): the spec's widest float dtype where the stage has a spec ([`super::Plan::read_spec`]),
    /// else what the kernel's text suggests.
    pub elem_bytes: u64,
}

/// The seed lists of `kind` ("gemm", ...) for the target's backend in its knowledge, in list order.
fn seeds<'a>(target: &'a TuneTarget, kinds: &'a [&str]) -> impl Iterator<Item = &'a SeedConfig> {
    let backend = match target.backend {
        TuneBackend::Xpu => Backend::Xpu,
        TuneBackend::Cuda => Backend::Cuda,
    };
    target.seeds.iter().filter(move |l| l.backend == backend && kinds.contains(&l.kind.as_str())).flat_map(|l| l.configs.iter())
}

/// Which of the kernel's names plays the seed's role: BLOCK_SIZE_M ~ BLOCK_M ~ BM by axis letter.
fn axis_of(name: &str) -> Option<(bool, char)> {
    let up = name.to_ascii_uppercase();
    let is_group = up.contains("GROUP");
    let is_block = up.contains("BLOCK") || up.starts_with("BM") || up.starts_with("BN") || up.starts_with("BK") || up.contains("TILE");
    if !is_group && !is_block {
        return None;
    }
    let last = up.trim_end_matches(|c: char| c.is_ascii_digit()).chars().last()?;
    matches!(last, 'M' | 'N' | 'K' | 'D').then_some((is_group, last))
}

fn map_seed(seed: &SeedConfig, input: &TuneInput, target: &TuneTarget) -> Option<TuneConfig> {
    let mut cfg = input.start.clone();
    cfg.num_warps = seed.num_warps;
    cfg.num_stages = seed.num_stages;
    for (k, v) in &seed.kwargs {
        let Some(val) = ConfigValue::from_json(v) else { continue };
        if k == "grf_mode" {
            let large = matches!(v.as_str(), Some("256") | Some("large"));
            let name = if large { target.grf_large.clone() } else { target.grf_small.clone() };
            if let Some(n) = name {
                set(&mut cfg, "grf_mode", ConfigValue::Str(n));
            } else if large {
                return None; // a large-GRF seed means nothing without large GRF
            }
            continue;
        }
        if k == "warp_size" || k == "threads_per_warp" {
            if let Some(opt) = &target.subgroup_option {
                set(&mut cfg, opt, val);
            }
            continue;
        }
        if let Some(role) = axis_of(k)
            && let Some((name, _)) = input.blocks.iter().find(|(n, _)| axis_of(n) == Some(role))
        {
            set(&mut cfg, name, val);
        }
        // Other seed options (loop_distribute, one_matrix_per_load_for_bt) are left out on purpose:
        // they are toolchain-specific and not needed for the shapes the seeds encode.
    }
    Some(cfg)
}

fn set(cfg: &mut TuneConfig, name: &str, v: ConfigValue) {
    match cfg.kwargs.iter_mut().find(|(k, _)| k == name) {
        Some(slot) => slot.1 = v,
        None => cfg.kwargs.push((name.to_string(), v)),
    }
}

/// Build the space; the starting config is always first, duplicates and illegal configs are dropped,
/// and the list is cut to `max`. Seed lists (the knowledge base's `autotune/`) keep their order and
/// are thinned evenly; generated grids are put in spread order (see [`spread`]) and cut there.
pub fn build(input: &TuneInput, target: &TuneTarget, max: usize) -> Vec<TuneConfig> {
    // Seed lists (knowledge): every kind but `Other` on Intel, GEMMs on NVIDIA.
    let seeded = input.kind != KernelKind::Other && (target.backend == TuneBackend::Xpu || input.kind == KernelKind::Gemm);
    let mut out = vec![input.start.clone()];
    let candidates: Vec<TuneConfig> = match (input.kind, target.backend) {
        (KernelKind::Gemm, _) => seeds(target, &["gemm", "gemm-epilogue"]).filter_map(|s| map_seed(s, input, target)).collect(),
        (KernelKind::Attention, TuneBackend::Xpu) => seeds(target, &["attention"]).filter_map(|s| map_seed(s, input, target)).collect(),
        (KernelKind::RowWise, TuneBackend::Xpu) => seeds(target, &["rowwise"]).filter_map(|s| map_seed(s, input, target)).collect(),
        (KernelKind::Attention, TuneBackend::Cuda) => {
            let mut v = Vec::new();
            for bm in [64, 128] {
                for bn in [32, 64, 128] {
                    for s in [2, 3, 4] {
                        for w in [4, 8] {
                            v.extend(from_axes(input, &[('M', bm), ('N', bn)], w, s));
                        }
                    }
                }
            }
            v
        }
        (KernelKind::RowWise, TuneBackend::Cuda) => {
            [1u32, 2, 4, 8, 16, 32].iter().map(|&w| TuneConfig { num_warps: w, ..input.start.clone() }).collect()
        }
        (KernelKind::Other, _) => grid(input, target),
    };
    for c in candidates {
        if !out.contains(&c) && legal(&c, input, target) {
            out.push(c);
        }
    }
    if !seeded {
        spread(&mut out);
        out.truncate(max.max(1));
    }
    if out.len() > max.max(1) {
        let (first, rest) = out.split_at(1);
        let keep = max.max(1) - 1;
        let step = rest.len() as f64 / keep.max(1) as f64;
        let mut thinned = first.to_vec();
        thinned.extend((0..keep).map(|i| rest[((i as f64) * step) as usize].clone()));
        out = thinned;
    }
    out
}

/// Farthest-first order after the first config: each next config is the one farthest (in octaves of
/// every tile, of num_warps, and in stages) from all those before it, ties in list order. A sweep
/// that a budget stops after a few configs has then seen the whole range of each knob, not the
/// first corner of a nested loop (the smallest tile with every warp count).
pub fn spread(configs: &mut [TuneConfig]) {
    fn coords(c: &TuneConfig) -> Vec<f64> {
        let mut v: Vec<f64> = c.kwargs.iter().filter_map(|(_, x)| x.as_int()).map(|x| (x.max(1) as f64).log2()).collect();
        v.push((c.num_warps.max(1) as f64).log2());
        v.push(c.num_stages as f64);
        v
    }
    fn distance(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>() + (a.len() as f64 - b.len() as f64).abs()
    }
    if configs.len() < 3 {
        return;
    }
    let points: Vec<Vec<f64>> = configs.iter().map(coords).collect();
    let mut nearest: Vec<f64> = points.iter().map(|p| distance(p, &points[0])).collect();
    let mut order = vec![0usize];
    let mut taken = vec![false; configs.len()];
    taken[0] = true;
    while order.len() < configs.len() {
        let next = (0..configs.len()).filter(|i| !taken[*i]).fold(None, |best: Option<usize>, i| match best {
            Some(b) if nearest[b] >= nearest[i] => Some(b),
            _ => Some(i),
        });
        let Some(next) = next else { break };
        taken[next] = true;
        order.push(next);
        for i in 0..configs.len() {
            nearest[i] = nearest[i].min(distance(&points[i], &points[next]));
        }
    }
    let reordered: Vec<TuneConfig> = order.iter().map(|&i| configs[i].clone()).collect();
    configs.clone_from_slice(&reordered);
}

fn from_axes(input: &TuneInput, axes: &[(char, i64)], warps: u32, stages: u32) -> Option<TuneConfig> {
    let mut cfg = TuneConfig { num_warps: warps, num_stages: stages, ..input.start.clone() };
    for &(axis, v) in axes {
        let (name, _) = input.blocks.iter().find(|(n, _)| axis_of(n) == Some((false, axis)))?;
        set(&mut cfg, name, ConfigValue::Int(v));
    }
    Some(cfg)
}

/// Power-of-two neighbourhood of each block value × num_warps.
fn grid(input: &TuneInput, target: &TuneTarget) -> Vec<TuneConfig> {
    let mut configs = vec![input.start.clone()];
    for (name, v) in &input.blocks {
        if axis_of(name).is_some_and(|(g, _)| g) {
            continue;
        }
        // Up to 16× larger: naive element-wise launches start far below the bandwidth-bound tile. Tiles
        // that start under 16 (heads per program, rows per program) may also shrink.
        let values: Vec<i64> = [*v / 4, *v / 2, *v, *v * 2, *v * 4, *v * 8, *v * 16]
            .into_iter()
            .filter(|x| *x >= 16.min(*v) && *x >= 1 && *x <= 16384 && x.count_ones() == 1)
            .collect();
        configs = configs
            .iter()
            .flat_map(|c| {
                values.iter().map(move |x| {
                    let mut c = c.clone();
                    set(&mut c, name, ConfigValue::Int(*x));
                    c
                })
            })
            .collect();
    }
    let warps: &[u32] = if target.backend == TuneBackend::Cuda { &[1, 2, 4, 8, 16] } else { &[2, 4, 8, 16, 32] };
    configs.iter().flat_map(|c| warps.iter().map(move |w| TuneConfig { num_warps: *w, ..c.clone() })).collect()
}

/// The XF rules' limits, applied to a config before it costs a measurement.
pub fn legal(c: &TuneConfig, input: &TuneInput, target: &TuneTarget) -> bool {
    if c.num_warps == 0 || !c.num_warps.is_power_of_two() || c.num_stages == 0 {
        return false; // XF101
    }
    let large = matches!(c.get("grf_mode"), Some(ConfigValue::Str(s)) if target.grf_large_values.contains(s));
    if large && target.grf_large_max_warps.is_some_and(|m| c.num_warps > m) {
        return false; // XF103
    }
    let sub_group = match target.backend {
        TuneBackend::Cuda => 32,
        TuneBackend::Xpu => {
            let explicit = target.subgroup_option.as_deref().and_then(|o| c.get(o)).and_then(|v| v.as_int());
            match explicit {
                Some(s) => {
                    if !target.sub_group_sizes.contains(&(s as u32)) {
                        return false; // XF106
                    }
                    s as u32
                }
                None if matches!(input.kind, KernelKind::Gemm | KernelKind::Attention) && target.has_dpas => 16,
                None => 32,
            }
        }
    };
    let max_wg = if large { target.max_work_group_large_grf } else { target.max_work_group };
    if c.num_warps * sub_group > max_wg {
        return false; // XF102
    }
    for (name, _) in &input.blocks {
        if let Some(v) = c.get(name).and_then(|v| v.as_int()) {
            let is_group = axis_of(name).is_some_and(|(g, _)| g);
            if v <= 0 || (!is_group && !(v as u64).is_power_of_two()) {
                return false; // XF108: aranges over block sizes need powers of two
            }
            if matches!(input.kind, KernelKind::Gemm | KernelKind::Attention)
                && !is_group
                && v < 16
                && axis_of(name).is_some_and(|(_, a)| a != 'M')
            {
                return false; // XF110: tl.dot minimum N/K
            }
        }
    }
    if input.kind == KernelKind::Gemm {
        let dim = |axis: char| {
            input.blocks.iter().find(|(n, _)| axis_of(n) == Some((false, axis))).and_then(|(n, _)| c.get(n)).and_then(|v| v.as_int())
        };
        if let (Some(m), Some(n), Some(k)) = (dim('M'), dim('N'), dim('K')) {
            // XF201's estimate: pipelined A and B tiles in shared memory.
            let bytes = ((m * k + k * n) as u64) * input.elem_bytes * c.num_stages.max(1) as u64;
            if target.backend == TuneBackend::Cuda && bytes > target.shared_bytes {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gemm_input() -> TuneInput {
        let blocks =
            vec![("BLOCK_M".to_string(), 32), ("BLOCK_N".to_string(), 32), ("BLOCK_K".to_string(), 32), ("GROUP_M".to_string(), 1)];
        TuneInput {
            kind: KernelKind::Gemm,
            start: TuneConfig {
                kwargs: blocks.iter().map(|(n, v)| (n.clone(), ConfigValue::Int(*v))).collect(),
                num_warps: 4,
                num_stages: 2,
            },
            blocks,
            elem_bytes: 2,
        }
    }

    #[test]
    fn every_seeded_kind_has_an_embedded_list() {
        let t = TuneTarget::xpu_default();
        for kind in ["gemm", "gemm-epilogue", "attention", "rowwise"] {
            assert!(seeds(&t, &[kind]).next().is_some(), "{kind}");
        }
        assert!(seeds(&TuneTarget::cuda(), &["gemm"]).next().is_some());
    }

    /// On NVIDIA the GEMM seeds are `knowledge/autotune/gemm_cuda.json` (upstream's tutorial list),
    /// in its order; on Intel they are Intel's lists, never the CUDA one.
    #[test]
    fn each_backend_seeds_gemms_from_its_own_lists() {
        let dims = |c: &TuneConfig| {
            let v = |n: &str| c.get(n).and_then(ConfigValue::as_int).unwrap_or(0);
            (v("BLOCK_M"), v("BLOCK_N"), v("BLOCK_K"), v("GROUP_M"), c.num_stages, c.num_warps)
        };
        let cuda: Vec<_> = build(&gemm_input(), &TuneTarget::cuda(), 64)[1..].iter().map(dims).collect();
        assert_eq!(&cuda[..3], &[(128, 256, 64, 8, 3, 8), (64, 256, 32, 8, 4, 4), (128, 128, 32, 8, 4, 4)]);
        assert_eq!(cuda.len(), 11, "{cuda:?}");
        let xpu: Vec<_> = build(&gemm_input(), &TuneTarget::xpu_default(), 64)[1..].iter().map(dims).collect();
        assert!(cuda.iter().all(|c| !xpu.contains(c)), "{xpu:?}");
    }

    #[test]
    fn xpu_gemm_space_starts_from_the_kernel_and_uses_intels_seeds() {
        let s = build(&gemm_input(), &TuneTarget::xpu_default(), 64);
        assert_eq!(s[0], gemm_input().start);
        let first_seed = &s[1];
        assert_eq!(first_seed.get("BLOCK_M"), Some(&ConfigValue::Int(256)));
        assert_eq!(first_seed.get("GROUP_M"), Some(&ConfigValue::Int(4)));
        assert_eq!(first_seed.get("grf_mode"), Some(&ConfigValue::Str("256".into())));
        // 64 warps only with the small GRF; never with large (XF103).
        assert!(s.iter().all(|c| !(c.num_warps > 32 && c.get("grf_mode") == Some(&ConfigValue::Str("256".into())))));
        assert!(s.iter().any(|c| c.num_warps == 64));
    }

    #[test]
    fn cuda_space_has_no_intel_options_and_fits_shared_memory() {
        let s = build(&gemm_input(), &TuneTarget::cuda(), 64);
        assert!(s.len() > 5);
        assert!(s.iter().all(|c| c.get("grf_mode").is_none() && c.num_warps <= 32));
    }

    #[test]
    fn spaces_are_cut_to_the_limit_keeping_the_start() {
        let input = TuneInput { kind: KernelKind::Other, ..gemm_input() };
        let s = build(&input, &TuneTarget::cuda(), 6);
        assert_eq!(s.len(), 6);
        assert_eq!(s[0], input.start);
    }

    #[test]
    fn a_generated_grid_is_measured_spread_out_not_corner_first() {
        // A row kernel's one tile (128) with every warp count: the first configs after the start must
        // already reach both ends of the tile range and of the warp range.
        let start = TuneConfig { kwargs: vec![("BLOCK_SIZE".into(), ConfigValue::Int(128))], num_warps: 4, num_stages: 3 };
        let input = TuneInput { kind: KernelKind::Other, blocks: vec![("BLOCK_SIZE".into(), 128)], start: start.clone(), elem_bytes: 4 };
        let s = build(&input, &TuneTarget::cuda(), 5);
        assert_eq!(s[0], start);
        let tiles: Vec<i64> = s[1..].iter().filter_map(|c| c.get("BLOCK_SIZE")?.as_int()).collect();
        let warps: Vec<u32> = s[1..].iter().map(|c| c.num_warps).collect();
        assert!(tiles.contains(&2048) && tiles.iter().any(|t| *t <= 64), "{tiles:?}");
        assert!(warps.contains(&1) && warps.contains(&16), "{warps:?}");
        // Farthest first: the first pick is as far from the start as the space allows (ties in list order).
        assert_eq!((tiles[0], warps[0]), (2048, 1), "{s:?}");
        // Seed lists keep their order.
        let g = build(&gemm_input(), &TuneTarget::cuda(), 64);
        assert_eq!((g[1].get("BLOCK_M"), g[1].get("BLOCK_N")), (Some(&ConfigValue::Int(128)), Some(&ConfigValue::Int(256))));
    }

    #[test]
    fn renders_a_triton_config() {
        let c = TuneConfig {
            kwargs: vec![("BLOCK".into(), ConfigValue::Int(64)), ("grf_mode".into(), ConfigValue::Str("256".into()))],
            num_warps: 8,
            num_stages: 2,
        };
        assert_eq!(c.render(), "triton.Config({'BLOCK': 64, 'grf_mode': '256'}, num_warps=8, num_stages=2)");
    }
}
