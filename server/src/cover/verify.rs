//! One compiled verification of a kernel file: the harness's verdict on the file against itself and
//! what compiling said. Shared by `xeforge verify` and the language server's `xeforge.verifyCompiled`,
//! so the two ask the harness the same question and share one cache: `.xeforge/compiled/`, keyed by the
//! text, the knowledge target and the harness device, so an unchanged text costs no harness run.

use std::path::{Path, PathBuf};

use crate::harness::{DeviceKind, EvaluateArgs, Evaluation, Harness, Verdict};

/// What to verify. `text` is what the harness compiles: the file's own text, or an editor's buffer.
#[derive(Debug, Clone)]
pub struct VerifyRequest {
    /// The file's own path: the spec beside it, the inferred problem named after it.
    pub file: PathBuf,
    pub text: String,
    pub workspace: PathBuf,
    /// A spec given explicitly (else beside the file, `class Model`, or the inferred problem).
    pub spec: Option<PathBuf>,
    pub device: DeviceKind,
    pub family: Option<String>,
    pub seeds: u32,
    pub timeout: u64,
    /// The knowledge target (device, toolchain) the findings are for: part of the cache key.
    pub target: (String, String),
    /// Run the harness even when the cache has this text's result.
    pub refresh: bool,
}

impl VerifyRequest {
    pub fn new(file: PathBuf, text: String, workspace: PathBuf, target: (String, String)) -> Self {
        VerifyRequest {
            file,
            text,
            workspace,
            spec: None,
            device: DeviceKind::Auto,
            family: None,
            seeds: 3,
            timeout: 120,
            target,
            refresh: false,
        }
    }
}

/// The harness's result, and whether it came from the cache.
#[derive(Debug, Clone)]
pub struct Verified {
    pub evaluation: Evaluation,
    pub cached: bool,
}

/// Where a verification of this text for this target and harness device is kept.
pub fn cache_path(workspace: &Path, text: &str, target: (&str, &str), device: &str) -> PathBuf {
    let key = super::evidence::sha256(&format!("{}\n{}\n{}\n{text}", target.0, target.1, device));
    workspace.join(".xeforge/compiled").join(format!("{}.json", &key[..32]))
}

/// Verify `req.text` on `harness`, or read the cached result of the same text, target and device.
/// Dropping the future drops the harness request (a local `serve` child ends with it).
pub async fn verify(harness: &Harness, req: &VerifyRequest) -> Result<Verified, String> {
    // A file without a spec or `class Model` is verified through the problem the stages infer.
    let given = req.spec.clone().map(|p| std::path::absolute(&p).unwrap_or(p));
    let (spec, _) = super::problem::spec_for(&req.file, &req.text, None, given, &req.workspace).map_err(|m| m.to_string())?;
    let target = (req.target.0.as_str(), req.target.1.as_str());
    let cache = cache_path(&req.workspace, &req.text, target, req.device.as_str());
    if !req.refresh
        && let Some(e) = std::fs::read_to_string(&cache).ok().and_then(|t| serde_json::from_str::<Evaluation>(&t).ok())
    {
        return Ok(Verified { evaluation: e, cached: true });
    }
    // The harness reads files: the file itself when it holds the text, else a copy of the text
    // (an unsaved buffer) in a work directory that goes when the run ends, however it ends.
    let copy = match std::fs::read_to_string(&req.file) {
        Ok(disk) if disk == req.text => None,
        _ => Some(WorkCopy::write(&req.workspace, &req.file, &req.text)?),
    };
    let path = copy.as_ref().map_or(req.file.clone(), |c| c.file.clone());
    let mut ev = EvaluateArgs::new(path.clone(), path);
    ev.spec = spec;
    ev.device = req.device;
    ev.family = req.family.clone();
    ev.seeds = req.seeds.max(3);
    ev.timeout = req.timeout;
    // Timing a file against itself says nothing; skip it.
    ev.no_timing = true;
    let e = harness.evaluate(&ev).await.map_err(|e| e.to_string())?;
    if e.verdict != Verdict::Error {
        let _ = std::fs::create_dir_all(cache.parent().unwrap_or(Path::new(".")));
        let _ = std::fs::write(&cache, serde_json::to_string(&e).unwrap_or_default());
    }
    Ok(Verified { evaluation: e, cached: false })
}

/// A text written under `.xeforge/work/` with the file's own name, removed on drop.
struct WorkCopy {
    dir: PathBuf,
    file: PathBuf,
}

impl WorkCopy {
    fn write(workspace: &Path, file: &Path, text: &str) -> Result<WorkCopy, String> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let dir =
            workspace.join(".xeforge").join("work").join(format!("verify-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        let name = file.file_name().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("kernel.py"));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let copy = WorkCopy { file: dir.join(name), dir };
        std::fs::write(&copy.file, text).map_err(|e| format!("{}: {e}", copy.file.display()))?;
        Ok(copy)
    }
}

impl Drop for WorkCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
