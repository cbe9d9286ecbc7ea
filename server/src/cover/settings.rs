//! Stage settings from the workspace: `[tool.xeforge.llm]` and `[tool.xeforge.harness]` in
//! `pyproject.toml`, or `[llm]` / `[harness]` in `xeforge.toml` (which wins), plus the target.

use crate::harness::HarnessSettings;
use crate::llm::LlmSettings;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct StageSettings {
    pub llm: LlmSettings,
    pub harness: HarnessSettings,
    /// Knowledge-base target ids from `[tool.xeforge] device/toolchain` (empty: defaults).
    pub device: String,
    pub toolchain: String,
    /// A knowledge overlay from `[tool.xeforge] knowledge` (relative to the file that names it).
    pub knowledge: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct SettingsError {
    pub file: String,
    pub message: String,
}

/// The nearest ancestor directory holding `xeforge.toml`, `pyproject.toml` or `.git`; else the file's own
/// directory. A directory (`xeforge optimize DIR`) is its own first candidate.
pub fn workspace_root(file: &Path) -> PathBuf {
    let abs = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let dir = if abs.is_dir() { abs } else { abs.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(".")) };
    for d in dir.ancestors() {
        if d.join("xeforge.toml").is_file() || d.join("pyproject.toml").is_file() || d.join(".git").exists() {
            return d.to_path_buf();
        }
    }
    dir
}

pub fn load(workspace: &Path) -> Result<StageSettings, SettingsError> {
    let mut s = StageSettings::default();
    let py = workspace.join("pyproject.toml");
    if let Some(t) = read(&py)?
        && let Some(x) = t.get("tool").and_then(|t| t.get("xeforge"))
    {
        apply(&mut s, x, &py)?;
    }
    let xf = workspace.join("xeforge.toml");
    if let Some(t) = read(&xf)? {
        apply(&mut s, &t, &xf)?;
    }
    Ok(s)
}

fn read(path: &Path) -> Result<Option<toml::Value>, SettingsError> {
    match std::fs::read_to_string(path) {
        Ok(text) => text
            .parse::<toml::Table>()
            .map(|t| Some(toml::Value::Table(t)))
            .map_err(|e| SettingsError { file: path.display().to_string(), message: e.to_string() }),
        Err(_) => Ok(None),
    }
}

fn apply(s: &mut StageSettings, table: &toml::Value, file: &Path) -> Result<(), SettingsError> {
    let err = |m: String| SettingsError { file: file.display().to_string(), message: m };
    let str_of = |t: &toml::Value, k: &str| t.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let num_of = |t: &toml::Value, k: &str| -> Result<Option<f64>, SettingsError> {
        match t.get(k) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) if *i >= 0 => Ok(Some(*i as f64)),
            Some(toml::Value::Float(f)) if *f >= 0.0 => Ok(Some(*f)),
            Some(other) => Err(err(format!("`{k}` must be a non-negative number, got {other}"))),
        }
    };
    if let Some(d) = str_of(table, "device") {
        s.device = d;
    }
    if let Some(t) = str_of(table, "toolchain") {
        s.toolchain = t;
    }
    if let Some(k) = str_of(table, "knowledge") {
        s.knowledge = Some(file.parent().unwrap_or(Path::new(".")).join(k));
    }
    if let Some(llm) = table.get("llm") {
        if let Some(v) = str_of(llm, "url") {
            s.llm.url = v;
        }
        if let Some(v) = str_of(llm, "model") {
            s.llm.model = v;
        }
        if let Some(v) = str_of(llm, "api-key-env") {
            s.llm.api_key_env = v;
        }
        if llm.get("api-key").is_some() {
            return Err(err(
                "[llm] api-key: keys do not belong in files; put the key in an environment variable and name it with api-key-env".into(),
            ));
        }
        if let Some(v) = num_of(llm, "timeout")? {
            s.llm.timeout = Duration::from_secs_f64(v.max(1.0));
        }
        if let Some(v) = num_of(llm, "retries")? {
            s.llm.retries = v as u32;
        }
        if let Some(v) = num_of(llm, "token-budget")? {
            s.llm.token_budget = v as u64;
        }
        if let Some(v) = num_of(llm, "temperature")? {
            s.llm.temperature = v as f32;
        }
        if let Some(v) = num_of(llm, "max-tokens")? {
            s.llm.max_reply_tokens = Some(v as u32);
        }
    }
    if let Some(h) = table.get("harness") {
        if let Some(v) = str_of(h, "python") {
            s.harness.python = Some(PathBuf::from(v));
        }
        if let Some(v) = str_of(h, "url") {
            s.harness.url = Some(v);
        }
        if let Some(v) = str_of(h, "token-env") {
            s.harness.token_env = Some(v);
        }
        if let Some(v) = str_of(h, "ray") {
            s.harness.ray = Some(v);
        }
        if let Some(v) = num_of(h, "cpu-workers")? {
            s.harness.cpu_workers = Some((v as u32).max(1));
        }
        if let Some(v) = num_of(h, "jobs-per-device")? {
            s.harness.jobs_per_device = Some((v as u32).max(1));
        }
        if h.get("token").is_some() {
            return Err(err(
                "[harness] token: tokens do not belong in files; put it in an environment variable and name it with token-env".into(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pyproject_then_xeforge_toml() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[tool.xeforge]\ndevice = \"h200\"\nknowledge = \"kb\"\n[tool.xeforge.llm]\nurl = \"http://a/v1\"\nmodel = \"m1\"\nretries = 1\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("xeforge.toml"),
            "[llm]\nmodel = \"m2\"\n[harness]\nurl = \"http://h:8000\"\ntoken-env = \"GPU_BOX_TOKEN\"\nray = \"auto\"\ncpu-workers = 2\njobs-per-device = 3\n",
        )
        .unwrap();
        let s = load(dir.path()).unwrap();
        assert_eq!((s.llm.url.as_str(), s.llm.model.as_str(), s.llm.retries), ("http://a/v1", "m2", 1));
        assert_eq!(s.harness.url.as_deref(), Some("http://h:8000"));
        assert_eq!(s.harness.token_env.as_deref(), Some("GPU_BOX_TOKEN"));
        assert_eq!(s.harness.ray.as_deref(), Some("auto"));
        assert_eq!(s.harness.cpu_workers, Some(2));
        assert_eq!(s.harness.jobs_per_device, Some(3));
        assert_eq!(s.device, "h200");
        assert_eq!(s.knowledge, Some(dir.path().join("kb")), "relative to the file that names it");
    }

    #[test]
    fn a_key_in_a_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("xeforge.toml"), "[llm]\napi-key = \"sk-123\"\n").unwrap();
        let e = load(dir.path()).unwrap_err();
        assert!(e.message.contains("api-key-env") && !e.message.contains("sk-123"));
    }
}
