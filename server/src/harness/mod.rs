//! Client of the verification harness (`server/harness`, Python package `xeforge_harness`).
//!
//! The contract is `server/harness/README.md`; [`protocol`] types it. Two transports speak the same
//! JSON: a long-lived local `python -m xeforge_harness serve` child ([`stdio`]) or a remote harness over
//! HTTP ([`http`], `harness.url`; files sent as contents, a bearer token). Every request has a timeout; a dead or hung local harness is
//! restarted on the next request. Only the harness says "verified" (ARCHITECTURE.md invariant).
//!
//! Both take several requests at once. The harness runs as many jobs at once as its pool has lanes
//! (`ping`'s `pool`: one per device, or `--cpu-workers` on the interpreter, or Ray's slots, times
//! `--jobs-per-device`); [`Lanes`]
//! holds a job's request back until a lane is free, so that no request waits inside the harness
//! while its timeout runs. With one lane, requests go one at a time, as they always did.

pub mod http;
mod lanes;
pub mod protocol;
pub mod stdio;

pub use lanes::Lanes;
pub use protocol::{DeviceInfo, DeviceKind, EvaluateArgs, Evaluation, FileDigest, PoolInfo, Probe, Sweep, SweepArgs, Verdict};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("could not start the harness with `{python}`: {message} (set harness.python or XEFORGE_PYTHON)")]
    Spawn { python: String, message: String },
    #[error("the harness did not answer `{command}` within {seconds} s")]
    Timeout { command: String, seconds: u64 },
    #[error("the harness died: {0}")]
    Died(String),
    #[error("harness protocol error: {0}")]
    Protocol(String),
    #[error("harness HTTP error: {0}")]
    Http(String),
    /// A file to send to a remote harness could not be read.
    #[error("cannot send a file to the harness: {0}")]
    File(String),
    /// The harness answered, with an error of its own (`error` verdicts are not this: they are results).
    #[error("the harness reported: {0}")]
    Harness(String),
    /// An older harness (a remote one, say) that lacks a command; callers fall back to `evaluate`.
    #[error("the harness has no `{0}` command")]
    Unsupported(String),
}

/// How to reach a harness; from `[tool.xeforge.harness]`, CLI flags or editor settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HarnessSettings {
    /// Python interpreter; default: `$XEFORGE_PYTHON`, the binary's own environment when it holds the
    /// harness (a wheel install), the workspace's `.venv/bin/python`, `python3`.
    pub python: Option<PathBuf>,
    /// A remote harness (`http://host:port`, `https://...`); when set, no local process is started.
    pub url: Option<String>,
    /// The variable holding the remote harness's bearer token (default `XEFORGE_HARNESS_TOKEN`).
    pub token_env: Option<String>,
    /// Run the local harness's jobs on a Ray cluster (`serve --ray`): `auto`, `local`,
    /// `ray://host:10001` or `host:port`. Ignored with `url` (a remote harness has its own backend).
    pub ray: Option<String>,
    /// Interpreter lanes of the local harness (`serve --cpu-workers N`): CPU jobs judged at once.
    pub cpu_workers: Option<u32>,
    /// Jobs each device runs at once (`serve --jobs-per-device N`): their setup, compile and
    /// correctness may overlap; a timed comparison has the device to itself. Default 1.
    pub jobs_per_device: Option<u32>,
    /// Directory holding the `xeforge_harness` package; default `$XEFORGE_HARNESS_PATH`, a checkout's,
    /// none for the binary's own environment (see [`default_harness_path_for`]).
    pub harness_path: Option<PathBuf>,
    /// Python module to run (`xeforge_harness`; tests substitute a scripted fake).
    pub module: Option<String>,
    /// Environment variables never passed to the harness (the LLM key variable is added by the caller).
    pub scrub_env: Vec<String>,
    /// Extra environment for the local harness process.
    pub env: Vec<(String, String)>,
}

/// Seconds added to a candidate's own limit for starting the child and importing torch.
const STARTUP_MARGIN: Duration = Duration::from_secs(90);
/// The first `ping` (for the pool's size) waits for `serve` to start its lanes: a cold `import torch`
/// in each, which the harness allows 300 s.
const POOL_PING_TIMEOUT: Duration = Duration::from_secs(360);

pub enum Harness {
    Stdio(stdio::StdioHarness),
    Http(http::HttpHarness),
}

impl Harness {
    /// Build the client for a workspace; does not start anything yet.
    pub fn new(settings: &HarnessSettings, workspace: &Path) -> Result<Harness, HarnessError> {
        if let Some(url) = settings.url.as_deref().filter(|u| !u.trim().is_empty()) {
            return Ok(Harness::Http(http::HttpHarness::new(url, settings.token_env.as_deref())?));
        }
        let mut scrub = vec!["OPENAI_API_KEY".to_string()];
        scrub.extend(settings.scrub_env.iter().cloned());
        let python = settings.python.clone().unwrap_or_else(|| default_python(workspace));
        Ok(Harness::Stdio(stdio::StdioHarness::new(stdio::SpawnSpec {
            harness_path: settings.harness_path.clone().unwrap_or_else(|| default_harness_path_for(&python)),
            python,
            cwd: workspace.to_path_buf(),
            module: settings.module.clone().unwrap_or_else(|| "xeforge_harness".into()),
            scrub_env: scrub,
            env: settings.env.clone(),
            serve_args: serve_args(settings),
        })))
    }

    async fn call(&self, command: &str, args: serde_json::Value, timeout: Duration) -> Result<serde_json::Value, HarnessError> {
        match self {
            Harness::Stdio(h) => h.call(command, args, timeout).await,
            Harness::Http(h) => h.call(command, args, timeout).await,
        }
    }

    /// A request that runs a job on a lane of `device`: sent once a lane is free (see [`Lanes`]), so
    /// its timeout counts the job, not the wait for one.
    async fn job(
        &self,
        device: DeviceKind,
        command: &str,
        args: serde_json::Value,
        timeout: Duration,
    ) -> Result<serde_json::Value, HarnessError> {
        let pool = self.pool().await;
        let lanes = match self {
            Harness::Stdio(h) => h.lanes(),
            Harness::Http(h) => h.lanes(),
        };
        let _lane = lanes.acquire(&pool, device).await;
        self.call(command, args, timeout).await
    }

    /// How many jobs the harness runs at once, per device kind (`ping`'s `pool`, read once). A
    /// harness that does not say, or cannot be asked, gets one at a time.
    pub async fn pool(&self) -> PoolInfo {
        match self {
            Harness::Stdio(h) => h.pool().await,
            Harness::Http(h) => h.pool().await,
        }
    }

    /// How many jobs on `device` to have in flight at once: the pool's lanes for it (at least 1).
    pub async fn lanes(&self, device: DeviceKind) -> usize {
        self.pool().await.lanes(device).1
    }

    pub async fn probe(&self) -> Result<Probe, HarnessError> {
        // A probe runs on a lane like any job (on a one-device host, the only one).
        let v = self.job(DeviceKind::Auto, "probe", serde_json::json!({}), STARTUP_MARGIN).await?;
        serde_json::from_value(v).map_err(|e| HarnessError::Protocol(format!("probe result: {e}")))
    }

    pub async fn ping(&self) -> Result<(), HarnessError> {
        self.call("ping", serde_json::json!({}), STARTUP_MARGIN).await.map(|_| ())
    }

    /// Evaluate a candidate against a kernel file. `verdict: error` comes back as `Ok`: it is a result.
    pub async fn evaluate(&self, args: &EvaluateArgs) -> Result<Evaluation, HarnessError> {
        let json = serde_json::to_value(args).map_err(|e| HarnessError::Protocol(e.to_string()))?;
        let limit = Duration::from_secs(args.timeout) + STARTUP_MARGIN;
        let v = self.job(args.device, "evaluate", json, limit).await?;
        serde_json::from_value(v).map_err(|e| HarnessError::Protocol(format!("evaluate result: {e}")))
    }

    /// Judge several candidates against one trusted side (`sweep`). `Ok(Err(e))`: the harness could
    /// not set up (an `error` verdict, as `evaluate` would give it for any of them).
    pub async fn sweep(&self, args: &SweepArgs) -> Result<Result<Sweep, Evaluation>, HarnessError> {
        let json = args.to_json().map_err(|e| HarnessError::Protocol(e.to_string()))?;
        let per = args.base.timeout as f64;
        let mut limit = per * (1 + args.candidates.len()) as f64;
        if let Some(b) = args.budget_s {
            limit = limit.min(b + 2.0 * per);
        }
        let limit = Duration::from_secs_f64(limit.max(per)) + STARTUP_MARGIN;
        let v = match self.job(args.base.device, "sweep", json, limit).await {
            Err(HarnessError::Harness(m)) if m.starts_with("unknown command") => return Err(HarnessError::Unsupported("sweep".into())),
            other => other?,
        };
        // An older harness answers an unknown command with an `error` naming the field `command`.
        if v.get("field").and_then(|f| f.as_str()) == Some("command") {
            return Err(HarnessError::Unsupported("sweep".into()));
        }
        if v.get("verdict").is_some_and(|x| !x.is_null()) {
            let mut v = v;
            // A sweep lists its candidates' digests (`files.candidates`); an evaluation has one per file.
            if let Some(files) = v.get_mut("files").and_then(|f| f.as_object_mut()) {
                files.retain(|_, d| d.is_object());
            }
            let e: Evaluation = serde_json::from_value(v).map_err(|e| HarnessError::Protocol(format!("sweep result: {e}")))?;
            if e.verdict != Verdict::Error {
                return Err(HarnessError::Protocol(format!("sweep result: a `{}` verdict for the whole sweep", e.verdict)));
            }
            return Ok(Err(e));
        }
        serde_json::from_value(v).map(Ok).map_err(|e| HarnessError::Protocol(format!("sweep result: {e}")))
    }

    pub async fn shutdown(&self) {
        if let Harness::Stdio(h) = self {
            h.shutdown().await;
        }
    }

    /// One line for logs and evidence: which interpreter or URL.
    pub fn describe(&self) -> String {
        match self {
            Harness::Stdio(h) => format!("{} -m {} serve", h.spawn_spec().python.display(), h.spawn_spec().module),
            Harness::Http(h) => h.url().to_string(),
        }
    }
}

/// `$XEFORGE_PYTHON`, else the environment this binary was installed into (when it holds the harness),
/// else `<workspace>/.venv/bin/python`, else `python3` on PATH.
pub fn default_python(workspace: &Path) -> PathBuf {
    if let Some(p) = std::env::var_os("XEFORGE_PYTHON").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(p) = own_environment() {
        return p;
    }
    for dir in workspace.ancestors() {
        let venv = dir.join(".venv/bin/python");
        if venv.is_file() {
            return venv;
        }
    }
    PathBuf::from("python3")
}

/// The interpreter of the Python environment this binary was installed into, when that environment
/// also holds `xeforge_harness`: the `xeforge` wheel puts the binary beside the environment's
/// `python` and the harness in its site-packages, so one install runs with its own harness.
pub fn own_environment() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    own_environment_of(&exe)
}

fn own_environment_of(exe: &Path) -> Option<PathBuf> {
    let scripts = exe.parent()?;
    let python = ["python", "python3", "python.exe"].iter().map(|n| scripts.join(n)).find(|p| p.is_file())?;
    let prefix = scripts.parent()?;
    // POSIX: <prefix>/lib/pythonX.Y/site-packages; Windows: <prefix>/Lib/site-packages.
    let mut site = vec![prefix.join("Lib/site-packages")];
    if let Ok(entries) = std::fs::read_dir(prefix.join("lib")) {
        site.extend(entries.flatten().map(|e| e.path().join("site-packages")));
    }
    site.iter().any(|s| s.join("xeforge_harness/__init__.py").is_file()).then_some(python)
}

/// `$XEFORGE_HARNESS_PATH`, else a checkout's `server/harness` beside the binary, else none when the
/// interpreter is the binary's own environment (its installed harness is the one to run), else
/// `server/harness` of the checkout this binary was built from. A path that is not a directory is
/// not added to `PYTHONPATH`.
pub fn default_harness_path_for(python: &Path) -> PathBuf {
    if let Some(p) = std::env::var_os("XEFORGE_HARNESS_PATH").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1).take(4) {
            let cand = dir.join("server/harness");
            if cand.join("xeforge_harness").is_dir() {
                return cand;
            }
        }
    }
    if own_environment().is_some_and(|own| own == python) {
        return PathBuf::new();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("server/harness")
}

/// Options after `serve`: `--ray ADDRESS` when jobs go to a Ray cluster, `--cpu-workers N`,
/// `--jobs-per-device N`.
fn serve_args(settings: &HarnessSettings) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(address) = settings.ray.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
        out.extend(["--ray".to_string(), address.to_string()]);
    }
    if let Some(n) = settings.cpu_workers.filter(|n| *n > 1) {
        out.extend(["--cpu-workers".to_string(), n.to_string()]);
    }
    if let Some(n) = settings.jobs_per_device.filter(|n| *n > 1) {
        out.extend(["--jobs-per-device".to_string(), n.to_string()]);
    }
    out
}

/// One harness per workspace root, shared by the CLI run or the language server's stage requests.
#[derive(Default)]
pub struct HarnessRegistry {
    inner: Mutex<HashMap<(PathBuf, HarnessSettingsKey), Arc<Harness>>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct HarnessSettingsKey(
    Option<PathBuf>,
    Option<String>,
    Option<PathBuf>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<u32>,
    Option<u32>,
);

impl HarnessRegistry {
    pub fn get(&self, workspace: &Path, settings: &HarnessSettings) -> Result<Arc<Harness>, HarnessError> {
        let key = (
            workspace.to_path_buf(),
            HarnessSettingsKey(
                settings.python.clone(),
                settings.url.clone(),
                settings.harness_path.clone(),
                settings.module.clone(),
                settings.token_env.clone(),
                settings.ray.clone(),
                settings.cpu_workers,
                settings.jobs_per_device,
            ),
        );
        let mut map = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(h) = map.get(&key) {
            return Ok(h.clone());
        }
        let h = Arc::new(Harness::new(settings, workspace)?);
        map.insert(key, h.clone());
        Ok(h)
    }

    /// Every harness, for shutdown.
    pub fn all(&self) -> Vec<Arc<Harness>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).values().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::own_environment_of;
    use std::fs;

    fn touch(path: &std::path::Path) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "").unwrap();
    }

    #[test]
    fn a_wheel_install_runs_its_own_environments_harness() {
        let env = tempfile::tempdir().unwrap();
        let exe = env.path().join("bin/xeforge");
        touch(&exe);
        touch(&env.path().join("bin/python"));
        // No harness in the environment yet: not its own environment.
        assert_eq!(own_environment_of(&exe), None);
        touch(&env.path().join("lib/python3.11/site-packages/xeforge_harness/__init__.py"));
        assert_eq!(own_environment_of(&exe), Some(env.path().join("bin/python")));
    }

    #[test]
    fn a_binary_without_a_python_beside_it_has_no_own_environment() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("target/release/xeforge");
        touch(&exe);
        touch(&dir.path().join("target/lib/python3.11/site-packages/xeforge_harness/__init__.py"));
        assert_eq!(own_environment_of(&exe), None);
    }
}
