//! The top-level shape of a kernel file, as the stage guard and the autotune rewriter need it:
//! imports, functions (kernels flagged), classes with their methods, other statements, kernel
//! launches `k[grid](...)`, and the constructs banned in candidates. Read from the tree-sitter tree;
//! everything is a byte range into the text it was built from.

use crate::syntax::{named_children, node_text, range};
use crate::text::TextRange;
use std::collections::{HashMap, HashSet};
use std::num::NonZeroU16;
use std::sync::OnceLock;
use tree_sitter::Node;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// Normalised statement text (whitespace collapsed).
    pub text: String,
    /// Top-level modules it imports from (`torch` for `import torch.nn as nn`).
    pub roots: Vec<String>,
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub annotation: Option<String>,
    pub default: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    /// From the first decorator to the end of the body; for a kernel made by an assignment, the `def`
    /// and that statement and whatever stands between them (what a record hashes as the kernel).
    pub range: TextRange,
    /// The `def` itself (without decorators).
    pub def_range: TextRange,
    /// Each decorator's range, including the `@`.
    pub decorators: Vec<TextRange>,
    pub params: Vec<Param>,
    /// `@triton.jit` / `@jit` / `@triton.jit(...)`.
    pub is_kernel: bool,
    /// Index into `decorators` of `@triton.autotune(...)`, if any.
    pub autotune: Option<usize>,
    /// A kernel made by an assignment rather than decorators (`add_kernel = triton.jit(_add_impl)`):
    /// `name` is the name it binds (what launches use), and `decorators` the callees it applies.
    pub made: Option<MadeByCall>,
}

/// The assignment that makes a kernel of an undecorated `def` (the model's `MadeBy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MadeByCall {
    /// The `def`'s own name, which Triton gives the kernel (`fn.__name__`).
    pub def_name: String,
    /// The assignment statement.
    pub statement: TextRange,
    /// The call applying each of the function's `decorators`, in the same order: `triton.jit(_add_impl)`
    /// for `triton.jit`, `triton.autotune(...)(triton.jit(_add_impl))` for `triton.autotune(...)`.
    pub applied: Vec<TextRange>,
}

impl Function {
    /// What Triton calls the kernel in its launch records and compile metadata: the `def`'s name.
    pub fn triton_name(&self) -> &str {
        self.made.as_ref().map_or(self.name.as_str(), |m| m.def_name.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Class {
    pub name: String,
    pub range: TextRange,
    /// The `class X(bases):` header up to the colon.
    pub header: String,
    pub methods: Vec<Function>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// `None` for a positional argument.
    pub name: Option<String>,
    /// The whole argument (`num_warps=4`).
    pub range: TextRange,
    pub value: TextRange,
}

/// `kernel[grid](args)` anywhere in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSite {
    pub kernel: String,
    pub range: TextRange,
    pub grid: TextRange,
    /// The parenthesised argument list.
    pub args_range: TextRange,
    pub args: Vec<Arg>,
}

impl LaunchSite {
    /// Whether this launches `kernel`: by its name, or through a module or class (`mod.k`, `Cls.k`).
    pub fn targets(&self, kernel: &str) -> bool {
        self.kernel == kernel || self.kernel.rsplit('.').next() == Some(kernel)
    }
}

/// A construct a candidate may not introduce, with the category the guard reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspect {
    pub kind: SuspectKind,
    pub what: String,
    pub range: TextRange,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SuspectKind {
    /// XF901: `__import__`, `eval`, `exec`, computed `getattr`, `importlib`.
    Obfuscated,
    /// try/except: a candidate that falls back to the reference when its kernel fails.
    TryExcept,
    /// Rebinding attributes of timing or framework objects, or of anything a file's imports bind
    /// (`time.perf_counter = ...`, `torch.cuda.Event.record = ...`, `F.gelu = ...`).
    TimingPatch,
    Threads,
    Streams,
    /// Memoising results across calls (`functools.cache`, `lru_cache`, `cached_property`).
    ResultCache,
    /// The interpreter reached from inside: `torch.sys`, `triton.os`, `x.__globals__`, `__subclasses__`,
    /// a module's `__dict__` or `vars(torch)`, `gc`, `sys._getframe`, `inspect.stack`.
    Introspection,
    /// `setattr`/`delattr` on framework objects, `torch.__dict__[k] = v`, `vars(F).update(...)`,
    /// `del torch.mm`, `mock.patch`.
    Monkeypatch,
    /// `getattr(torch, "matmul")`: a compute op looked up by a literal name.
    OpByName,
    /// Stores and membership tests keyed by `id(x)`, `x.data_ptr()`, `x.shape`, `hash(...)`,
    /// `.item()`/`.tolist()`/`.tobytes()`; weak-key dictionaries.
    TensorMemo,
    /// Module-level, `self.` or default-argument dicts written inside a function.
    CallState,
    /// `os.fork`, `os.posix_spawn`, `os.system`, `subprocess`, `pty`, `signal`.
    Processes,
    /// `ctypes`, `cffi`, `mmap`, compiled extensions.
    NativeCode,
    /// Writing, moving or deleting files: `open(p, "w")`, `Path.write_text`, `os.remove`, `shutil`,
    /// `torch.save`, `np.save`, `tempfile`.
    FileWrite,
    /// Work run at exit, in finalizers, tracers or module hooks: `atexit`, `weakref.finalize`,
    /// `sys.settrace`, `register_forward_hook`, `__del__`.
    Deferred,
    /// A Python function run per element on the host: `Tensor.map_`, `map2_`, `apply_`.
    HostCompute,
    /// A condition on the device or the environment (`if x.device.type == "cpu"`, `x.is_cuda`,
    /// `os.environ[...]`): one path where the check runs, another where the timing does.
    WhereItRuns,
}

impl SuspectKind {
    pub fn label(self) -> &'static str {
        match self {
            SuspectKind::Obfuscated => "XF901 obfuscated-call",
            SuspectKind::TryExcept => "try/except fallback",
            SuspectKind::TimingPatch => "patched timing or framework function",
            SuspectKind::Threads => "threads or processes",
            SuspectKind::Streams => "extra streams or graphs",
            SuspectKind::ResultCache => "result caching across calls",
            SuspectKind::Introspection => "interpreter introspection",
            SuspectKind::Monkeypatch => "monkey-patching",
            SuspectKind::OpByName => "compute op fetched by name",
            SuspectKind::TensorMemo => "memo keyed by tensor",
            SuspectKind::CallState => "state kept across calls",
            SuspectKind::Processes => "child processes or signals",
            SuspectKind::NativeCode => "native code or raw memory",
            SuspectKind::FileWrite => "file-system writes",
            SuspectKind::Deferred => "deferred or hooked work",
            SuspectKind::HostCompute => "compute on the host",
            SuspectKind::WhereItRuns => "branch on where it runs",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    pub syntax_errors: Vec<TextRange>,
    pub imports: Vec<Import>,
    pub functions: Vec<Function>,
    pub classes: Vec<Class>,
    /// Other top-level statements (constants, `if __name__ == ...`), normalised text and range.
    pub others: Vec<(String, TextRange)>,
    pub launches: Vec<LaunchSite>,
    pub suspects: Vec<Suspect>,
}

impl Outline {
    pub fn build(text: &str) -> Outline {
        let tree = crate::syntax::parse(text);
        let root = tree.root_node();
        let mut o = Outline { syntax_errors: crate::syntax::error_ranges(&tree), ..Default::default() };
        // Which functions are kernels is the model's decision (imports resolved, `@cute.jit` and
        // `@gluon.jit` not Triton's, `k = triton.jit(fn)` read), so the guard, the stages and the linter agree.
        let model = crate::model::build(text, &tree);
        let kernels = Kernels {
            defs: model.kernels.iter().map(|k| k.def_range.start).collect(),
            made: model.kernels.iter().filter_map(|k| Some((k.def_range.start, (k.name.clone(), k.made_by.clone()?)))).collect(),
        };
        for stmt in named_children(root) {
            o.top_level(text, stmt, &kernels);
        }
        let mut facts = Facts::collect(text, root);
        facts.kernel_defs = kernels.defs;
        walk(root, &mut |n| o.visit(text, n, &mut facts));
        o
    }

    /// Kernels at module level, then those defined in a class body (`@staticmethod @triton.jit`).
    pub fn kernels(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().chain(self.classes.iter().flat_map(|c| &c.methods)).filter(|f| f.is_kernel)
    }

    /// Why a stage cannot run on a file that defines no kernel, naming what it launches from elsewhere
    /// (a wrapper module beside its kernels' module: the stage edits the file that defines the kernel).
    pub fn no_kernel_message(&self) -> String {
        let mut launched: Vec<&str> = self.launches.iter().map(|l| l.kernel.as_str()).filter(|k| self.function(k).is_none()).collect();
        launched.sort_unstable();
        launched.dedup();
        // `k = triton.jit(k)` is a kernel where it is a module-level assignment of a module-level
        // `def` (the model's `MadeBy`); one the model does not read as such is named here.
        let functional = self.others.iter().find_map(|(t, _)| {
            let (name, rhs) = t.split_once('=')?;
            let (_, arg) = rhs.rsplit_once("jit(")?;
            let inner = arg.split([')', ',']).next()?.trim();
            self.function(inner).map(|_| (name.trim().to_string(), inner.to_string(), t.clone()))
        });
        if let Some((name, def, stmt)) = functional {
            return format!(
                "`{name}` is made a Triton kernel by a call, `{stmt}`, which the stages cannot rewrite: they read \
                 `name = triton.jit(fn)` at module level, of a module-level `def fn` without decorators, also under \
                 `triton.heuristics(...)(...)`/`triton.autotune(...)(...)` or another wrapper of one argument; write it \
                 so, or write `@triton.jit` as a decorator above `def {def}`"
            );
        }
        match launched.as_slice() {
            [] => "the file has no Triton kernel".into(),
            names => format!(
                "the file has no Triton kernel; it launches {} from another module: run the stage on the file that \
                 defines the kernel, with a function there that launches it (a stage edits one file)",
                names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    /// The kernel launched as `name`; for one made by a call, its `def`'s name finds it too.
    pub fn kernel(&self, name: &str) -> Option<&Function> {
        self.kernels().find(|f| f.name == name).or_else(|| self.kernels().find(|f| f.triton_name() == name))
    }

    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    pub fn class(&self, name: &str) -> Option<&Class> {
        self.classes.iter().find(|c| c.name == name)
    }

    fn top_level(&mut self, text: &str, stmt: Node, kernels: &Kernels) {
        match stmt.kind() {
            "import_statement" | "import_from_statement" | "future_import_statement" => {
                self.imports.push(Import { text: squash(node_text(text, stmt)), roots: import_roots(text, stmt), range: range(stmt) })
            }
            "function_definition" | "decorated_definition" | "class_definition" => {
                let (decorators, def) = split_decorated(stmt);
                let Some(def) = def else { return };
                if def.kind() == "function_definition" {
                    self.functions.push(function(text, stmt, def, &decorators, kernels));
                } else if def.kind() == "class_definition" {
                    self.classes.push(class(text, stmt, def, kernels));
                }
            }
            // Definitions under a module-level guard (`if triton_available(): ... else: ...`, `try:
            // import triton`) are the module's too. The statement itself is kept with each of them
            // reduced to its header, so that an edit inside one is the definition's, not the guard's.
            "if_statement" | "try_statement" | "with_statement" => {
                let mut defs = Vec::new();
                guarded_defs(stmt, &mut defs);
                if defs.is_empty() {
                    self.others.push((squash(node_text(text, stmt)), range(stmt)));
                    return;
                }
                let mut masked = String::new();
                let mut at = stmt.start_byte();
                for d in &defs {
                    masked.push_str(&text[at..d.start_byte()]);
                    let (_, def) = split_decorated(*d);
                    let name = def.and_then(|f| f.child_by_field_name("name")).map_or("", |n| node_text(text, n));
                    masked.push_str(&format!("def {name}: ..."));
                    at = d.end_byte();
                    self.top_level(text, *d, kernels);
                }
                masked.push_str(&text[at..stmt.end_byte()]);
                self.others.push((squash(&masked), range(stmt)));
            }
            // The assignment that makes a kernel is the kernel's, as its decorators would be.
            _ if kernels.made.values().any(|(_, m)| m.statement == range(stmt)) => {}
            _ => self.others.push((squash(node_text(text, stmt)), range(stmt))),
        }
    }

    fn push(&mut self, kind: SuspectKind, what: String, n: Node) {
        self.suspects.push(Suspect { kind, what, range: range(n) });
    }

    fn visit(&mut self, text: &str, n: Node, facts: &mut Facts) {
        match n.kind() {
            "call" => self.visit_call(text, n, facts),
            "try_statement" => self.push(SuspectKind::TryExcept, "try:".into(), n),
            "decorator" => {
                let t = squash(node_text(text, n));
                if t.ends_with("lru_cache") || t.ends_with("functools.cache") || t == "@cache" || t.ends_with("cached_property") {
                    self.push(SuspectKind::ResultCache, t, n);
                }
            }
            "identifier" => {
                let t = node_text(text, n);
                // Module names count at each identifier; frame attributes only as attributes (`f.f_back`).
                let kind = identifier_kind(t)
                    .or_else(|| (FRAME_ATTRS.contains(&t) && is_attribute_field(n)).then_some(SuspectKind::Introspection));
                if let Some(kind) = kind {
                    let what = n.parent().filter(|p| p.kind() == "attribute").map(|p| node_text(text, p)).unwrap_or(t);
                    self.push(kind, short(&squash(what)), n);
                }
            }
            "attribute" => self.visit_attribute(text, n, facts),
            "assignment" | "augmented_assignment" => {
                if let Some(left) = n.field("left") {
                    for t in targets(left) {
                        self.visit_target(text, n, t, facts, false);
                    }
                }
            }
            "delete_statement" => {
                for c in named_children(n) {
                    for t in targets(c) {
                        self.visit_target(text, n, t, facts, true);
                    }
                }
            }
            // tree-sitter reads `type(x).__add__ = f` as a PEP 695 alias (`type X = ...`).
            "type_alias_statement" => {
                let t = squash(node_text(text, n));
                if t.starts_with("type(") || t.starts_with("type (") {
                    let target = t.split('=').next().unwrap_or("").trim();
                    self.push(SuspectKind::TimingPatch, format!("{} = ...", short(target)), n);
                }
            }
            "comparison_operator" => self.visit_membership(text, n, facts),
            "if_statement" | "elif_clause" | "while_statement" | "conditional_expression" => {
                let cond = match n.kind() {
                    "conditional_expression" => named_children(n).nth(1),
                    _ => n.child_by_field_name("condition"),
                };
                if let Some(c) = cond.filter(|c| asks_where(text, *c)) {
                    self.push(SuspectKind::WhereItRuns, short(&squash(node_text(text, c))), c);
                }
            }
            "import_statement" | "import_from_statement" => self.visit_import(text, n),
            "function_definition" if n.field("name").is_some_and(|name| node_text(text, name) == "__del__") => {
                self.push(SuspectKind::Deferred, "def __del__".into(), n);
            }
            _ => {}
        }
    }

    fn visit_call(&mut self, text: &str, n: Node, facts: &mut Facts) {
        let Some(func) = n.field("function") else { return };
        if func.kind() == "subscript"
            && let (Some(value), Some(args)) = (func.child_by_field_name("value"), n.child_by_field_name("arguments"))
        {
            let grid = bracketed(func).unwrap_or_else(|| range(func));
            self.launches.push(LaunchSite {
                kernel: node_text(text, passed_through(text, value)).to_string(),
                range: range(n),
                grid,
                args_range: range(args),
                args: arguments(text, args),
            });
        }
        let callee = squash(node_text(text, func));
        let last = callee.rsplit('.').next().unwrap_or(&callee).to_string();
        let what = format!("{}(...)", short(&callee));
        let suspect = match last.as_str() {
            "__import__" | "eval" | "exec" => Some(SuspectKind::Obfuscated),
            "getattr" if !second_arg_is_literal(text, n) => Some(SuspectKind::Obfuscated),
            "Thread" | "ThreadPoolExecutor" | "ProcessPoolExecutor" | "Process" | "Pool" => Some(SuspectKind::Threads),
            "Stream" | "CUDAGraph" | "XPUGraph" | "graph" | "stream"
                if callee.contains("torch") || last.starts_with(char::is_uppercase) || callee.starts_with("stream") =>
            {
                Some(SuspectKind::Streams)
            }
            "lru_cache" | "cache" if callee.contains("functools") || callee == last => Some(SuspectKind::ResultCache),
            _ => None,
        };
        if let Some(kind) = suspect {
            self.push(kind, what.clone(), n);
        }

        // A function imported by name (`from os import fork`) or a bare one (`fork()`); attribute
        // callees are judged as attributes.
        if func.kind() == "identifier"
            && let Some(kind) = facts.reference(text, func).and_then(|r| reference_kind(&r))
        {
            self.push(kind, what.clone(), n);
        }

        let args = n.field("arguments").filter(|a| a.kind() == "argument_list");
        let pos: Vec<Node> = args.map(positional).unwrap_or_default();
        let receiver = (func.kind() == "attribute").then(|| func.field("object")).flatten();
        let prev = facts.reference(text, func).map(|r| r.prev.to_string()).unwrap_or_default();
        let prev = prev.as_str();
        let arg_text = |a: Option<&Node>| a.map(|a| short(&squash(node_text(text, *a)))).unwrap_or_default();

        // Names looked up by string: compute ops (the reference in disguise) and interpreter escapes.
        if matches!(last.as_str(), "getattr" | "__getattribute__" | "__getattr__" | "attrgetter" | "methodcaller") {
            let name_arg = if last == "getattr" { pos.get(1) } else { pos.first() };
            if let Some(lit) = name_arg.and_then(|a| string_literal(text, *a)) {
                let names: Vec<&str> = lit.split('.').collect();
                if names.iter().any(|s| is_compute_op(s)) {
                    self.push(SuspectKind::OpByName, format!("{callee}(..., \"{}\")", short(&lit)), n);
                } else if names.iter().any(|s| {
                    ESCAPE_MODULES.contains(s)
                        || matches!(*s, "__dict__" | "modules")
                        || identifier_kind(s) == Some(SuspectKind::Introspection)
                }) {
                    self.push(SuspectKind::Introspection, format!("{callee}(..., \"{}\")", short(&lit)), n);
                }
            }
        }

        // setattr/delattr on torch, triton, the harness, anything imported, or a tensor's class.
        let mut patched = false;
        if matches!(last.as_str(), "setattr" | "delattr" | "__setattr__" | "__delattr__") {
            let on_target = pos.first().is_some_and(|t| {
                facts.target_is_protected(text, *t)
                    || string_literal(text, *t).is_some_and(|s| facts.protected(s.split('.').next().unwrap_or("")))
            });
            let on_receiver = last.starts_with("__") && receiver.is_some_and(|r| facts.target_is_protected(text, r));
            if on_target || on_receiver {
                self.push(SuspectKind::Monkeypatch, format!("{callee}({}, ...)", arg_text(pos.first())), n);
                patched = true;
            }
        }
        let via_mock = || chain(text, func).is_some_and(|c| facts.resolve(c).iter().any(|s| s == "mock"));
        if matches!(last.as_str(), "patch" | "object" | "dict" | "multiple") && ((last != "patch" && prev == "patch") || via_mock()) {
            self.push(SuspectKind::Monkeypatch, what.clone(), n);
            patched = true;
        }
        // `torch.__dict__.update(...)`, `vars(F).setdefault(...)`: writes into a module's namespace.
        if matches!(last.as_str(), "update" | "setdefault" | "pop" | "popitem" | "clear" | "__setitem__" | "__delitem__")
            && let Some(r) = receiver.filter(|r| facts.is_namespace(text, *r))
        {
            facts.consumed.insert(r.id());
            self.push(SuspectKind::Monkeypatch, what.clone(), n);
            patched = true;
        }
        if callee == "vars" && !facts.consumed.contains(&n.id()) && pos.first().is_some_and(|a| facts.target_is_protected(text, *a)) {
            self.push(SuspectKind::Introspection, format!("vars({})", arg_text(pos.first())), n);
        }

        if matches!(last.as_str(), "open" | "fdopen") && opens_for_writing(text, func, prev, &last, args, &pos) {
            self.push(SuspectKind::FileWrite, what.clone(), n);
        }

        // Memos: weak-key dictionaries, lookups by tensor keys, persistent dicts written through methods.
        let weak = matches!(last.as_str(), "WeakKeyDictionary" | "WeakValueDictionary");
        let keyed = matches!(last.as_str(), "get" | "setdefault" | "pop" | "__contains__" | "__getitem__" | "__setitem__");
        if !(weak || keyed || matches!(last.as_str(), "update")) {
            return;
        }
        let in_fn = facts.fn_of(text, n);
        let ff = in_fn.and_then(|id| facts.fns.get(&id)).filter(|ff| !ff.kernel);
        if weak && !in_fn.and_then(|id| facts.fns.get(&id)).is_some_and(|ff| ff.kernel) {
            self.push(SuspectKind::TensorMemo, what.clone(), n);
        }
        if let (Some(ff), Some(obj), false) = (ff, receiver, patched) {
            if keyed && pos.first().is_some_and(|k| tensor_key(text, *k, &ff.keys)) && !facts.local_root(ff, text, obj) {
                self.push(SuspectKind::TensorMemo, format!("{callee}({}, ...)", arg_text(pos.first())), n);
            } else if last == "setdefault" && facts.persistent(ff, text, obj, false, true) {
                self.push(SuspectKind::CallState, what.clone(), n);
            } else if matches!(last.as_str(), "update" | "__setitem__") && facts.persistent(ff, text, obj, false, false) {
                self.push(SuspectKind::CallState, what, n);
            }
        }
    }

    fn visit_attribute(&mut self, text: &str, n: Node, facts: &mut Facts) {
        let Some(attr) = n.field("attribute") else { return };
        let a = node_text(text, attr);
        let obj = n.field("object");
        let obj_text = obj.map(|o| node_text(text, o)).unwrap_or("");
        let what = || short(&squash(node_text(text, n)));
        // `torch.sys.modules`, `triton.os.environ`, `np.os.system`: the interpreter through a library.
        let torch_signal = a == "signal" && obj_text == "torch"; // `torch.signal.windows` is a real module
        let own = obj_text.rsplit('.').next() == Some(a); // `signal.signal`, `mmap.mmap`
        if ESCAPE_MODULES.contains(&a) && !matches!(obj_text, "self" | "cls") && !torch_signal && !own {
            self.push(SuspectKind::Introspection, what(), n);
        }
        if a == "__dict__" && !facts.consumed.contains(&n.id()) && obj.is_some_and(|o| facts.target_is_protected(text, o)) {
            self.push(SuspectKind::Introspection, what(), n);
        }
        if obj_text.starts_with("torch.signal") {
            return;
        }
        if let Some(kind) = facts.reference(text, n).and_then(|r| reference_kind(&r)) {
            self.push(kind, what(), n);
        }
    }

    /// One target of an assignment or `del` (`stmt`).
    fn visit_target(&mut self, text: &str, stmt: Node, t: Node, facts: &mut Facts, is_del: bool) {
        let target = short(&squash(node_text(text, t)));
        let what = if is_del { format!("del {target}") } else { format!("{target} = ...") };
        match t.kind() {
            "attribute" if facts.target_is_protected(text, t) => {
                let kind = if is_del { SuspectKind::Monkeypatch } else { SuspectKind::TimingPatch };
                self.push(kind, what, stmt);
            }
            "subscript" => {
                let Some(value) = t.field("value") else { return };
                if facts.is_namespace(text, value) {
                    facts.consumed.insert(value.id());
                    self.push(SuspectKind::Monkeypatch, what, stmt);
                    return;
                }
                if facts.target_is_protected(text, value) {
                    self.push(SuspectKind::Monkeypatch, what, stmt);
                    return;
                }
                if is_del {
                    return;
                }
                let Some(id) = facts.fn_of(text, t) else { return };
                let Some(ff) = facts.fns.get(&id).filter(|ff| !ff.kernel) else { return };
                let keys: Vec<Node> = t.fields("subscript");
                let slice_key = keys.iter().any(|k| k.kind() == "slice");
                if keys.iter().any(|k| tensor_key(text, *k, &ff.keys)) && !facts.local_root(ff, text, value) {
                    self.push(SuspectKind::TensorMemo, what, stmt);
                } else if facts.persistent(ff, text, value, slice_key, false) {
                    self.push(SuspectKind::CallState, what, stmt);
                }
            }
            _ => {}
        }
    }

    /// `key in cache` / `key not in cache` with a tensor-derived key.
    fn visit_membership(&mut self, text: &str, n: Node, facts: &mut Facts) {
        let kids: Vec<Node> = n.children(&mut n.walk()).filter(|c| !crate::syntax::is_comment(*c)).collect();
        let Some(i) = kids.iter().position(|c| matches!(c.kind(), "in" | "not in")) else { return };
        let (Some(left), Some(right)) = (i.checked_sub(1).and_then(|j| kids.get(j)), kids.get(i + 1)) else { return };
        if matches!(
            right.kind(),
            "list" | "tuple" | "set" | "dictionary" | "string" | "list_comprehension" | "set_comprehension" | "concatenated_string"
        ) {
            return;
        }
        let Some(id) = facts.fn_of(text, n) else { return };
        let Some(ff) = facts.fns.get(&id).filter(|ff| !ff.kernel) else { return };
        if tensor_key(text, *left, &ff.keys) && !facts.local_root(ff, text, *right) {
            let what = format!("{} in {}", short(&squash(node_text(text, *left))), short(&squash(node_text(text, *right))));
            self.push(SuspectKind::TensorMemo, what, n);
        }
    }

    fn visit_import(&mut self, text: &str, n: Node) {
        let what = short(&squash(node_text(text, n)));
        for root in import_roots(text, n) {
            let kind = match root.as_str() {
                "signal" | "pty" => SuspectKind::Processes,
                "mmap" => SuspectKind::NativeCode,
                _ => continue,
            };
            self.push(kind, what.clone(), n);
        }
        // `from torch import os`, `import numpy.sys`: an interpreter module through a library's namespace.
        let names: Vec<Node> = n.fields("name");
        let escapes = names.iter().any(|c| {
            let dotted = if c.kind() == "aliased_import" { c.field("name") } else { Some(*c) };
            let t = dotted.map(|d| squash(node_text(text, d))).unwrap_or_default();
            let segs: Vec<&str> = t.split('.').map(str::trim).collect();
            let skip = if n.kind() == "import_statement" { 1 } else { 0 };
            segs.iter().skip(skip).any(|s| ESCAPE_MODULES.contains(s))
        });
        // The interpreter's own module (its numpy, its builder), however it is imported.
        let t = squash(node_text(text, n));
        if t.contains("triton.runtime.interpreter") || (t.starts_with("from triton.runtime import") && t.contains("interpreter")) {
            self.push(SuspectKind::Introspection, what.clone(), n);
        }
        if escapes {
            self.push(SuspectKind::Introspection, what, n);
        }
    }
}

/// Whether a condition reads the device or the environment a call runs in.
fn asks_where(text: &str, cond: Node) -> bool {
    let mut found = false;
    walk(cond, &mut |n| {
        found |= match n.kind() {
            "attribute" => n.child_by_field_name("attribute").is_some_and(|a| {
                let a = node_text(text, a);
                matches!(a, "is_cuda" | "is_cpu" | "is_xpu" | "is_available" | "device_count" | "environ" | "getenv")
                    || (a == "type" && n.child_by_field_name("object").is_some_and(|o| node_text(text, o).ends_with("device")))
            }),
            "string" => matches!(node_text(text, n).trim_matches(['"', '\'']), "cpu" | "cuda" | "xpu" | "TRITON_INTERPRET"),
            _ => false,
        };
    });
    found
}

/// Pre-order walk of every node.
fn walk<'t>(root: Node<'t>, f: &mut impl FnMut(Node<'t>)) {
    let mut cursor = root.walk();
    loop {
        f(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

fn second_arg_is_literal(text: &str, call: Node) -> bool {
    let Some(args) = call.child_by_field_name("arguments") else { return false };
    let kids: Vec<Node> = named_children(args).collect();
    kids.get(1).is_some_and(|a| a.kind() == "string" && !node_text(text, *a).starts_with(['f', 'F']))
}

/// Field names the suspect rules ask for, resolved to grammar ids once (tree-sitter's lookup by name
/// scans every field name of the grammar on each call, and these run on most nodes).
#[rustfmt::skip]
const FIELDS: [&str; 15] = [
    "alias", "arguments", "attribute", "body", "definition", "function", "left", "module_name", "name", "object", "parameters", "right",
    "subscript", "type", "value",
];

fn field_id(name: &str) -> Option<NonZeroU16> {
    static IDS: OnceLock<Vec<Option<NonZeroU16>>> = OnceLock::new();
    let i = FIELDS.iter().position(|f| *f == name)?;
    IDS.get_or_init(|| {
        let lang = crate::syntax::language();
        FIELDS.iter().map(|f| lang.field_id_for_name(f)).collect()
    })[i]
}

trait Field<'t> {
    fn field(&self, name: &str) -> Option<Node<'t>>;
    fn fields(&self, name: &str) -> Vec<Node<'t>>;
}

impl<'t> Field<'t> for Node<'t> {
    fn field(&self, name: &str) -> Option<Node<'t>> {
        match field_id(name) {
            Some(id) => self.child_by_field_id(id.get()),
            None => self.child_by_field_name(name),
        }
    }

    fn fields(&self, name: &str) -> Vec<Node<'t>> {
        let mut cursor = self.walk();
        match field_id(name) {
            Some(id) => self.children_by_field_id(id, &mut cursor).collect(),
            None => self.children_by_field_name(name, &mut cursor).collect(),
        }
    }
}

/// Roots whose attributes a candidate may not rebind, on top of every name the file's imports bind
/// and every plain alias of one (`Event = torch.cuda.Event`). `type` stands for `type(x)`.
const FRAMEWORK_ROOTS: &[&str] = &[
    "torch",
    "triton",
    "tl",
    "F",
    "nn",
    "np",
    "numpy",
    "time",
    "timeit",
    "math",
    "sys",
    "os",
    "builtins",
    "__builtins__",
    "functools",
    "gc",
    "type",
];
/// Interpreter modules that no kernel file reaches through another module's attributes (`torch.sys`).
const ESCAPE_MODULES: &[&str] = &["sys", "os", "inspect", "signal", "posix", "nt", "pty", "mmap"];
/// Attributes that lead to globals, loaders, code objects or the class graph.
const DUNDER_ESCAPES: &[&str] = &[
    "__builtins__",
    "__globals__",
    "__subclasses__",
    "__loader__",
    "__spec__",
    "__code__",
    "__closure__",
    "__mro__",
    "__bases__",
    "__base__",
    "__defaults__",
    "__kwdefaults__",
    "__getattribute__",
];
/// Frame and traceback attributes (`sys._getframe().f_back.f_globals`).
const FRAME_ATTRS: &[&str] = &["f_back", "f_globals", "f_locals", "f_builtins", "f_code", "tb_frame", "gi_frame", "cr_frame"];
/// Methods whose result identifies a tensor's storage or contents (a memo key).
const IDENTITY_METHODS: &[&str] = &["data_ptr", "item", "tolist", "tobytes", "untyped_storage", "storage", "storage_offset", "_cdata"];
/// Calls a key may pass through and stay a key (`tuple(x.shape)`, `str(x.data_ptr())`).
const KEY_WRAPPERS: &[&str] =
    &["tuple", "str", "repr", "hash", "id", "frozenset", "list", "int", "float", "bytes", "format", "map", "join"];
/// Names a dict of results tends to have; only stores with a non-slice key count.
const CACHE_WORDS: &[&str] = &["cache", "memo", "stash", "saved", "seen"];
/// PyTorch compute functions and methods (`torch.*`, `F.*`, `Tensor.*`, `aten.*`), without leading or
/// trailing underscores.
#[rustfmt::skip]
const COMPUTE_OPS: &[&str] = &[
    "mm", "matmul", "bmm", "baddbmm", "addmm", "addmv", "addbmm", "addr", "mv", "dot", "vdot", "inner", "outer", "ger", "einsum", "tensordot", "kron",
    "chain_matmul", "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution",
    "conv_tbc", "scaled_mm", "int_mm", "softmax", "log_softmax", "softmin", "layer_norm", "native_layer_norm", "rms_norm", "group_norm",
    "native_group_norm", "batch_norm", "native_batch_norm", "instance_norm", "local_response_norm", "normalize", "scaled_dot_product_attention",
    "scaled_dot_product_flash_attention", "scaled_dot_product_efficient_attention", "flash_attention_forward", "multi_head_attention_forward", "add",
    "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "truediv", "floor_divide", "floordiv", "remainder", "fmod", "pow", "neg",
    "negative", "reciprocal", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "square", "abs", "sin", "cos", "tan", "erf",
    "erfc", "erfinv", "sum", "nansum", "mean", "nanmean", "prod", "max", "min", "amax", "amin", "aminmax", "argmax", "argmin", "maximum", "minimum",
    "norm", "var", "std", "var_mean", "std_mean", "logsumexp", "logcumsumexp", "cumsum", "cumprod", "cummax", "cummin", "sort", "argsort", "topk",
    "kthvalue", "median", "gelu", "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "silu", "mish", "hardswish", "hardsigmoid", "hardtanh",
    "softplus", "softsign", "tanh", "sigmoid", "logsigmoid", "glu", "prelu", "rrelu", "threshold", "dropout", "embedding", "embedding_bag",
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "cosine_similarity", "pairwise_distance", "cdist", "pdist", "triplet_margin_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "cosine_embedding_loss", "triu", "tril", "where", "clamp", "clip", "lerp", "addcmul", "addcdiv", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d", "interpolate", "upsample", "grid_sample", "affine_grid", "pixel_shuffle",
    "scatter_add", "scatter_reduce", "index_add", "index_reduce", "bincount", "histc", "fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2",
    "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "solve", "inv", "cholesky", "qr", "svd", "eigh", "eig", "lstsq", "det", "slogdet", "pinv",
    "matrix_power", "matrix_exp", "vector_norm", "matrix_norm", "trapezoid", "cumulative_trapezoid", "diff", "cross",
];

/// Module names flagged wherever they appear, as identifiers.
fn identifier_kind(t: &str) -> Option<SuspectKind> {
    Some(match t {
        "importlib" => SuspectKind::Obfuscated,
        "threading" | "multiprocessing" | "concurrent" | "_thread" => SuspectKind::Threads,
        "gc" | "builtins" => SuspectKind::Introspection,
        "subprocess" => SuspectKind::Processes,
        "ctypes" | "_ctypes" | "cffi" | "ctypeslib" | "cpp_extension" | "cudart" => SuspectKind::NativeCode,
        "shutil" | "tempfile" => SuspectKind::FileWrite,
        "atexit" => SuspectKind::Deferred,
        // A tensor's bytes taken apart on the host, beside a decoy launch.
        "struct" | "zipfile" => SuspectKind::HostCompute,
        _ if DUNDER_ESCAPES.contains(&t) => SuspectKind::Introspection,
        _ => return None,
    })
}

/// A dotted reference with the file's imports resolved (`from os import fork; fork` is `os.fork`):
/// its first, second-to-last and last segments and its length. An impure receiver
/// (`Path(p).write_text`) leaves `first` and `prev` empty.
struct Ref<'a> {
    first: &'a str,
    prev: &'a str,
    last: &'a str,
    len: usize,
}

/// A reference by qualified name: `os.fork`, `sys._getframe`, `torch.save`, `p.write_text`.
fn reference_kind(r: &Ref) -> Option<SuspectKind> {
    use SuspectKind::*;
    let (first, prev, last, n) = (r.first, r.prev, r.last, r.len);
    Some(match (prev, last) {
        // Probing or removing the harness's own recorders (dispatch mode, profiler) from inside the call.
        (_, "_C" | "_python_dispatch" | "_get_current_dispatch_mode" | "_len_torch_dispatch_stack" | "_pop_torch_dispatch_stack")
        | (_, "_profiler_enabled" | "_disable_profiler" | "_is_profiler_enabled" | "_get_dispatch_mode") => Introspection,
        (_, "_toggle_collection_dynamic" | "_disable_current_modes" | "_enable_profiler") => Introspection,
        (_, "map_" | "map2_" | "apply_") if n >= 2 => HostCompute,
        // A tensor's values read on the host: a memo key, a test for large inputs, a loop in Python.
        (_, "item") if n >= 2 => HostCompute,
        ("torch", "frombuffer" | "from_file") => HostCompute,
        ("torch" | "autograd", "profiler") => Introspection,
        ("", "fork" | "forkpty") if n == 1 => Processes,
        (
            "sys",
            "_getframe" | "_current_frames" | "_current_exceptions" | "modules" | "meta_path" | "path_hooks" | "path_importer_cache",
        ) => Introspection,
        ("sys", "settrace" | "setprofile" | "addaudithook" | "monitoring") => Deferred,
        (
            "inspect",
            "currentframe" | "stack" | "trace" | "getouterframes" | "getinnerframes" | "getframeinfo" | "getmembers" | "getmodule"
            | "getclosurevars",
        ) => Introspection,
        (
            "os",
            "fork" | "forkpty" | "posix_spawn" | "posix_spawnp" | "system" | "popen" | "kill" | "killpg" | "register_at_fork" | "abort"
            | "_exit",
        ) => Processes,
        ("os", l) if l.starts_with("spawn") || l.starts_with("exec") => Processes,
        (
            "os",
            "write" | "pwrite" | "writev" | "remove" | "unlink" | "rename" | "renames" | "replace" | "rmdir" | "removedirs" | "truncate"
            | "ftruncate" | "makedirs" | "mkdir" | "symlink" | "link" | "chmod" | "chown" | "utime" | "mkfifo" | "mknod" | "sendfile"
            | "copy_file_range",
        ) => FileWrite,
        ("signal" | "pty", _) => Processes,
        ("mmap", _) => NativeCode,
        ("weakref", "finalize") => Deferred,
        ("torch" | "jit" | "serialization", "save") => FileWrite,
        ("numpy" | "np", l) if l.starts_with("save") => FileWrite,
        ("pickle" | "json" | "marshal" | "yaml" | "dill" | "cloudpickle", "dump") => FileWrite,
        ("ops", "load_library") => NativeCode,
        (_, "write_text" | "write_bytes" | "touch" | "symlink_to" | "hardlink_to" | "unlink" | "rmdir" | "tofile") if n >= 2 => FileWrite,
        (_, "set_stream" | "make_graphed_callables" | "graph_pool_handle") if first == "torch" => Streams,
        (_, l) if n >= 2 && l.starts_with("register_") && l.ends_with("hook") => Deferred,
        _ => return None,
    })
}

/// A known PyTorch compute op, in any spelling `getattr` would take (`"mm"`, `"add_"`, `"__matmul__"`,
/// `"__rmul__"`, `"_softmax"`).
fn is_compute_op(name: &str) -> bool {
    let base = name.trim_matches('_');
    if base.is_empty() {
        return false;
    }
    let dunder = name.starts_with("__") && name.ends_with("__");
    COMPUTE_OPS.contains(&base) || (dunder && ["r", "i"].iter().any(|p| base.strip_prefix(p).is_some_and(|b| COMPUTE_OPS.contains(&b))))
}

/// What the suspect rules need to know about the whole file before they look at one node.
#[derive(Default)]
struct Facts {
    /// Start bytes of the definitions the model takes as kernels.
    kernel_defs: HashSet<usize>,
    /// Local name → the module path an import binds it to (`F` → `torch.nn.functional`,
    /// `testing` → `triton.testing`, `fork` → `os.fork`).
    bindings: HashMap<String, String>,
    /// Names assigned a plain reference to something protected (`Event = torch.cuda.Event`).
    aliases: HashSet<String>,
    /// Names and attribute names assigned a dict anywhere in the file (`_memo = {}`, `self._c = dict()`).
    dict_names: HashSet<String>,
    dict_attrs: HashSet<String>,
    /// Per function definition (by node id), computed on first use.
    fns: HashMap<usize, FnFacts>,
    /// Nodes already reported as part of a larger construct (the `torch.__dict__` of a write).
    consumed: HashSet<usize>,
}

impl Facts {
    fn collect(text: &str, root: Node) -> Facts {
        let mut f = Facts::default();
        let mut pairs: Vec<(String, Node)> = Vec::new();
        walk(root, &mut |n| match n.kind() {
            "import_statement" | "import_from_statement" => {
                let module = n.field("module_name").map(|m| squash(node_text(text, m)).replace(' ', ""));
                for c in n.fields("name") {
                    let (name, alias) = match c.kind() {
                        "aliased_import" => (c.field("name"), c.field("alias")),
                        _ => (Some(c), None),
                    };
                    let Some(name) = name.map(|d| squash(node_text(text, d)).replace(' ', "")) else { continue };
                    let (local, path) = match (&module, alias) {
                        (Some(m), alias) => {
                            (alias.map(|a| node_text(text, a).to_string()).unwrap_or_else(|| name.clone()), format!("{m}.{name}"))
                        }
                        (None, Some(a)) => (node_text(text, a).to_string(), name),
                        (None, None) => {
                            let first = name.split('.').next().unwrap_or("").to_string();
                            (first.clone(), first)
                        }
                    };
                    f.bindings.insert(local, path);
                }
            }
            "assignment" => {
                let (Some(left), Some(right)) = (n.field("left"), n.field("right")) else { return };
                if is_dict_value(text, right) {
                    match left.kind() {
                        "identifier" => {
                            f.dict_names.insert(node_text(text, left).to_string());
                            // A class attribute is read back as `self.name`.
                            if n.parent().and_then(|s| s.parent()).and_then(|b| b.parent()).is_some_and(|c| c.kind() == "class_definition")
                            {
                                f.dict_attrs.insert(node_text(text, left).to_string());
                            }
                        }
                        "attribute" => {
                            f.dict_attrs.insert(attr_name(text, left).to_string());
                        }
                        _ => {}
                    }
                } else if left.kind() == "identifier" {
                    pairs.push((node_text(text, left).to_string(), right));
                }
            }
            _ => {}
        });
        loop {
            let before = f.aliases.len();
            for (name, right) in &pairs {
                let hit = !f.aliases.contains(name) && expr_root(text, *right, false).is_some_and(|r| f.protected(r));
                if hit {
                    f.aliases.insert(name.clone());
                }
            }
            if f.aliases.len() == before {
                break;
            }
        }
        f
    }

    fn protected(&self, root: &str) -> bool {
        FRAMEWORK_ROOTS.contains(&root)
            || self.bindings.contains_key(root)
            || self.aliases.contains(root)
            || root.starts_with("xeforge_harness")
    }

    /// An expression whose attributes belong to a framework module, class or function: rooted at a
    /// protected name, or reaching a class through `__class__`/`type(x)`.
    fn target_is_protected(&self, text: &str, n: Node) -> bool {
        expr_root(text, n, true).is_some_and(|r| self.protected(r)) || node_text(text, n).contains("__class__")
    }

    /// `torch.__dict__`, `vars(torch)` or `globals()`: a module's namespace as a dict, written through
    /// to rebind what its names (the file's imports among them) refer to.
    fn is_namespace(&self, text: &str, n: Node) -> bool {
        match n.kind() {
            "attribute" => attr_name(text, n) == "__dict__" && n.field("object").is_some_and(|o| self.target_is_protected(text, o)),
            "call" => match n.field("function").map(|f| node_text(text, f)) {
                Some("vars") => {
                    n.field("arguments").and_then(|a| positional(a).into_iter().next()).is_some_and(|a| self.target_is_protected(text, a))
                }
                Some("globals") => true,
                _ => false,
            },
            _ => false,
        }
    }

    /// An identifier or attribute as a reference, without allocating (it runs on every attribute).
    fn reference<'a>(&'a self, text: &'a str, n: Node) -> Option<Ref<'a>> {
        match n.kind() {
            "identifier" => {
                let t = node_text(text, n);
                Some(match self.bindings.get(t) {
                    Some(path) => {
                        let mut parts = path.split('.').filter(|s| !s.is_empty());
                        let first = parts.next().unwrap_or("");
                        let mut rev = path.rsplit('.');
                        let last = rev.next().unwrap_or("");
                        Ref { first, prev: rev.next().unwrap_or(""), last, len: 1 + parts.count() }
                    }
                    None => Ref { first: t, prev: "", last: t, len: 1 },
                })
            }
            "attribute" => {
                let last = attr_name(text, n);
                Some(match self.reference(text, n.field("object")?) {
                    Some(r) => Ref { first: r.first, prev: r.last, last, len: r.len + 1 },
                    None => Ref { first: "", prev: "", last, len: 2 },
                })
            }
            _ => None,
        }
    }

    /// Imports resolved in a dotted chain's first segment.
    fn resolve(&self, mut segs: Vec<String>) -> Vec<String> {
        let Some(path) = segs.first().and_then(|s| self.bindings.get(s)) else { return segs };
        let mut out: Vec<String> = path.split('.').filter(|s| !s.is_empty()).map(String::from).collect();
        out.extend(segs.drain(1..));
        out
    }

    /// The innermost function around `n`, its facts computed on first use.
    fn fn_of(&mut self, text: &str, n: Node) -> Option<usize> {
        let mut p = n.parent();
        while let Some(def) = p {
            if def.kind() == "function_definition" {
                let kernels = &self.kernel_defs;
                self.fns.entry(def.id()).or_insert_with(|| FnFacts::of(text, def, kernels));
                return Some(def.id());
            }
            p = def.parent();
        }
        None
    }

    /// `d`'s root is a plain local of the function (a dict or object it created itself).
    fn local_root(&self, ff: &FnFacts, text: &str, d: Node) -> bool {
        expr_root(text, d, false).is_some_and(|r| r != "self" && r != "cls" && ff.locals.contains(r))
    }

    /// `d` (written inside `ff`) outlives the call: a module-level or enclosing-scope dict, a
    /// `self.`/class attribute dict, or a parameter with a dict default. `any_name` drops the
    /// dict/cache-name requirement (for `setdefault`, which only dicts have).
    fn persistent(&self, ff: &FnFacts, text: &str, d: Node, slice_key: bool, any_name: bool) -> bool {
        match d.kind() {
            "identifier" => {
                let name = node_text(text, d);
                if ff.locals.contains(name) || ff.outer_locals.contains(name) {
                    return false;
                }
                if ff.dict_params.contains(name) || (ff.declared.contains(name) && !slice_key) {
                    return true;
                }
                if ff.params.contains(name) || self.protected(name) {
                    return false;
                }
                any_name || self.dict_names.contains(name) || (!slice_key && cache_like(name))
            }
            "attribute" => {
                let Some(root) = expr_root(text, d, false) else { return false };
                let on_self = root == "self" || root == "cls";
                if (!on_self && ff.locals.contains(root)) || (on_self && ff.init) || self.protected(root) {
                    return false;
                }
                let attr = attr_name(text, d);
                any_name || self.dict_attrs.contains(attr) || (!slice_key && cache_like(attr))
            }
            _ => false,
        }
    }
}

/// What the memo rules need about one function.
#[derive(Default)]
struct FnFacts {
    /// A Triton kernel: its body is never a memo.
    kernel: bool,
    /// `__init__`/`__new__`/`__post_init__`: setting up `self` is not state kept across calls.
    init: bool,
    /// Names assigned in the body (not declared `global`/`nonlocal`), parameters excluded.
    locals: HashSet<String>,
    /// Names assigned in the functions around this one.
    outer_locals: HashSet<String>,
    /// Names declared `global`/`nonlocal`: whatever they hold outlives the call.
    declared: HashSet<String>,
    params: HashSet<String>,
    /// Parameters whose default is a dict: it lives as long as the function.
    dict_params: HashSet<String>,
    /// Names bound to tensor-derived keys (`key = (x.data_ptr(), x.shape)`).
    keys: HashSet<String>,
}

impl FnFacts {
    fn of(text: &str, def: Node, kernel_defs: &HashSet<usize>) -> FnFacts {
        let name = def.field("name").map(|n| node_text(text, n)).unwrap_or("");
        let mut ff = FnFacts {
            kernel: kernel_defs.contains(&def.start_byte()),
            init: matches!(name, "__init__" | "__new__" | "__post_init__"),
            ..Default::default()
        };
        if ff.kernel {
            return ff;
        }
        if let Some(params) = def.field("parameters") {
            for p in named_children(params) {
                let (name, default) = match p.kind() {
                    "identifier" => (Some(p), None),
                    "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => {
                        (named_children(p).find(|c| c.kind() == "identifier"), None)
                    }
                    "default_parameter" | "typed_default_parameter" => (p.field("name"), p.field("value")),
                    _ => (None, None),
                };
                if let Some(name) = name.filter(|n| n.kind() == "identifier").map(|n| node_text(text, n).to_string()) {
                    if default.is_some_and(|d| is_dict_value(text, d)) {
                        ff.dict_params.insert(name.clone());
                    }
                    ff.params.insert(name);
                }
            }
        }
        let (locals, declared, pairs) = assigned(text, def);
        ff.locals = locals;
        ff.declared = declared;
        // Names the enclosing functions assign: a closure writing into them writes per outer call.
        let mut p = def.parent();
        while let Some(outer) = p {
            if outer.kind() == "function_definition" {
                ff.outer_locals.extend(assigned(text, outer).0);
            }
            p = outer.parent();
        }
        for _ in 0..2 {
            for (name, right) in &pairs {
                if !ff.keys.contains(name) && tensor_key(text, *right, &ff.keys) {
                    ff.keys.insert(name.clone());
                }
            }
        }
        ff
    }
}

/// The names a function's body binds (not declared `global`/`nonlocal`; nested scopes skipped), the
/// names it declares `global`/`nonlocal`, and each single-name assignment's value, in source order.
fn assigned<'t>(text: &str, def: Node<'t>) -> (HashSet<String>, HashSet<String>, Vec<(String, Node<'t>)>) {
    let mut locals: HashSet<String> = HashSet::new();
    let mut declared: HashSet<String> = HashSet::new();
    let mut pairs: Vec<(String, Node)> = Vec::new();
    if let Some(body) = def.field("body") {
        walk_pruned(body, &mut |n| {
            match n.kind() {
                "function_definition" | "class_definition" | "lambda" => return false,
                "global_statement" | "nonlocal_statement" => declared.extend(named_children(n).map(|c| node_text(text, c).to_string())),
                "assignment" | "augmented_assignment" => {
                    if let Some(left) = n.field("left") {
                        bind_targets(text, left, &mut locals);
                        if let (true, Some(right)) = (left.kind() == "identifier", n.field("right")) {
                            pairs.push((node_text(text, left).to_string(), right));
                        }
                    }
                }
                "for_statement" => {
                    if let Some(left) = n.field("left") {
                        bind_targets(text, left, &mut locals);
                    }
                }
                "named_expression" => {
                    if let Some(name) = n.field("name") {
                        locals.insert(node_text(text, name).to_string());
                    }
                }
                "as_pattern_target" => bind_targets(text, n, &mut locals),
                _ => {}
            }
            true
        });
    }
    for d in &declared {
        locals.remove(d);
    }
    (locals, declared, pairs)
}

fn decorator_head(text: &str, d: Node) -> String {
    let t = squash(node_text(text, d));
    t.trim_start_matches('@').split('(').next().unwrap_or("").trim().to_string()
}

/// Pre-order walk that skips the subtree of any node `f` answers `false` for.
fn walk_pruned<'t>(n: Node<'t>, f: &mut impl FnMut(Node<'t>) -> bool) {
    if f(n) {
        for c in named_children(n) {
            walk_pruned(c, f);
        }
    }
}

/// Plain names an assignment target binds (`a`, `a, (b, c)`, `[*rest]`).
fn bind_targets(text: &str, n: Node, out: &mut HashSet<String>) {
    match n.kind() {
        "identifier" => {
            out.insert(node_text(text, n).to_string());
        }
        "pattern_list"
        | "tuple_pattern"
        | "list_pattern"
        | "tuple"
        | "list"
        | "parenthesized_expression"
        | "expression_list"
        | "list_splat_pattern"
        | "as_pattern_target" => {
            for c in named_children(n) {
                bind_targets(text, c, out);
            }
        }
        _ => {}
    }
}

/// The targets of an assignment's left side or of `del`, tuples flattened.
fn targets(n: Node) -> Vec<Node> {
    match n.kind() {
        "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" | "parenthesized_expression" | "expression_list" => {
            named_children(n).flat_map(targets).collect()
        }
        _ => vec![n],
    }
}

/// `a.b.c` as segments, when it is nothing but names and attributes.
fn chain(text: &str, n: Node) -> Option<Vec<String>> {
    match n.kind() {
        "identifier" => Some(vec![node_text(text, n).to_string()]),
        "attribute" => {
            let mut c = chain(text, n.field("object")?)?;
            c.push(node_text(text, n.field("attribute")?).to_string());
            Some(c)
        }
        _ => None,
    }
}

/// The name an expression hangs from: `torch` for `torch.cuda.Event.record`, `vars(torch)["x"]`,
/// `getattr(torch, "cuda").x`; `type` for `type(x).__add__`. Other calls count only with `calls`.
fn expr_root<'a>(text: &'a str, n: Node, calls: bool) -> Option<&'a str> {
    match n.kind() {
        "identifier" => Some(node_text(text, n)),
        "attribute" => expr_root(text, n.field("object")?, calls),
        "subscript" => expr_root(text, n.field("value")?, calls),
        "parenthesized_expression" => expr_root(text, named_children(n).next()?, calls),
        "call" => {
            let f = n.field("function")?;
            match node_text(text, f) {
                "type" => Some("type"),
                "getattr" | "vars" => expr_root(text, positional(n.field("arguments")?).into_iter().next()?, calls),
                _ if calls => expr_root(text, f, calls),
                _ => None,
            }
        }
        _ => None,
    }
}

fn attr_name<'a>(text: &'a str, n: Node) -> &'a str {
    n.field("attribute").map(|a| node_text(text, a)).unwrap_or("")
}

/// The identifier after the dot of an attribute (`b` in `a.b`).
fn is_attribute_field(n: Node) -> bool {
    n.parent().filter(|p| p.kind() == "attribute").and_then(|p| p.field("attribute")).is_some_and(|a| a.id() == n.id())
}

/// The kernel inside PyTorch's pass-through wrappers: `wrap_triton(k)[grid](...)` (and the older
/// `capture_triton`), as `torch.library.triton_op` bodies are written, launches `k` with its own options.
fn passed_through<'t>(text: &str, value: Node<'t>) -> Node<'t> {
    if value.kind() == "call"
        && let Some(func) = value.field("function")
        && matches!(squash(node_text(text, func)).rsplit('.').next(), Some("wrap_triton" | "capture_triton"))
        && let Some(args) = value.field("arguments")
        && let [kernel] = positional(args)[..]
        && matches!(kernel.kind(), "identifier" | "attribute")
    {
        return kernel;
    }
    value
}

fn positional(args: Node) -> Vec<Node> {
    named_children(args).filter(|a| !matches!(a.kind(), "keyword_argument" | "list_splat" | "dictionary_splat")).collect()
}

fn keyword<'t>(text: &str, args: Node<'t>, name: &str) -> Option<Node<'t>> {
    named_children(args)
        .filter(|a| a.kind() == "keyword_argument")
        .find(|a| a.field("name").is_some_and(|n| node_text(text, n) == name))
        .and_then(|a| a.field("value"))
}

/// The value of a plain string literal (no f-string, no interpolation, not concatenated).
fn string_literal(text: &str, n: Node) -> Option<String> {
    if n.kind() != "string" || named_children(n).any(|c| c.kind() == "interpolation") {
        return None;
    }
    let t = node_text(text, n);
    let body = t.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    if t[..t.len() - body.len()].contains(['f', 'F']) {
        return None;
    }
    ["\"\"\"", "'''", "\"", "'"]
        .iter()
        .find(|q| body.len() >= 2 * q.len() && body.starts_with(**q) && body.ends_with(**q))
        .map(|q| body[q.len()..body.len() - q.len()].to_string())
}

/// `{}`, `{k: v for ...}`, `dict()`, `defaultdict(...)`, `OrderedDict()`, weak dictionaries.
fn is_dict_value(text: &str, n: Node) -> bool {
    match n.kind() {
        "dictionary" | "dictionary_comprehension" => true,
        "call" => n.field("function").is_some_and(|f| {
            let t = node_text(text, f);
            let last = t.rsplit('.').next().unwrap_or(t).trim();
            matches!(last, "dict" | "defaultdict" | "OrderedDict" | "Counter" | "ChainMap" | "WeakKeyDictionary" | "WeakValueDictionary")
        }),
        _ => false,
    }
}

fn cache_like(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    CACHE_WORDS.iter().any(|w| lower.contains(w))
}

/// A key derived from a tensor's identity or contents: `id(x)`, `hash(x)`, `x.data_ptr()`,
/// `x.sum().item()`, `x.tolist()`, `x.tobytes()`, or its whole `x.shape`/`x.size()` (not `x.shape[0]`),
/// directly or through a name in `keys`. Comparisons, slices and calls other than wrappers end a key.
fn tensor_key(text: &str, expr: Node, keys: &HashSet<String>) -> bool {
    let mut found = false;
    walk_pruned(expr, &mut |m| {
        if found || m.kind() == "lambda" {
            return false;
        }
        match m.kind() {
            "call" => {
                if let Some(f) = m.field("function") {
                    let no_args = m.field("arguments").is_some_and(|a| named_children(a).next().is_none());
                    found = match f.kind() {
                        "identifier" => matches!(node_text(text, f), "id" | "hash") && whole(text, m, expr, false),
                        "attribute" => {
                            let a = attr_name(text, f);
                            (IDENTITY_METHODS.contains(&a) && whole(text, m, expr, false))
                                || (matches!(a, "size" | "stride") && no_args && whole(text, m, expr, true))
                        }
                        _ => false,
                    };
                }
            }
            "attribute" => {
                let a = attr_name(text, m);
                found = (matches!(a, "_version" | "_cdata" | "__cuda_array_interface__" | "__array_interface__")
                    && whole(text, m, expr, false))
                    || (a == "shape" && whole(text, m, expr, true));
            }
            "identifier" => found = keys.contains(node_text(text, m)) && !is_attribute_field(m) && whole(text, m, expr, true),
            _ => {}
        }
        !found
    });
    found
}

/// `m` reaches `top` as a key: not indexed (`x.shape[0]`), sliced, compared or passed to a call other
/// than a wrapper (`tuple`, `str`, ...); `strict` also ends it at arithmetic (`x.shape[0] * 2`), which a
/// hand-rolled hash of identities (`id(a) ^ id(b)`) may use.
fn whole(text: &str, m: Node, top: Node, strict: bool) -> bool {
    let mut c = m;
    while c.id() != top.id() {
        let Some(p) = c.parent() else { return true };
        match p.kind() {
            "subscript" if p.field("value").is_some_and(|v| v.id() == c.id()) => return false,
            "slice" | "comparison_operator" | "boolean_operator" | "not_operator" => return false,
            "binary_operator" | "unary_operator" if strict => return false,
            "argument_list" => {
                let f = p.parent().and_then(|call| call.field("function")).map(|f| node_text(text, f)).unwrap_or("");
                if !KEY_WRAPPERS.contains(&f.rsplit('.').next().unwrap_or(f)) {
                    return false;
                }
            }
            _ => {}
        }
        c = p;
    }
    true
}

/// `open(p, "w")`, `open(p, mode=m)`, `io.open(p, "a")`, `Path(p).open("w")`, `os.fdopen(fd, "wb")`,
/// `os.open(p, os.O_WRONLY | os.O_CREAT)`. A computed mode counts for the module functions.
fn opens_for_writing(text: &str, func: Node, prev: &str, last: &str, args: Option<Node>, pos: &[Node]) -> bool {
    if prev == "os" && last == "open" {
        let flags = pos.get(1).copied().or_else(|| args.and_then(|a| keyword(text, a, "flags")));
        return flags.is_none_or(|f| !matches!(squash(node_text(text, f)).as_str(), "os.O_RDONLY" | "O_RDONLY"));
    }
    let module_form = func.kind() == "identifier"
        || matches!(prev, "io" | "codecs" | "gzip" | "bz2" | "lzma" | "builtins" | "__builtins__" | "tarfile" | "os");
    let mode = args.and_then(|a| keyword(text, a, "mode")).or_else(|| if module_form { pos.get(1).copied() } else { pos.first().copied() });
    match mode {
        None => false,
        Some(m) => match string_literal(text, m) {
            Some(s) => !s.is_empty() && s.chars().all(|c| "rwxabtU+".contains(c)) && s.contains(['w', 'a', 'x', '+']),
            None => module_form,
        },
    }
}

/// At most 60 characters of `s`.
fn short(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Collapse runs of whitespace: formatting changes are not edits of meaning.
pub fn squash(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for line in s.lines() {
        let code = strip_comment(line);
        for w in code.split_whitespace() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
    }
    out
}

/// A line without its trailing `#` comment (quotes respected, roughly).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev = '\0';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q && prev != '\\' => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' => return &line[..i],
            None => {}
        }
        prev = c;
    }
    line
}

fn split_decorated(stmt: Node) -> (Vec<Node>, Option<Node>) {
    if stmt.kind() != "decorated_definition" {
        return (Vec::new(), Some(stmt));
    }
    let decorators = named_children(stmt).filter(|n| n.kind() == "decorator").collect();
    (decorators, stmt.child_by_field_name("definition"))
}

/// The definitions in the blocks of a module-level `if`/`try`/`with`, in order (not those nested in
/// a definition).
fn guarded_defs<'t>(n: Node<'t>, out: &mut Vec<Node<'t>>) {
    for c in named_children(n) {
        match c.kind() {
            "function_definition" | "decorated_definition" | "class_definition" => out.push(c),
            k if crate::syntax::is_guard(k) => guarded_defs(c, out),
            _ => {}
        }
    }
}

fn function(text: &str, outer: Node, def: Node, decorators: &[Node], kernels: &Kernels) -> Function {
    let name = def.child_by_field_name("name").map(|n| node_text(text, n).to_string()).unwrap_or_default();
    let is_kernel = kernels.defs.contains(&def.start_byte());
    let params = def.child_by_field_name("parameters").map(|p| params(text, p)).unwrap_or_default();
    let is_autotune = |head: &str| head == "triton.autotune" || head == "autotune" || head.ends_with(".autotune");
    if let Some((bound, m)) = kernels.made.get(&def.start_byte()) {
        let decorators: Vec<TextRange> = m.chain.iter().map(|(callee, _)| *callee).collect();
        let head = |r: &TextRange| squash(slice(text, *r)).split('(').next().unwrap_or("").trim().to_string();
        return Function {
            name: bound.clone(),
            range: range(def).cover(m.statement),
            def_range: range(def),
            autotune: decorators.iter().rposition(|d| is_autotune(&head(d))),
            decorators,
            params,
            is_kernel,
            made: Some(MadeByCall {
                def_name: m.def_name.clone(),
                statement: m.statement,
                applied: m.chain.iter().map(|(_, applied)| *applied).collect(),
            }),
        };
    }
    let autotune = decorators.iter().rposition(|d| is_autotune(&decorator_head(text, *d)));
    Function {
        name,
        range: range(outer),
        def_range: range(def),
        decorators: decorators.iter().map(|d| range(*d)).collect(),
        params,
        is_kernel,
        autotune,
        made: None,
    }
}

/// The model's kernels as the outline reads them: each one's `def` (by start byte), and for those
/// made by an assignment, the name bound and how.
struct Kernels {
    defs: HashSet<usize>,
    made: HashMap<usize, (String, crate::model::MadeBy)>,
}

fn params(text: &str, list: Node) -> Vec<Param> {
    named_children(list)
        .filter_map(|p| {
            let (name, annotation, default) = match p.kind() {
                "identifier" => (node_text(text, p).to_string(), None, None),
                "typed_parameter" => {
                    let name = named_children(p).next().map(|n| node_text(text, n).to_string()).unwrap_or_default();
                    (name, p.child_by_field_name("type").map(|t| squash(node_text(text, t))), None)
                }
                "default_parameter" | "typed_default_parameter" => (
                    p.child_by_field_name("name").map(|n| node_text(text, n).to_string()).unwrap_or_default(),
                    p.child_by_field_name("type").map(|t| squash(node_text(text, t))),
                    p.child_by_field_name("value").map(|v| squash(node_text(text, v))),
                ),
                _ => return None,
            };
            Some(Param { name, annotation, default })
        })
        .collect()
}

fn class(text: &str, outer: Node, def: Node, kernels: &Kernels) -> Class {
    let name = def.child_by_field_name("name").map(|n| node_text(text, n).to_string()).unwrap_or_default();
    let header_end = def.child_by_field_name("body").map(|b| b.start_byte()).unwrap_or(def.end_byte());
    let header = squash(text.get(def.start_byte()..header_end).unwrap_or(""));
    let mut methods = Vec::new();
    if let Some(body) = def.child_by_field_name("body") {
        for stmt in named_children(body) {
            let (decorators, inner) = split_decorated(stmt);
            if let Some(f) = inner.filter(|n| n.kind() == "function_definition") {
                methods.push(function(text, stmt, f, &decorators, kernels));
            }
        }
    }
    Class { name, range: range(outer), header, methods }
}

fn import_roots(text: &str, stmt: Node) -> Vec<String> {
    let mut roots = Vec::new();
    let mut push = |n: Node| {
        let t = node_text(text, n);
        let root = t.trim_start_matches('.').split('.').next().unwrap_or("").trim().to_string();
        if !root.is_empty() && !roots.contains(&root) {
            roots.push(root);
        }
    };
    match stmt.kind() {
        "import_from_statement" => {
            if let Some(m) = stmt.child_by_field_name("module_name") {
                push(m);
            }
        }
        _ => {
            for c in named_children(stmt) {
                match c.kind() {
                    "dotted_name" => push(c),
                    "aliased_import" => {
                        if let Some(n) = c.child_by_field_name("name") {
                            push(n)
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    roots
}

fn arguments(text: &str, args: Node) -> Vec<Arg> {
    named_children(args)
        .map(|a| {
            if a.kind() == "keyword_argument" {
                let name = a.child_by_field_name("name").map(|n| node_text(text, n).to_string());
                let value = a.child_by_field_name("value").map(range).unwrap_or_else(|| range(a));
                Arg { name, range: range(a), value }
            } else {
                Arg { name: None, range: range(a), value: range(a) }
            }
        })
        .collect()
}

/// The text of a range, empty when out of bounds.
pub fn slice(text: &str, r: TextRange) -> &str {
    text.get(r.start..r.end).unwrap_or("")
}

/// Everything between a subscript's brackets: `k[a, b]` and `k[x,]` launch on the tuples `(a, b)` and
/// `(x,)`, as `k[(a, b)]` does, so the grid is all of it, not its first item.
fn bracketed(sub: Node) -> Option<TextRange> {
    let mut cursor = sub.walk();
    let items: Vec<Node> = sub.children(&mut cursor).skip_while(|n| n.kind() != "[").skip(1).take_while(|n| n.kind() != "]").collect();
    Some(TextRange::new(items.first()?.start_byte(), items.last()?.end_byte()))
}

#[cfg(test)]
mod tests {
    /// The outline's kernels are the model's: Triton's jit under any import spelling, never another
    /// DSL's `jit`.
    /// A module-level `def` made a kernel by an assignment is a kernel under the name the assignment
    /// binds (what launches use); its decorators are the calls applied to it, and the statement is the
    /// kernel's, not one of the module's other statements.
    #[test]
    fn a_kernel_made_by_a_jit_call_is_the_kernel_its_assignment_names() {
        let head = "import triton\nimport triton.language as tl\nfrom triton import jit\n\n";
        let def = |name: &str| format!("def {name}(x_ptr, n, BLOCK: tl.constexpr):\n    pass\n\n");
        let cases = [
            ("add_kernel = triton.jit(_add_impl)", "_add_impl", "add_kernel", vec!["triton.jit"]),
            ("add_kernel = jit(_add_impl)", "_add_impl", "add_kernel", vec!["jit"]),
            ("_k = triton.jit(_k)", "_k", "_k", vec!["triton.jit"]),
            ("_k = (triton.jit(_k, debug=True))", "_k", "_k", vec!["triton.jit"]),
            (
                "k = triton.autotune(configs=[triton.Config({'BLOCK': 64})], key=['n'])(triton.heuristics({'E': lambda a: 1})(triton.jit(_impl)))",
                "_impl",
                "k",
                vec![
                    "triton.autotune(configs=[triton.Config({'BLOCK': 64})], key=['n'])",
                    "triton.heuristics({'E': lambda a: 1})",
                    "triton.jit",
                ],
            ),
        ];
        for (stmt, def_name, name, decorators) in cases {
            let text = format!("{head}{}{stmt}\n\ndef run(x, n):\n    {name}[(1,)](x, n, BLOCK=64)\n", def(def_name));
            let o = Outline::build(&text);
            let kernels: Vec<&Function> = o.kernels().collect();
            let [k] = kernels.as_slice() else { panic!("{stmt}: {kernels:?}") };
            assert_eq!((k.name.as_str(), k.triton_name()), (name, def_name), "{stmt}");
            assert_eq!(slice(&text, k.def_range), def(def_name).trim_end(), "{stmt}");
            assert_eq!(k.decorators.iter().map(|d| slice(&text, *d)).collect::<Vec<_>>(), decorators, "{stmt}");
            assert_eq!(k.autotune, stmt.contains("autotune").then_some(0), "{stmt}");
            let made = k.made.as_ref().unwrap();
            assert_eq!(slice(&text, made.statement), stmt, "{stmt}");
            let rhs = stmt.split_once("= ").unwrap().1;
            let rhs = rhs.strip_prefix('(').and_then(|r| r.strip_suffix(')')).unwrap_or(rhs);
            assert_eq!(slice(&text, made.applied[0]), rhs, "{stmt}");
            let jit = slice(&text, *made.applied.last().unwrap());
            assert!(jit.starts_with(decorators.last().unwrap()) && jit.contains(&format!("({def_name}")), "{stmt}: {jit}");
            assert!(slice(&text, k.range).starts_with("def ") && slice(&text, k.range).ends_with(stmt), "{stmt}");
            assert!(o.others.is_empty(), "{stmt}: {:?}", o.others);
            assert_eq!(o.kernel(def_name).map(|f| f.name.as_str()), Some(name), "{stmt}");
            assert!(o.launches.iter().any(|l| l.targets(&k.name)), "{stmt}");
        }
    }

    /// A call the model does not read as making a kernel (here a wrapper of two arguments; a kernel
    /// made inside a function) is named, with the forms the stages read.
    #[test]
    fn a_jit_call_the_stages_do_not_read_is_named_with_the_forms_they_do() {
        for stmt in ["_k = wrap(triton.jit(_k), cache=True)", "_k = triton.jit(_k, _other)"] {
            let text = format!(
                "import triton\nimport triton.language as tl\n\ndef _k(x, BLOCK: tl.constexpr):\n    pass\n\n{stmt}\n\n\
                 def run(x):\n    _k[(1,)](x, BLOCK=64)\n"
            );
            let o = Outline::build(&text);
            assert_eq!(o.kernels().count(), 0, "{stmt}");
            let m = o.no_kernel_message();
            assert!(
                m.contains(&format!("`{stmt}`")) && m.contains("`name = triton.jit(fn)` at module level") && m.contains("above `def _k`"),
                "{m}"
            );
        }
    }

    #[test]
    fn kernels_are_the_models_kernels() {
        let text = "import triton\nfrom triton import jit as tjit\nimport cutlass.cute as cute\nfrom triton.experimental import gluon\nimport torch\n\n\
@triton.jit\ndef a(x):\n    pass\n\n@tjit\ndef b(x):\n    pass\n\n@cute.jit\ndef c(x):\n    pass\n\n@gluon.jit\ndef d(x):\n    pass\n\n\
@torch.jit.script\ndef e(x):\n    return x\n";
        let o = Outline::build(text);
        let names: Vec<&str> = o.kernels().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        let tree = crate::syntax::parse(text);
        let model: Vec<String> = crate::model::build(text, &tree).kernels.iter().map(|k| k.name.clone()).collect();
        assert_eq!(model, ["a", "b"]);
    }

    #[test]
    fn probing_the_harness_recorders_is_introspection() {
        for src in [
            "import torch\nx = torch._C._get_dispatch_mode(None)\n",
            "import torch\nif torch.autograd.profiler._is_profiler_enabled:\n    pass\n",
            "from torch.utils._python_dispatch import _get_current_dispatch_mode\nm = _get_current_dispatch_mode()\n",
            "import torch\nwith torch.profiler.profile():\n    pass\n",
        ] {
            let kinds: Vec<SuspectKind> = Outline::build(src).suspects.iter().map(|s| s.kind).collect();
            assert!(kinds.contains(&SuspectKind::Introspection), "{src}: {kinds:?}");
        }
    }

    use super::*;

    const SRC: &str = r#"import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 64

@triton.autotune(configs=[triton.Config({'BLOCK': 32})], key=['n'])
@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)

def helper(x):
    return x

class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()

    def forward(self, x):
        out = torch.empty_like(x)
        add_kernel[(4,)](x, out, x.numel(), num_warps=4)
        return out
"#;

    #[test]
    fn finds_items_kernels_and_launches() {
        let o = Outline::build(SRC);
        assert!(o.syntax_errors.is_empty());
        assert_eq!(o.imports.len(), 4);
        assert_eq!(o.imports[1].roots, vec!["torch".to_string()]);
        let k = o.kernel("add_kernel").unwrap();
        assert_eq!(k.autotune, Some(0));
        assert_eq!(k.params.last().unwrap().annotation.as_deref(), Some("tl.constexpr"));
        assert!(!o.function("helper").unwrap().is_kernel);
        let m = o.class("Model").unwrap();
        assert_eq!(m.header, "class Model(nn.Module):");
        assert_eq!(m.methods.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["__init__", "forward"]);
        assert_eq!(o.launches.len(), 1);
        assert_eq!(slice(SRC, o.launches[0].grid), "(4,)");
        // A grid written as a bare tuple inside the brackets is the whole tuple.
        let bare = "k[n // 4,](x)\nk[m // 4, n // 4](x)\n";
        let b = Outline::build(bare);
        assert_eq!(b.launches.iter().map(|l| slice(bare, l.grid)).collect::<Vec<_>>(), ["n // 4,", "m // 4, n // 4"]);
        assert_eq!(o.launches[0].args.last().unwrap().name.as_deref(), Some("num_warps"));
        assert_eq!(o.others.len(), 1);
        assert!(o.suspects.is_empty());
    }

    #[test]
    fn flags_reflection_fallbacks_and_patches() {
        let src = "_nn = __import__('torch').nn\n_fn = getattr(_nn, ''.join(['fu','nctional']))\nok = getattr(_nn, 'Linear')\ntry:\n    pass\nexcept Exception:\n    pass\nimport time\ntime.perf_counter = lambda: 0\n";
        let kinds: Vec<SuspectKind> = Outline::build(src).suspects.iter().map(|s| s.kind).collect();
        assert_eq!(kinds.iter().filter(|k| **k == SuspectKind::Obfuscated).count(), 2);
        assert!(kinds.contains(&SuspectKind::TryExcept));
        assert!(kinds.contains(&SuspectKind::TimingPatch));
    }

    /// Imports every snippet below may use.
    const PRELUDE: &str = "import os\nimport sys\nimport math\nimport torch\nimport torch.nn.functional as F\nimport triton\nimport triton.language as tl\nimport numpy as np\nfrom triton import testing\n";

    fn count(src: &str, kind: SuspectKind) -> usize {
        let text = format!("{PRELUDE}{src}");
        let o = Outline::build(&text);
        assert!(o.syntax_errors.is_empty(), "{src}");
        o.suspects.iter().filter(|s| s.kind == kind).count()
    }

    fn all_flagged(kind: SuspectKind, snippets: &[&str]) {
        for s in snippets {
            assert!(count(s, kind) > 0, "{kind:?} missed in:\n{s}\n{:?}", Outline::build(&format!("{PRELUDE}{s}")).suspects);
        }
    }

    fn none_flagged(kind: SuspectKind, snippets: &[&str]) {
        for s in snippets {
            assert_eq!(count(s, kind), 0, "{kind:?} wrongly flagged in:\n{s}\n{:?}", Outline::build(&format!("{PRELUDE}{s}")).suspects);
        }
    }

    #[test]
    fn flags_interpreter_introspection() {
        all_flagged(
            SuspectKind::Introspection,
            &[
                "m = torch.sys.modules\n",
                "env = triton.os.environ\n",
                "np.os.system('true')\n",
                "ld = math.__loader__\n",
                "b = torch.__builtins__\n",
                "g = F.relu.__globals__\n",
                "subs = ().__class__.__bases__[0].__subclasses__()\n",
                "ns = torch.__dict__\n",
                "ns = vars(torch)\n",
                "import gc\nobjs = gc.get_objects()\n",
                "f = sys._getframe(1).f_back\n",
                "import inspect\nfr = inspect.currentframe()\n",
                "import inspect\nst = inspect.stack()\n",
                "from torch import os as tos\n",
                "s = getattr(torch, 'sys')\n",
                "mods = sys.modules\n",
            ],
        );
        none_flagged(
            SuspectKind::Introspection,
            &[
                "p = os.path.join('a', 'b')\n",
                "n = sys.argv[1]\n",
                "name = F.relu.__name__\n",
                "d = self.__dict__\n",
                "w = torch.signal.windows.hann_window(8)\n",
            ],
        );
    }

    #[test]
    fn flags_setattr_dict_writes_and_deep_attribute_patches() {
        all_flagged(
            SuspectKind::Monkeypatch,
            &[
                "setattr(torch.cuda.Event, 'elapsed_time', lambda a, b: 1.0)\n",
                "delattr(torch, 'mm')\n",
                "torch.__dict__['mm'] = lambda a, b: a\n",
                "vars(torch)['matmul'] = lambda a, b: a\n",
                "F.__dict__.update(gelu=lambda x: x)\n",
                "torch.nn.functional.__dict__.setdefault('silu', None)\n",
                "del torch.mm\n",
                "object.__setattr__(torch, 'mm', None)\n",
                "monkeypatch.setattr('torch.mm', None)\n",
                "from unittest import mock\nwith mock.patch.object(torch, 'mm', None):\n    pass\n",
                "import xeforge_harness.timing\nsetattr(xeforge_harness.timing, 'clock', lambda: 0)\n",
                "sys.modules['torch'] = None\n",
                "globals()['torch'] = None\n",
                "globals().update(torch=None)\n",
            ],
        );
        all_flagged(
            SuspectKind::TimingPatch,
            &[
                "torch.cuda.Event.record = lambda self, s=None: None\n",
                "torch.cuda.synchronize = lambda: None\n",
                "F.gelu = lambda x: x\n",
                "testing.do_bench = lambda fn: 0.1\n",
                "Ev = torch.cuda.Event\nEv.elapsed_time = lambda a, b: 1.0\n",
                "torch.mm, torch.bmm = None, None\n",
                "def f(x):\n    type(x).__add__ = None\n",
                "def f(x):\n    x.__class__.__mul__ = None\n",
                "tl.load = None\n",
            ],
        );
        // One write is one suspect: the `__dict__` it goes through is not also a read.
        assert_eq!(count("torch.__dict__['mm'] = None\n", SuspectKind::Introspection), 0);
        assert_eq!(count("torch.mm, torch.bmm = None, None\n", SuspectKind::TimingPatch), 2);
        none_flagged(
            SuspectKind::Monkeypatch,
            &[
                "class M:\n    def f(self, p):\n        setattr(self, 'w', p)\n",
                "cfg = {}\ncfg['BLOCK'] = 64\n",
                "def f(x):\n    del x\n",
                "k = globals()['kern']\n",
            ],
        );
        none_flagged(
            SuspectKind::TimingPatch,
            &[
                "class M:\n    def f(self):\n        self.scale = 2.0\n",
                "def f(x):\n    out = torch.empty_like(x)\n    out.requires_grad = False\n",
            ],
        );
    }

    #[test]
    fn flags_compute_ops_fetched_by_literal_name() {
        all_flagged(
            SuspectKind::OpByName,
            &[
                "f = getattr(torch, 'matmul')\n",
                "f = getattr(F, \"conv2d\")\n",
                "def g(x):\n    return getattr(x, 'mm')(x)\n",
                "f = getattr(torch.ops.aten, 'addmm')\n",
                "f = getattr(torch.ops.aten, 'addmm.default')\n",
                "def g(x):\n    return getattr(x, '__matmul__')(x)\n",
                "def g(x):\n    return getattr(x, 'add_')(1)\n",
                "import operator\nf = operator.methodcaller('softmax', -1)\n",
                "def g(x):\n    return x.__getattribute__('bmm')\n",
            ],
        );
        none_flagged(
            SuspectKind::OpByName,
            &[
                "b = getattr(config, 'BLOCK')\n",
                "dt = getattr(torch, 'float16')\n",
                "w = getattr(mod, 'weight', None)\n",
                "d = getattr(torch, 'xpu')\n",
            ],
        );
    }

    const MEMO: &str = "_cache = {}\n\ndef fwd(x):\n    key = (x.data_ptr(), x.shape)\n    if key in _cache:\n        return _cache[key]\n    out = x * 2\n    _cache[key] = out\n    return out\n";

    #[test]
    fn flags_memos_keyed_by_tensors() {
        assert_eq!(count(MEMO, SuspectKind::TensorMemo), 2, "the membership test and the store");
        all_flagged(
            SuspectKind::TensorMemo,
            &[
                MEMO,
                "class M:\n    def forward(self, x):\n        self._memo[id(x)] = x\n        return x\n",
                "cache = {}\ndef f(x):\n    cache[hash(x.sum().item())] = x\n",
                "seen = {}\ndef f(x):\n    seen[x.cpu().numpy().tobytes()] = x\n",
                "class M:\n    def forward(self, x):\n        if tuple(x.shape) in self.outs:\n            return self.outs[tuple(x.shape)]\n",
                "_m = {}\ndef f(x):\n    return _m.setdefault(x.data_ptr(), x)\n",
                "_m = {}\ndef f(x):\n    k = f'{x.data_ptr()}-{x.shape}'\n    return _m.get(k)\n",
                "import weakref\n_outs = weakref.WeakKeyDictionary()\n",
                "def f(x, store):\n    store[id(x)] = x\n",
            ],
        );
        none_flagged(
            SuspectKind::TensorMemo,
            &[
                "def f(x):\n    d = {}\n    d[id(x)] = x\n    return d\n",
                "def f(x, y):\n    x[:, : y.shape[1]] = y\n",
                "def f(x):\n    out = torch.empty_like(x)\n    out[x.shape[0] - 1] = 0\n    return out\n",
                "def f(x):\n    if x.shape[0] in (1, 2):\n        return x\n",
                "OK = {torch.float16}\ndef f(x):\n    if x.dtype in OK:\n        return x\n",
                "def f(x, mask):\n    t = x.max().item()\n    x[mask > t] = 0\n",
                "@triton.jit\ndef k(x_ptr, cache):\n    cache[id(x_ptr)] = 1\n",
            ],
        );
    }

    #[test]
    fn flags_state_kept_across_calls() {
        all_flagged(
            SuspectKind::CallState,
            &[
                "class M:\n    def forward(self, x):\n        n = x.numel()\n        self._cache[n] = x\n        return x\n",
                "_memo = {}\ndef f(x, n):\n    _memo[n] = x\n",
                "RESULTS = dict()\ndef f(x, n):\n    return RESULTS.setdefault(n, x)\n",
                "def f(x, n, _seen={}):\n    _seen[n] = x\n",
                "class M:\n    def __init__(self):\n        self.table = {}\n    def forward(self, x):\n        self.table.update({1: x})\n",
                "def f(x, n):\n    global _prev\n    _prev[n] = x\n",
            ],
        );
        none_flagged(
            SuspectKind::CallState,
            &[
                "def f(x, n):\n    d = {}\n    d[n] = x\n    return d\n",
                "def f(x, **kwargs):\n    kwargs['num_warps'] = 4\n",
                "def f(x, n, kwargs={}):\n    kwargs = dict(kwargs)\n    kwargs['n'] = n\n",
                "class M:\n    def __init__(self):\n        self._cache = {}\n        self._cache['a'] = 1\n",
                "class M:\n    def forward(self, x):\n        self.buf[: x.numel()] = x\n",
                "def outer(xs):\n    found = {}\n    def visit(i, x):\n        found[i] = x\n    for i, x in enumerate(xs):\n        visit(i, x)\n    return found\n",
                "_table = {}\n_table['a'] = 1\n",
                "def f():\n    os.environ.setdefault('TRITON_DEBUG', '0')\n",
            ],
        );
    }

    #[test]
    fn flags_processes_native_code_file_writes_and_deferred_work() {
        all_flagged(
            SuspectKind::Processes,
            &[
                "pid = os.fork()\n",
                "from os import fork\npid = fork()\n",
                "os.posix_spawn('/bin/true', ['true'], {})\n",
                "os.spawnv(os.P_NOWAIT, '/bin/true', ['true'])\n",
                "import subprocess\nsubprocess.run(['true'])\n",
                "import signal\nsignal.signal(signal.SIGALRM, lambda *a: None)\n",
                "import pty\n",
                "os.system('true')\n",
                "torch.os.popen('true')\n",
            ],
        );
        all_flagged(
            SuspectKind::NativeCode,
            &[
                "import ctypes\nctypes.memmove(0, 0, 8)\n",
                "lib = torch.ctypes.CDLL(None)\n",
                "import mmap\nm = mmap.mmap(-1, 4096)\n",
                "from cffi import FFI\n",
                "mod = torch.utils.cpp_extension.load_inline('m', '')\n",
                "torch.ops.load_library('k.so')\n",
            ],
        );
        all_flagged(
            SuspectKind::FileWrite,
            &[
                "f = open('out.bin', 'wb')\n",
                "f = open(p, mode='a')\n",
                "f = open(p, m)\n",
                "from pathlib import Path\nPath('x').write_text('1')\n",
                "def g(p):\n    return p.open('w')\n",
                "os.remove('x')\n",
                "os.replace('a', 'b')\n",
                "import shutil\nshutil.copy('a', 'b')\n",
                "torch.save(x, 'x.pt')\n",
                "np.save('a.npy', a)\n",
                "np.savez('a.npz', a=a)\n",
                "import tempfile\nfd, p = tempfile.mkstemp()\n",
                "fd = os.open('x', os.O_WRONLY | os.O_CREAT)\n",
            ],
        );
        none_flagged(
            SuspectKind::FileWrite,
            &[
                "f = open(p)\n",
                "f = open(p, 'rb')\n",
                "fd = os.open('x', os.O_RDONLY)\n",
                "s = 'a-b'.replace('-', '_')\n",
                "from PIL import Image\nim = Image.open(p)\n",
            ],
        );
        all_flagged(
            SuspectKind::Deferred,
            &[
                "import atexit\natexit.register(print)\n",
                "import weakref\nweakref.finalize(x, print)\n",
                "sys.settrace(lambda *a: None)\n",
                "sys.setprofile(lambda *a: None)\n",
                "class C:\n    def __del__(self):\n        pass\n",
                "class M:\n    def __init__(self):\n        self.register_forward_hook(lambda m, i, o: o)\n",
                "torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: o)\n",
            ],
        );
        all_flagged(
            SuspectKind::Streams,
            &[
                "torch.cuda.set_stream(s)\n",
                "torch.xpu.set_stream(s)\n",
                "with torch.cuda.graph(g):\n    pass\n",
                "g = torch.cuda.CUDAGraph()\n",
                "m2 = torch.cuda.make_graphed_callables(m, (x,))\n",
            ],
        );
        all_flagged(
            SuspectKind::Threads,
            &["import threading\nthreading.Thread(target=print).start()\n", "import _thread\n_thread.start_new_thread(print, ())\n"],
        );
    }

    #[test]
    fn an_ordinary_kernel_file_has_no_suspects() {
        let src = r#"import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)

def launch(x, config):
    out = torch.empty_like(x)
    n = x.numel()
    block = getattr(config, "BLOCK", 64)
    rows = {}
    rows[x.shape[0]] = n
    by_shape = {}
    by_shape[x.shape] = block
    if x.shape[0] in (1, 2):
        n = x.shape[0]
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    relu_kernel[grid](x, out, n)
    x[: x.shape[0]] = out
    return out.view(x.shape)

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.configs = {}
        self.configs["default"] = 64

    def forward(self, x):
        return launch(x, self)

def get_inputs():
    return [torch.randn(1024, device="xpu")]

if __name__ == "__main__":
    import time
    x = torch.randn(4096)
    t0 = time.perf_counter()
    Model()(x)
    print(time.perf_counter() - t0)
"#;
        let o = Outline::build(src);
        assert!(o.syntax_errors.is_empty());
        assert!(o.suspects.is_empty(), "{:?}", o.suspects);
    }

    #[test]
    fn squash_ignores_layout_and_comments() {
        assert_eq!(squash("def f(a,  b):  # note\n    return a"), squash("def f(a, b):\n  return a"));
    }
}
