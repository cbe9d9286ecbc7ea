//! The Triton model of one Python file: plain data, built once per text by `model::build`
//! and read by the rules, the LSP features and the stage guard.
//!
//! Invariant: a value the analyser cannot know statically is `Value::Unknown` (or `Expr::Unknown`),
//! never a guess. Every range is a byte range into the source text the model was built from.

use crate::text::TextRange;
use serde::Serialize;

/// A statically evaluated Python value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Value {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    None,
    Tuple(Vec<Value>),
    List(Vec<Value>),
    /// A Triton dtype such as `tl.float16` (canonical name without the module: "float16").
    Dtype(String),
    Unknown,
}

impl Value {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn is_unknown(&self) -> bool {
        matches!(self, Value::Unknown)
    }
}

/// A symbolic expression kept where its value depends on per-config bindings
/// (e.g. `tl.arange(0, BLOCK_M)`, a `tl.dot` operand shape `[BLOCK_M, BLOCK_K]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Expr {
    Const(Value),
    /// A name to be looked up in a binding environment (constexpr parameter, module constant).
    Name(String),
    BinOp(BinOp, Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    /// A call the evaluator understands: `triton.next_power_of_2`, `min`, `max`, `triton.cdiv`.
    Call(String, Vec<Expr>),
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Div,
    Mod,
    Pow,
    Shl,
    Shr,
}

/// A value together with where it came from. `range` is the literal that produced the value
/// (possibly a module-level constant or a list element of a comprehension); `site` is where it is
/// used (the keyword argument or dict entry). They coincide for an inline literal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Binding {
    pub name: String,
    pub value: Value,
    /// Range of the literal that produced `value` (or of the whole expression when unknown).
    pub range: TextRange,
    /// Range of the `name=value` keyword or `'name': value` dict entry at the use site.
    pub site: TextRange,
    /// Range of the key (`name` in `name=...`, `'name'` in a dict).
    pub key_range: TextRange,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Param {
    pub name: String,
    pub range: TextRange,
    pub is_constexpr: bool,
    /// Annotation source text, e.g. "tl.constexpr", "tl.int32".
    pub annotation: Option<String>,
    pub annotation_range: Option<TextRange>,
    pub default: Option<Binding>,
}

/// One `triton.Config(...)` instance. A comprehension yields one instance per combination,
/// each with its own bindings pointing at the list elements that produced them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    /// The `triton.Config(...)` call expression.
    pub range: TextRange,
    /// Entries of the kwargs dict: kernel constexprs and backend options mixed (Intel style).
    pub kwargs: Vec<Binding>,
    /// Keyword arguments of the call itself: num_warps, num_stages, num_ctas, maxnreg, pre_hook, ...
    pub options: Vec<Binding>,
    /// The dict literal (None when the kwargs are not a literal dict).
    pub kwargs_range: Option<TextRange>,
    /// True when some kwargs could not be read (`**x`, non-literal dict).
    pub opaque: bool,
    /// Index of this instance within a comprehension expansion (0 for a plain call).
    pub instance: usize,
}

impl Config {
    /// A value given either in the kwargs dict or as a call keyword (call keyword wins, as in Triton).
    pub fn get(&self, name: &str) -> Option<&Binding> {
        self.options.iter().find(|b| b.name == name).or_else(|| self.kwargs.iter().find(|b| b.name == name))
    }
    pub fn has_option(&self, name: &str) -> bool {
        self.options.iter().any(|b| b.name == name)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Autotune {
    /// The decorator (or functional `triton.autotune(...)` call).
    pub range: TextRange,
    pub configs: Vec<Config>,
    /// False when the config list could not be fully enumerated (built by arbitrary code).
    pub configs_complete: bool,
    pub configs_range: Option<TextRange>,
    pub key: Vec<String>,
    pub has_prune_configs_by: bool,
    /// Other keyword names given (restore_value, reset_to_zero, ...), and whether `**kw` appeared.
    pub other_kwargs: Vec<String>,
    pub opaque_kwargs: bool,
    /// True for `triton.autotune(configs, key=...)(kernel)` rather than a decorator.
    pub functional: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Heuristics {
    pub range: TextRange,
    /// Names the heuristics dict supplies.
    pub names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum TlOpKind {
    /// `tl.dot(a, b, acc=None, input_precision=..., allow_tf32=...)`.
    Dot {
        /// Shapes of a and b where derivable (each dim symbolic).
        a_shape: Option<Vec<Expr>>,
        b_shape: Option<Vec<Expr>>,
        /// Element dtypes of a and b where derivable.
        a_dtype: Option<String>,
        b_dtype: Option<String>,
        /// `input_precision=` value (or "ieee" derived from `allow_tf32=False`).
        input_precision: Option<Binding>,
        allow_tf32: Option<Binding>,
        has_acc_arg: bool,
        /// `acc += tl.dot(a, b)`: the whole augmented assignment statement range.
        inplace_accumulate: Option<TextRange>,
        /// Accumulator dtype where known (from `tl.zeros(..., dtype=...)` or `out_dtype`).
        acc_dtype: Option<String>,
    },
    /// `tl.arange(start, end)`.
    Arange {
        start: Expr,
        end: Expr,
    },
    /// `tl.zeros(shape, dtype)` / `tl.full`.
    Zeros {
        shape: Vec<Expr>,
        dtype: Option<String>,
    },
    MakeBlockPtr,
    Advance,
    /// `tl.make_tensor_descriptor` (`experimental: false`) or `tl._experimental_make_tensor_descriptor`.
    MakeTensorDescriptor {
        experimental: bool,
    },
    /// A `boundary_check=` argument (on `tl.load`/`tl.store`/descriptor loads); its literal tuple.
    BoundaryCheck {
        value: Binding,
    },
    /// Any use of fp64: `tl.float64`, `.to(tl.float64)`, `dtype=tl.float64`.
    Float64,
    /// `tl.program_id(..) * stride` where `stride` is a kernel parameter that is not constexpr,
    /// feeding address arithmetic with no `.to(tl.int64)` on the path.
    Int32Offset {
        stride: String,
    },
    /// Reductions (`tl.sum`, `tl.max`, `tl.min`, `tl.reduce`, `tl.cumsum`, ...) with the reduced tensor's shape where known.
    Reduce {
        func: String,
        shape: Option<Vec<Expr>>,
        dtype: Option<String>,
    },
    /// `tl.exp` / `tl.math.exp` and other libdevice calls, kept for hover and advice.
    Math {
        func: String,
    },
    /// `tl.program_id` / `tl.num_programs`, with the axis if literal.
    ProgramId {
        axis: Option<i64>,
        num_programs: bool,
    },
    /// `tl.load`, `tl.store`, `tl.atomic_*`.
    Memory {
        func: String,
    },
    /// Any call of a `tl.*` or `triton.*` name (in `Kernel::api_calls`, not `ops`): the keyword
    /// names it passes, each with the range of the name.
    Call {
        keywords: Vec<(String, TextRange)>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TlOp {
    pub kind: TlOpKind,
    /// The whole call (or attribute) expression.
    pub range: TextRange,
    /// The callee (`tl.dot`) part, for hovers.
    pub callee_range: TextRange,
    /// Canonical callee name, e.g. "tl.dot", "tl.make_block_ptr".
    pub callee: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Kernel {
    pub name: String,
    /// Dotted path of enclosing classes/functions, e.g. "Operator.softmax_kernel".
    pub qualified_name: String,
    /// From the first decorator to the end of the body; for a kernel made by an assignment
    /// ([`MadeBy`]), from its `def` to the end of that statement.
    pub range: TextRange,
    pub def_range: TextRange,
    pub name_range: TextRange,
    pub body_range: TextRange,
    /// Range of the `@triton.jit` decorator.
    pub jit_range: TextRange,
    /// Keyword options of `@triton.jit(...)` (do_not_specialize, debug, ...).
    pub jit_options: Vec<Binding>,
    pub params: Vec<Param>,
    pub autotune: Option<Autotune>,
    pub heuristics: Vec<Heuristics>,
    pub ops: Vec<TlOp>,
    /// Every call of a `tl.*`/`triton.*` name in the body, as `TlOpKind::Call` (XF405).
    pub api_calls: Vec<TlOp>,
    /// Loops over `range(tl.program_id(0), N, tl.num_programs(0))` or a `NUM_SMS`-style program count.
    pub is_persistent: bool,
    /// The decorator chain did not parse cleanly (ERROR nodes inside the kernel).
    pub has_syntax_errors: bool,
    /// Names this kernel calls (`_attn_fwd_inner(...)`): the `@triton.jit` helpers among them are
    /// inlined into it by the compiler. Plain names, and dotted ones rooted at a name a non-Triton
    /// import binds (`h.inner(...)` after `import pkg.helpers as h`), which may name another file's helper.
    pub calls: Vec<String>,
    /// A `@triton.jit` helper it calls, directly or through others, uses `tl.dot`: set per build for
    /// the helpers of the file, and by `package` for those imported from other files.
    pub dot_in_callees: bool,
    /// Set for a kernel made by a call rather than a decorator (`add_kernel = triton.jit(_add_impl)`,
    /// as Unsloth writes them); `name` is then the name the assignment binds, which launches use.
    pub made_by: Option<MadeBy>,
}

/// The assignment that makes a kernel of an undecorated `def`: `name = triton.jit(fn)`, `name =
/// jit(fn)`, `fn = triton.jit(fn)`, each perhaps under one-argument wrappers applied as decorators
/// would be (`triton.autotune(...)(triton.heuristics(...)(triton.jit(fn)))`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MadeBy {
    /// The statement holding the assignment.
    pub statement: TextRange,
    /// The `def`'s own name: Triton's name for the kernel (`fn.__name__`), in what it launches and compiles.
    pub def_name: String,
    /// What is applied to the `def`, outermost first as decorators stack, the JIT last: each
    /// callee (`triton.autotune(...)`, `triton.jit`) and the call that applies it (`triton.jit(fn)`).
    pub chain: Vec<(TextRange, TextRange)>,
}

impl Kernel {
    /// Whether `launch` runs this kernel's autotune configs. A `k.fn[grid](...)` launch peels the
    /// outermost wrapper: the autotuner when `@triton.autotune` sits above every `@triton.heuristics`
    /// (or was applied functionally, `triton.autotune(...)(k)`).
    pub fn autotunes(&self, launch: &Launch) -> bool {
        let Some(at) = &self.autotune else { return false };
        if at.functional && !launch.via_tuner {
            return false; // `k[grid](...)` beside `fwd = triton.autotune(...)(k)`: the plain kernel
        }
        if !launch.via_fn {
            return true;
        }
        let outermost = at.functional || self.heuristics.iter().all(|h| h.range.start > at.range.start);
        !outermost
    }

    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }
    /// `tl.dot` in the kernel or in a `@triton.jit` helper it calls: the backend inlines helpers
    /// before it picks the sub-group size and the DPAS lowering.
    pub fn has_dot(&self) -> bool {
        self.dot_in_callees || self.ops.iter().any(|o| matches!(o.kind, TlOpKind::Dot { .. }))
    }
}

/// For each kernel: whether a `@triton.jit` function of the file that it calls (transitively, by
/// plain name, the innermost definition not resolved: any kernel of that name) uses `tl.dot` itself.
pub fn dot_in_callees(kernels: &[std::sync::Arc<Kernel>]) -> Vec<bool> {
    let own: Vec<bool> = kernels.iter().map(|k| k.ops.iter().any(|o| matches!(o.kind, TlOpKind::Dot { .. }))).collect();
    let graph = CallGraph::new(kernels);
    (0..kernels.len()).map(|start| graph.callees(start).into_iter().any(|c| own[c])).collect()
}

/// The file's `@triton.jit` functions by plain name, to follow the calls between them. Built once per
/// file: built again for each kernel (as it once was) it cost kernels² hash inserts on every edit.
pub struct CallGraph<'a> {
    kernels: &'a [std::sync::Arc<Kernel>],
    by_name: std::collections::HashMap<&'a str, Vec<usize>>,
}

impl<'a> CallGraph<'a> {
    pub fn new(kernels: &'a [std::sync::Arc<Kernel>]) -> Self {
        let mut by_name: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
        for (i, k) in kernels.iter().enumerate() {
            by_name.entry(k.name.as_str()).or_default().push(i);
        }
        CallGraph { kernels, by_name }
    }

    /// The names kernel `k` calls.
    pub fn calls_of(&self, k: usize) -> &'a [String] {
        self.kernels.get(k).map(|k| k.calls.as_slice()).unwrap_or_default()
    }

    /// A function of the file has this plain name.
    pub fn defines(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The kernels that kernel `start` calls, directly or through others, by plain name (any kernel
    /// of that name; `start` itself only when the calls come back to it).
    pub fn callees(&self, start: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.kernels.len()];
        let mut stack = vec![start];
        while let Some(k) = stack.pop() {
            for name in self.kernels.get(k).map(|k| k.calls.as_slice()).unwrap_or_default() {
                for &c in self.by_name.get(name.as_str()).into_iter().flatten() {
                    if !seen[c] {
                        seen[c] = true;
                        out.push(c);
                        stack.push(c);
                    }
                }
            }
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Launch {
    /// The whole `k[grid](...)` call.
    pub range: TextRange,
    /// The `k` part.
    pub target_range: TextRange,
    /// Index into `FileModel::kernels`.
    pub kernel: usize,
    /// The grid expression inside the brackets.
    pub grid_range: TextRange,
    /// Grid dims when the grid is a literal tuple/list or a lambda/def returning one.
    pub grid: Option<Vec<Expr>>,
    pub positional: usize,
    pub kwargs: Vec<Binding>,
    /// `**kwargs` present: some options are not statically known.
    pub opaque_kwargs: bool,
    /// Grid mentions a CUDA-derived count (`multi_processor_count`, `NUM_SMS`, a literal like 132).
    pub grid_uses_device_count: bool,
    /// Positional arguments bound to the kernel parameter at their position (`name` is the
    /// parameter), up to the first `*args`; lets binding sets see `k[grid](x, 1024)`.
    pub positional_args: Vec<Binding>,
    /// Launched through `k.fn[grid](...)`: the call skips the kernel's outermost wrapper (the
    /// autotuner when `@triton.autotune` is outermost), so its configs do not apply.
    pub via_fn: bool,
    /// Launched through a functional autotune's result (`fwd = triton.autotune(...)(k)`, then
    /// `fwd[grid](...)`); with a functional autotune, launching `k` itself skips the autotuner.
    pub via_tuner: bool,
    /// `k.warmup(..., grid=...)`: compiled with these options, not run; the grid is a placeholder
    /// the call requires, not a program count (the compiled kernel is launched elsewhere).
    pub warmup: bool,
}

impl Launch {
    pub fn get(&self, name: &str) -> Option<&Binding> {
        self.kwargs.iter().find(|b| b.name == name)
    }
}

/// A call XF901 looks for: `__import__`, `getattr` with a computed name, `eval`, `exec`, `importlib`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObfuscatedCall {
    pub func: String,
    pub range: TextRange,
}

/// `# xeforge: ignore[XF101, XF102]` (codes empty = all) on a line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suppression {
    /// 0-based line of the comment.
    pub line: usize,
    pub codes: Vec<String>,
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Imports {
    /// Local names bound to the `triton` module (`triton`, `tr`).
    pub triton: Vec<String>,
    /// Local names bound to `triton.language` (`tl`).
    pub language: Vec<String>,
    /// Names bound to `triton.jit`, `triton.autotune`, `triton.Config`, `triton.heuristics`: (local, canonical).
    pub names: Vec<(String, String)>,
    /// Local names bound to a libdevice module.
    pub libdevice: Vec<String>,
    /// Names bound by every other import, in document order: what a kernel's call of another
    /// file's `@triton.jit` helper goes through (`package` resolves them to files).
    pub modules: Vec<ModuleImport>,
}

/// The `local` and `name` of a `from m import *` ([`ModuleImport`]): no identifier is spelled so.
pub const STAR: &str = "*";

/// One name a non-Triton import binds: `import a.b` (local `a`, module `a`), `import a.b as h`
/// (local `h`, module `a.b`), `from ..a import f as g` (local `g`, level 2, module `a`, name `f`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModuleImport {
    pub local: String,
    /// Leading dots of a relative import (0: absolute).
    pub level: usize,
    /// The dotted module path after the dots; empty for `from . import x`.
    pub module: String,
    /// The name imported from the module (`from m import name`); None for `import m`.
    pub name: Option<String>,
}

impl ModuleImport {
    /// `from m import *`: binds every public name of `m`, none by its own name.
    pub fn is_star(&self) -> bool {
        self.local == STAR
    }
}

impl Imports {
    /// The import that binds `local` last in the file, if a non-Triton one does.
    pub fn module_binding(&self, local: &str) -> Option<&ModuleImport> {
        self.modules.iter().rev().find(|m| m.local == local)
    }

    /// The `from m import *` imports, the last first (a later one's names win).
    pub fn star_imports(&self) -> impl Iterator<Item = &ModuleImport> {
        self.modules.iter().rev().filter(|m| m.is_star())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct FileModel {
    /// Shared with the reuse cache: an unchanged kernel is not copied between versions.
    pub kernels: Vec<std::sync::Arc<Kernel>>,
    pub launches: Vec<Launch>,
    pub imports: Imports,
    pub obfuscated_calls: Vec<ObfuscatedCall>,
    pub suppressions: Vec<Suppression>,
    /// Module-level constants with a statically known value (`BLOCK = 64`, `X: tl.constexpr = tl.constexpr(4)`).
    pub constants: Vec<Binding>,
    /// The file has tree-sitter ERROR/MISSING nodes somewhere.
    pub has_syntax_errors: bool,
    /// Ranges of ERROR nodes (for the editor to show "parse error here").
    pub syntax_errors: Vec<TextRange>,
}

impl FileModel {
    pub fn is_triton(&self) -> bool {
        !self.kernels.is_empty()
    }
}
