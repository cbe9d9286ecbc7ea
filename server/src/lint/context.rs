//! What every rule reads: the model, the text, the target, and helpers to find option values, read
//! knowledge facts with their provenance, and build diagnostics that name the device and toolchain.

use super::registry::RuleId;
use crate::knowledge::{Backend, Device, Fact, Knowledge, Severity, Target, Toolchain, Vendor};
use crate::lint::{Diagnostic, Related};
use crate::model::{Binding, BindingSet, Config, FileModel, Kernel, Launch, binding_sets_with};
use crate::text::{LineIndex, TextRange};
use std::cell::{Cell, OnceCell};

pub struct Ctx<'a> {
    pub model: &'a FileModel,
    pub text: &'a str,
    pub target: Target<'a>,
    pub kb: &'a Knowledge,
    lines: OnceCell<LineIndex>,
    sets: Vec<OnceCell<Vec<BindingSet>>>,
    /// The one kernel `kernels()` yields while kernel-scoped rules run for it; None = all.
    scope: Cell<Option<usize>>,
    /// Launch indices per kernel, built on first use.
    launches_by_kernel: OnceCell<Vec<Vec<usize>>>,
}

/// Where an option value was written.
#[derive(Debug, Clone, Copy)]
pub enum Origin<'a> {
    /// A `triton.Config` of the kernel's autotune list (index into `autotune.configs`).
    Config { index: usize, config: &'a Config },
    /// A launch of the kernel (index into `FileModel::launches`).
    Launch { index: usize, launch: &'a Launch },
}

impl Origin<'_> {
    pub fn range(&self) -> TextRange {
        match self {
            Origin::Config { config, .. } => config.range,
            Origin::Launch { launch, .. } => launch.range,
        }
    }
}

/// One `name=value` given to a kernel, with where it was given.
#[derive(Debug, Clone, Copy)]
pub struct OptionSite<'a> {
    pub binding: &'a Binding,
    pub origin: Origin<'a>,
}

/// A knowledge value with its provenance, as a rule uses it.
#[derive(Debug, Clone)]
pub struct Known<'a, T> {
    pub value: T,
    pub verified: bool,
    pub source: &'a str,
}

impl<T> Known<'_, T> {
    /// Errors resting on an unverified fact are reported as warnings (docs/rules.md).
    pub fn severity(&self, wanted: Severity) -> Severity {
        if !self.verified && wanted == Severity::Error { Severity::Warning } else { wanted }
    }
    /// Sentence appended to a message whose limit is unverified; empty when verified.
    pub fn caveat(&self) -> String {
        if self.verified {
            String::new()
        } else if self.source.is_empty() {
            " (limit from an unverified knowledge entry, so reported as a warning)".to_string()
        } else {
            format!(" (limit from an unverified knowledge entry: {}; reported as a warning)", self.source)
        }
    }
}

impl<T> Known<'_, T> {
    /// For findings that are warnings anyway: name the unverified fact, empty when verified.
    pub fn note(&self, what: &str) -> String {
        match (self.verified, self.source.is_empty()) {
            (true, _) => String::new(),
            (false, true) => format!(" ({what} from an unverified knowledge entry)"),
            (false, false) => format!(" ({what} from an unverified knowledge entry: {})", self.source),
        }
    }
}

pub fn known<T: Clone>(fact: &Fact<T>) -> Option<Known<'_, T>> {
    fact.get().map(|v| Known { value: v.clone(), verified: fact.verified, source: fact.source.as_str() })
}

impl<'a> Ctx<'a> {
    pub fn new(model: &'a FileModel, text: &'a str, target: Target<'a>, kb: &'a Knowledge) -> Self {
        Self {
            model,
            text,
            target,
            kb,
            lines: OnceCell::new(),
            sets: (0..model.kernels.len()).map(|_| OnceCell::new()).collect(),
            scope: Cell::new(None),
            launches_by_kernel: OnceCell::new(),
        }
    }

    /// Line table of the text, built on first use (only suppressions need it).
    pub fn lines(&self) -> &LineIndex {
        self.lines.get_or_init(|| LineIndex::new(self.text))
    }

    /// Restricts `kernels()` to one kernel (None: every kernel again).
    pub fn set_scope(&self, kernel: Option<usize>) {
        self.scope.set(kernel);
    }

    pub fn device(&self) -> &'a Device {
        self.target.device
    }
    pub fn toolchain(&self) -> &'a Toolchain {
        self.target.toolchain
    }
    pub fn is_xpu(&self) -> bool {
        self.toolchain().backend == Backend::Xpu
    }
    pub fn is_intel(&self) -> bool {
        self.device().vendor == Vendor::Intel
    }
    /// "Intel Arc Pro B70 (xpu-3.7)": how messages name the target.
    pub fn target_label(&self) -> String {
        format!("{} ({})", self.device().name, self.toolchain().id)
    }

    /// The kernels rules report on: all of them, or the one in scope.
    pub fn kernels(&self) -> impl Iterator<Item = (usize, &'a Kernel)> {
        let scope = self.scope.get();
        self.model.kernels.iter().map(|k| &**k).enumerate().filter(move |(i, _)| scope.is_none_or(|s| s == *i))
    }

    pub fn launches_of(&self, kernel: usize) -> impl Iterator<Item = (usize, &'a Launch)> + '_ {
        let by_kernel = self.launches_by_kernel.get_or_init(|| {
            let mut v = vec![Vec::new(); self.model.kernels.len()];
            for (i, l) in self.model.launches.iter().enumerate() {
                if let Some(list) = v.get_mut(l.kernel) {
                    list.push(i);
                }
            }
            v
        });
        let model = self.model;
        by_kernel.get(kernel).into_iter().flatten().filter_map(move |&i| model.launches.get(i).map(|l| (i, l)))
    }

    /// Every binding set of a kernel (constants < defaults < one config < one launch), computed once.
    pub fn binding_sets(&self, kernel: usize) -> &[BindingSet] {
        match self.sets.get(kernel) {
            Some(cell) => cell.get_or_init(|| binding_sets_with(self.model, kernel, self.launches_of(kernel).map(|(i, _)| i).collect())),
            None => &[],
        }
    }

    /// Every place an option or constexpr named `name` is given for `kernel`: config call keywords,
    /// config kwargs-dict entries, launch keywords.
    pub fn sites(&self, kernel: usize, name: &str) -> Vec<OptionSite<'a>> {
        self.all_sites(kernel).into_iter().filter(|s| s.binding.name == name).collect()
    }

    /// Every keyword given to `kernel` anywhere, in source order of configs then launches.
    pub fn all_sites(&self, kernel: usize) -> Vec<OptionSite<'a>> {
        let mut out = Vec::new();
        let Some(k) = self.model.kernels.get(kernel) else { return out };
        if let Some(at) = &k.autotune {
            for (index, config) in at.configs.iter().enumerate() {
                let origin = Origin::Config { index, config };
                for binding in config.options.iter().chain(config.kwargs.iter()) {
                    out.push(OptionSite { binding, origin });
                }
            }
        }
        for (index, launch) in self.launches_of(kernel) {
            for binding in &launch.kwargs {
                out.push(OptionSite { binding, origin: Origin::Launch { index, launch } });
            }
        }
        out
    }

    /// The value of backend option `name` in one binding set. The config is read first: the
    /// autotuner merges `dict(launch_kwargs, **config.all_kwargs())`, so a config's value wins.
    /// Module constants and signature defaults never reach the backend's option parser.
    pub fn option(&self, kernel: usize, set: &BindingSet, name: &str) -> Option<OptionSite<'a>> {
        let k = self.model.kernels.get(kernel)?;
        if let (Some(ci), Some(at)) = (set.config, k.autotune.as_ref())
            && let Some(config) = at.configs.get(ci)
            && let Some(binding) = config.get(name)
        {
            return Some(OptionSite { binding, origin: Origin::Config { index: ci, config } });
        }
        let li = set.launch?;
        let launch = self.model.launches.get(li)?;
        launch.get(name).map(|binding| OptionSite { binding, origin: Origin::Launch { index: li, launch } })
    }

    /// Related locations naming the config and launch a binding set came from.
    pub fn set_related(&self, kernel: usize, set: &BindingSet, what: &str) -> Vec<Related> {
        let mut out = Vec::new();
        if let Some(k) = self.model.kernels.get(kernel)
            && let (Some(ci), Some(at)) = (set.config, k.autotune.as_ref())
            && let Some(config) = at.configs.get(ci)
        {
            out.push(Related { range: config.range, message: format!("config {} of {}{what}", ci + 1, at.configs.len()) });
        }
        if let Some(launch) = set.launch.and_then(|l| self.model.launches.get(l)) {
            out.push(Related { range: launch.range, message: format!("launch of {}{what}", self.kernel_name(kernel)) });
        }
        out
    }

    /// Related location for where one option value was given.
    pub fn origin_related(&self, kernel: usize, origin: Origin<'_>) -> Related {
        match origin {
            Origin::Config { index, config } => {
                let n = self.model.kernels.get(kernel).and_then(|k| k.autotune.as_ref()).map_or(0, |a| a.configs.len());
                Related { range: config.range, message: format!("set by config {} of {n}", index + 1) }
            }
            Origin::Launch { launch, .. } => {
                Related { range: launch.range, message: format!("passed by this launch of {}", self.kernel_name(kernel)) }
            }
        }
    }

    pub fn kernel_name(&self, kernel: usize) -> &'a str {
        self.model.kernels.get(kernel).map_or("", |k| k.name.as_str())
    }

    /// A kernel parameter with this name: the launch keyword binds to it: Triton binds a launch keyword to the kernel parameter of that name before treating it as a compile option (triton/runtime/jit.py, `JITFunction.run`).
    pub fn is_param(&self, kernel: usize, name: &str) -> bool {
        self.model.kernels.get(kernel).is_some_and(|k| k.param(name).is_some())
    }

    pub fn diag(&self, id: RuleId, severity: Severity, range: TextRange, kernel: Option<usize>, message: String) -> Diagnostic {
        // The knowledge base has the last word where a user's overlay set the rule's severity.
        let severity = match self.kb.rule(id.code) {
            Some(r) if r.severity_pinned => r.severity,
            _ => severity,
        };
        Diagnostic {
            code: id.code,
            name: id.name,
            severity,
            message,
            range,
            kernel: kernel.and_then(|k| self.model.kernels.get(k)).map(|k| k.name.clone()),
            device: self.device().id.clone(),
            toolchain: self.toolchain().id.clone(),
            related: Vec::new(),
            fix: None,
            origin: super::diagnostic::Origin::Static,
        }
    }

    /// Sub-group size in effect for a binding set, and why (XF102's definition in docs/rules.md):
    /// an explicit `warp_size`/`threads_per_warp`, else 16 for a `tl.dot` kernel on a DPAS device, else 32.
    pub fn sub_group(&self, kernel: usize, set: &BindingSet) -> Option<(i64, String)> {
        for name in ["warp_size", "threads_per_warp"] {
            if let Some(site) = self.option(kernel, set, name) {
                return site.binding.value.as_int().map(|v| (v, format!("{name}={v}")));
            }
        }
        let k = self.model.kernels.get(kernel)?;
        let sg = self.device().sub_group_default(k.has_dot())?;
        let why = if !self.is_intel() {
            format!("warp size {sg}")
        } else if k.has_dot() && sg != 32 {
            format!("sub-group {sg}: the kernel uses tl.dot, which runs on DPAS")
        } else {
            format!("default sub-group {sg}")
        };
        Some((i64::from(sg), why))
    }

    /// True when `grf_mode` in this set selects the 256/large register file on this toolchain.
    /// A device without a large-GRF mode (DG2: Arc A770) runs every `grf_mode` with the default
    /// register file, so nothing here selects the large one there.
    pub fn large_grf(&self, kernel: usize, set: &BindingSet) -> Option<OptionSite<'a>> {
        if self.device().has_large_grf.get() == Some(&false) {
            return None;
        }
        let site = self.option(kernel, set, "grf_mode")?;
        let v = grf_text(&site.binding.value)?;
        self.toolchain().is_large_grf(&v).then_some(site)
    }
}

/// A `grf_mode` value as the backend compares it (strings; an int is shown as its digits).
pub fn grf_text(v: &crate::model::Value) -> Option<String> {
    match v {
        crate::model::Value::Str(s) => Some(s.clone()),
        crate::model::Value::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

pub fn is_power_of_two(n: i64) -> bool {
    n > 0 && (n & (n - 1)) == 0
}

/// Bytes per element of a Triton dtype name.
pub fn dtype_bytes(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "int1" | "int8" | "uint8" => 1,
        d if d.starts_with("float8") => 1,
        "float16" | "bfloat16" | "int16" | "uint16" => 2,
        "float32" | "int32" | "uint32" => 4,
        "float64" | "int64" | "uint64" => 8,
        _ => return None,
    })
}

/// Comma-joined list of numbers for messages.
pub fn join<T: std::fmt::Display>(v: &[T]) -> String {
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
}
