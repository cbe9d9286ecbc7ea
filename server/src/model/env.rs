//! Binding environments for the rules: which value each name has for one (config, launch) pair.
//!
//! A set merges, later layers winning: module constants < constexpr defaults < one autotune
//! config (its kwargs dict, then its call keywords) < one launch (positional arguments, then
//! keywords). Kernel parameters shadow module constants of the same name even when unbound, and
//! names supplied by `@triton.heuristics` are computed at launch time, so both read as unknown.

use super::types::{Binding, Expr, FileModel, Value};
use std::collections::HashMap;

/// Most binding sets produced for one kernel. Past the cap every config and every launch still
/// appears at least once (config i with launch i mod L, launch j with config j mod C), so a
/// rule sees each literal; only some cross combinations are dropped.
pub const MAX_BINDING_SETS: usize = 1024;

#[derive(Debug, Clone, PartialEq)]
pub struct BindingSet {
    /// Index into the kernel's `autotune.configs`, if this set includes a config.
    pub config: Option<usize>,
    /// Index into `FileModel::launches`, if this set includes a launch.
    pub launch: Option<usize>,
    bindings: Vec<Binding>,
    index: HashMap<String, usize>,
}

impl BindingSet {
    fn new(config: Option<usize>, launch: Option<usize>) -> Self {
        BindingSet { config, launch, bindings: Vec::new(), index: HashMap::new() }
    }

    fn set(&mut self, b: &Binding) {
        match self.index.get(&b.name) {
            Some(i) => self.bindings[*i] = b.clone(),
            None => {
                self.index.insert(b.name.clone(), self.bindings.len());
                self.bindings.push(b.clone());
            }
        }
    }

    fn unset(&mut self, name: &str) {
        if let Some(i) = self.index.remove(name) {
            self.bindings.remove(i);
            for v in self.index.values_mut() {
                if *v > i {
                    *v -= 1;
                }
            }
        }
    }

    /// The binding of `name`, with the range of the literal that produced it.
    pub fn get(&self, name: &str) -> Option<&Binding> {
        self.index.get(name).and_then(|i| self.bindings.get(*i))
    }

    /// The value of `name` (Unknown when unbound).
    pub fn value(&self, name: &str) -> Value {
        self.get(name).map_or(Value::Unknown, |b| b.value.clone())
    }

    /// Evaluates an expression under this set.
    pub fn eval(&self, expr: &Expr) -> Value {
        expr.eval(&|n| self.get(n).map(|b| b.value.clone()))
    }

    /// Every binding, in layer order.
    pub fn iter(&self) -> impl Iterator<Item = &Binding> {
        self.bindings.iter()
    }
}

/// The binding sets of kernel `kernel` (index into `file.kernels`); empty for a bad index.
pub fn binding_sets(file: &FileModel, kernel: usize) -> Vec<BindingSet> {
    let launches: Vec<usize> = file.launches.iter().enumerate().filter(|(_, l)| l.kernel == kernel).map(|(i, _)| i).collect();
    binding_sets_with(file, kernel, launches)
}

/// [`binding_sets`] when the caller already knows the kernel's launches (indices into
/// `file.launches`, in order), which saves a scan of every launch per kernel.
pub fn binding_sets_with(file: &FileModel, kernel: usize, launches: Vec<usize>) -> Vec<BindingSet> {
    let Some(k) = file.kernels.get(kernel) else { return Vec::new() };
    let mut base = BindingSet::new(None, None);
    for c in &file.constants {
        base.set(c);
    }
    for p in &k.params {
        base.unset(&p.name);
        if let Some(d) = &p.default {
            base.set(d);
        }
    }
    let configs = k.autotune.as_ref().map(|a| a.configs.as_slice()).unwrap_or(&[]);
    let heuristic_names: Vec<&str> = k.heuristics.iter().flat_map(|h| h.names.iter().map(String::as_str)).collect();

    // A `k.fn[grid](...)` launch that skips the autotuner runs the bare function: it pairs with no config.
    let (launches, bare): (Vec<usize>, Vec<usize>) = if configs.is_empty() {
        (launches, Vec::new())
    } else {
        launches.into_iter().partition(|&i| file.launches.get(i).is_some_and(|l| k.autotunes(l)))
    };

    let config_choices: Vec<Option<usize>> = if configs.is_empty() { vec![None] } else { (0..configs.len()).map(Some).collect() };
    let launch_choices: Vec<Option<usize>> = if launches.is_empty() { vec![None] } else { launches.iter().copied().map(Some).collect() };
    let mut pairs: Vec<(Option<usize>, Option<usize>)> = if config_choices.len() * launch_choices.len() <= MAX_BINDING_SETS {
        config_choices.iter().flat_map(|c| launch_choices.iter().map(move |l| (*c, *l))).collect()
    } else {
        let (nc, nl) = (config_choices.len(), launch_choices.len());
        let mut v: Vec<(Option<usize>, Option<usize>)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for i in 0..nc.max(nl) {
            let p = (config_choices[i % nc], launch_choices[i % nl]);
            if seen.insert(p) {
                v.push(p);
            }
            if v.len() >= MAX_BINDING_SETS {
                break;
            }
        }
        v
    };
    pairs.extend(bare.into_iter().map(|l| (None, Some(l))));

    pairs
        .into_iter()
        .map(|(c, l)| {
            let mut set = base.clone();
            set.config = c;
            set.launch = l;
            if let Some(cfg) = c.and_then(|i| configs.get(i)) {
                for b in cfg.kwargs.iter().chain(cfg.options.iter()) {
                    set.set(b);
                }
            }
            if let Some(launch) = l.and_then(|i| file.launches.get(i)) {
                for b in launch.positional_args.iter().chain(launch.kwargs.iter()) {
                    set.set(b);
                }
            }
            for h in &heuristic_names {
                set.unset(h);
            }
            set
        })
        .collect()
}
