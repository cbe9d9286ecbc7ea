//! Compiled facts as diagnostics: the harness's compile metadata of every config (registers, spills,
//! shared memory, the sub-group size and GRF mode the backend chose) turned into findings on the
//! `triton.Config` or launch that produced the config, under the rule they measure (XF202 for
//! registers and spills, XF201 for shared memory).
//!
//! The numbers are those of the device that ran (its profile found by name in the knowledge base);
//! a compiled finding replaces a static one of the same rule on the same config, whose estimate it
//! settles, and says what the static rule had said (`lint::compiled`).

use crate::harness::protocol::{CompileReport, ConfigMetadata};
use crate::harness::{DeviceInfo, Evaluation};
use crate::knowledge::{Device, Knowledge, Severity};
use crate::lint::registry::{RuleId, XF201, XF202};
use crate::lint::{Diagnostic, Origin, Related};
use crate::model::{Binding, FileModel, Kernel, Value};
use crate::text::TextRange;

/// What compiling said, for one file: findings, or why there are none.
#[derive(Debug, Default)]
pub struct Compiled {
    pub diagnostics: Vec<Diagnostic>,
    /// Why there are none ("no compile metadata on this device"), when there are none to give.
    pub note: Option<String>,
}

/// What the harness's result says about compiling: the findings, or why there are none.
pub fn of_evaluation(model: &FileModel, e: &Evaluation, kb: &Knowledge, target: (&str, &str)) -> Compiled {
    match &e.compile {
        Some(report) => diagnostics(model, report, &e.device, kb, target),
        None => Compiled { diagnostics: Vec::new(), note: missing(e) },
    }
}

/// Why the harness's result has no compiled facts to give, when it has none.
pub fn missing(e: &Evaluation) -> Option<String> {
    match &e.compile {
        Some(report) => missing_in(report, &e.device),
        None => Some("the harness did not reach compiling".into()),
    }
}

fn missing_in(report: &CompileReport, ran: &DeviceInfo) -> Option<String> {
    if report.metadata_available == Some(false) || (ran.is_cpu() && report.configs.is_empty()) {
        let why = report.note.clone().unwrap_or_else(|| "the Triton interpreter compiles nothing".into());
        return Some(format!("no compile metadata on this device ({} {}): {why}", ran.kind, ran.name));
    }
    report.configs.is_empty().then(|| "the harness reported no compiled config".into())
}

/// Findings for every compiled config of the file's kernels.
pub fn diagnostics(model: &FileModel, report: &CompileReport, ran: &DeviceInfo, kb: &Knowledge, target: (&str, &str)) -> Compiled {
    if let Some(note) = missing_in(report, ran) {
        return Compiled { diagnostics: Vec::new(), note: Some(note) };
    }
    let device = kb.device_named(&ran.name);
    let mut out = Vec::new();
    for meta in &report.configs {
        // Triton names a kernel made by a call (`add = triton.jit(_add_impl)`) by its `def`.
        let named = |k: &&std::sync::Arc<crate::model::Kernel>, n: &str| k.name == n || k.made_by.as_ref().is_some_and(|m| m.def_name == n);
        let Some(kernel) = meta.kernel.as_deref().and_then(|n| model.kernels.iter().find(|k| named(k, n))) else { continue };
        let (range, related) = locate(model, kernel, meta);
        let base = |rule: RuleId, severity: Severity, message: String| Diagnostic {
            code: rule.code,
            name: rule.name,
            severity,
            message,
            range,
            kernel: Some(kernel.name.clone()),
            device: target.0.to_string(),
            toolchain: target.1.to_string(),
            related: related.clone(),
            fix: None,
            origin: Origin::Compiled,
        };
        let on = device.map(|d| d.name.as_str()).unwrap_or(ran.name.as_str());
        let label = describe(meta);
        out.push(base(XF202, register_severity(meta), register_message(meta, device, on, &label)));
        if let (Some(shared), Some(limit)) = (meta.shared_bytes, device.and_then(|d| d.slm_bytes.value)) {
            let severity = if shared > limit { Severity::Error } else { Severity::Info };
            out.push(base(
                XF201,
                severity,
                format!(
                    "compiled on {on}, {label}: {shared} B of shared memory per work-group, {} the device's {limit} B",
                    if shared > limit { "over" } else { "within" }
                ),
            ));
        }
    }
    Compiled { diagnostics: out, note: None }
}

fn register_severity(meta: &ConfigMetadata) -> Severity {
    if meta.spills.unwrap_or(0) > 0 { Severity::Warning } else { Severity::Info }
}

fn register_message(meta: &ConfigMetadata, device: Option<&Device>, on: &str, label: &str) -> String {
    let regs = meta.registers.map(|r| r.to_string()).unwrap_or_else(|| "?".into());
    let spills = meta.spills.unwrap_or(0);
    let mut facts = vec![format!("{regs} registers"), format!("{spills} B spilled")];
    if let Some(sg) = meta.sub_group_size {
        facts.push(format!("sub-group {sg}"));
    }
    if let Some(mode) = &meta.grf_mode_built {
        facts.push(format!("GRF mode {mode}"));
    }
    let mut message = format!("compiled on {on}, {label}: {}", facts.join(", "));
    if meta.large_grf_recompiled == Some(true) {
        message
            .push_str("; the backend spilled in the default mode and recompiled it with the large GRF, which halves the work-group limit");
    }
    if spills > 0 {
        let large = device.is_some_and(|d| d.has_large_grf.value == Some(true))
            && !matches!(meta.grf_mode_built.as_deref(), Some("256") | Some("512"))
            && meta.large_grf_recompiled != Some(true);
        message.push_str(match large {
            true => "; spills go through memory on every use: set grf_mode='256' (twice the registers per thread) or use smaller tiles or fewer stages",
            false => "; spills go through memory on every use: use smaller tiles, fewer stages or fewer warps' worth of accumulator",
        });
    }
    message
}

/// `BLOCK_M=128 BLOCK_N=64 num_warps=8`: the config as compiled, in its own order.
fn describe(meta: &ConfigMetadata) -> String {
    let parts: Vec<String> = meta
        .config
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}='{s}'"),
            other => format!("{k}={other}"),
        })
        .collect();
    if parts.is_empty() { "its only config".into() } else { parts.join(" ") }
}

/// Whether a binding from the source agrees with the compiled config's value of the same name.
fn agrees(b: &Binding, compiled: &serde_json::Map<String, serde_json::Value>) -> Option<bool> {
    let c = compiled.get(&b.name)?;
    Some(match (&b.value, c) {
        (Value::Int(i), serde_json::Value::Number(n)) => n.as_i64() == Some(*i),
        (Value::Bool(x), serde_json::Value::Bool(y)) => x == y,
        (Value::Str(x), serde_json::Value::String(y)) => x == y,
        (Value::Float(x), serde_json::Value::Number(n)) => n.as_f64() == Some(*x),
        (Value::Unknown, _) => return None,
        _ => false,
    })
}

/// How many of `bindings` the compiled config confirms; None when one contradicts it.
fn score<'a>(bindings: impl Iterator<Item = &'a Binding>, compiled: &serde_json::Map<String, serde_json::Value>) -> Option<usize> {
    let mut n = 0;
    for b in bindings {
        match agrees(b, compiled) {
            Some(true) => n += 1,
            Some(false) => return None,
            None => {}
        }
    }
    Some(n)
}

/// The `triton.Config` (or else the launch) whose values the compiled config has, else the kernel's
/// name; with the other candidates that agree as related places.
fn locate(model: &FileModel, kernel: &Kernel, meta: &ConfigMetadata) -> (TextRange, Vec<Related>) {
    let configs = kernel.autotune.iter().flat_map(|a| a.configs.iter());
    let best_config = configs
        .filter_map(|c| score(c.kwargs.iter().chain(c.options.iter()), &meta.config).filter(|n| *n > 0).map(|n| (n, c.range)))
        .max_by_key(|(n, r)| (*n, std::cmp::Reverse(r.start)));
    if let Some((_, range)) = best_config {
        return (range, Vec::new());
    }
    let index = model.kernels.iter().position(|k| std::ptr::eq(&**k, kernel));
    let launches: Vec<_> = model
        .launches
        .iter()
        .filter(|l| Some(l.kernel) == index)
        .filter_map(|l| score(l.kwargs.iter().chain(l.positional_args.iter()), &meta.config).map(|n| (n, l.range)))
        .collect();
    if let Some((_, range)) = launches.iter().max_by_key(|(n, r)| (*n, std::cmp::Reverse(r.start))) {
        let related = launches
            .iter()
            .filter(|(_, r)| r != range)
            .map(|(_, r)| Related { range: *r, message: "also launches this config".into() })
            .collect();
        return (*range, related);
    }
    (kernel.name_range, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::protocol::CompileReport;

    const FILE: &str = r#"import triton
import triton.language as tl

@triton.autotune(
    configs=[
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128}, num_warps=8),
        triton.Config({'BLOCK_M': 64, 'BLOCK_N': 64}, num_warps=4),
    ],
    key=['M'],
)
@triton.jit
def mm(a, b, c, M, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pass
"#;

    fn meta(bm: i64, warps: i64, spills: u64) -> ConfigMetadata {
        let config = serde_json::json!({"BLOCK_M": bm, "BLOCK_N": bm, "num_warps": warps, "num_stages": 3});
        ConfigMetadata {
            kernel: Some("mm".into()),
            config: config.as_object().unwrap().clone(),
            shared_bytes: Some(65536),
            registers: Some(255),
            spills: Some(spills),
            sub_group_size: Some(32),
            ..Default::default()
        }
    }

    fn h200() -> DeviceInfo {
        DeviceInfo { kind: "cuda".into(), name: "NVIDIA H200".into(), ..Default::default() }
    }

    #[test]
    fn each_compiled_config_lands_on_the_config_that_produced_it() {
        let kb = Knowledge::embedded();
        let model = crate::analysis::analyze(FILE, kb, &Default::default()).unwrap().model;
        let report = CompileReport { ok: true, configs: vec![meta(128, 8, 2048), meta(64, 4, 0)], ..Default::default() };
        let c = diagnostics(&model, &report, &h200(), kb, ("h200", "cuda"));
        let regs: Vec<&Diagnostic> = c.diagnostics.iter().filter(|d| d.code == "XF202").collect();
        assert_eq!(regs.len(), 2);
        let at = |d: &Diagnostic| &FILE[d.range.start..d.range.end];
        assert!(at(regs[0]).contains("'BLOCK_M': 128") && regs[0].severity == Severity::Warning, "{}", regs[0].message);
        assert!(regs[0].message.contains("2048 B spilled") && regs[0].message.contains("NVIDIA H200"), "{}", regs[0].message);
        assert!(at(regs[1]).contains("'BLOCK_M': 64") && regs[1].severity == Severity::Info);
    }

    #[test]
    fn the_interpreter_says_it_has_no_compile_metadata() {
        let kb = Knowledge::embedded();
        let model = crate::analysis::analyze(FILE, kb, &Default::default()).unwrap().model;
        let cpu = DeviceInfo { kind: "cpu".into(), name: "x86_64".into(), ..Default::default() };
        let report =
            CompileReport { ok: true, metadata_available: Some(false), note: Some("the interpreter".into()), ..Default::default() };
        let c = diagnostics(&model, &report, &cpu, kb, ("arc-pro-b70", "xpu-3.7"));
        assert!(c.diagnostics.is_empty());
        assert!(c.note.unwrap().starts_with("no compile metadata on this device (cpu x86_64)"));
    }
}
