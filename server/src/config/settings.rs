//! The typed settings shared by `xeforge check`, the language server and the stage runner.
//! Every field is optional so that layers (file < CLI < editor) merge by "the higher layer's value wins".

use super::patterns::{PathPatterns, PerFileIgnores};
use crate::lint::LintOptions;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    pub device: Option<String>,
    pub toolchain: Option<String>,
    /// Rule codes, prefixes ("XF1") or names to enable; `None` = all.
    pub select: Option<Vec<String>>,
    pub ignore: Option<Vec<String>>,
    /// Glob → codes, anchored at the directory of the config file that declared them.
    pub per_file_ignores: PerFileIgnores,
    /// Knowledge overlay directory (absolute once read from a file).
    pub knowledge: Option<PathBuf>,
    /// Paths skipped when walking directories (files named on the command line are still checked).
    pub exclude: PathPatterns,
    pub lint: LintSettings,
    pub llm: LlmSettings,
    pub harness: HarnessSettings,
}

/// When the language server lints: on every change (debounced) or only on save.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
pub enum LintRun {
    #[default]
    #[serde(rename = "onType")]
    OnType,
    #[serde(rename = "onSave")]
    OnSave,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct LintSettings {
    pub run: Option<LintRun>,
}

/// OpenAI-compatible chat-completions endpoint used by LLM-driven stages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LlmSettings {
    pub url: Option<String>,
    pub model: Option<String>,
    /// Name of the environment variable holding the API key (never the key itself).
    pub api_key_env: Option<String>,
    pub timeout: Option<Duration>,
    pub max_tokens: Option<u32>,
}

impl LlmSettings {
    pub const DEFAULT_API_KEY_ENV: &'static str = "OPENAI_API_KEY";

    pub fn api_key_env(&self) -> &str {
        self.api_key_env.as_deref().unwrap_or(Self::DEFAULT_API_KEY_ENV)
    }
}

/// The verification harness: a local `serve` process (`python`) or a remote one (`url`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HarnessSettings {
    /// Interpreter; a relative path with a separator was resolved against the config file's directory.
    pub python: Option<PathBuf>,
    pub url: Option<String>,
    /// Name of the variable holding the remote harness's bearer token (never the token itself).
    pub token_env: Option<String>,
    /// A Ray cluster for the local harness's jobs (`auto`, `local`, `ray://host:10001`, `host:port`).
    pub ray: Option<String>,
    /// Interpreter lanes of the local harness (`serve --cpu-workers N`).
    pub cpu_workers: Option<u32>,
    /// Jobs each device of the local harness runs at once (`serve --jobs-per-device N`).
    pub jobs_per_device: Option<u32>,
    /// Torch device the harness runs on ("xpu", "cuda").
    pub device: Option<String>,
    pub timeout: Option<Duration>,
}

impl Settings {
    /// Layer `higher` over `self`: every value `higher` sets wins. Used for file < CLI < editor.
    pub fn merge(self, higher: Settings) -> Settings {
        Settings {
            device: higher.device.or(self.device),
            toolchain: higher.toolchain.or(self.toolchain),
            select: higher.select.or(self.select),
            ignore: higher.ignore.or(self.ignore),
            per_file_ignores: if higher.per_file_ignores.is_empty() { self.per_file_ignores } else { higher.per_file_ignores },
            knowledge: higher.knowledge.or(self.knowledge),
            exclude: if higher.exclude.is_empty() { self.exclude } else { higher.exclude },
            lint: LintSettings { run: higher.lint.run.or(self.lint.run) },
            llm: LlmSettings {
                url: higher.llm.url.or(self.llm.url),
                model: higher.llm.model.or(self.llm.model),
                api_key_env: higher.llm.api_key_env.or(self.llm.api_key_env),
                timeout: higher.llm.timeout.or(self.llm.timeout),
                max_tokens: higher.llm.max_tokens.or(self.llm.max_tokens),
            },
            harness: HarnessSettings {
                python: higher.harness.python.or(self.harness.python),
                url: higher.harness.url.or(self.harness.url),
                token_env: higher.harness.token_env.or(self.harness.token_env),
                ray: higher.harness.ray.or(self.harness.ray),
                cpu_workers: higher.harness.cpu_workers.or(self.harness.cpu_workers),
                jobs_per_device: higher.harness.jobs_per_device.or(self.harness.jobs_per_device),
                device: higher.harness.device.or(self.harness.device),
                timeout: higher.harness.timeout.or(self.harness.timeout),
            },
        }
    }

    /// What the rule engine needs for `file`: the target, selection, and this file's per-file ignores.
    pub fn lint_options(&self, file: &Path) -> LintOptions {
        let mut ignore = self.ignore.clone().unwrap_or_default();
        for code in self.per_file_ignores.codes_for(file) {
            if !ignore.iter().any(|c| c.eq_ignore_ascii_case(code)) {
                ignore.push(code.to_string());
            }
        }
        LintOptions {
            device: self.device.clone().unwrap_or_default(),
            toolchain: self.toolchain.clone().unwrap_or_default(),
            select: self.select.clone().unwrap_or_default(),
            ignore,
        }
    }

    pub fn lint_run(&self) -> LintRun {
        self.lint.run.unwrap_or_default()
    }

    /// Whether directory walking should skip `path` (a file or directory).
    pub fn is_excluded(&self, path: &Path) -> bool {
        self.exclude.is_match(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn higher_layer_wins_field_by_field() {
        let file = Settings {
            device: Some("max-1550".into()),
            toolchain: Some("xpu-3.5".into()),
            ignore: Some(vec!["XF503".into()]),
            llm: LlmSettings { model: Some("file-model".into()), max_tokens: Some(100), ..Default::default() },
            ..Default::default()
        };
        let cli = Settings { device: Some("arc-b580".into()), ..Default::default() };
        let editor = Settings {
            llm: LlmSettings { model: Some("editor-model".into()), ..Default::default() },
            lint: LintSettings { run: Some(LintRun::OnSave) },
            ..Default::default()
        };
        let s = file.merge(cli).merge(editor);
        assert_eq!(s.device.as_deref(), Some("arc-b580"));
        assert_eq!(s.toolchain.as_deref(), Some("xpu-3.5"));
        assert_eq!(s.ignore, Some(vec!["XF503".to_string()]));
        assert_eq!(s.llm.model.as_deref(), Some("editor-model"));
        assert_eq!(s.llm.max_tokens, Some(100));
        assert_eq!(s.lint_run(), LintRun::OnSave);
        assert_eq!(s.llm.api_key_env(), "OPENAI_API_KEY");
    }

    #[test]
    fn lint_options_default_to_empty_meaning_knowledge_defaults() {
        let o = Settings::default().lint_options(Path::new("a.py"));
        assert_eq!(o, LintOptions::default());
    }
}
