//! Project configuration: `[tool.xeforge]` in `pyproject.toml` or `xeforge.toml`, discovered upward from
//! each checked path (nearest wins; `xeforge.toml` beats `pyproject.toml` in the same directory), then
//! layered: file < CLI flags < editor settings. The CLI, the language server and the stage runner all read
//! the same typed [`Settings`].
//!
//! ```toml
//! [tool.xeforge]
//! device = "arc-pro-b70"
//! toolchain = "xpu-3.7"
//! select = ["XF1", "XF2"]
//! ignore = ["XF503"]
//! exclude = ["third_party/**"]
//! knowledge = "xeforge-knowledge"       # overlay directory, relative to this file
//! [tool.xeforge.per-file-ignores]
//! "tests/**" = ["XF501"]
//! [tool.xeforge.lint]
//! run = "onSave"
//! [tool.xeforge.llm]
//! url = "http://localhost:11434/v1"
//! model = "qwen2.5-coder"
//! api-key-env = "OPENAI_API_KEY"
//! timeout = 120
//! max-tokens = 4096
//! [tool.xeforge.harness]
//! python = ".venv/bin/python"
//! device = "xpu"
//! timeout = 600
//! ```
//! In `xeforge.toml` the same keys may be written at the top level (like `ruff.toml`) or under `[tool.xeforge]`.

mod discover;
mod editor;
mod error;
mod file;
mod patterns;
mod settings;

pub use discover::{ConfigFile, ConfigResolver, PYPROJECT, XEFORGE_TOML, discover};
pub use editor::EditorSettings;
pub use error::ConfigError;
pub use file::load_file;
pub use patterns::{PathPatterns, PerFileIgnores};
pub use settings::{HarnessSettings, LintRun, LintSettings, LlmSettings, Settings};
