//! The problem a stage verifies, inferred from the code users write: a kernel, the wrapper that
//! launches it, and the tests or benchmarks that call the wrapper. Sources, strongest first:
//!
//! 1. a spec file (`--spec`, `<file>.yaml`): used as it is, nothing is inferred;
//! 2. `[tool.xeforge.problems]` or `# xeforge: dims ...` on the entry ([`hints`]);
//! 3. concrete calls in the same file: tests, `__main__`, parametrize, benchmark `x_vals` ([`sites`]);
//! 4. the entry's own code: shape unpacking, `.shape[i]`, asserts, allocations, hints ([`code`]).
//!
//! Data flows one way: this module writes an AI Bench spec with `entry:` and a `provenance:` section
//! ([`render`]) under `.xeforge/problems/`, and the harness reads it like any spec.

pub mod code;
pub mod entry;
pub mod hints;
mod infer;
pub mod render;
pub mod sites;
pub mod tree;
pub mod value;

pub use entry::{Entry, EntryKind};
pub use infer::infer;

use serde::Serialize;
use std::collections::BTreeMap;

/// Where a fact was read: `file:line` and the code there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    pub file: String,
    /// 1-based; 0 for a config table (no line).
    pub line: usize,
    pub code: String,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 { write!(f, "{}: {}", self.file, self.code) } else { write!(f, "{}:{}: `{}`", self.file, self.line, self.code) }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum InputKind {
    /// Sizes are dimension names; dtype `None` takes the variant's.
    /// `range`: integer values drawn in `[low, high)`, each bound a number or a dimension's name (a
    /// `randint(0, 5000)` beside a 5000-wide dimension: class indices scale with that dimension).
    Tensor { shape: Vec<String>, dtype: Option<String>, range: Option<(String, String)> },
    /// A number passed as is; its value is the dimension of the same name in each variant.
    Scalar { py: String },
    /// A tuple of sizes passed as is (`normalized_shape`): each the dimension of that name.
    Sizes { dims: Vec<String> },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Input {
    pub name: String,
    #[serde(flatten)]
    pub kind: InputKind,
    /// Where the shape (or scalar-ness) came from.
    pub origin: Option<Origin>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Variant {
    /// `ci` (small, checked) or `bench-gpu` (the largest, timed).
    pub family: String,
    pub dims: BTreeMap<String, f64>,
    pub dtype: String,
    /// Where these sizes came from.
    pub origin: String,
}

/// Something no source gives; `add` is its part of the one `# xeforge: dims` line that gives it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Missing {
    pub what: String,
    pub add: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    pub file: String,
    /// Where a `# xeforge: dims` line goes ("above `def matmul` in k.py").
    pub place: String,
    pub kernel: String,
    pub entry: Entry,
    pub inputs: Vec<Input>,
    /// Constructor arguments of a method entry's class: dimension names.
    pub inits: Vec<String>,
    pub variants: Vec<Variant>,
    /// Every fact with where it came from: `dim M`, `dtype`, `input a`, ...
    pub provenance: BTreeMap<String, String>,
    /// Said to the user, not fatal: defaulted sizes, scaled-down variants, ignored call sites.
    pub notes: Vec<String>,
    pub missing: Vec<Missing>,
    /// 0-based line where a `# xeforge: dims` line is read (above the entry's decorators or `def`),
    /// and that line's indentation.
    #[serde(skip)]
    pub hint_line: usize,
    #[serde(skip)]
    pub hint_indent: String,
}

impl Problem {
    pub fn is_complete(&self) -> bool {
        self.missing.is_empty()
    }

    /// What to ask the user for, when something is missing.
    pub fn question(&self) -> Option<Question> {
        (!self.is_complete()).then(|| Question {
            entry: self.entry.name.clone(),
            missing: self.missing.iter().map(|m| m.what.clone()).collect(),
            dims: self.missing.iter().map(|m| m.add.as_str()).collect::<Vec<_>>().join(" "),
            line: self.hint_line,
            indent: self.hint_indent.clone(),
        })
    }
}

/// The one line a stage needs from the user: `{indent}# xeforge: dims {dims}` at `line` (0-based)
/// is where the CLI reads it, so an editor that asks writes the answer there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Question {
    pub entry: String,
    pub missing: Vec<String>,
    /// A suggestion for the answer (example sizes, `<value>` where nothing suggests one).
    pub dims: String,
    pub line: usize,
    pub indent: String,
}

/// Why a file's problem cannot be handed to the harness: a message for the user and, when the user
/// can supply what is missing in one line, the question.
#[derive(Debug, Clone, PartialEq)]
pub struct Incomplete {
    pub message: String,
    pub question: Option<Question>,
}

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for Incomplete {
    fn from(message: String) -> Self {
        Incomplete { message, question: None }
    }
}

/// The spec a stage hands the harness: the user's (`given`, or `<file>.yaml` beside the file), none
/// for a file with `class Model` (the harness's own convention), else the inferred problem written to
/// `<workspace>/.xeforge/problems/<file>-<entry>.yaml`. `Err`: what is missing and the line to add.
pub fn spec_for(
    path: &std::path::Path,
    text: &str,
    kernel: Option<&str>,
    given: Option<std::path::PathBuf>,
    workspace: &std::path::Path,
) -> Result<(Option<std::path::PathBuf>, Option<Problem>), Incomplete> {
    if let Some(s) = given.or_else(|| spec_beside(path)) {
        return Ok((Some(s), None));
    }
    if super::outline::Outline::build(text).class("Model").is_some() {
        return Ok((None, None));
    }
    let p = infer(path, text, kernel)?;
    if !p.is_complete() {
        return Err(Incomplete { message: render::missing_report(&p), question: p.question() });
    }
    let dir = workspace.join(".xeforge").join("problems");
    let stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_else(|| "kernel".into());
    let safe = |s: &str| {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' }).collect::<String>()
    };
    let out = dir.join(format!("{}-{}.yaml", safe(&stem), safe(&p.entry.name)));
    std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(&out, render::spec_yaml(&p)))
        .map_err(|e| Incomplete::from(format!("{}: {e}", out.display())))?;
    Ok((Some(out), Some(p)))
}

/// `<file>.yaml` (or `.yml`) beside the file, as AI Bench pairs them.
pub fn spec_beside(path: &std::path::Path) -> Option<std::path::PathBuf> {
    ["yaml", "yml"].into_iter().map(|e| path.with_extension(e)).find(|p| p.is_file())
}
