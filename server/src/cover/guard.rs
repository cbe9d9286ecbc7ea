//! The guard: a candidate must pass it before it costs any GPU time.
//!
//! It checks, on the source alone: the candidate parses; it changes only what the stage may change
//! (kernel bodies, decorators and configs; launch code too for launch-scope stages; never `Model`'s
//! constructor, `get_inputs`/`get_init_inputs`, or imports beyond triton/math); every original kernel
//! survives unless the stage fuses; and it introduces none of the patterns that fake results
//! (XF901 reflection, try/except fallbacks, timing patches, threads, streams, result caches).
//! A rejection is fed back to the generator; the file is never touched.

use super::outline::{Outline, SuspectKind, slice, squash};
use crate::text::{LineIndex, TextRange};
use std::collections::BTreeMap;

/// What a stage may edit (from `Stage::scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Kernel bodies, decorators, configs.
    Kernels,
    /// Also launch code in the same file (fusion, persistent, algorithmic, autotune's launch kwargs).
    KernelsAndLaunch,
}

impl Scope {
    pub fn parse(s: &str) -> Scope {
        if s.contains("launch") { Scope::KernelsAndLaunch } else { Scope::Kernels }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardPolicy {
    pub scope: Scope,
    /// Original kernels may disappear (merged into others), as long as one kernel remains.
    pub allow_fusion: bool,
}

/// Why a candidate was turned away. `rule` is what the user sees first: a rule code or a category.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rejection {
    pub rule: String,
    pub message: String,
    /// 1-based line in the candidate, where there is one.
    pub line: Option<usize>,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{} (line {l}): {}", self.rule, self.message),
            None => write!(f, "{}: {}", self.rule, self.message),
        }
    }
}

/// Modules a candidate may newly import.
const ALLOWED_NEW_IMPORTS: &[&str] = &["triton", "math"];
/// Top-level functions fixed by the problem contract.
const FIXED_FUNCTIONS: &[&str] = &["get_inputs", "get_init_inputs"];

pub fn check(original: &str, candidate: &str, policy: GuardPolicy) -> Result<(), Rejection> {
    let before = Outline::build(original);
    let after = Outline::build(candidate);
    let lines = LineIndex::new(candidate);
    let line_of = |r: TextRange| Some(lines.line_of(r.start) + 1);

    if let Some(r) = after.syntax_errors.first() {
        return Err(Rejection { rule: "syntax".into(), message: "the candidate does not parse".into(), line: line_of(*r) });
    }

    // Evasion patterns first: they are the most important thing to tell the generator.
    let count = |o: &Outline| {
        let mut m: BTreeMap<SuspectKind, usize> = BTreeMap::new();
        for s in &o.suspects {
            *m.entry(s.kind).or_default() += 1;
        }
        m
    };
    let (had, has) = (count(&before), count(&after));
    for (kind, n) in &has {
        if *n > had.get(kind).copied().unwrap_or(0) {
            // Report the first occurrence past the original's count, in source order.
            let s = after.suspects.iter().filter(|s| s.kind == *kind).nth(had.get(kind).copied().unwrap_or(0)).or_else(|| after.suspects.iter().find(|s| s.kind == *kind));
            let (what, line) = s.map(|s| (s.what.clone(), line_of(s.range))).unwrap_or_default();
            let why = match kind {
                SuspectKind::Obfuscated => "reflection or dynamic code hides what the candidate calls",
                SuspectKind::TryExcept => "a fallback path can hide a failing kernel behind the reference computation",
                SuspectKind::TimingPatch => "rebinding library functions can falsify timing or results",
                SuspectKind::Threads => "concurrent work escapes the harness's timing",
                SuspectKind::Streams => "work on other streams escapes the harness's timing",
                SuspectKind::ResultCache => "results cached across calls make timing meaningless",
            };
            return Err(Rejection { rule: kind.label().into(), message: format!("`{what}`: {why}"), line });
        }
    }

    // Imports: the same, plus triton/math only.
    let old_imports: Vec<&str> = before.imports.iter().map(|i| i.text.as_str()).collect();
    for imp in &after.imports {
        if old_imports.contains(&imp.text.as_str()) {
            continue;
        }
        if let Some(bad) = imp.roots.iter().find(|r| !ALLOWED_NEW_IMPORTS.contains(&r.as_str())) {
            return Err(Rejection {
                rule: "scope".into(),
                message: format!("new import of `{bad}`: a stage may only add triton or math imports"),
                line: line_of(imp.range),
            });
        }
    }
    let new_imports: Vec<&str> = after.imports.iter().map(|i| i.text.as_str()).collect();
    if let Some(gone) = before.imports.iter().find(|i| !new_imports.contains(&i.text.as_str())) {
        // Removing imports is harmless only for unused ones; we cannot tell cheaply, so refuse.
        return Err(Rejection { rule: "scope".into(), message: format!("removed `{}`: imports are outside the stage's scope", gone.text), line: None });
    }

    // Kernels: all still there, unless the stage fuses them.
    let kept: Vec<&str> = after.kernels().map(|k| k.name.as_str()).collect();
    let missing: Vec<&str> = before.kernels().map(|k| k.name.as_str()).filter(|n| !kept.contains(n)).collect();
    if !missing.is_empty() && (!policy.allow_fusion || kept.is_empty()) {
        return Err(Rejection {
            rule: "kernel-removed".into(),
            message: format!(
                "the kernel{} {} no longer exist{}; this stage keeps every original Triton kernel",
                if missing.len() > 1 { "s" } else { "" },
                missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "),
                if missing.len() > 1 { "" } else { "s" }
            ),
            line: None,
        });
    }

    check_model(original, candidate, &before, &after, policy.scope, &line_of)?;

    for name in FIXED_FUNCTIONS {
        let (a, b) = (before.function(name), after.function(name));
        let same = match (a, b) {
            (Some(a), Some(b)) => squash(slice(original, a.range)) == squash(slice(candidate, b.range)),
            (None, None) => true,
            _ => false,
        };
        if !same {
            return Err(Rejection {
                rule: "scope".into(),
                message: format!("`{name}` changed: the problem's inputs are fixed"),
                line: b.and_then(|b| line_of(b.range)),
            });
        }
    }

    if policy.scope == Scope::Kernels {
        // Everything that is not a kernel stays as it was: helpers, launch wrappers, module constants.
        for f in before.functions.iter().filter(|f| !f.is_kernel) {
            let same = after.function(&f.name).is_some_and(|g| !g.is_kernel && squash(slice(original, f.range)) == squash(slice(candidate, g.range)));
            if !same {
                return Err(Rejection {
                    rule: "scope".into(),
                    message: format!("`{}` changed: this stage edits kernels and their configs only", f.name),
                    line: after.function(&f.name).and_then(|g| line_of(g.range)),
                });
            }
        }
        if let Some(g) = after.functions.iter().find(|g| !g.is_kernel && before.function(&g.name).is_none()) {
            return Err(Rejection {
                rule: "scope".into(),
                message: format!("new function `{}`: this stage edits kernels and their configs only", g.name),
                line: line_of(g.range),
            });
        }
        let old: Vec<&str> = before.others.iter().map(|(t, _)| t.as_str()).collect();
        let new: Vec<&str> = after.others.iter().map(|(t, _)| t.as_str()).collect();
        if old != new {
            let r = after.others.iter().find(|(t, _)| !old.contains(&t.as_str())).map(|(_, r)| *r);
            return Err(Rejection {
                rule: "scope".into(),
                message: "module-level statements changed: this stage edits kernels and their configs only".into(),
                line: r.and_then(line_of),
            });
        }
    }
    Ok(())
}

fn check_model(
    original: &str,
    candidate: &str,
    before: &Outline,
    after: &Outline,
    scope: Scope,
    line_of: &dyn Fn(TextRange) -> Option<usize>,
) -> Result<(), Rejection> {
    let Some(old) = before.class("Model") else { return Ok(()) };
    let Some(new) = after.class("Model") else {
        return Err(Rejection { rule: "scope".into(), message: "`class Model` is gone: the module interface is fixed".into(), line: None });
    };
    if old.header != new.header {
        return Err(Rejection { rule: "scope".into(), message: "`class Model`'s bases changed".into(), line: line_of(new.range) });
    }
    let text_of = |src: &str, c: &super::outline::Class, m: &str| c.methods.iter().find(|f| f.name == m).map(|f| squash(slice(src, f.range)));
    if text_of(original, old, "__init__") != text_of(candidate, new, "__init__") {
        let line = new.methods.iter().find(|f| f.name == "__init__").and_then(|f| line_of(f.range));
        return Err(Rejection {
            rule: "scope".into(),
            message: "`Model.__init__` changed: its signature, parameters and buffers are the problem's contract".into(),
            line,
        });
    }
    if scope == Scope::Kernels && squash(slice(original, old.range)) != squash(slice(candidate, new.range)) {
        return Err(Rejection {
            rule: "scope".into(),
            message: "`class Model` changed: this stage edits kernels and their configs only (launch code belongs to launch-scope stages)".into(),
            line: line_of(new.range),
        });
    }
    // Forward's signature is the call contract even when its body may change.
    let sig = |c: &super::outline::Class| c.methods.iter().find(|f| f.name == "forward").map(|f| f.params.iter().map(|p| p.name.clone()).collect::<Vec<_>>());
    if sig(old) != sig(new) {
        return Err(Rejection { rule: "scope".into(), message: "`Model.forward`'s parameters changed".into(), line: line_of(new.range) });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGINAL: &str = "import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n    pass\n\nclass Model(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n\n    def forward(self, x):\n        k[(1,)](x, x.numel(), BLOCK=64)\n        return x\n\ndef get_inputs():\n    return [torch.randn(8)]\n";
    const KERNELS: GuardPolicy = GuardPolicy { scope: Scope::Kernels, allow_fusion: false };
    const LAUNCH: GuardPolicy = GuardPolicy { scope: Scope::KernelsAndLaunch, allow_fusion: false };

    #[test]
    fn a_kernel_body_edit_passes() {
        let cand = ORIGINAL.replace("    pass\n", "    pid = tl.program_id(0)\n");
        assert_eq!(check(ORIGINAL, &cand, KERNELS), Ok(()));
    }

    #[test]
    fn launch_edits_need_a_launch_scope() {
        let cand = ORIGINAL.replace("BLOCK=64", "BLOCK=128");
        assert_eq!(check(ORIGINAL, &cand, KERNELS).unwrap_err().rule, "scope");
        assert_eq!(check(ORIGINAL, &cand, LAUNCH), Ok(()));
    }

    #[test]
    fn model_constructor_and_inputs_are_fixed() {
        let cand = ORIGINAL.replace("def __init__(self):", "def __init__(self, scale=2.0):");
        let r = check(ORIGINAL, &cand, LAUNCH).unwrap_err();
        assert!(r.message.contains("Model.__init__"), "{r}");
        let cand = ORIGINAL.replace("torch.randn(8)", "torch.randn(4)");
        assert!(check(ORIGINAL, &cand, LAUNCH).unwrap_err().message.contains("get_inputs"));
    }

    #[test]
    fn removed_kernels_and_new_imports_are_refused() {
        let cand = ORIGINAL.replace("def k(", "def k2(").replace("k[(1,)]", "k2[(1,)]");
        assert_eq!(check(ORIGINAL, &cand, LAUNCH).unwrap_err().rule, "kernel-removed");
        assert_eq!(check(ORIGINAL, &cand, GuardPolicy { scope: Scope::KernelsAndLaunch, allow_fusion: true }), Ok(()));
        let cand = ORIGINAL.replace("import torch\n", "import torch\nimport numpy\n");
        assert!(check(ORIGINAL, &cand, KERNELS).unwrap_err().message.contains("numpy"));
        let cand = ORIGINAL.replace("import torch\n", "import torch\nimport math\n");
        assert_eq!(check(ORIGINAL, &cand, KERNELS), Ok(()));
    }

    #[test]
    fn reflection_is_rejected_as_xf901_with_its_line() {
        let cand = ORIGINAL.replace("        return x\n", "        _nn = __import__('torch').nn\n        return x\n");
        let r = check(ORIGINAL, &cand, LAUNCH).unwrap_err();
        assert_eq!(r.rule, "XF901 obfuscated-call");
        assert_eq!(r.line, Some(15));
    }

    #[test]
    fn fallbacks_are_rejected() {
        let cand = ORIGINAL.replace("        k[(1,)](x, x.numel(), BLOCK=64)\n", "        try:\n            k[(1,)](x, x.numel(), BLOCK=64)\n        except Exception:\n            return x * 1\n");
        assert_eq!(check(ORIGINAL, &cand, LAUNCH).unwrap_err().rule, "try/except fallback");
    }

    #[test]
    fn broken_syntax_is_refused() {
        assert_eq!(check(ORIGINAL, "def (:\n", KERNELS).unwrap_err().rule, "syntax");
    }
}
