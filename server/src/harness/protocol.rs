//! The JSON of the harness contract (`server/harness/README.md`), typed. Parsing is lenient about *missing* fields (an older or
//! newer harness may omit some) but strict about the verdict, which is the one thing callers act on.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `verdict` of an evaluation, exactly the harness's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Correct and faster (interval's lower end above 1.02).
    Accepted,
    /// Correct; no timing, or not faster.
    Correct,
    Slower,
    Incorrect,
    CompileError,
    RuntimeError,
    Timeout,
    Crashed,
    /// The harness's own guard (new torch ops) rejected the candidate.
    Rejected,
    /// The harness itself could not run (bad spec, missing file, no such device).
    Error,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Accepted => "accepted",
            Verdict::Correct => "correct",
            Verdict::Slower => "slower",
            Verdict::Incorrect => "incorrect",
            Verdict::CompileError => "compile_error",
            Verdict::RuntimeError => "runtime_error",
            Verdict::Timeout => "timeout",
            Verdict::Crashed => "crashed",
            Verdict::Rejected => "rejected",
            Verdict::Error => "error",
        }
    }

    /// The candidate computes what the reference computes (whatever its speed).
    pub fn is_correct(self) -> bool {
        matches!(self, Verdict::Accepted | Verdict::Correct | Verdict::Slower)
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which device the harness should use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    #[default]
    Auto,
    Xpu,
    Cuda,
    Cpu,
}

impl DeviceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceKind::Auto => "auto",
            DeviceKind::Xpu => "xpu",
            DeviceKind::Cuda => "cuda",
            DeviceKind::Cpu => "cpu",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Some(DeviceKind::Auto),
            "xpu" => Some(DeviceKind::Xpu),
            "cuda" => Some(DeviceKind::Cuda),
            "cpu" => Some(DeviceKind::Cpu),
            _ => None,
        }
    }
}

/// Arguments of `evaluate` (the command-line flags of server/harness/README.md, as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluateArgs {
    pub kernel: PathBuf,
    pub candidate: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<PathBuf>,
    pub device: DeviceKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    pub seeds: u32,
    /// Wall-clock limit for the candidate's process, seconds.
    pub timeout: u64,
    pub no_timing: bool,
    /// Time on this family's largest variant; correctness stays on `family` (harness addition).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing_family: Option<String>,
    /// Timed pairs (harness default 100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<u32>,
    /// Sequential stopping: end timing once the interval lies below this speedup (harness addition).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_below: Option<f64>,
    /// With `no_timing`: one untimed, unchecked call of the candidate on each `timing_family` variant,
    /// so that its compiles and autotune searches of that shape reach the compile report (harness
    /// addition; sent only when set, so a harness without it is never asked).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub search_timed: bool,
    /// The kernel a stage works on: the original must launch it on the checked inputs, or the
    /// verdict is `error` (harness addition; a wrapper that picks another kernel of the file by dtype
    /// or size would otherwise be "correct" whatever the candidate did to this one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_kernel: Option<String>,
}

impl EvaluateArgs {
    pub fn new(kernel: PathBuf, candidate: PathBuf) -> Self {
        Self {
            kernel,
            candidate,
            spec: None,
            reference: None,
            device: DeviceKind::Auto,
            family: None,
            seeds: 3,
            timeout: 120,
            no_timing: false,
            timing_family: None,
            runs: None,
            stop_below: None,
            search_timed: false,
            target_kernel: None,
        }
    }
}

/// Arguments of `sweep` (harness addition): several candidates of one problem judged one after
/// another against one trusted side; `base.candidate` is not sent, `candidates` is.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepArgs {
    pub base: EvaluateArgs,
    pub candidates: Vec<PathBuf>,
    /// Start no candidate that would not fit in this many seconds of the sweep.
    pub budget_s: Option<f64>,
    /// Judged whatever the budget says.
    pub min_candidates: u32,
}

impl SweepArgs {
    pub fn to_json(&self) -> Result<serde_json::Value, serde_json::Error> {
        let mut v = serde_json::to_value(&self.base)?;
        if let Some(o) = v.as_object_mut() {
            o.remove("candidate");
            o.insert("candidates".into(), serde_json::to_value(&self.candidates)?);
            o.insert("min_candidates".into(), self.min_candidates.max(1).into());
            if let Some(b) = self.budget_s {
                o.insert("budget_s".into(), b.max(0.001).into());
            }
        }
        Ok(v)
    }
}

/// The result of `sweep`: one `evaluate` result per candidate judged, in order. Fewer results than
/// candidates when `stopped` says why (the budget, or a judge that died: its last result blames the
/// candidate that was running).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Sweep {
    #[serde(default, deserialize_with = "null_default")]
    pub device: DeviceInfo,
    #[serde(default)]
    pub results: Vec<Evaluation>,
    #[serde(default)]
    pub stopped: Option<String>,
    /// Seconds the trusted side took to set up (the original imported, references, solo timing).
    #[serde(default)]
    pub setup_s: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub torch: String,
    #[serde(default)]
    pub triton: String,
    /// The local device the harness's worker was pinned to, on a host with several (harness addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
}

/// What a result is a verdict on: one file as the harness read it (harness addition).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    /// The name the client gave it (a path for a local harness).
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub bytes: u64,
    #[serde(default)]
    pub sha256: String,
}

impl DeviceInfo {
    /// The CPU interpreter: timing means nothing there.
    pub fn is_cpu(&self) -> bool {
        self.kind.eq_ignore_ascii_case("cpu")
    }

    /// Its name (else its kind), with `#index` on a host with several: `NVIDIA H200 #3`.
    pub fn label(&self) -> String {
        let name = if self.name.is_empty() { &self.kind } else { &self.name };
        match &self.index {
            Some(i) => format!("{name} #{i}"),
            None => name.clone(),
        }
    }
}

/// Compile metadata of one config, where the backend reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigMetadata {
    /// The `@triton.jit` function the config was compiled for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    #[serde(default)]
    pub config: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub shared_bytes: Option<u64>,
    #[serde(default)]
    pub registers: Option<u64>,
    #[serde(default)]
    pub spills: Option<u64>,
    /// What the backend chose: the sub-group size, and on XPU the GRF mode of the build (whether it
    /// recompiled with large GRF after spilling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_group_size: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grf_mode_built: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub large_grf_recompiled: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompileReport {
    #[serde(default, deserialize_with = "null_is_false")]
    pub ok: bool,
    #[serde(default)]
    pub configs: Vec<ConfigMetadata>,
    /// False where the device gives no compile metadata (the CPU interpreter); `note` says why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata_available: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub autotune_picks: Vec<AutotunePick>,
    /// Each autotuner's last search, config by config (measured in the candidate's process: an order
    /// for a search, never a result).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub autotune_timings: Vec<AutotuneTiming>,
}

/// One config of an autotuner's search and the median milliseconds its benchmark measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AutotuneTiming {
    #[serde(default)]
    pub kernel: String,
    #[serde(default)]
    pub config: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub ms: f64,
}

/// What a `triton.autotune` of the candidate chose for one key (after the timed warm-up).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AutotunePick {
    #[serde(default)]
    pub kernel: String,
    #[serde(default)]
    pub key: Vec<String>,
    #[serde(default)]
    pub config: serde_json::Map<String, serde_json::Value>,
}

/// Seconds the evaluation took (harness addition).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Elapsed {
    #[serde(default)]
    pub wall_s: Option<f64>,
    /// In a sweep: this candidate's own share (the trusted side's setup is the sweep's `setup_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_s: Option<f64>,
    /// The judge's requests to each worker, by `side:op` (`trusted:reference`, `candidate:go`): how
    /// many and how long in all. Where an evaluation's time went.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty", deserialize_with = "lenient_tallies")]
    pub requests: std::collections::BTreeMap<String, RequestTally>,
}

/// A report, never a reason to lose the result it came with: entries that are not tallies are left out.
fn lenient_tallies<'de, D: serde::Deserializer<'de>>(d: D) -> Result<std::collections::BTreeMap<String, RequestTally>, D::Error> {
    let serde_json::Value::Object(raw) = serde_json::Value::deserialize(d)? else { return Ok(Default::default()) };
    Ok(raw.into_iter().filter_map(|(k, v)| Some((k, serde_json::from_value(v).ok()?))).collect())
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestTally {
    #[serde(default)]
    pub n: u64,
    #[serde(default)]
    pub s: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VariantResult {
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    #[serde(default, deserialize_with = "null_default")]
    pub seeds: u32,
    #[serde(default)]
    pub max_abs: Option<f64>,
    #[serde(default)]
    pub rel_err: Option<f64>,
    #[serde(default)]
    pub rtol: Option<f64>,
    #[serde(default)]
    pub atol: Option<f64>,
    #[serde(default)]
    pub ok: Option<bool>,
    #[serde(default)]
    pub error: Option<String>,
    /// Why this variant failed.
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CorrectnessReport {
    #[serde(default, deserialize_with = "null_is_false")]
    pub ok: bool,
    #[serde(default)]
    pub variants: Vec<VariantResult>,
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GuardReport {
    /// `null` when the guard was never reached (an early failure): not a pass.
    #[serde(default = "yes", deserialize_with = "null_is_false")]
    pub ok: bool,
    #[serde(default)]
    pub new_torch_ops: Vec<String>,
    /// Library or ATen device kernels the original never launched.
    #[serde(default)]
    pub new_device_kernels: Vec<String>,
    /// How the candidate interfered with the harness's recorders.
    #[serde(default)]
    pub tampered: Vec<String>,
}

fn yes() -> bool {
    true
}

/// A `null` where an object or string is expected reads as its default.
fn null_default<'de, D: serde::Deserializer<'de>, T: Default + Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// The harness writes `"ok": null` for a section it never reached.
fn null_is_false<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(d)?.unwrap_or(false))
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimingReport {
    #[serde(default, deserialize_with = "null_is_false")]
    pub meaningful: bool,
    #[serde(default)]
    pub baseline_us: Option<f64>,
    #[serde(default)]
    pub candidate_us: Option<f64>,
    #[serde(default)]
    pub speedup: Option<f64>,
    #[serde(default)]
    pub speedup_ci95: Option<[f64; 2]>,
    #[serde(default)]
    pub runs: Option<u64>,
    /// Why timing is not meaningful ("CPU interpreter"), where the harness says.
    #[serde(default)]
    pub reason: Option<String>,
    /// The timed variant's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Per pair, the per-call times the ratios are made of (for the evidence report's plots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_us: Option<TimingSamples>,
    /// The spec's work for the timed variant, where it gives it (roofline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flop: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_bytes: Option<f64>,
    /// The device the timed comparison ran on, both sides of every pair (harness addition): its name,
    /// and its index on a host with several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceInfo>,
    /// The original's launch issue per call, µs, on its own (trusted) process's clock (harness addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_us: Option<f64>,
    /// The original's calls are bound by their launch issue: a device-time gain below that floor does
    /// not show in this measurement (harness addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_bound: Option<bool>,
}

/// The original's and the candidate's per-call µs, one of each per interleaved pair.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimingSamples {
    #[serde(default)]
    pub original: Vec<f64>,
    #[serde(default)]
    pub candidate: Vec<f64>,
}

/// Whether a harness message puts a failure on the original's own code (its file or its reference
/// outputs), as the judge words it: "the original kernel file failed", "the reference on ci[0] failed".
pub fn names_the_original(message: &str) -> bool {
    message.contains("the original") || message.contains("the reference")
}

/// The result object of `evaluate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    pub verdict: Verdict,
    /// `null` when the harness failed before it reached a device.
    #[serde(default, deserialize_with = "null_default")]
    pub device: DeviceInfo,
    #[serde(default)]
    pub compile: Option<CompileReport>,
    #[serde(default)]
    pub correctness: Option<CorrectnessReport>,
    #[serde(default)]
    pub guard: Option<GuardReport>,
    #[serde(default)]
    pub timing: Option<TimingReport>,
    #[serde(default, deserialize_with = "null_default")]
    pub log: String,
    /// One line for people; every verdict has one (an `error`'s says what to fix).
    #[serde(default)]
    pub message: Option<String>,
    /// `error` results: the same text, and the argument or spec field to blame.
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub field: Option<String>,
    /// `timeout` and `crashed`: what the candidate's process was doing.
    #[serde(default)]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed: Option<Elapsed>,
    /// `kernel`, `candidate`, `spec`, `reference`: exactly which contents were verified.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub files: std::collections::BTreeMap<String, FileDigest>,
    /// Where a cluster ran the job (`serve --ray`), and the lanes lost on the way; kept in the evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolReport>,
    /// Why this verdict was reached on a second run with the device to itself (harness addition,
    /// `serve --jobs-per-device`): the first ran out of device memory beside other jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun_alone: Option<String>,
}

/// The cluster's side of a result (harness addition, `serve --ray`). A lane lost mid-job is not a
/// verdict: the job ran once more elsewhere (`retried`), and `lost` says what was lost and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolReport {
    #[serde(default, deserialize_with = "null_default")]
    pub backend: String,
    #[serde(default)]
    pub lane: Option<String>,
    #[serde(default)]
    pub node: Option<String>,
    #[serde(default)]
    pub retried: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<LostLane>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LostLane {
    #[serde(default, deserialize_with = "null_default")]
    pub lane: String,
    #[serde(default)]
    pub node: Option<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub error: String,
}

impl Evaluation {
    /// The speedup interval when timing was meaningful.
    pub fn speedup_interval(&self) -> Option<[f64; 2]> {
        self.timing.as_ref().filter(|t| t.meaningful).and_then(|t| t.speedup_ci95)
    }

    pub fn speedup(&self) -> Option<f64> {
        self.timing.as_ref().filter(|t| t.meaningful).and_then(|t| t.speedup)
    }

    /// An `error` whose message puts it on the original's own code (its file or its reference outputs
    /// failed), not on the harness or the device.
    pub fn blames_original(&self) -> bool {
        self.message.as_deref().is_some_and(names_the_original)
    }

    /// The most telling failure text, for feedback to a generator: the message, else the last lines of the log.
    pub fn failure_text(&self, max_chars: usize) -> String {
        let mut parts = Vec::new();
        if let Some(m) = self.message.as_ref().or(self.error.as_ref()) {
            parts.push(m.clone());
        }
        if let Some(e) = self.compile.as_ref().and_then(|c| c.error.clone()) {
            parts.push(format!("compile: {e}"));
        }
        if let Some(c) = &self.correctness {
            if let Some(e) = &c.error {
                parts.push(format!("correctness: {e}"));
            }
            for v in c.variants.iter().filter(|v| v.ok == Some(false) || v.error.is_some()) {
                parts.push(format!(
                    "variant {}: max_abs={} rel_err={} (rtol={}, atol={}){}",
                    v.name,
                    opt(v.max_abs),
                    opt(v.rel_err),
                    opt(v.rtol),
                    opt(v.atol),
                    v.error.as_deref().or(v.reason.as_deref()).map(|e| format!(": {e}")).unwrap_or_default()
                ));
            }
        }
        if let Some(g) = &self.guard {
            if !g.new_torch_ops.is_empty() {
                parts.push(format!("calls PyTorch operators the original did not: {}", g.new_torch_ops.join(", ")));
            }
            if !g.new_device_kernels.is_empty() {
                parts.push(format!("launches device kernels that are not the file's Triton kernels: {}", g.new_device_kernels.join(", ")));
            }
            if !g.tampered.is_empty() {
                parts.push(format!("interfered with the harness: {}", g.tampered.join("; ")));
            }
        }
        if parts.is_empty() && !self.log.is_empty() {
            parts.push(tail_chars(&self.log, max_chars));
        }
        let joined = parts.join("\n");
        tail_chars(&joined, max_chars)
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3e}")).unwrap_or_else(|| "?".into())
}

/// The last `max` characters of `s`, on a char boundary.
pub fn tail_chars(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let skip = n - max;
    let tail: String = s.chars().skip(skip).collect();
    format!("…{tail}")
}

/// The result object of `probe`: `{ok, device: {kind, name, torch, triton}, properties, available}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    #[serde(default)]
    pub device: DeviceInfo,
    /// Everything else the harness reports (device properties, which devices are available).
    #[serde(flatten)]
    pub properties: serde_json::Map<String, serde_json::Value>,
}

/// `ping`'s `pool` (harness addition): how many jobs the harness runs at once, per device kind (its
/// lanes: one per device, `--cpu-workers` on the interpreter, Ray's slots; each times `--jobs-per-device`
/// jobs at once), and which kind `auto` is.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PoolInfo {
    /// `local`, `ray` or `unavailable`.
    #[serde(default, deserialize_with = "null_default")]
    pub backend: String,
    /// The kind `auto` resolves to, once the harness knows it.
    #[serde(default)]
    pub kind: Option<String>,
    /// Lanes of that kind.
    #[serde(default)]
    pub size: Option<usize>,
    #[serde(default)]
    pub kinds: std::collections::BTreeMap<String, usize>,
}

impl PoolInfo {
    /// From a `ping` result; a harness without `pool` (an older one) gives the default: one lane.
    pub fn from_ping(ping: &serde_json::Value) -> PoolInfo {
        ping.get("pool").and_then(|p| serde_json::from_value(p.clone()).ok()).unwrap_or_default()
    }

    /// The device kind a job on `device` runs on, and how many such jobs run at once (at least 1).
    pub fn lanes(&self, device: DeviceKind) -> (String, usize) {
        let kind = match device {
            DeviceKind::Auto => self.kind.clone().unwrap_or_else(|| "auto".into()),
            other => other.as_str().to_string(),
        };
        let count =
            self.kinds.get(&kind).copied().or_else(|| self.size.filter(|_| self.kind.as_deref() == Some(kind.as_str()))).unwrap_or(1);
        (kind, count.max(1))
    }
}

/// One request line of `serve` (stdio) or one HTTP request body.
#[derive(Debug, Clone, Serialize)]
pub struct Request<'a> {
    pub id: u64,
    pub command: &'a str,
    pub args: serde_json::Value,
}

/// Pull the payload out of a response object. Accepted shapes: `{"id", "result": {...}}`,
/// `{"id", "ok": false, "error": "..."}` / `{"id", "error": {...}}`, or the payload fields inline.
pub fn response_payload(mut v: serde_json::Value) -> Result<serde_json::Value, String> {
    let Some(obj) = v.as_object_mut() else {
        return Err(format!("harness answered a non-object: {v}"));
    };
    if let Some(result) = obj.remove("result")
        && !result.is_null()
    {
        return Ok(result);
    }
    if obj.get("ok").and_then(|o| o.as_bool()) == Some(false) || obj.contains_key("error") && !obj.contains_key("verdict") {
        let msg = match obj.get("error") {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(serde_json::Value::Object(e)) => e
                .get("message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| serde_json::Value::Object(e.clone()).to_string()),
            Some(other) => other.to_string(),
            None => obj.get("message").and_then(|m| m.as_str()).unwrap_or("unspecified error").to_string(),
        };
        return Err(msg);
    }
    obj.remove("id");
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_contract_example() {
        let j = r#"{"verdict": "accepted", "device": {"kind": "cuda", "name": "NVIDIA H200", "torch": "2.11.0", "triton": "3.6.0"},
 "compile": {"ok": true, "configs": [{"config": {"BLOCK_M": 128, "num_warps": 8}, "shared_bytes": 98304, "registers": 128, "spills": 0}]},
 "correctness": {"ok": true, "variants": [{"name": "ci[0]", "seeds": 3, "max_abs": 1.2e-5, "rel_err": 3.1e-6, "rtol": 1e-4, "atol": 1e-4}]},
 "guard": {"ok": true, "new_torch_ops": []},
 "timing": {"meaningful": true, "baseline_us": 41.2, "candidate_us": 22.9, "speedup": 1.80, "speedup_ci95": [1.76, 1.83], "runs": 100},
 "log": "..."}"#;
        let e: Evaluation = serde_json::from_str(j).unwrap();
        assert_eq!(e.verdict, Verdict::Accepted);
        assert_eq!(e.speedup_interval(), Some([1.76, 1.83]));
        assert_eq!(e.compile.unwrap().configs[0].shared_bytes, Some(98304));
    }

    #[test]
    fn a_ray_result_keeps_where_it_ran_and_what_was_lost() {
        let j = r#"{"verdict": "correct", "pool": {"backend": "ray", "lane": "ray:cpu#1", "node": "72cf", "retried": 1,
 "lost": [{"lane": "ray:cpu#0", "node": "72cf", "error": "ray:cpu#0 on node 72cf: ActorUnavailableError"}]}}"#;
        let e: Evaluation = serde_json::from_str(j).unwrap();
        let pool = e.pool.clone().unwrap();
        assert_eq!((pool.backend.as_str(), pool.retried, pool.lost.len()), ("ray", 1, 1));
        assert!(serde_json::to_string(&e).unwrap().contains("ActorUnavailableError"), "kept in the evidence record");
        let local: Evaluation = serde_json::from_str(r#"{"verdict": "correct"}"#).unwrap();
        assert!(local.pool.is_none() && !serde_json::to_string(&local).unwrap().contains("pool"));
    }

    #[test]
    fn a_result_names_the_device_its_timing_ran_on_and_a_rerun_alone() {
        let j = r#"{"verdict": "accepted", "device": {"kind": "cuda", "name": "NVIDIA H200", "index": "3"},
 "timing": {"meaningful": true, "speedup": 1.3, "speedup_ci95": [1.2, 1.4], "device": {"kind": "cuda", "name": "NVIDIA H200", "index": "3"}},
 "rerun_alone": "ran out of device memory beside other jobs: ..."}"#;
        let e: Evaluation = serde_json::from_str(j).unwrap();
        let device = e.timing.as_ref().and_then(|t| t.device.clone()).unwrap();
        assert_eq!(device.label(), "NVIDIA H200 #3");
        assert!(e.rerun_alone.as_deref().unwrap().contains("beside other jobs"));
        let text = serde_json::to_string(&e).unwrap();
        assert!(text.contains("rerun_alone") && text.matches("\"index\":\"3\"").count() == 2, "kept in the evidence record: {text}");
        let plain: Evaluation = serde_json::from_str(r#"{"verdict": "correct", "device": {"kind": "cpu"}}"#).unwrap();
        assert_eq!(plain.device.label(), "cpu");
        assert!(!serde_json::to_string(&plain).unwrap().contains("rerun_alone"));
    }

    #[test]
    fn payload_shapes() {
        let wrapped = serde_json::json!({"id": 1, "result": {"verdict": "correct"}});
        assert_eq!(response_payload(wrapped).unwrap()["verdict"], "correct");
        let inline = serde_json::json!({"id": 1, "verdict": "error", "message": "bad spec"});
        assert_eq!(response_payload(inline).unwrap()["message"], "bad spec");
        let failed = serde_json::json!({"id": 1, "ok": false, "error": "unknown command"});
        assert_eq!(response_payload(failed).unwrap_err(), "unknown command");
    }

    /// Every result the harness produced in `tests/fixtures/harness_results` (one per verdict, made by
    /// `tests/harness/capture_results.py`), plus the contract's GPU-only shapes: each parses, keeps
    /// its verdict, and has a message for people.
    #[test]
    fn every_verdict_the_harness_produces_parses() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/harness_results");
        let mut seen = std::collections::HashSet::new();
        for f in std::fs::read_dir(&dir).unwrap() {
            let path = f.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let e: Evaluation = serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(e.verdict.as_str(), raw["verdict"], "{}", path.display());
            assert!(!e.failure_text(400).is_empty() || e.verdict.is_correct(), "{}: nothing to show", path.display());
            seen.insert(e.verdict);
        }
        for v in [
            Verdict::Correct,
            Verdict::Incorrect,
            Verdict::CompileError,
            Verdict::RuntimeError,
            Verdict::Timeout,
            Verdict::Crashed,
            Verdict::Rejected,
            Verdict::Error,
        ] {
            assert!(seen.contains(&v), "no stored result for {v}");
        }
        for j in [
            r#"{"verdict": "slower", "device": {"kind": "cuda"}, "timing": {"meaningful": true, "speedup": 0.8, "speedup_ci95": [0.79, 0.81], "runs": 100}, "message": "correct but slower"}"#,
            r#"{"verdict": "error", "device": null, "compile": {"ok": null, "configs": []}, "correctness": {"ok": null, "variants": []}, "guard": {"ok": null, "new_torch_ops": []}, "timing": {"meaningful": false, "reason": "not measured: verdict error"}, "error": "no such device: xpu", "message": "no such device: xpu", "field": "device", "log": null}"#,
            r#"{"verdict": "incorrect", "correctness": {"ok": false, "variants": [{"name": "ci[0]", "seeds": 1, "max_abs": null, "rel_err": null, "ok": false, "reason": "NaN where the reference is finite"}]}, "timing": {"meaningful": null}}"#,
        ] {
            let e: Evaluation = serde_json::from_str(j).unwrap_or_else(|err| panic!("{j}: {err}"));
            assert!(!e.failure_text(400).is_empty());
        }
    }

    #[test]
    fn a_malformed_request_tally_is_left_out_and_the_result_kept() {
        let e: Evaluation = serde_json::from_str(
            r#"{"verdict": "correct", "elapsed": {"wall_s": 2.0, "requests": {"trusted:load": {"n": 1, "s": 0.5}, "odd": "x"}}}"#,
        )
        .unwrap();
        let x = e.elapsed.unwrap();
        assert_eq!(x.requests.len(), 1);
        assert_eq!(x.requests["trusted:load"], RequestTally { n: 1, s: 0.5 });
        let e: Evaluation = serde_json::from_str(r#"{"verdict": "correct", "elapsed": {"requests": 7}, "log": "kept"}"#).unwrap();
        assert!(e.elapsed.unwrap().requests.is_empty());
    }

    #[test]
    fn unknown_verdict_is_an_error_not_a_guess() {
        assert!(serde_json::from_str::<Evaluation>(r#"{"verdict": "great"}"#).is_err());
    }
}
