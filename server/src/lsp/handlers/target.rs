//! Device/toolchain facts as the hover, inlay hints and code lenses show them: the value, whether it
//! is verified, and where it comes from. Shared so the three features never disagree.

use crate::knowledge::{Fact, Target};
use crate::model::{Config, Kernel, Launch, Value};

use super::super::engine::Computed;

pub fn target(c: &Computed) -> Option<Target<'_>> {
    crate::analysis::resolve_target(&c.kb, &c.options).ok()
}

pub fn label(t: &Target<'_>) -> String {
    format!("{} ({})", t.device.name, t.toolchain.id)
}

/// "1024" or "1024 (unverified)".
pub fn fact_value<T: std::fmt::Display>(f: &Fact<T>) -> Option<String> {
    let v = f.get()?;
    Some(if f.verified { v.to_string() } else { format!("{v} (unverified)") })
}

/// A markdown bullet "- what: value — source" for a known fact; nothing for an unknown one.
pub fn fact_line<T: std::fmt::Display>(what: &str, f: &Fact<T>) -> Option<String> {
    let v = fact_value(f)?;
    Some(if f.source.is_empty() { format!("- {what}: **{v}**") } else { format!("- {what}: **{v}** — {}", f.source) })
}

/// Where an option's value is given: a Config (kwargs dict or call keyword) or a launch keyword.
#[derive(Clone, Copy)]
pub enum Site<'a> {
    Config(&'a Config),
    Launch(&'a Launch),
}

impl<'a> Site<'a> {
    pub fn value(&self, name: &str) -> Option<&'a Value> {
        match self {
            Site::Config(c) => c.get(name).map(|b| &b.value),
            Site::Launch(l) => l.get(name).map(|b| &b.value),
        }
    }
}

/// Sub-group size in effect and why (docs/rules.md, XF102): the explicit option, else 16 for a `tl.dot`
/// kernel on a DPAS device, else 32. `None` when the option is given but not statically known.
pub fn sub_group(t: &Target<'_>, kernel: &Kernel, site: Site<'_>) -> Option<(i64, &'static str)> {
    for name in ["warp_size", "threads_per_warp"] {
        if let Some(v) = site.value(name) {
            return v.as_int().map(|n| (n, "set explicitly"));
        }
    }
    if t.device.has_dpas.get() == Some(&true) && kernel.has_dot() {
        Some((16, "default for a tl.dot kernel on a DPAS device"))
    } else {
        Some((32, "default"))
    }
}

/// The grf_mode string in effect at a site and whether it selects the large register file.
pub fn grf_mode(t: &Target<'_>, site: Site<'_>) -> (String, bool) {
    match site.value("grf_mode") {
        Some(Value::Str(s)) => (s.clone(), t.toolchain.grf_large_values.iter().any(|v| v == s)),
        Some(Value::Int(i)) => {
            let s = i.to_string();
            let large = t.toolchain.grf_large_values.contains(&s);
            (s, large)
        }
        Some(_) => ("?".into(), false),
        None => ("default".into(), false),
    }
}

/// num_warps in effect: explicit, else Triton's default of 4.
pub fn num_warps(site: Site<'_>) -> Option<(i64, bool)> {
    match site.value("num_warps") {
        Some(v) => v.as_int().map(|n| (n, true)),
        None => Some((4, false)),
    }
}
