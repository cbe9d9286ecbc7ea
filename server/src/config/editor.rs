//! Editor settings (LSP `initializationOptions` and `workspace/configuration` section `xeforge`),
//! camelCase as VS Code and Neovim send them. Lenient: unknown keys (e.g. `trace.server`) are ignored and
//! empty strings mean "not set", because editors send their defaults for every setting.

use super::settings::{HarnessSettings, LintRun, LintSettings, LlmSettings, Settings};
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EditorSettings {
    pub device: Option<String>,
    pub toolchain: Option<String>,
    pub select: Option<Vec<String>>,
    pub ignore: Option<Vec<String>>,
    pub knowledge: Option<String>,
    pub lint: EditorLint,
    pub llm: EditorLlm,
    pub harness: EditorHarness,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EditorLint {
    pub run: Option<LintRun>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EditorLlm {
    pub url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    /// Seconds.
    pub timeout: Option<f64>,
    pub max_tokens: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EditorHarness {
    pub python: Option<String>,
    pub url: Option<String>,
    pub token_env: Option<String>,
    pub device: Option<String>,
    /// Seconds.
    pub timeout: Option<f64>,
}

fn set(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

fn secs(s: Option<f64>) -> Option<Duration> {
    s.filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9).map(Duration::from_secs_f64)
}

fn list(v: Option<Vec<String>>) -> Option<Vec<String>> {
    // An editor's empty default list means "not set", not "select nothing".
    v.map(|v| v.into_iter().filter_map(|s| set(Some(s))).collect::<Vec<_>>()).filter(|v| !v.is_empty())
}

impl EditorSettings {
    /// From the JSON an editor sent; `null` gives the empty settings.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, serde_json::Error> {
        if value.is_null() { Ok(Self::default()) } else { Self::deserialize(value) }
    }

    /// As a settings layer to put over the project files with [`Settings::merge`].
    pub fn into_settings(self) -> Settings {
        Settings {
            device: set(self.device),
            toolchain: set(self.toolchain),
            select: list(self.select),
            ignore: list(self.ignore),
            knowledge: set(self.knowledge).map(PathBuf::from),
            lint: LintSettings { run: self.lint.run },
            llm: LlmSettings {
                url: set(self.llm.url),
                model: set(self.llm.model),
                api_key_env: set(self.llm.api_key_env),
                timeout: secs(self.llm.timeout),
                max_tokens: self.llm.max_tokens,
            },
            harness: HarnessSettings {
                python: set(self.harness.python).map(PathBuf::from),
                url: set(self.harness.url),
                token_env: set(self.harness.token_env),
                ray: None,
                cpu_workers: None,
                jobs_per_device: None,
                device: set(self.harness.device),
                timeout: secs(self.harness.timeout),
            },
            ..Settings::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn vscode_shaped_settings_layer_over_the_file() {
        let editor = EditorSettings::from_json(&json!({
            "device": "arc-b580", "toolchain": "", "lint": {"run": "onSave"},
            "llm": {"url": "http://x/v1", "apiKeyEnv": "K", "model": ""},
            "harness": {"python": "/usr/bin/python3", "url": ""},
            "trace": {"server": "verbose"}
        }))
        .unwrap()
        .into_settings();
        let file = Settings {
            toolchain: Some("xpu-3.5".into()),
            llm: LlmSettings { model: Some("file-model".into()), ..Default::default() },
            ..Default::default()
        };
        let s = file.merge(editor);
        assert_eq!(s.device.as_deref(), Some("arc-b580"));
        assert_eq!(s.toolchain.as_deref(), Some("xpu-3.5"), "empty editor string keeps the file's value");
        assert_eq!(s.llm.model.as_deref(), Some("file-model"));
        assert_eq!(s.llm.api_key_env(), "K");
        assert_eq!(s.lint_run(), LintRun::OnSave);
        assert_eq!(s.harness.python, Some(PathBuf::from("/usr/bin/python3")));
    }

    #[test]
    fn null_and_garbage() {
        assert_eq!(EditorSettings::from_json(&serde_json::Value::Null).unwrap(), EditorSettings::default());
        assert!(EditorSettings::from_json(&json!({"lint": {"run": "sometimes"}})).is_err());
    }
}
