//! `tl` operations of one kernel body, with a small forward shape/dtype inference.
//!
//! Statements are visited in order; each assignment records the shape (symbolic dims) and dtype
//! of its value, so a later `tl.dot(a, b)` knows `a: [BLOCK_M, BLOCK_K]`. Loops and branches are
//! visited once, in source order (a later assignment wins). Kernel parameters are scalars;
//! locals whose value is not understood have an unknown shape, never a guessed one.

use super::cx::{Cx, unparen};
use super::eval::{canonical_dtype, expr_of};
use super::types::{BinOp, Binding, Expr, Param, TlOp, TlOpKind, Value};
use crate::syntax::flat::Node;
use crate::syntax::flat::{named_children, range};
use crate::syntax::{KindTag, kinds};
use crate::text::TextRange;
use std::collections::HashMap;

/// What inference knows about a value.
#[derive(Debug, Clone, Default)]
struct Info {
    /// None: unknown. Some([]): a scalar.
    shape: Option<Vec<Expr>>,
    dtype: Option<String>,
}

impl Info {
    fn scalar() -> Self {
        Info { shape: Some(Vec::new()), dtype: None }
    }
    fn unknown() -> Self {
        Info::default()
    }
}

const REDUCTIONS: &[&str] =
    &["sum", "max", "min", "reduce", "cumsum", "cumprod", "argmax", "argmin", "xor_sum", "associative_scan", "prod"];

/// `tl.<name>` elementwise functions whose result has the broadcast shape of their tensor arguments.
const ELEMENTWISE: &[&str] = &[
    "exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "abs", "sigmoid", "erf", "floor", "ceil", "maximum", "minimum",
    "where", "fma", "fdiv", "div_rn", "clamp", "softmax", "umulhi", "log1p", "tanh",
];

struct Walker<'a, 't> {
    cx: &'a Cx<'t>,
    params: &'a [Param],
    env: HashMap<String, Info>,
    ops: Vec<TlOp>,
    api_calls: Vec<TlOp>,
    persistent: bool,
    /// Locals holding `tl.program_id(..)` (int32) and `tl.num_programs(..)`.
    pid_vars: Vec<String>,
    nprog_vars: Vec<String>,
    /// XF203 candidates: the product range and its stride, and whether a pointer use was seen.
    offsets: Vec<(TextRange, String, bool)>,
    /// Locals that carry an int32 `pid * stride` product: name → candidate index.
    tainted: HashMap<String, usize>,
}

/// Collects the ops of kernel `def`, every Triton API call in it (`TlOpKind::Call`), and whether it
/// is a persistent kernel.
pub fn collect<'t>(cx: &Cx<'t>, def: Node<'t>, params: &[Param]) -> (Vec<TlOp>, Vec<TlOp>, bool) {
    let mut w = Walker {
        cx,
        params,
        env: HashMap::new(),
        ops: Vec::new(),
        api_calls: Vec::new(),
        persistent: false,
        pid_vars: Vec::new(),
        nprog_vars: Vec::new(),
        offsets: Vec::new(),
        tainted: HashMap::new(),
    };
    if let Some(body) = def.field("body") {
        w.block(body);
    }
    for (r, stride, used) in std::mem::take(&mut w.offsets) {
        if used {
            w.ops.push(TlOp { kind: TlOpKind::Int32Offset { stride }, range: r, callee_range: r, callee: "tl.program_id".into() });
        }
    }
    w.ops.sort_by_key(|o| (o.range.start, o.range.end));
    (w.ops, w.api_calls, w.persistent)
}

impl<'a, 't> Walker<'a, 't> {
    fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    fn canonical(&self, node: Node) -> Option<String> {
        self.cx.canonical(node)
    }

    fn callee(&self, call: Node) -> Option<String> {
        call.field("function").and_then(|f| self.canonical(f))
    }

    fn block(&mut self, block: Node<'t>) {
        for stmt in named_children(block) {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, node: Node<'t>) {
        match node.kind() {
            "block" => self.block(node),
            "function_definition" | "class_definition" | "decorated_definition" => {}
            "if_statement" | "elif_clause" => {
                if let Some(c) = node.field("condition") {
                    self.scan(c);
                }
                if let Some(b) = node.field("consequence") {
                    self.block(b);
                }
                let mut cursor = node.walk();
                let alts: Vec<Node> = node.children_by_field_name("alternative", &mut cursor).collect();
                for a in alts {
                    self.stmt(a);
                }
            }
            "else_clause" | "finally_clause" | "except_clause" | "with_statement" | "try_statement" => {
                for c in named_children(node) {
                    if c.kind() == "block" || c.kind().ends_with("_clause") {
                        self.stmt(c);
                    } else {
                        self.scan(c);
                    }
                }
            }
            "for_statement" => self.for_stmt(node),
            "while_statement" => {
                if let Some(c) = node.field("condition") {
                    self.scan(c);
                }
                if let Some(b) = node.field("body") {
                    self.block(b);
                }
            }
            "expression_statement" => {
                for c in named_children(node) {
                    match c.kind() {
                        "assignment" => self.assignment(c),
                        "augmented_assignment" => self.augmented(c),
                        _ => self.scan(c),
                    }
                }
            }
            _ => self.scan(node),
        }
    }

    fn for_stmt(&mut self, node: Node<'t>) {
        if let Some(iter) = node.field("right") {
            self.scan(iter);
            self.check_persistent(iter);
        }
        if let Some(left) = node.field("left") {
            // Loop counters of `range`/`tl.range`/`tl.static_range` are scalars.
            if left.kind() == "identifier" {
                self.env.insert(self.cx.text_of(left).to_string(), Info::scalar());
            }
        }
        if let Some(b) = node.field("body") {
            self.block(b);
        }
        if let Some(a) = node.field("alternative") {
            self.stmt(a);
        }
    }

    fn check_persistent(&mut self, iter: Node) {
        let iter = unparen(iter);
        if iter.kind() != "call" {
            return;
        }
        let Some(func) = iter.field("function") else { return };
        let is_range = self.cx.text_of(func) == "range" || matches!(self.canonical(func).as_deref(), Some("tl.range"));
        if !is_range {
            return;
        }
        let Some(args) = iter.field("arguments") else { return };
        let args: Vec<Node> = named_children(args).filter(|a| a.kind() != "keyword_argument").collect();
        if args.len() < 3 {
            return;
        }
        let start_is_pid = self.mentions(args[0], "tl.program_id", &self.pid_vars);
        let step = args[2];
        let step_text = self.cx.text_of(step);
        let step_is_count = self.mentions(step, "tl.num_programs", &self.nprog_vars)
            || ["NUM_SMS", "num_sms", "NUM_PROGRAMS", "num_programs", "NUM_CORES", "NUM_WORKERS"].iter().any(|m| step_text.contains(m));
        if start_is_pid && step_is_count {
            self.persistent = true;
        }
    }

    /// Whether `node` contains a call to `callee` or one of `vars`.
    fn mentions(&self, node: Node, callee: &str, vars: &[String]) -> bool {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match kinds().tag(n) {
                KindTag::Call if self.callee(n).as_deref() == Some(callee) => return true,
                KindTag::Identifier if vars.iter().any(|v| v == self.cx.text_of(n)) => return true,
                _ => {}
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        false
    }

    /// `(mentions(node, "tl.program_id", pid_vars), mentions(node, "tl.num_programs", nprog_vars))`
    /// in one walk.
    fn mentions_pid_nprog(&self, node: Node) -> (bool, bool) {
        let (mut pid, mut nprog) = (false, false);
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match kinds().tag(n) {
                KindTag::Call => match self.callee(n).as_deref() {
                    Some("tl.program_id") => pid = true,
                    Some("tl.num_programs") => nprog = true,
                    _ => {}
                },
                KindTag::Identifier => {
                    let t = self.cx.text_of(n);
                    pid |= self.pid_vars.iter().any(|v| v == t);
                    nprog |= self.nprog_vars.iter().any(|v| v == t);
                }
                _ => {}
            }
            if pid && nprog {
                break;
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        (pid, nprog)
    }

    fn assignment(&mut self, node: Node<'t>) {
        let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
            if let Some(r) = node.field("right") {
                self.scan(r);
            }
            return;
        };
        self.scan(right);
        if left.kind() != "identifier" {
            self.scan(left);
        }
        self.bind(left, right);
    }

    fn bind(&mut self, left: Node<'t>, right: Node<'t>) {
        let right = unparen(right);
        match left.kind() {
            "identifier" => {
                let name = self.cx.text_of(left).to_string();
                let info = self.infer(right);
                // int32 program ids and program counts, for XF203 and persistent-loop detection.
                let casts_to_int64 = self.cx.text_of(right).contains("int64");
                self.pid_vars.retain(|v| *v != name);
                self.nprog_vars.retain(|v| *v != name);
                let (pid, nprog) = self.mentions_pid_nprog(right);
                if !casts_to_int64 && pid {
                    self.pid_vars.push(name.clone());
                }
                if nprog {
                    self.nprog_vars.push(name.clone());
                }
                self.propagate_taint(&name, right);
                self.env.insert(name, info);
            }
            "pattern_list" | "tuple_pattern" | "tuple" => {
                let targets: Vec<Node> = named_children(left).collect();
                let values: Vec<Node> =
                    if matches!(right.kind(), "tuple" | "expression_list") { named_children(right).collect() } else { Vec::new() };
                for (i, t) in targets.iter().enumerate() {
                    match values.get(i) {
                        Some(v) if values.len() == targets.len() => self.bind(*t, *v),
                        _ => {
                            if t.kind() == "identifier" {
                                self.env.insert(self.cx.text_of(*t).to_string(), Info::unknown());
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn augmented(&mut self, node: Node<'t>) {
        let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
            return;
        };
        self.scan(right);
        let op = node.field("operator").map(|o| self.cx.text_of(o)).unwrap_or("");
        let right_u = unparen(right);
        if op == "+=" && right_u.kind() == "call" && self.callee(right_u).as_deref() == Some("tl.dot") {
            let acc_dtype =
                (left.kind() == "identifier").then(|| self.env.get(self.cx.text_of(left))).flatten().and_then(|i| i.dtype.clone());
            let r = range(node);
            let dot_range = range(right_u);
            if let Some(op) = self.ops.iter_mut().find(|o| o.range == dot_range)
                && let TlOpKind::Dot { inplace_accumulate, acc_dtype: ad, .. } = &mut op.kind
            {
                *inplace_accumulate = Some(r);
                if ad.is_none() {
                    *ad = acc_dtype;
                }
            }
        }
        if left.kind() == "identifier" {
            let name = self.cx.text_of(left).to_string();
            self.propagate_taint_aug(&name, right);
            // `ptr += offs[None, :]` turns a scalar parameter into a block: the new shape is the
            // broadcast of both sides, as for `ptr = ptr + offs[None, :]`.
            let info = if matches!(op, "+=" | "-=" | "*=" | "/=" | "//=" | "%=" | "**=" | "<<=" | ">>=" | "&=" | "|=" | "^=") {
                // The dtype stays the target's (`acc += tl.dot(..)`); when the sides disagree
                // (`x += mask`) the promoted type is not worked out here, so it becomes unknown.
                let (li, ri) = (self.infer(left), self.infer(right_u));
                let dtype = match (li.dtype, ri.dtype) {
                    (Some(l), Some(r)) if l != r => None,
                    (l, _) => l,
                };
                Info { shape: broadcast(li.shape, ri.shape), dtype }
            } else {
                Info::unknown()
            };
            self.env.insert(name, info);
        }
    }

    /// Visits every call and attribute inside an expression (not into nested lambdas' scopes).
    fn scan(&mut self, node: Node<'t>) {
        let mut stack = vec![node];
        let mut calls = Vec::new();
        while let Some(n) = stack.pop() {
            match kinds().tag(n) {
                KindTag::Call => calls.push(n),
                KindTag::Attribute => self.attribute(n),
                KindTag::BinaryOperator => self.product(n),
                _ => {}
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        // Inner calls first so a `.to()` on a load sees it; order in `ops` is fixed by the final sort.
        calls.sort_by_key(|c| std::cmp::Reverse(c.start_byte()));
        for c in calls {
            self.call(c);
        }
    }

    fn attribute(&mut self, node: Node) {
        if self.canonical(node).as_deref().is_some_and(|c| c == "tl.float64" || c == "tl.fp64") {
            let r = range(node);
            self.ops.push(TlOp { kind: TlOpKind::Float64, range: r, callee_range: r, callee: "tl.float64".into() });
        }
    }

    fn args<'n>(&self, call: Node<'n>) -> (Vec<Node<'n>>, Vec<(&'t str, Node<'n>, Node<'n>)>) {
        let mut pos = Vec::new();
        let mut kw = Vec::new();
        if let Some(a) = call.field("arguments") {
            for n in named_children(a) {
                if n.kind() == "keyword_argument" {
                    if let (Some(k), Some(v)) = (n.field("name"), n.field("value")) {
                        kw.push((self.cx.text_of(k), v, n));
                    }
                } else if !matches!(n.kind(), "list_splat" | "dictionary_splat") {
                    pos.push(n);
                }
            }
        }
        (pos, kw)
    }

    /// The callee name when `func` is one that reads `boundary_check=` as dimension indices:
    /// `tl.load` / `tl.store` (through any alias of `triton.language`), or a `.load` / `.store`
    /// method of a value that is not a module (a block-pointer or tensor descriptor).
    fn boundary_check_callee(&self, func: Node) -> Option<String> {
        match self.canonical(func) {
            Some(c) => matches!(c.as_str(), "tl.load" | "tl.store").then_some(c),
            None if func.kind() == "attribute" => {
                let attr = self.cx.text_of(func.field("attribute")?);
                matches!(attr, "load" | "store").then(|| self.cx.text_of(func).to_string())
            }
            None => None,
        }
    }

    fn call(&mut self, call: Node<'t>) {
        let (pos, kw) = self.args(call);
        let func = call.field("function");
        // `boundary_check=` on `tl.load` / `tl.store` and descriptor methods; a user `@triton.jit`
        // helper may take a keyword of the same name with its own meaning.
        if let (Some(f), Some((_, v, n))) = (func, kw.iter().find(|(k, _, _)| *k == "boundary_check"))
            && let Some(callee) = self.boundary_check_callee(f)
        {
            let value = self.cx.binding("boundary_check", *v, range(*n), range(*n), &[]);
            self.ops.push(TlOp { kind: TlOpKind::BoundaryCheck { value }, range: range(*n), callee_range: range(f), callee });
        }
        let Some(func) = func else { return };
        self.check_offset_use(call, &pos);
        let Some(callee) = self.canonical(func) else { return };
        let kind = match callee.as_str() {
            "tl.dot" => Some(self.dot(call, &pos, &kw)),
            "tl.arange" => {
                let (start, end) = match pos.as_slice() {
                    [s, e, ..] => (expr_of(self.cx, *s), expr_of(self.cx, *e)),
                    _ => {
                        let get = |n: &str| kw.iter().find(|(k, _, _)| *k == n).map(|(_, v, _)| expr_of(self.cx, *v));
                        (get("start").unwrap_or(Expr::Unknown), get("end").unwrap_or(Expr::Unknown))
                    }
                };
                Some(TlOpKind::Arange { start, end })
            }
            "tl.zeros" | "tl.full" => {
                let info = self.infer(call);
                Some(TlOpKind::Zeros { shape: info.shape.unwrap_or_default(), dtype: info.dtype })
            }
            "tl.make_block_ptr" => Some(TlOpKind::MakeBlockPtr),
            "tl.advance" => Some(TlOpKind::Advance),
            "tl.make_tensor_descriptor" => Some(TlOpKind::MakeTensorDescriptor { experimental: false }),
            "tl._experimental_make_tensor_descriptor" => Some(TlOpKind::MakeTensorDescriptor { experimental: true }),
            "tl.program_id" | "tl.num_programs" => Some(TlOpKind::ProgramId {
                axis: pos
                    .first()
                    .copied()
                    .or_else(|| kw.iter().find(|(k, _, _)| *k == "axis").map(|(_, v, _)| *v))
                    .and_then(|a| expr_of(self.cx, a).eval_const().as_int()),
                num_programs: callee == "tl.num_programs",
            }),
            c if c == "tl.load" || c == "tl.store" || c.starts_with("tl.atomic_") => Some(TlOpKind::Memory { func: c.to_string() }),
            c if c.starts_with("tl.math.") || c.starts_with("libdevice.") => Some(TlOpKind::Math { func: c.to_string() }),
            c => {
                let short = c.strip_prefix("tl.").unwrap_or("");
                if REDUCTIONS.contains(&short) {
                    let info = pos.first().map(|x| self.infer(*x)).unwrap_or_default();
                    Some(TlOpKind::Reduce { func: c.to_string(), shape: info.shape, dtype: info.dtype })
                } else if ELEMENTWISE.contains(&short) && !matches!(short, "maximum" | "minimum" | "where" | "clamp") {
                    Some(TlOpKind::Math { func: c.to_string() })
                } else {
                    None
                }
            }
        };
        if callee.starts_with("tl.") || callee.starts_with("triton.") {
            // Every Triton API call, with its keyword names, for the availability rule (XF405).
            let keywords = kw.iter().filter_map(|(k, _, n)| Some((k.to_string(), range(n.field("name")?)))).collect();
            let c = callee.clone();
            self.api_calls.push(TlOp { kind: TlOpKind::Call { keywords }, range: range(call), callee_range: range(func), callee: c });
        }
        if let Some(kind) = kind {
            self.ops.push(TlOp { kind, range: range(call), callee_range: range(func), callee });
        }
    }

    fn dot(&mut self, call: Node<'t>, pos: &[Node<'t>], kw: &[(&'t str, Node<'t>, Node<'t>)]) -> TlOpKind {
        let arg = |i: usize, name: &str| pos.get(i).copied().or_else(|| kw.iter().find(|(k, _, _)| *k == name).map(|(_, v, _)| *v));
        let a = arg(0, "input").map(|n| self.infer(n)).unwrap_or_default();
        let b = arg(1, "other").map(|n| self.infer(n)).unwrap_or_default();
        let acc = arg(2, "acc");
        let keyword = |name: &str| -> Option<Binding> {
            kw.iter().find(|(k, _, _)| *k == name).map(|(k, v, n)| self.cx.binding(k, *v, range(*n), range(*n), &[]))
        };
        let mut input_precision = keyword("input_precision");
        let allow_tf32 = keyword("allow_tf32");
        if input_precision.is_none()
            && let Some(b) = &allow_tf32
            && b.value == Value::Bool(false)
        {
            input_precision = Some(Binding { value: Value::Str("ieee".into()), ..b.clone() });
        }
        let out_dtype = kw.iter().find(|(k, _, _)| *k == "out_dtype").and_then(|(_, v, _)| match expr_of(self.cx, *v).eval_const() {
            Value::Dtype(d) => Some(d),
            _ => None,
        });
        let acc_dtype = acc.and_then(|n| self.infer(n).dtype).or(out_dtype);
        let shape2 = |s: Option<Vec<Expr>>| s.filter(|v| v.len() >= 2);
        let _ = call;
        TlOpKind::Dot {
            a_shape: shape2(a.shape),
            b_shape: shape2(b.shape),
            a_dtype: a.dtype,
            b_dtype: b.dtype,
            input_precision,
            allow_tf32,
            has_acc_arg: acc.is_some(),
            inplace_accumulate: None,
            acc_dtype,
        }
    }

    // ---- shape / dtype inference ----

    fn infer(&self, node: Node) -> Info {
        self.infer_depth(node, 0)
    }

    fn infer_depth(&self, node: Node, depth: usize) -> Info {
        if depth > 48 {
            return Info::unknown();
        }
        let sub = |n: Node| self.infer_depth(n, depth + 1);
        let node = unparen(node);
        match node.kind() {
            "integer" | "float" | "true" | "false" | "none" => Info::scalar(),
            "identifier" => {
                let name = self.cx.text_of(node);
                if let Some(i) = self.env.get(name) {
                    return i.clone();
                }
                if self.param(name).is_some() || self.cx.constant(name).is_some() {
                    return Info::scalar();
                }
                Info::unknown()
            }
            "unary_operator" => node.field("argument").map(sub).unwrap_or_default(),
            "binary_operator" => {
                let (Some(l), Some(r)) = (node.field("left"), node.field("right")) else {
                    return Info::unknown();
                };
                let (li, ri) = (sub(l), sub(r));
                Info { shape: broadcast(li.shape, ri.shape), dtype: li.dtype.or(ri.dtype) }
            }
            "comparison_operator" | "boolean_operator" => {
                let kids: Vec<Node> = named_children(node).collect();
                let mut shape = Some(Vec::new());
                for k in kids {
                    shape = broadcast(shape, sub(k).shape);
                }
                Info { shape, dtype: Some("int1".into()) }
            }
            "conditional_expression" => named_children(node).next().map(sub).unwrap_or_default(),
            "subscript" => self.index(node, depth),
            "attribute" => {
                // `x.T`
                let attr = node.field("attribute").map(|a| self.cx.text_of(a));
                match (attr, node.field("object")) {
                    (Some("T"), Some(o)) => {
                        let i = sub(o);
                        Info {
                            shape: i.shape.map(|mut s| {
                                s.reverse();
                                s
                            }),
                            dtype: i.dtype,
                        }
                    }
                    _ => Info::unknown(),
                }
            }
            "call" => self.infer_call(node, depth),
            _ => Info::unknown(),
        }
    }

    /// `x[:, None]`, `x[None, :]`, `x[:, :, None]`.
    fn index(&self, node: Node, depth: usize) -> Info {
        let Some(value) = node.field("value") else { return Info::unknown() };
        let base = self.infer_depth(value, depth + 1);
        let Some(shape) = base.shape else { return Info::unknown() };
        let mut cursor = node.walk();
        let mut idx: Vec<Node> = node.children_by_field_name("subscript", &mut cursor).collect();
        if idx.len() == 1 && idx[0].kind() == "tuple" {
            idx = named_children(idx[0]).collect();
        }
        let mut dims = shape.into_iter();
        let mut out = Vec::new();
        for i in idx {
            match i.kind() {
                "none" => out.push(Expr::Const(Value::Int(1))),
                "slice" if named_children(i).next().is_none() => match dims.next() {
                    Some(d) => out.push(d),
                    None => return Info::unknown(),
                },
                "ellipsis" => return Info::unknown(),
                _ => return Info::unknown(),
            }
        }
        out.extend(dims);
        Info { shape: Some(out), dtype: base.dtype }
    }

    fn shape_of_tuple(&self, node: Node) -> Option<Vec<Expr>> {
        let node = unparen(node);
        match node.kind() {
            "tuple" | "list" => Some(named_children(node).map(|d| expr_of(self.cx, d)).collect()),
            "integer" | "identifier" => Some(vec![expr_of(self.cx, node)]),
            _ => None,
        }
    }

    fn dtype_of(&self, node: Node) -> Option<String> {
        match expr_of(self.cx, node).eval(&|n| self.cx.constant(n).map(|c| c.value.clone())) {
            Value::Dtype(d) => Some(d),
            Value::Str(s) => canonical_dtype(&s),
            _ => None,
        }
    }

    fn infer_call(&self, call: Node, depth: usize) -> Info {
        let sub = |n: Node| self.infer_depth(n, depth + 1);
        let Some(func) = call.field("function") else { return Info::unknown() };
        let (pos, kw) = self.args(call);
        let kwarg = |name: &str| kw.iter().find(|(k, _, _)| *k == name).map(|(_, v, _)| *v);
        let arg = |i: usize, name: &str| pos.get(i).copied().or_else(|| kwarg(name));
        // Methods on tensors and descriptors: `x.to(dtype)`, `desc.load(offsets)`.
        if func.kind() == "attribute" && self.canonical(func).is_none() {
            let attr = func.field("attribute").map(|a| self.cx.text_of(a)).unwrap_or("");
            let Some(obj) = func.field("object") else { return Info::unknown() };
            let base = sub(obj);
            return match attr {
                "to" => Info { shape: base.shape, dtype: arg(0, "dtype").and_then(|d| self.dtype_of(d)) },
                "load" | "gather" => Info { shape: base.shape, dtype: None },
                "trans" | "T" => Info {
                    shape: base.shape.map(|mut s| {
                        s.reverse();
                        s
                    }),
                    dtype: base.dtype,
                },
                _ => Info::unknown(),
            };
        }
        let Some(callee) = self.canonical(func) else {
            // Built-ins like `min(a, b)` over scalars stay scalars.
            return if matches!(self.cx.text_of(func), "min" | "max" | "abs" | "int" | "float") { Info::scalar() } else { Info::unknown() };
        };
        let short = callee.strip_prefix("tl.").unwrap_or(&callee);
        match short {
            "arange" => {
                let (s, e) = match pos.as_slice() {
                    [s, e, ..] => (expr_of(self.cx, *s), expr_of(self.cx, *e)),
                    _ => return Info::unknown(),
                };
                let extent = if s == Expr::Const(Value::Int(0)) { e } else { Expr::BinOp(BinOp::Sub, Box::new(e), Box::new(s)) };
                Info { shape: Some(vec![extent]), dtype: Some("int32".into()) }
            }
            "zeros" | "full" | "empty" => Info {
                shape: arg(0, "shape").and_then(|s| self.shape_of_tuple(s)),
                dtype: kwarg("dtype").or_else(|| pos.get(if short == "full" { 2 } else { 1 }).copied()).and_then(|d| self.dtype_of(d)),
            },
            "zeros_like" | "full_like" => sub_or_unknown(arg(0, "input").map(sub)),
            "load" => {
                let p = arg(0, "pointer").map(sub).unwrap_or_default();
                Info { shape: p.shape, dtype: None }
            }
            "load_tensor_descriptor" => Info { shape: arg(0, "desc").map(sub).and_then(|i| i.shape), dtype: None },
            "make_block_ptr" | "make_tensor_descriptor" | "_experimental_make_tensor_descriptor" => {
                Info { shape: kwarg("block_shape").and_then(|s| self.shape_of_tuple(s)), dtype: None }
            }
            "advance" => arg(0, "base").map(sub).unwrap_or_default(),
            "dot" | "dot_scaled" => {
                let a = arg(0, "input").map(sub).unwrap_or_default();
                let b = arg(1, "other").map(sub).unwrap_or_default();
                let acc = arg(2, "acc").map(sub);
                let shape = match (a.shape, b.shape) {
                    (Some(a), Some(b)) if a.len() >= 2 && a.len() == b.len() => {
                        let mut s = a[..a.len() - 1].to_vec();
                        s.push(b[b.len() - 1].clone());
                        Some(s)
                    }
                    _ => acc.as_ref().and_then(|i| i.shape.clone()),
                };
                let dtype = kwarg("out_dtype").and_then(|d| self.dtype_of(d)).or_else(|| acc.and_then(|i| i.dtype));
                Info { shape, dtype }
            }
            "trans" | "permute" if pos.len() <= 1 => {
                let i = arg(0, "input").map(sub).unwrap_or_default();
                Info {
                    shape: i.shape.map(|mut s| {
                        s.reverse();
                        s
                    }),
                    dtype: i.dtype,
                }
            }
            "reshape" | "view" | "broadcast_to" => Info {
                shape: arg(1, "shape")
                    .and_then(|s| self.shape_of_tuple(s))
                    .or_else(|| (pos.len() > 2).then(|| pos[1..].iter().map(|d| expr_of(self.cx, *d)).collect())),
                dtype: arg(0, "input").map(sub).and_then(|i| i.dtype),
            },
            "cast" => Info { shape: arg(0, "input").map(sub).and_then(|i| i.shape), dtype: arg(1, "dtype").and_then(|d| self.dtype_of(d)) },
            "program_id" | "num_programs" => Info { shape: Some(Vec::new()), dtype: Some("int32".into()) },
            r if REDUCTIONS.contains(&r) => {
                let i = arg(0, "input").map(sub).unwrap_or_default();
                let axis = arg(1, "axis").map(|a| expr_of(self.cx, a).eval_const());
                let shape = match (i.shape, axis) {
                    (Some(mut s), Some(Value::Int(ax))) => {
                        let len = s.len() as i64;
                        let ax = if ax < 0 { ax + len } else { ax };
                        if ax >= 0 && ax < len {
                            s.remove(ax as usize);
                            Some(s)
                        } else {
                            None
                        }
                    }
                    (Some(_), Some(Value::None)) | (Some(_), None) => Some(Vec::new()),
                    _ => None,
                };
                Info { shape, dtype: i.dtype }
            }
            e if ELEMENTWISE.contains(&e) || callee.starts_with("tl.math.") || callee.starts_with("libdevice.") => {
                let mut shape = Some(Vec::new());
                let mut dtype = None;
                for p in &pos {
                    let i = sub(*p);
                    shape = broadcast(shape, i.shape);
                    dtype = dtype.or(i.dtype);
                }
                Info { shape, dtype: if e == "where" { None } else { dtype } }
            }
            _ => Info::unknown(),
        }
    }

    // ---- XF203: int32 `pid * stride` reaching a pointer ----

    fn is_pid(&self, node: Node) -> bool {
        let node = unparen(node);
        match node.kind() {
            "call" => self.callee(node).as_deref() == Some("tl.program_id"),
            "identifier" => self.pid_vars.iter().any(|v| v == self.cx.text_of(node)),
            _ => false,
        }
    }

    fn int32_stride(&self, node: Node) -> Option<String> {
        let node = unparen(node);
        if node.kind() != "identifier" {
            return None;
        }
        let p = self.param(self.cx.text_of(node))?;
        let ann = p.annotation.as_deref().unwrap_or("");
        (!p.is_constexpr && !ann.contains("int64")).then(|| p.name.clone())
    }

    /// Records a `pid * stride` product unless it is already widened with `.to(tl.int64)`.
    fn product(&mut self, node: Node) {
        if node.field("operator").map(|o| self.cx.text_of(o)) != Some("*") {
            return;
        }
        let (Some(l), Some(r)) = (node.field("left"), node.field("right")) else { return };
        let stride = if self.is_pid(l) {
            self.int32_stride(r)
        } else if self.is_pid(r) {
            self.int32_stride(l)
        } else {
            None
        };
        let Some(stride) = stride else { return };
        // Widened on the path: an enclosing `.to(tl.int64)` / `tl.cast(.., tl.int64)`.
        let mut cur = node.parent();
        while let Some(p) = cur {
            if p.kind() == "call" && self.cx.text_of(p).contains("int64") {
                return;
            }
            if matches!(p.kind(), "expression_statement" | "block") {
                break;
            }
            cur = p.parent();
        }
        let r = range(node);
        if !self.offsets.iter().any(|(x, _, _)| *x == r) {
            self.offsets.push((r, stride, false));
        }
    }

    /// Locals assigned from an expression holding an int32 product (or another tainted local).
    fn taint_of(&self, expr: Node) -> Option<usize> {
        let er = range(expr);
        if let Some(i) = self.offsets.iter().position(|(r, _, _)| er.contains_range(*r))
            && !self.cx.text_of(expr).contains("int64")
        {
            return Some(i);
        }
        let mut stack = vec![expr];
        while let Some(n) = stack.pop() {
            let tag = kinds().tag(n);
            if tag == KindTag::Identifier
                && let Some(i) = self.tainted.get(self.cx.text_of(n))
            {
                return Some(*i);
            }
            if tag == KindTag::Call && self.cx.text_of(n).contains("int64") {
                continue;
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        None
    }

    fn propagate_taint(&mut self, name: &str, right: Node) {
        match self.taint_of(right) {
            Some(i) => {
                self.tainted.insert(name.to_string(), i);
            }
            None => {
                self.tainted.remove(name);
            }
        }
    }

    fn propagate_taint_aug(&mut self, name: &str, right: Node) {
        if let Some(i) = self.taint_of(right) {
            self.tainted.insert(name.to_string(), i);
            // `ptr += pid * stride` on a pointer parameter is itself address arithmetic.
            if self.param(name).is_some_and(|p| !p.is_constexpr)
                && let Some(o) = self.offsets.get_mut(i)
            {
                o.2 = true;
            }
        }
    }

    /// A memory op or block pointer whose address argument carries an int32 product.
    fn check_offset_use(&mut self, call: Node, pos: &[Node]) {
        if self.offsets.is_empty() {
            return;
        }
        let Some(callee) = self.callee(call) else { return };
        let addr = match callee.as_str() {
            "tl.load" | "tl.store" | "tl.make_block_ptr" => pos.first().copied(),
            c if c.starts_with("tl.atomic_") => pos.first().copied(),
            _ => None,
        };
        let Some(addr) = addr else { return };
        if let Some(i) = self.taint_of(addr)
            && let Some(o) = self.offsets.get_mut(i)
        {
            o.2 = true;
        }
    }
}

fn sub_or_unknown(i: Option<Info>) -> Info {
    i.unwrap_or_default()
}

/// NumPy-style broadcasting of symbolic shapes. Dims that are not provably equal (and neither
/// is 1) become `Expr::Unknown`.
fn broadcast(a: Option<Vec<Expr>>, b: Option<Vec<Expr>>) -> Option<Vec<Expr>> {
    let (a, b) = (a?, b?);
    let n = a.len().max(b.len());
    let one = Expr::Const(Value::Int(1));
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let da = (i + a.len()).checked_sub(n).and_then(|j| a.get(j));
        let db = (i + b.len()).checked_sub(n).and_then(|j| b.get(j));
        out.push(match (da, db) {
            (Some(x), None) | (None, Some(x)) => x.clone(),
            (Some(x), Some(y)) if x == y => x.clone(),
            (Some(x), Some(y)) if *x == one => y.clone(),
            (Some(x), Some(y)) if *y == one => x.clone(),
            _ => Expr::Unknown,
        });
    }
    Some(out)
}
