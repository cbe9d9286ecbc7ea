//! The guard: a candidate must pass it before it costs any GPU time.
//!
//! It checks, on the source alone: the candidate parses; it changes only what the stage may change
//! (kernel bodies, decorators and configs; launch code too for launch-scope stages; never `Model`'s
//! constructor, `get_inputs`/`get_init_inputs`, or imports beyond triton/math); every original kernel
//! survives unless the stage fuses; and it introduces none of the patterns that fake results
//! (XF901 reflection, try/except fallbacks, timing and framework patches, threads, streams, result
//! caches, interpreter introspection, monkey-patching, compute ops fetched by name, tensor-keyed memos
//! and other state kept across calls, child processes and signals, native code, file writes, and work
//! deferred to exit handlers, finalizers, tracers or hooks). Each counts only past what the original
//! already had of its kind.
//! A rejection is fed back to the generator; the file is never touched.

use super::outline::{Outline, SuspectKind, slice, squash};
use crate::text::{LineIndex, TextRange};
use std::collections::BTreeMap;

/// What a stage may edit: the knowledge base's one definition.
pub use crate::knowledge::EditScope as Scope;

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
            // Report the first occurrence the original does not have (matched by source text), else the
            // first past the original's count, in source order.
            let mut old: Vec<String> =
                before.suspects.iter().filter(|s| s.kind == *kind).map(|s| squash(slice(original, s.range))).collect();
            let added = after.suspects.iter().filter(|s| s.kind == *kind).find(|s| {
                let t = squash(slice(candidate, s.range));
                match old.iter().position(|o| *o == t) {
                    Some(i) => {
                        old.swap_remove(i);
                        false
                    }
                    None => true,
                }
            });
            let s = added
                .or_else(|| after.suspects.iter().filter(|s| s.kind == *kind).nth(had.get(kind).copied().unwrap_or(0)))
                .or_else(|| after.suspects.iter().find(|s| s.kind == *kind));
            let (what, line) = s.map(|s| (s.what.clone(), line_of(s.range))).unwrap_or_default();
            let why = match kind {
                SuspectKind::Obfuscated => "reflection or dynamic code hides what the candidate calls",
                SuspectKind::TryExcept => "a fallback path can hide a failing kernel behind the reference computation",
                SuspectKind::TimingPatch => "rebinding library functions can falsify timing or results",
                SuspectKind::Threads => "concurrent work escapes the harness's timing",
                SuspectKind::Streams => "work on other streams escapes the harness's timing",
                SuspectKind::ResultCache => "results cached across calls make timing meaningless",
                SuspectKind::Introspection => {
                    "reaching `sys`, `os`, `gc`, frames, globals or a module's `__dict__` from a kernel file gives it a handle on the harness and the reference that the guard cannot follow"
                }
                SuspectKind::Monkeypatch => {
                    "`setattr`/`delattr`, `__dict__` writes and patching rebind functions of torch, triton, the harness or an imported module, which can falsify timing or results"
                }
                SuspectKind::OpByName => {
                    "looking a PyTorch compute op up by its name hides a call to the reference implementation where a Triton kernel should do the work"
                }
                SuspectKind::TensorMemo => {
                    "a lookup keyed by a tensor's id, pointer, shape, hash or values can hand back stored outputs on repeated calls, so the timed calls skip the kernel"
                }
                SuspectKind::CallState => {
                    "a module-level, `self.` or default-argument dict written inside a function keeps results between calls; the harness calls the model repeatedly and would time the replays"
                }
                SuspectKind::Processes => {
                    "forked or spawned processes and signal handlers run outside the timed call and can reach the harness"
                }
                SuspectKind::NativeCode => {
                    "`ctypes`, `cffi`, `mmap` and compiled extensions write memory and run code the guard cannot read"
                }
                SuspectKind::FileWrite => {
                    "writing, moving or deleting files can alter the harness, the reference or cached results outside the candidate"
                }
                SuspectKind::Deferred => {
                    "exit handlers, finalizers, tracers, module hooks and `__del__` run outside or around the timed call, where they can patch results or timing"
                }
                SuspectKind::HostCompute => {
                    "a Python function run per element on the host computes outside any kernel and any operator the harness records"
                }
                SuspectKind::WhereItRuns => {
                    "a condition on the device or the environment lets the code that is checked differ from the code that is timed"
                }
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
        return Err(Rejection {
            rule: "scope".into(),
            message: format!("removed `{}`: imports are outside the stage's scope", gone.text),
            line: None,
        });
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
        // By name and occurrence: a module may define a name twice under a guard (`if triton: def f
        // ... else: def f`), and an edit to the second must not hide behind the first.
        let nth = |o: &'_ Outline, name: &str, k: usize| o.functions.iter().filter(|g| g.name == name).nth(k).cloned();
        for (i, f) in before.functions.iter().enumerate().filter(|(_, f)| !f.is_kernel) {
            let k = before.functions[..i].iter().filter(|g| g.name == f.name).count();
            let same = nth(&after, &f.name, k)
                .is_some_and(|g| !g.is_kernel && squash(slice(original, f.range)) == squash(slice(candidate, g.range)));
            if !same {
                return Err(Rejection {
                    rule: "scope".into(),
                    message: format!("`{}` changed: this stage edits kernels and their configs only", f.name),
                    line: after.function(&f.name).and_then(|g| line_of(g.range)),
                });
            }
        }
        let count = |o: &Outline, name: &str| o.functions.iter().filter(|g| g.name == name).count();
        if let Some(g) = after.functions.iter().find(|g| !g.is_kernel && count(&after, &g.name) > count(&before, &g.name)) {
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
    let text_of =
        |src: &str, c: &super::outline::Class, m: &str| c.methods.iter().find(|f| f.name == m).map(|f| squash(slice(src, f.range)));
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
            message: "`class Model` changed: this stage edits kernels and their configs only (launch code belongs to launch-scope stages)"
                .into(),
            line: line_of(new.range),
        });
    }
    // Forward's signature is the call contract even when its body may change.
    let sig = |c: &super::outline::Class| {
        c.methods.iter().find(|f| f.name == "forward").map(|f| f.params.iter().map(|p| p.name.clone()).collect::<Vec<_>>())
    };
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

    /// Kernels and wrappers under a module-level guard, one wrapper defined in both branches.
    const GUARDED: &str = "import torch\n\ndef available():\n    return True\n\nif not available():\n    def run(x):\n        \
        return None\nelse:\n    import triton\n    import triton.language as tl\n\n    @triton.jit\n    def k(x_ptr, BLOCK: tl.constexpr):\n        \
        pass\n\n    def run(x):\n        k[(1,)](x, BLOCK=64)\n        return x\n";

    #[test]
    fn a_guarded_kernel_is_edited_as_a_kernel_and_a_guarded_wrapper_is_fixed() {
        let cand = GUARDED.replace("        pass\n", "        pid = tl.program_id(0)\n");
        assert_eq!(check(GUARDED, &cand, KERNELS), Ok(()));
        // The second `run`, the one that launches, is compared with the second, not hidden by the first.
        let cand = GUARDED.replace("        return x\n", "        return x * 1\n");
        let r = check(GUARDED, &cand, KERNELS).unwrap_err();
        assert!(r.rule == "scope" && r.message.contains("`run` changed"), "{r}");
        let cand = GUARDED.replace("if not available():", "if available():");
        assert!(check(GUARDED, &cand, KERNELS).unwrap_err().message.contains("module-level statements changed"));
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
        let cand = ORIGINAL.replace(
            "        k[(1,)](x, x.numel(), BLOCK=64)\n",
            "        try:\n            k[(1,)](x, x.numel(), BLOCK=64)\n        except Exception:\n            return x * 1\n",
        );
        assert_eq!(check(ORIGINAL, &cand, LAUNCH).unwrap_err().rule, "try/except fallback");
    }

    /// The candidate: ORIGINAL with `lines` (indented for `forward`) just before `return x`.
    fn in_forward(lines: &str) -> String {
        let body: String = lines.lines().map(|l| format!("        {l}\n")).collect();
        ORIGINAL.replace("        return x\n", &format!("{body}        return x\n"))
    }

    /// Every spelling is rejected under `rule`, naming the construct and saying why.
    fn rejects(rule: &str, why: &str, spellings: &[(&str, &str)]) {
        for (lines, what) in spellings {
            let r = check(ORIGINAL, &in_forward(lines), LAUNCH).expect_err(lines);
            assert_eq!(r.rule, rule, "{lines}: {r}");
            assert!(r.message.contains(why), "{lines}: {r}");
            assert!(r.message.contains(what), "{lines}: {r}");
            assert!(r.line.is_some_and(|l| l >= 15), "{lines}: {r}");
        }
    }

    #[test]
    fn interpreter_introspection_is_rejected() {
        rejects(
            "interpreter introspection",
            "handle on the harness",
            &[
                ("mods = torch.sys.modules", "torch.sys"),
                ("env = triton.os.environ", "triton.os"),
                ("g = k.fn.__globals__", "__globals__"),
                ("subs = ().__class__.__bases__[0].__subclasses__()", "__bases__"),
                ("ns = vars(torch)", "vars(torch)"),
                ("import gc\nobjs = gc.get_objects()", "gc"),
            ],
        );
    }

    #[test]
    fn monkey_patching_is_rejected() {
        rejects(
            "monkey-patching",
            "rebind functions of torch",
            &[
                ("setattr(torch.cuda.Event, 'elapsed_time', lambda a, b: 1.0)", "setattr(torch.cuda.Event"),
                ("torch.__dict__['mm'] = lambda a, b: a", "torch.__dict__['mm']"),
                ("vars(torch).update(mm=None)", "vars(torch).update"),
                ("delattr(triton.testing, 'do_bench')", "delattr"),
            ],
        );
        rejects(
            "patched timing or framework function",
            "falsify timing",
            &[
                ("torch.cuda.Event.record = lambda *a: None", "torch.cuda.Event.record"),
                ("Ev = torch.cuda.Event\nEv.elapsed_time = lambda a, b: 1.0", "Ev.elapsed_time"),
            ],
        );
    }

    #[test]
    fn compute_ops_fetched_by_name_are_rejected() {
        rejects(
            "compute op fetched by name",
            "reference implementation",
            &[
                ("y = getattr(torch, 'matmul')(x, x)", "matmul"),
                ("y = getattr(torch.ops.aten, 'addmm')", "addmm"),
                ("y = getattr(x, 'softmax')(-1)", "softmax"),
            ],
        );
        // A literal that names no op is what it always was: allowed.
        assert_eq!(check(ORIGINAL, &in_forward("dt = getattr(torch, 'float16')"), LAUNCH), Ok(()));
    }

    #[test]
    fn tensor_keyed_memos_are_rejected() {
        rejects(
            "memo keyed by tensor",
            "stored outputs on repeated calls",
            &[
                ("self._memo[id(x)] = x", "self._memo[id(x)]"),
                ("key = (x.data_ptr(), x.shape)\nif key in self._outs:\n    return self._outs[key]", "key in self._outs"),
                ("_OUTS[x.sum().item()] = x", "_OUTS[x.sum().item()]"),
            ],
        );
    }

    #[test]
    fn state_kept_across_calls_is_rejected() {
        rejects(
            "state kept across calls",
            "keeps results between calls",
            &[("n = x.numel()\nself._cache[n] = x", "self._cache[n]"), ("_RESULTS.setdefault(x.numel(), x)", "_RESULTS.setdefault")],
        );
        // A module-level dict written from forward.
        let cand = ORIGINAL
            .replace("class Model", "_memo = {}\n\nclass Model")
            .replace("        return x\n", "        _memo[x.numel()] = x\n        return x\n");
        assert_eq!(check(ORIGINAL, &cand, LAUNCH).unwrap_err().rule, "state kept across calls");
    }

    #[test]
    fn processes_native_code_file_writes_and_deferred_work_are_rejected() {
        rejects(
            "child processes or signals",
            "run outside the timed call",
            &[
                ("import signal\nsignal.signal(signal.SIGALRM, lambda *a: None)", "signal"),
                ("import subprocess\nsubprocess.run(['true'])", "subprocess"),
            ],
        );
        rejects(
            "native code or raw memory",
            "the guard cannot read",
            &[("import ctypes\nctypes.memmove(0, 0, 8)", "ctypes"), ("import mmap\nm = mmap.mmap(-1, 4096)", "mmap")],
        );
        rejects(
            "file-system writes",
            "alter the harness",
            &[
                ("open('out.bin', 'wb').write(b'')", "open(...)"),
                ("torch.save(x, 'x.pt')", "torch.save"),
                ("x.numpy().tofile('x.bin')", "tofile"),
            ],
        );
        rejects(
            "deferred or hooked work",
            "outside or around the timed call",
            &[
                ("import atexit\natexit.register(print)", "atexit"),
                ("self.register_forward_hook(lambda m, i, o: o)", "register_forward_hook"),
            ],
        );
        rejects("extra streams or graphs", "other streams", &[("torch.cuda.set_stream(torch.cuda.Stream())", "torch.cuda")]);
        let cand = ORIGINAL.replace("class Model", "class Keep:\n    def __del__(self):\n        pass\n\nclass Model");
        assert_eq!(check(ORIGINAL, &cand, LAUNCH).unwrap_err().rule, "deferred or hooked work");
    }

    #[test]
    fn ordinary_wrapper_edits_pass() {
        let cand = in_forward(
            "out = torch.empty_like(x)\nn = x.shape[0]\nblock = getattr(self, 'BLOCK', 64)\nsizes = {}\nsizes[x.shape] = n\ngrid = (triton.cdiv(n, block),)\nk[grid](out, n, BLOCK=block)",
        );
        assert_eq!(check(ORIGINAL, &cand, LAUNCH), Ok(()));
        let cand = ORIGINAL.replace("@triton.jit\n", "@triton.autotune(configs=[triton.Config({'BLOCK': 64})], key=['n'])\n@triton.jit\n").replace(
            "    pass\n",
            "    offs = tl.arange(0, BLOCK)\n    v = tl.load(x_ptr + offs, mask=offs < n)\n    tl.store(x_ptr + offs, v, mask=offs < n)\n",
        );
        assert_eq!(check(ORIGINAL, &cand, KERNELS), Ok(()));
    }

    #[test]
    fn only_what_the_candidate_adds_counts() {
        // The original's benchmark block writes files and collects garbage; keeping it is fine.
        let main = "\nif __name__ == '__main__':\n    import gc\n    gc.collect()\n    torch.save(get_inputs(), 'inputs.pt')\n    with open('timings.txt', 'w') as f:\n        f.write('0')\n";
        let original = format!("{ORIGINAL}{main}");
        let cand = original.replace("    pass\n", "    pid = tl.program_id(0)\n");
        assert_eq!(check(&original, &cand, KERNELS), Ok(()));
        // One more write than the original had is one too many, and the report points at the new one.
        let cand = original.replace("        return x\n", "        open('log.txt', 'a').write('x')\n        return x\n");
        let r = check(&original, &cand, LAUNCH).unwrap_err();
        assert_eq!(r.rule, "file-system writes");
        assert_eq!(r.line, Some(15));
    }

    #[test]
    fn broken_syntax_is_refused() {
        assert_eq!(check(ORIGINAL, "def (:\n", KERNELS).unwrap_err().rule, "syntax");
    }

    /// A red team's round against the harness (stop 47), tried on this layer too: each spelling that
    /// got past the harness's own source check is stopped here before any device time.
    #[test]
    fn the_red_teams_spellings_are_stopped_before_the_harness() {
        let mut missed = Vec::new();
        for lines in [
            "h = print.__self__.__import__('xeforge_harness.child.guard')",
            "y.map2_(x, y, lambda a, b, c: b + c)",
            "torch.autograd._toggle_collection_dynamic(False, set())",
            "exec(src)",
            "t = getattr(x, 'to' + 'list')()",
            "m = vars(__import__('sys'))['mod' + 'ules']",
            "from triton.runtime.interpreter import np",
            "if x.device.type == 'cpu':\n    x = x * 1",
            // A second round (stop 48).
            "import sys as S\nm = S.modules['xeforge_harness.child.guard']",
            "import sys\nm = getattr(sys, 'modules')",
            "import io\nb = io.BytesIO()\ntorch.save(x, b)",
            "import struct\nv = struct.unpack('f', b)",
            "n = x[0].item()",
        ] {
            let r = check(ORIGINAL, &in_forward(lines), LAUNCH);
            if r.is_ok() {
                missed.push(lines);
            }
        }
        assert!(missed.is_empty(), "passed the static guard: {missed:?}");
    }
}
