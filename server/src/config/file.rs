//! Reading one `pyproject.toml` / `xeforge.toml` into [`Settings`]. Unknown keys and bad values are
//! rejected by serde while the TOML spans are still known, so every error names file, line and key.

use super::error::ConfigError;
use super::patterns::{self, PathPatterns, PerFileIgnores};
use super::settings::{HarnessSettings, LintRun, LintSettings, LlmSettings, Settings};
use serde::{Deserialize, Deserializer, de::Error as _};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Load `path`; `Ok(None)` for a `pyproject.toml` without a `[tool.xeforge]` table.
pub fn load_file(path: &Path) -> Result<Option<Settings>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { path: path.into(), source })?;
    let is_pyproject = path.file_name().is_some_and(|n| n == super::PYPROJECT);
    parse(&text, path, is_pyproject)
}

/// Parse config text as if it were the file at `path` (relative paths resolve against its directory).
pub(crate) fn parse(text: &str, path: &Path, is_pyproject: bool) -> Result<Option<Settings>, ConfigError> {
    let raw = if is_pyproject {
        toml::from_str::<Pyproject>(text).map_err(|e| invalid(path, text, &e))?.tool.and_then(|t| t.xeforge)
    } else if wrapped_in_tool_table(text) {
        Some(toml::from_str::<Wrapped>(text).map_err(|e| invalid(path, text, &e))?.tool.xeforge)
    } else {
        Some(toml::from_str::<RawSettings>(text).map_err(|e| invalid(path, text, &e))?)
    };
    let root = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let root = if root.as_os_str().is_empty() { PathBuf::from(".") } else { root };
    let root = std::path::absolute(&root).map(|r| patterns::normalize(&r)).unwrap_or(root);
    Ok(raw.map(|r| r.into_settings(&root)))
}

/// `xeforge.toml` may hold the keys at the top level or under `[tool.xeforge]`.
fn wrapped_in_tool_table(text: &str) -> bool {
    match text.parse::<toml::Table>() {
        Ok(t) => t.len() == 1 && t.get("tool").and_then(|v| v.as_table()).is_some_and(|t| t.contains_key("xeforge")),
        Err(_) => false, // the typed parse below reports the syntax error with its position
    }
}

fn invalid(path: &Path, text: &str, e: &toml::de::Error) -> ConfigError {
    let (line, column, key) = match e.span() {
        Some(span) => {
            let start = crate::text::clamp_to_char_boundary(text, span.start);
            let before = &text[..start];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            let end = crate::text::clamp_to_char_boundary(text, span.end.max(start));
            let snippet = text[start..end].trim();
            // An unknown-key error spans the key; a bad-value error spans the value: only keep key-like text.
            let key = (!snippet.is_empty() && snippet.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '"')))
                .then(|| snippet.trim_matches('"').to_string());
            (line, column, key)
        }
        None => (1, 1, None),
    };
    let message = e.message().trim().to_string();
    let message = match message.strip_prefix("unknown field") {
        Some(rest) => format!("unknown key{rest}"),
        None => message,
    };
    ConfigError::Invalid { path: path.into(), line, column, key, message }
}

#[derive(Deserialize)]
struct Pyproject {
    tool: Option<PyprojectTool>,
}

#[derive(Deserialize)]
struct PyprojectTool {
    xeforge: Option<RawSettings>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wrapped {
    tool: WrappedTool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WrappedTool {
    xeforge: RawSettings,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawSettings {
    device: Option<String>,
    toolchain: Option<String>,
    select: Option<Vec<RuleSelector>>,
    ignore: Option<Vec<RuleSelector>>,
    per_file_ignores: Option<BTreeMap<GlobPattern, Vec<RuleSelector>>>,
    knowledge: Option<PathBuf>,
    exclude: Option<Vec<GlobPattern>>,
    lint: Option<RawLint>,
    llm: Option<RawLlm>,
    harness: Option<RawHarness>,
    /// `[tool.xeforge.problems]`: problem sizes for stages, read by `cover::problem::hints`.
    #[allow(dead_code)]
    problems: Option<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLint {
    run: Option<LintRun>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawLlm {
    url: Option<String>,
    model: Option<String>,
    api_key_env: Option<String>,
    #[serde(default, deserialize_with = "seconds")]
    timeout: Option<Duration>,
    max_tokens: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHarness {
    python: Option<PathBuf>,
    url: Option<String>,
    #[serde(rename = "token-env")]
    token_env: Option<String>,
    ray: Option<String>,
    #[serde(rename = "cpu-workers")]
    cpu_workers: Option<u32>,
    #[serde(rename = "jobs-per-device")]
    jobs_per_device: Option<u32>,
    device: Option<String>,
    #[serde(default, deserialize_with = "seconds")]
    timeout: Option<Duration>,
}

/// A timeout in seconds, integer or fractional, positive.
fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Num {
        Int(i64),
        Float(f64),
    }
    let secs = match Num::deserialize(d).map_err(|_| D::Error::custom("expected a number of seconds"))? {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    };
    if !(secs.is_finite() && secs > 0.0 && secs < 1e9) {
        return Err(D::Error::custom(format!("timeout must be a positive number of seconds, not {secs}")));
    }
    Ok(Some(Duration::from_secs_f64(secs)))
}

/// A rule code, prefix or name: checked for shape here, against the knowledge base by the caller.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct RuleSelector(String);

impl<'de> Deserialize<'de> for RuleSelector {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(D::Error::custom(format!("`{s}` is not a rule code, prefix or name (e.g. \"XF101\", \"XF1\")")));
        }
        Ok(RuleSelector(s))
    }
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct GlobPattern(String);

impl<'de> Deserialize<'de> for GlobPattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        patterns::compile(&s).map_err(|e| D::Error::custom(format!("invalid glob `{s}`: {}", e.kind())))?;
        Ok(GlobPattern(s))
    }
}

fn selectors(v: Option<Vec<RuleSelector>>) -> Option<Vec<String>> {
    v.map(|v| v.into_iter().map(|s| s.0).collect())
}

/// A path from the file: absolute as is; relative ones resolve against the config file's directory.
fn resolve(root: &Path, p: PathBuf) -> PathBuf {
    if p.is_absolute() { p } else { patterns::normalize(&root.join(p)) }
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty())
}

impl RawSettings {
    fn into_settings(self, root: &Path) -> Settings {
        // Globs were validated during deserialization, so building the sets cannot fail; fall back to
        // "no patterns" rather than panic if globset ever disagrees with itself.
        let exclude = self.exclude.map(|v| v.into_iter().map(|g| g.0).collect()).unwrap_or_default();
        let exclude = PathPatterns::new(root, exclude).unwrap_or_default();
        let pfi: Vec<(String, Vec<String>)> = self
            .per_file_ignores
            .unwrap_or_default()
            .into_iter()
            .map(|(g, codes)| (g.0, codes.into_iter().map(|c| c.0).collect()))
            .collect();
        let per_file_ignores = PerFileIgnores::new(root, pfi).unwrap_or_default();
        let lint = self.lint.map(|l| LintSettings { run: l.run }).unwrap_or_default();
        let llm = self
            .llm
            .map(|l| LlmSettings {
                url: non_empty(l.url),
                model: non_empty(l.model),
                api_key_env: non_empty(l.api_key_env),
                timeout: l.timeout,
                max_tokens: l.max_tokens,
            })
            .unwrap_or_default();
        let harness = self
            .harness
            .map(|h| HarnessSettings {
                // "python3" is looked up on PATH; ".venv/bin/python" is relative to the config file.
                python: h.python.map(|p| if p.components().count() > 1 { resolve(root, p) } else { p }),
                url: non_empty(h.url),
                token_env: non_empty(h.token_env),
                ray: non_empty(h.ray),
                cpu_workers: h.cpu_workers,
                jobs_per_device: h.jobs_per_device,
                device: non_empty(h.device),
                timeout: h.timeout,
            })
            .unwrap_or_default();
        Settings {
            device: non_empty(self.device),
            toolchain: non_empty(self.toolchain),
            select: selectors(self.select),
            ignore: selectors(self.ignore),
            per_file_ignores,
            knowledge: self.knowledge.map(|k| resolve(root, k)),
            exclude,
            lint,
            llm,
            harness,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_py(text: &str) -> Result<Option<Settings>, ConfigError> {
        parse(text, Path::new("/proj/pyproject.toml"), true)
    }

    #[test]
    fn reads_every_table_of_tool_xeforge() {
        let s = parse_py(
            r#"
[project]
name = "x"
[tool.ruff]
line-length = 100
[tool.xeforge]
device = "max-1550"
toolchain = "xpu-3.5"
select = ["XF1", "XF203"]
ignore = ["XF503"]
knowledge = "kb"
exclude = ["vendored/**"]
[tool.xeforge.per-file-ignores]
"tests/*.py" = ["XF501"]
[tool.xeforge.lint]
run = "onSave"
[tool.xeforge.llm]
url = "http://localhost:8000/v1"
model = "m"
api-key-env = "MY_KEY"
timeout = 1.5
max-tokens = 2048
[tool.xeforge.harness]
python = ".venv/bin/python"
device = "xpu"
timeout = 600
token-env = "GPU_BOX_TOKEN"
ray = "ray://head:10001"
cpu-workers = 2
jobs-per-device = 2
"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.device.as_deref(), Some("max-1550"));
        assert_eq!(s.select, Some(vec!["XF1".to_string(), "XF203".to_string()]));
        assert_eq!(s.knowledge, Some(PathBuf::from("/proj/kb")));
        assert!(s.is_excluded(Path::new("/proj/vendored/a/b.py")));
        assert_eq!(s.lint_options(Path::new("/proj/tests/t.py")).ignore, vec!["XF503", "XF501"]);
        assert_eq!(s.lint.run, Some(LintRun::OnSave));
        assert_eq!(s.llm.api_key_env(), "MY_KEY");
        assert_eq!(s.llm.timeout, Some(Duration::from_millis(1500)));
        assert_eq!(s.llm.max_tokens, Some(2048));
        assert_eq!(s.harness.python, Some(PathBuf::from("/proj/.venv/bin/python")));
        assert_eq!(s.harness.timeout, Some(Duration::from_secs(600)));
        assert_eq!(s.harness.token_env.as_deref(), Some("GPU_BOX_TOKEN"));
        assert_eq!(s.harness.ray.as_deref(), Some("ray://head:10001"));
        assert_eq!(s.harness.cpu_workers, Some(2));
        assert_eq!(s.harness.jobs_per_device, Some(2));
    }

    #[test]
    fn pyproject_without_the_table_is_not_a_config() {
        assert!(parse_py("[project]\nname = 'x'\n").unwrap().is_none());
    }

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let err = parse_py("[tool.xeforge]\ndevice = \"arc-b580\"\ndevcie = \"x\"\n").unwrap_err();
        match &err {
            ConfigError::Invalid { line, key, message, .. } => {
                assert_eq!(*line, 3);
                assert_eq!(key.as_deref(), Some("devcie"));
                assert!(message.starts_with("unknown key `devcie`"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().starts_with("/proj/pyproject.toml:3:"), "{err}");
    }

    #[test]
    fn unknown_key_in_a_subtable_is_rejected() {
        let err = parse_py("[tool.xeforge.llm]\nurl = \"u\"\napi_key_env = \"K\"\n").unwrap_err();
        assert!(matches!(&err, ConfigError::Invalid { line: 3, key: Some(k), .. } if k == "api_key_env"), "{err:?}");
    }

    #[test]
    fn bad_values_point_at_their_line() {
        for (text, line, needle) in [
            ("[tool.xeforge]\nselect = [\"XF 1\"]\n", 2, "not a rule code"),
            ("[tool.xeforge.lint]\nrun = \"always\"\n", 2, "onType"),
            ("[tool.xeforge.harness]\n\ntimeout = -3\n", 3, "positive"),
            ("[tool.xeforge]\nexclude = [\"a/[b\"]\n", 2, "invalid glob"),
            ("[tool.xeforge]\ndevice = 3\n", 2, "string"),
        ] {
            let err = parse_py(text).unwrap_err();
            match &err {
                ConfigError::Invalid { line: l, message, .. } => {
                    assert_eq!(*l, line, "{text}: {err}");
                    assert!(message.contains(needle), "{text}: {message}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn xeforge_toml_accepts_top_level_or_tool_table() {
        let p = Path::new("/proj/xeforge.toml");
        let a = parse("device = \"arc-b580\"\n", p, false).unwrap().unwrap();
        let b = parse("[tool.xeforge]\ndevice = \"arc-b580\"\n", p, false).unwrap().unwrap();
        assert_eq!(a, b);
        assert!(parse("[tool.other]\nx = 1\n", p, false).is_err());
    }

    #[test]
    fn syntax_errors_have_a_position() {
        let err = parse_py("[tool.xeforge]\ndevice = \n").unwrap_err();
        assert!(matches!(err, ConfigError::Invalid { line: 2, .. }), "{err:?}");
    }
}
