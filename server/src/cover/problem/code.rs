//! What the entry's own code says about its inputs: shape unpacking (`M, K = a.shape`), `.shape[i]` /
//! `.size(i)`, `numel()`, asserts (equal sizes, rank, divisibility, dtype, contiguity), allocations
//! and casts, type hints, and the kernel's block pointers or tensor descriptors (`shape=(K, N)` of the
//! pointer a tensor was passed as). Sizes end up in classes of equal dimensions ([`Unify`]).

use super::Origin;
use super::entry::{Entry, EntryParam};
use super::tree::{Src, call_args, callee, descendants, field, scope_nodes, unparen};
use super::value::dtype_name;
use crate::syntax::named_children;
use std::collections::{BTreeMap, HashMap};
use tree_sitter::Node;

/// Union-find over dimension keys: `x:0` (axis 0 of input x) and plain names (`M`).
#[derive(Debug, Default, Clone)]
pub struct Unify {
    parent: HashMap<String, String>,
    /// Keys in the order they were first seen: the first name of a class names it.
    pub order: Vec<String>,
}

impl Unify {
    pub fn add(&mut self, k: &str) {
        if !self.parent.contains_key(k) {
            self.parent.insert(k.to_string(), k.to_string());
            self.order.push(k.to_string());
        }
    }
    pub fn find(&self, k: &str) -> String {
        let mut cur = k.to_string();
        for _ in 0..64 {
            match self.parent.get(&cur) {
                Some(p) if *p != cur => cur = p.clone(),
                _ => break,
            }
        }
        cur
    }
    pub fn union(&mut self, a: &str, b: &str) {
        self.add(a);
        self.add(b);
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(rb, ra);
        }
    }
    pub fn same(&self, a: &str, b: &str) -> bool {
        self.parent.contains_key(a) && self.parent.contains_key(b) && self.find(a) == self.find(b)
    }
}

pub fn slot(param: &str, axis: usize) -> String {
    format!("{param}:{axis}")
}

#[derive(Debug, Default, Clone)]
pub struct CodeFacts {
    pub uf: Unify,
    /// Exact rank, where the code says it (`M, K = a.shape`, `assert x.dim() == 2`).
    pub rank: HashMap<String, (usize, Origin)>,
    /// At least this rank (`x.stride(1)`).
    pub min_rank: HashMap<String, usize>,
    pub tensors: HashMap<String, Origin>,
    /// Scalars passed on to the kernel: (python type, where).
    pub scalars: HashMap<String, (String, Origin)>,
    pub dtypes: HashMap<String, (String, Origin)>,
    pub out_dtype: Option<(String, Origin)>,
    /// Keys (slots or names) that must be multiples of a number.
    pub divisors: Vec<(String, i64, Origin)>,
    /// Where each fact about a slot or name was read: the first one is quoted.
    pub origins: BTreeMap<String, Origin>,
    pub contiguous: Vec<(String, Origin)>,
    /// `n = x.numel()`: x is 1-D of size n unless something says otherwise.
    pub numel: Vec<(String, String, Origin)>,
    /// `x.shape[-1]` before x's rank is known.
    neg: Vec<(String, i64, String, Origin)>,
    /// `assert rotary_dim <= headdim`, `assert K <= 256`: sizes one side at most the other.
    pub bounds: Vec<Bound>,
    /// `rotary_dim *= 2`: a name's multiple of the size it was bound to, from there on.
    scale: HashMap<String, i64>,
    /// `shape = x.shape`: names that stand for an input's whole shape.
    shape_alias: HashMap<String, String>,
    /// Inputs the wrapper flattens to rows (`x = x.view(-1, n)`): any rank of at least two.
    pub flattened: std::collections::HashSet<String>,
    /// Inputs the wrapper flattens to one dimension (`x = x.reshape(-1)`): any shape will do.
    pub flat: HashMap<String, Origin>,
    /// Names the wrapper gives an input's rows (`x2 = x.reshape(-1, n)`) or its flat view
    /// (`xf = x.view(-1)`): what the code says of those is said of the input's last dimension or
    /// its elements, and the kernel addresses them as it would the input.
    views: HashMap<String, (String, View)>,
    /// Int scalars the wrapper allocates with (`torch.zeros(num_bins, ...)`): sizes, which a variant
    /// may choose as it chooses a dimension.
    pub sizes: HashMap<String, Origin>,
    /// Inputs the kernel reads or writes at the same element offsets (`tl.load(e + offs)` and
    /// `tl.load(g + offs)`): one of unknown shape is taken to have the other's (`alike_shapes`).
    alike: Vec<(String, String, Origin)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum View {
    Rows,
    Flat,
}

/// One side of a bound: `factor` times a size (a key of `uf`), or a number.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    Size(String, i64),
    Int(i64),
}

/// `small <= large` (`small < large` when `strict`), read from an assert.
#[derive(Debug, Clone)]
pub struct Bound {
    pub small: Term,
    pub large: Term,
    pub strict: bool,
    pub origin: Origin,
}

impl CodeFacts {
    fn note(&mut self, key: &str, o: &Origin) {
        self.origins.entry(key.to_string()).or_insert_with(|| o.clone());
    }
    fn tensor(&mut self, p: &str, o: &Origin) {
        self.tensors.entry(p.to_string()).or_insert_with(|| o.clone());
    }
    fn at_least(&mut self, p: &str, r: usize) {
        let e = self.min_rank.entry(p.to_string()).or_insert(0);
        *e = (*e).max(r);
    }
    /// Binds slot (p, axis) to a key (a name or another slot), quoting `o`.
    fn bind(&mut self, p: &str, axis: i64, key: &str, o: &Origin) {
        self.tensor(p, o);
        if axis < 0 {
            self.at_least(p, axis.unsigned_abs() as usize);
            self.neg.push((p.to_string(), axis, key.to_string(), o.clone()));
            return;
        }
        let s = slot(p, axis as usize);
        self.at_least(p, axis as usize + 1);
        self.uf.union(&s, key);
        self.note(&s, o);
        self.note(key, o);
    }

    /// Resolves `x.shape[-1]` once ranks are known (from the code or elsewhere).
    pub fn resolve_negative(&mut self, rank_of: &dyn Fn(&str) -> Option<usize>) {
        for (p, axis, key, o) in std::mem::take(&mut self.neg) {
            if let Some(r) = rank_of(&p) {
                let a = r as i64 + axis;
                if a >= 0 {
                    self.bind(&p, a, &key, &o);
                }
            }
        }
    }
}

/// Reads the entry's bodies (and, for the kernel's launches inside them, the kernel's block pointers).
pub fn read(src: &Src, tree: &tree_sitter::Tree, entry: &Entry, kernel_def: Option<Node>, kernel_params: &[String]) -> CodeFacts {
    let mut f = CodeFacts::default();
    let params: Vec<&EntryParam> = entry.params.iter().collect();
    let is_param = |n: &str| params.iter().any(|p| p.name == n);
    for p in &params {
        if let Some(a) = &p.annotation {
            let o = Origin {
                file: src.file.clone(),
                line: src.line(tree.root_node().descendant_for_byte_range(entry.def_start, entry.def_start).unwrap_or(tree.root_node())),
                code: format!("{}: {a}", p.name),
            };
            if a.contains("Tensor") {
                f.tensor(&p.name, &o);
            } else if let Some(t) = ["float", "int", "bool"].into_iter().find(|t| a == t) {
                f.scalars.insert(p.name.clone(), (t.to_string(), o));
            }
        }
    }
    for start in &entry.bodies {
        let Some(def) = super::entry::def_node(tree, *start) else {
            continue;
        };
        let Some(body) = field(def, "body") else {
            continue;
        };
        // `x = x.view(-1, d)`: from there on `x` is the view, and what the code says of it is not
        // the input's shape (its rank, its sizes). Facts are read only where the name is the input.
        let rebound = rebindings(src, body, &is_param);
        for n in scope_nodes(body) {
            let at = n.start_byte();
            let is_param = |name: &str| is_param(name) && rebound.get(name).is_none_or(|&end| at < end);
            let is_param: &dyn Fn(&str) -> bool = &is_param;
            match n.kind() {
                "assignment" => assignment(src, n, &mut f, &is_param),
                "augmented_assignment" => scaled(src, n, &mut f),
                "assert_statement" => {
                    for cond in named_children(n).take(1) {
                        condition(src, cond, &mut f, &is_param, false);
                    }
                }
                "call" => uses(src, n, &mut f, &is_param),
                "subscript" => {
                    // x.shape[1] anywhere: x has at least two dims
                    if let Some((p, axis)) = slot_expr(src, n, &is_param) {
                        f.tensor(&p, &src.origin(n));
                        if axis >= 0 {
                            f.at_least(&p, axis as usize + 1);
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(kdef) = kernel_def {
            for launch in scope_nodes(body).into_iter().filter(|c| c.kind() == "call" && is_launch_of(src, *c, kdef)) {
                let at = launch.start_byte();
                let is_param = |name: &str| is_param(name) && rebound.get(name).is_none_or(|&end| at < end);
                launch_facts(src, launch, kdef, kernel_params, &mut f, &is_param);
                branch_dtypes(src, body, launch, &mut f, &is_param);
            }
        }
    }
    f
}

/// Tensor methods that return a tensor of the same shape: `x = x.contiguous()` is still the input's shape.
const SAME_SHAPE: &[&str] = &[
    "contiguous",
    "to",
    "float",
    "half",
    "bfloat16",
    "double",
    "int",
    "long",
    "detach",
    "clone",
    "cuda",
    "xpu",
    "cpu",
    "type",
    "requires_grad_",
];

/// Whether `value` is `name` through same-shape methods only (`x.contiguous().to(dtype)`).
fn same_shape_of(src: &Src, value: Node, name: &str) -> bool {
    let n = peel_same_shape(src, value);
    n.kind() == "identifier" && src.text(n) == name
}

/// `value` without the same-shape methods called on it last (`x.view(-1, n).contiguous()` → `x.view(-1, n)`).
fn peel_same_shape<'t>(src: &Src, value: Node<'t>) -> Node<'t> {
    let mut n = unparen(value);
    while n.kind() == "call"
        && let Some(f) = field(n, "function").filter(|f| f.kind() == "attribute")
        && field(f, "attribute").is_some_and(|a| SAME_SHAPE.contains(&src.text(a)))
        && let Some(o) = field(f, "object")
    {
        n = unparen(o);
    }
    n
}

/// The name `value` makes one-dimensional (`x.reshape(-1)`, `x.view(-1)`, `x.flatten()`, `x.ravel()`),
/// through same-shape methods on either side (`x.contiguous().view(-1)`).
fn flat_source<'t>(src: &Src<'t>, value: Node<'t>) -> Option<&'t str> {
    let mut n = unparen(value);
    let mut flat = false;
    while n.kind() == "call" {
        let f = field(n, "function").filter(|f| f.kind() == "attribute")?;
        let method = field(f, "attribute").map_or("", |a| src.text(a));
        let args = call_args(src, n);
        let minus_one = matches!(args.positional.as_slice(), [a] if src.text(unparen(*a)).replace(' ', "") == "-1");
        match method {
            "reshape" | "view" if minus_one && args.keywords.is_empty() => flat = true,
            "flatten" | "ravel" if args.positional.is_empty() && args.keywords.is_empty() => flat = true,
            m if SAME_SHAPE.contains(&m) => {}
            _ => return None,
        }
        n = unparen(field(f, "object")?);
    }
    (flat && n.kind() == "identifier").then(|| src.text(n))
}

/// `x.view(-1, n)` or `x.reshape(-1, n)`, same-shape methods around it allowed: `x` as rows, and the
/// width `n`.
fn rows_of<'t>(src: &Src<'t>, value: Node<'t>) -> Option<(&'t str, Node<'t>)> {
    let rows = peel_same_shape(src, value);
    if rows.kind() != "call" {
        return None;
    }
    let (obj, method) = callee(src, rows).split_once('.')?;
    match (method, call_args(src, rows).positional.as_slice()) {
        ("view" | "reshape", [lead, last]) if src.text(unparen(*lead)).replace(' ', "") == "-1" => Some((obj, unparen(*last))),
        _ => None,
    }
}

/// Input `p` made rows of width `last`: any rank of at least two, its last dimension `last` where that
/// is a name.
fn note_rows(src: &Src, f: &mut CodeFacts, p: &str, last: Node, is_param: &dyn Fn(&str) -> bool, o: &Origin) {
    f.flattened.insert(p.to_string());
    f.tensor(p, o);
    f.at_least(p, 2);
    if last.kind() == "identifier" && !is_param(src.text(last)) {
        f.bind(p, -1, src.text(last), o);
    }
}

/// Where each input is first assigned a value of another shape in `body` (the end of that
/// statement): the input's own facts end there.
fn rebindings(src: &Src, body: Node, is_param: &dyn Fn(&str) -> bool) -> std::collections::HashMap<String, usize> {
    let mut out = std::collections::HashMap::new();
    for n in scope_nodes(body) {
        let left = match n.kind() {
            "assignment" | "for_statement" => field(n, "left"),
            _ => None,
        };
        let Some(left) = left else {
            continue;
        };
        if n.kind() == "assignment"
            && left.kind() == "identifier"
            && field(n, "right").is_some_and(|r| same_shape_of(src, r, src.text(left)))
        {
            continue;
        }
        let names: Vec<Node> = if left.kind() == "identifier" { vec![left] } else { named_children(left).collect() };
        // `a, b = a.contiguous(), b.contiguous()`: each name is its own value's shape
        let values: Vec<Node> = match (n.kind(), field(n, "right").map(unparen)) {
            ("assignment", Some(r)) if left.kind() != "identifier" && matches!(r.kind(), "expression_list" | "tuple") => {
                named_children(r).collect()
            }
            _ => Vec::new(),
        };
        for (i, name) in names.into_iter().enumerate().filter(|(_, x)| x.kind() == "identifier") {
            let t = src.text(name);
            if values.len() == named_children(left).count() && values.get(i).is_some_and(|v| same_shape_of(src, *v, t)) {
                continue;
            }
            if is_param(t) {
                out.entry(t.to_string()).or_insert(n.end_byte());
            }
        }
    }
    out
}

fn is_launch_of(src: &Src, call: Node, kdef: Node) -> bool {
    let Some(func) = field(call, "function").filter(|f| f.kind() == "subscript") else {
        return false;
    };
    let target = field(func, "value").map(|v| src.text(v)).unwrap_or("");
    let kname = field(kdef, "name").map(|n| src.text(n)).unwrap_or("");
    !kname.is_empty() && (target == kname || target.ends_with(&format!(".{kname}")) || target == format!("{kname}.fn"))
}

/// `x.shape[i]`, `x.size(i)` or `x.shape[-1]` of an input: (input, axis).
fn slot_expr(src: &Src, n: Node, is_param: &dyn Fn(&str) -> bool) -> Option<(String, i64)> {
    let n = unparen(n);
    match n.kind() {
        "subscript" => {
            let v = field(n, "value")?;
            let (obj, attr) = (field(v, "object")?, field(v, "attribute")?);
            if v.kind() != "attribute" || src.text(attr) != "shape" || !is_param(src.text(obj)) {
                return None;
            }
            let i = int_lit(src, field(n, "subscript")?)?;
            Some((src.text(obj).to_string(), i))
        }
        "call" => {
            let f = field(n, "function")?;
            if f.kind() != "attribute" {
                return None;
            }
            let (obj, attr) = (field(f, "object")?, field(f, "attribute")?);
            if !matches!(src.text(attr), "size" | "stride") || !is_param(src.text(obj)) {
                return None;
            }
            if src.text(attr) == "stride" {
                return None; // a stride is not a size, only a rank hint (see `uses`)
            }
            let args = call_args(src, n);
            let i = int_lit(src, *args.positional.first()?)?;
            Some((src.text(obj).to_string(), i))
        }
        _ => None,
    }
}

fn int_lit(src: &Src, n: Node) -> Option<i64> {
    let n = unparen(n);
    match n.kind() {
        "integer" => src.text(n).replace('_', "").parse().ok(),
        "unary_operator" if src.text(n).starts_with('-') => field(n, "argument").and_then(|a| int_lit(src, a)).map(|v| -v),
        _ => None,
    }
}

/// `x.shape` / `x.size()` of an input.
fn whole_shape(src: &Src, n: Node, is_param: &dyn Fn(&str) -> bool) -> Option<String> {
    let n = unparen(n);
    let (obj, attr) = match n.kind() {
        "attribute" => (field(n, "object")?, field(n, "attribute")?),
        "call" if call_args(src, n).positional.is_empty() => {
            let f = field(n, "function")?;
            (field(f, "object")?, field(f, "attribute")?)
        }
        _ => return None,
    };
    let ok = (n.kind() == "attribute" && src.text(attr) == "shape") || (n.kind() == "call" && src.text(attr) == "size");
    (ok && is_param(src.text(obj))).then(|| src.text(obj).to_string())
}

/// `x2 = x.reshape(-1, n)` or `xf = x.view(-1)` (a new name for a view of an input), and what the code
/// then reads of that view: `rows, cols = x2.shape`, `cols = x2.shape[-1]`, `n = xf.numel()`.
fn view_assignment(src: &Src, left: Node, right: Node, f: &mut CodeFacts, is_param: &dyn Fn(&str) -> bool, o: &Origin) -> bool {
    if left.kind() == "identifier" && !is_param(src.text(left)) {
        let name = src.text(left);
        if let Some((obj, last)) = rows_of(src, right).filter(|(obj, _)| is_param(obj)) {
            note_rows(src, f, obj, last, is_param, o);
            f.views.insert(name.to_string(), (obj.to_string(), View::Rows));
            return true;
        }
        if let Some(obj) = flat_source(src, right).filter(|p| is_param(p)) {
            f.tensor(obj, o);
            f.flat.entry(obj.to_string()).or_insert_with(|| o.clone());
            f.views.insert(name.to_string(), (obj.to_string(), View::Flat));
            return true;
        }
    }
    // What is read of a view: its last dimension is the input's; its element count, the input's.
    let view_of = |n: Node| {
        let n = unparen(n);
        (n.kind() == "identifier").then(|| f.views.get(src.text(n)).cloned()).flatten()
    };
    let r = unparen(right);
    let shape_of_view = match r.kind() {
        "attribute" if field(r, "attribute").is_some_and(|a| src.text(a) == "shape") => field(r, "object").and_then(view_of),
        _ => None,
    };
    if let Some((p, View::Rows)) = shape_of_view
        && matches!(left.kind(), "pattern_list" | "tuple_pattern")
        && let [_, last] = named_children(left).collect::<Vec<_>>().as_slice()
    {
        if last.kind() == "identifier" && src.text(*last) != "_" {
            f.bind(&p, -1, src.text(*last), o);
        }
        return true;
    }
    if left.kind() == "identifier" && r.kind() == "call" {
        let c = callee(src, r);
        if let Some((v, "numel")) = c.split_once('.')
            && let Some((p, View::Flat)) = f.views.get(v).cloned()
        {
            f.numel.push((p, src.text(left).to_string(), o.clone()));
            return true;
        }
    }
    if left.kind() == "identifier"
        && r.kind() == "subscript"
        && let Some(v) =
            field(r, "value").filter(|v| v.kind() == "attribute" && field(*v, "attribute").is_some_and(|a| src.text(a) == "shape"))
        && let Some((p, View::Rows)) = field(v, "object").and_then(view_of)
        && field(r, "subscript").and_then(|i| int_lit(src, i)).is_some_and(|i| i == -1 || i == 1)
    {
        f.bind(&p, -1, src.text(left), o);
        return true;
    }
    false
}

fn assignment(src: &Src, n: Node, f: &mut CodeFacts, is_param: &dyn Fn(&str) -> bool) {
    let (Some(left), Some(right)) = (field(n, "left"), field(n, "right")) else {
        return;
    };
    let o = src.origin(n);
    if view_assignment(src, left, right, f, is_param, &o) {
        return;
    }
    let alias = |r: Node| {
        let r = unparen(r);
        (r.kind() == "identifier").then(|| f.shape_alias.get(src.text(r)).cloned()).flatten()
    };
    if let Some(p) = whole_shape(src, right, is_param).or_else(|| alias(right)) {
        if left.kind() == "identifier" {
            f.tensor(&p, &o);
            f.shape_alias.insert(src.text(left).to_string(), p);
            return;
        }
        if matches!(left.kind(), "pattern_list" | "tuple_pattern" | "list_pattern") {
            let names: Vec<Node> = named_children(left).collect();
            if names.iter().any(|x| x.kind() != "identifier") {
                return; // `*rest`: the rank is not fixed
            }
            // A second unpack of another rank is another case of the input (`if not varlen: b, s, h, d =
            // x.shape else: t, h, d = x.shape`): the first one read describes the input checked.
            if f.rank.entry(p.clone()).or_insert((names.len(), o.clone())).0 != names.len() {
                return;
            }
            for (i, name) in names.iter().enumerate() {
                let t = src.text(*name);
                if t != "_" {
                    f.bind(&p, i as i64, t, &o);
                } else {
                    f.bind(&p, i as i64, &slot(&p, i), &o);
                }
            }
        }
        return;
    }
    if left.kind() == "identifier" {
        let name = src.text(left);
        if let Some((p, axis)) = slot_expr(src, right, is_param) {
            f.bind(&p, axis, name, &o);
            return;
        }
        let r = unparen(right);
        // `n = shape[-1]` through `shape = x.shape`
        if r.kind() == "subscript"
            && let Some(p) = field(r, "value").and_then(alias)
            && let Some(i) = field(r, "subscript").and_then(|i| int_lit(src, i))
        {
            f.bind(&p, i, name, &o);
            return;
        }
        // `x = x.reshape(-1)`, `x.view(-1).contiguous()`, `x.flatten()`: the input's shape is free
        if is_param(name) && flat_source(src, right) == Some(name) {
            f.tensor(name, &o);
            f.flat.entry(name.to_string()).or_insert(o);
            return;
        }
        // `x = x.view(-1, n)`: rows of the last dimension `n`, whatever the rank before; any other
        // view of the input says nothing of its shape
        let rows = peel_same_shape(src, r);
        if rows.kind() == "call"
            && is_param(name)
            && let Some(method) = callee(src, rows).strip_prefix(&format!("{name}."))
            && matches!(method, "view" | "reshape")
        {
            if let Some((_, last)) = rows_of(src, r) {
                note_rows(src, f, name, last, is_param, &o);
            }
            return;
        }
        if r.kind() == "call" {
            let c = callee(src, r);
            if let Some(p) = c.strip_suffix(".numel").filter(|p| is_param(p)) {
                f.tensor(p, &o);
                f.numel.push((p.to_string(), name.to_string(), o));
                return;
            }
            if c.starts_with("torch.")
                && let Some(d) = call_args(src, r).keyword("dtype").and_then(|d| torch_dtype(src, d))
                && f.out_dtype.is_none()
                && !c.ends_with("_like")
            {
                f.out_dtype = Some((d, o));
            }
        }
    }
}

fn torch_dtype(src: &Src, n: Node) -> Option<String> {
    let t = src.text(unparen(n));
    let attr = t.strip_prefix("torch.")?;
    dtype_name(attr).map(str::to_string)
}

/// What a condition says of the inputs (an assert's; `and` of several too). `dtypes_only`: only their
/// dtypes, for an `if` around the kernel's launch, where a size test is a branch and not an assert.
fn condition(src: &Src, cond: Node, f: &mut CodeFacts, is_param: &dyn Fn(&str) -> bool, dtypes_only: bool) {
    let cond = unparen(cond);
    let o = src.origin(cond);
    match cond.kind() {
        "boolean_operator" if field(cond, "operator").is_some_and(|op| src.text(op) == "and") => {
            for side in ["left", "right"] {
                if let Some(s) = field(cond, side) {
                    condition(src, s, f, is_param, dtypes_only);
                }
            }
        }
        // `assert not x.is_floating_point()`: integers (indices, counts); int64 is torch's index type
        "not_operator" if !dtypes_only => {
            if let Some(arg) = field(cond, "argument").map(unparen).filter(|a| a.kind() == "call")
                && let Some(p) = callee(src, arg).strip_suffix(".is_floating_point").filter(|p| is_param(p))
            {
                f.tensor(p, &o);
                f.dtypes.entry(p.to_string()).or_insert(("int64".into(), o));
            }
        }
        "call" if !dtypes_only => {
            if let Some(p) = callee(src, cond).strip_suffix(".is_contiguous").filter(|p| is_param(p)) {
                f.tensor(p, &o);
                f.contiguous.push((p.to_string(), o));
            }
        }
        "comparison_operator" => {
            let parts: Vec<Node> = named_children(cond).collect();
            let ops: Vec<&str> = {
                let mut c = cond.walk();
                cond.children(&mut c).filter(|x| !x.is_named()).map(|x| src.text(x)).collect()
            };
            let [a, b] = parts.as_slice() else { return };
            match ops.as_slice() {
                ["=="] if dtypes_only => {
                    if let (Some(p), Some(d)) = (dtype_of_param(src, *a, is_param), torch_dtype(src, *b)) {
                        f.tensor(&p, &o);
                        f.dtypes.entry(p).or_insert((d, o));
                    }
                }
                ["=="] => {
                    // `assert D == 64`: a size pinned to a number, both bounds (`fit_bounds` meets them)
                    if let (Some(x), Some(y)) = (term(src, *a, f, is_param, &o), term(src, *b, f, is_param, &o))
                        && let (Term::Size(..), Term::Int(v)) | (Term::Int(v), Term::Size(..)) = (&x, &y)
                        && *v > 0
                    {
                        let size = if matches!(x, Term::Size(..)) { x.clone() } else { y.clone() };
                        f.bounds.push(Bound { small: size.clone(), large: Term::Int(*v), strict: false, origin: o.clone() });
                        f.bounds.push(Bound { small: Term::Int(*v), large: size, strict: false, origin: o.clone() });
                    }
                    equality(src, *a, *b, f, is_param, &o)
                }
                [op @ ("<=" | "<" | ">=" | ">")] if !dtypes_only => {
                    let (small, large) = if op.starts_with('<') { (*a, *b) } else { (*b, *a) };
                    if let (Some(small), Some(large)) = (term(src, small, f, is_param, &o), term(src, large, f, is_param, &o))
                        && (matches!(small, Term::Size(..)) || matches!(large, Term::Size(..)))
                    {
                        f.bounds.push(Bound { small, large, strict: op.len() == 1, origin: o });
                    }
                }
                ["in"] => {
                    // x.dtype in (torch.float16, torch.bfloat16): the first is what the generated inputs use
                    if let Some(p) = dtype_of_param(src, *a, is_param)
                        && let Some(d) = named_children(unparen(*b)).find_map(|x| torch_dtype(src, x))
                    {
                        f.tensor(&p, &o);
                        f.dtypes.entry(p).or_insert((d, o));
                    }
                }
                _ => {}
            }
        }
        _ => {}
    }
}

/// A size or a number on one side of a comparison: `headdim`, `x.shape[1]`, `2 * n`, `256`.
fn term(src: &Src, n: Node, f: &mut CodeFacts, is_param: &dyn Fn(&str) -> bool, o: &Origin) -> Option<Term> {
    let n = unparen(n);
    if n.kind() == "binary_operator" && field(n, "operator").is_some_and(|op| src.text(op) == "*") {
        let (l, r) = (field(n, "left")?, field(n, "right")?);
        let (c, other) = match (int_lit(src, l), int_lit(src, r)) {
            (Some(c), None) => (c, r),
            (None, Some(c)) => (c, l),
            _ => return None,
        };
        return match term(src, other, f, is_param, o)? {
            Term::Size(k, m) => Some(Term::Size(k, m * c)),
            Term::Int(v) => Some(Term::Int(v * c)),
        };
    }
    match side(src, n, is_param, f, o)? {
        Side::Int(v) => Some(Term::Int(v)),
        Side::Key(k) => {
            let m = f.scale.get(&k).copied().unwrap_or(1);
            f.uf.add(&k);
            (m > 0).then_some(Term::Size(k, m))
        }
        _ => None,
    }
}

/// `name *= 2` after `name` was bound to a size: from here on the name is that multiple of it.
fn scaled(src: &Src, n: Node, f: &mut CodeFacts) {
    let (Some(left), Some(right), Some(op)) = (field(n, "left"), field(n, "right"), field(n, "operator")) else {
        return;
    };
    if left.kind() != "identifier" {
        return;
    }
    let name = src.text(left).to_string();
    match (src.text(op), int_lit(src, right)) {
        ("*=", Some(c)) if c > 0 => *f.scale.entry(name).or_insert(1) *= c,
        // any other update: the name no longer says a size the bounds could use
        _ => {
            f.scale.insert(name, 0);
        }
    }
}

/// `if x.dtype == torch.float16:` (or `elif`, or `x.dtype in (...)`) around a launch of the kernel: a
/// wrapper that picks a kernel by dtype reaches this one only with that dtype, so the inputs take it.
/// An `else` branch says nothing (any other dtype will do, float32 among them).
fn branch_dtypes(src: &Src, body: Node, launch: Node, f: &mut CodeFacts, is_param: &dyn Fn(&str) -> bool) {
    let mut n = launch;
    while let Some(up) = n.parent() {
        if up == body {
            break;
        }
        if matches!(up.kind(), "if_statement" | "elif_clause")
            && field(up, "consequence") == Some(n)
            && let Some(cond) = field(up, "condition")
        {
            condition(src, cond, f, is_param, true);
        }
        n = up;
    }
}

fn dtype_of_param(src: &Src, n: Node, is_param: &dyn Fn(&str) -> bool) -> Option<String> {
    let n = unparen(n);
    if n.kind() != "attribute" || field(n, "attribute").map(|a| src.text(a)) != Some("dtype") {
        return None;
    }
    let obj = src.text(field(n, "object")?);
    is_param(obj).then(|| obj.to_string())
}

/// One side of a size comparison: a slot, a name, or a rank query.
enum Side {
    Key(String),
    Shape(String),
    Rank(String),
    Mod(Box<Side>, i64),
    Int(i64),
    /// A tuple of sizes (`(H,)`, `[M, K]`, `torch.Size([M, K])`): each a key where it names one.
    Sizes(Vec<Option<String>>),
}

fn side(src: &Src, n: Node, is_param: &dyn Fn(&str) -> bool, f: &mut CodeFacts, o: &Origin) -> Option<Side> {
    let n = unparen(n);
    if let Some((p, axis)) = slot_expr(src, n, is_param) {
        if axis < 0 {
            let key = format!("{p}:{axis}");
            f.neg.push((p, axis, key.clone(), o.clone()));
            return Some(Side::Key(key));
        }
        f.tensor(&p, o);
        f.at_least(&p, axis as usize + 1);
        return Some(Side::Key(slot(&p, axis as usize)));
    }
    if let Some(p) = whole_shape(src, n, is_param) {
        return Some(Side::Shape(p));
    }
    match n.kind() {
        "integer" => return int_lit(src, n).map(Side::Int),
        "identifier" if !is_param(src.text(n)) => return Some(Side::Key(src.text(n).to_string())),
        "binary_operator" if field(n, "operator").is_some_and(|op| src.text(op) == "%") => {
            let l = side(src, field(n, "left")?, is_param, f, o)?;
            let r = int_lit(src, field(n, "right")?)?;
            return Some(Side::Mod(Box::new(l), r));
        }
        "tuple" | "list" => {
            let items = named_children(n).map(|x| match side(src, x, is_param, f, o) {
                Some(Side::Key(k)) => Some(k),
                _ => None,
            });
            return Some(Side::Sizes(items.collect()));
        }
        "call" => {
            let c = callee(src, n);
            // `torch.Size([M, K])`, `tuple(x.shape)`: what they wrap
            if matches!(c, "torch.Size" | "tuple" | "list")
                && let [a] = call_args(src, n).positional.as_slice()
            {
                return side(src, *a, is_param, f, o);
            }
            if let Some(p) = c.strip_suffix(".dim").filter(|p| is_param(p)) {
                return Some(Side::Rank(p.to_string()));
            }
            if c == "len" {
                let a = call_args(src, n).positional.first().copied()?;
                return whole_shape(src, a, is_param).map(Side::Rank);
            }
        }
        "attribute" if field(n, "attribute").is_some_and(|a| src.text(a) == "ndim") => {
            let obj = src.text(field(n, "object")?);
            return is_param(obj).then(|| Side::Rank(obj.to_string()));
        }
        _ => {}
    }
    None
}

fn equality(src: &Src, a: Node, b: Node, f: &mut CodeFacts, is_param: &dyn Fn(&str) -> bool, o: &Origin) {
    if let (Some(p), Some(d)) = (dtype_of_param(src, a, is_param), torch_dtype(src, b)) {
        f.tensor(&p, o);
        f.dtypes.entry(p).or_insert((d, o.clone()));
        return;
    }
    let (Some(x), Some(y)) = (side(src, a, is_param, f, o), side(src, b, is_param, f, o)) else {
        return;
    };
    match (x, y) {
        (Side::Key(k1), Side::Key(k2)) => {
            f.uf.union(&k1, &k2);
            f.note(&k1, o);
            f.note(&k2, o);
        }
        (Side::Shape(p), Side::Shape(q)) => {
            f.tensor(&p, o);
            f.tensor(&q, o);
            // Equal shapes: axis by axis, once a rank is known (up to 6 dims is every real tensor).
            f.neg.push((p.clone(), i64::MIN, q.clone(), o.clone()));
        }
        // `assert scale.shape == (H,)`: the rank, and each size a name gives
        (Side::Shape(p), Side::Sizes(sizes)) | (Side::Sizes(sizes), Side::Shape(p)) if !sizes.is_empty() => {
            f.tensor(&p, o);
            if f.rank.entry(p.clone()).or_insert((sizes.len(), o.clone())).0 != sizes.len() {
                return;
            }
            for (i, k) in sizes.iter().enumerate() {
                if let Some(k) = k {
                    f.bind(&p, i as i64, k, o);
                }
            }
        }
        (Side::Rank(p), Side::Int(r)) | (Side::Int(r), Side::Rank(p)) if r > 0 => {
            f.tensor(&p, o);
            f.rank.entry(p).or_insert((r as usize, o.clone()));
        }
        (Side::Mod(inner, m), Side::Int(0)) if m > 1 => {
            if let Side::Key(k) = *inner {
                f.uf.add(&k);
                f.note(&k, o);
                f.divisors.push((k, m, o.clone()));
            }
        }
        _ => {}
    }
}

/// Ranks that follow from another input's, set before shapes are read (`equal_shapes` then ties the
/// dimensions): `assert sin.shape == cos.shape` gives `sin` the rank of `cos`; and an input the code
/// says nothing else about takes the shape of one the kernel addresses at the same element offsets
/// (element-wise kernels: the gate and the up projection of a SwiGLU, `x` and `y` of an add).
pub fn alike_shapes(f: &mut CodeFacts, site_rank: &dyn Fn(&str) -> Option<usize>) {
    // A rank the code fixes, else the one a call site passes, else one dimension for an input read
    // only through `numel()` or flattened (`x.reshape(-1)`): any shape does for those.
    let rank_of = |f: &CodeFacts, x: &str| {
        f.rank.get(x).map(|r| r.0).or_else(|| site_rank(x)).or_else(|| {
            let flat = f.numel.iter().any(|(y, _, _)| y == x) || f.flat.contains_key(x);
            (flat && !f.min_rank.contains_key(x)).then_some(1)
        })
    };
    let asserted: Vec<(String, String, Origin)> =
        f.neg.iter().filter(|(_, a, _, _)| *a == i64::MIN).map(|(p, _, q, o)| (p.clone(), q.clone(), o.clone())).collect();
    for (p, q, o) in asserted {
        match (rank_of(f, &p), rank_of(f, &q)) {
            (Some(r), None) => f.rank.insert(q, (r, o)),
            (None, Some(r)) => f.rank.insert(p, (r, o)),
            _ => continue,
        };
    }
    let unknown = |f: &CodeFacts, x: &str| {
        !f.rank.contains_key(x)
            && site_rank(x).is_none()
            && !f.numel.iter().any(|(y, _, _)| y == x)
            && !f.min_rank.contains_key(x)
            && !f.flat.contains_key(x)
    };
    for (p, q, o) in std::mem::take(&mut f.alike) {
        match (rank_of(f, &p), rank_of(f, &q)) {
            (Some(r), None) if unknown(f, &q) => {
                f.rank.insert(q.clone(), (r, o.clone()));
            }
            (None, Some(r)) if unknown(f, &p) => {
                f.rank.insert(p.clone(), (r, o.clone()));
            }
            // Ranks the code states for both: each keeps its own shape.
            (Some(_), Some(_)) if f.rank.contains_key(&p) && f.rank.contains_key(&q) => continue,
            // Otherwise tied axis by axis if the ranks come out equal (`equal_shapes`).
            (None, None) | (Some(_), Some(_)) => {}
            _ => continue,
        }
        f.neg.push((p, i64::MIN, q, o));
    }
}

/// Expands `x.shape == y.shape` facts once ranks are known.
pub fn equal_shapes(f: &mut CodeFacts, rank_of: &dyn Fn(&str) -> Option<usize>) {
    let pending: Vec<_> = f.neg.iter().filter(|(_, a, _, _)| *a == i64::MIN).cloned().collect();
    f.neg.retain(|(_, a, _, _)| *a != i64::MIN);
    for (p, _, q, o) in pending {
        if let (Some(a), Some(b)) = (rank_of(&p), rank_of(&q))
            && a != b
        {
            continue; // both known and different: no dimension is tied by position
        }
        if let Some(r) = rank_of(&p).or_else(|| rank_of(&q)) {
            for i in 0..r {
                f.uf.union(&slot(&p, i), &slot(&q, i));
                f.note(&slot(&p, i), &o);
            }
            f.rank.entry(p.clone()).or_insert((r, o.clone()));
            f.rank.entry(q.clone()).or_insert((r, o.clone()));
        }
    }
}

/// Method calls on inputs that say "tensor": `.stride(i)`, `.dtype`, `.is_contiguous()`, `.data_ptr()`.
fn uses(src: &Src, call: Node, f: &mut CodeFacts, is_param: &dyn Fn(&str) -> bool) {
    let c = callee(src, call);
    allocation_sizes(src, call, c, f, is_param);
    let Some((obj, method)) = c.rsplit_once('.') else {
        return;
    };
    if !is_param(obj) {
        return;
    }
    let o = src.origin(call);
    match method {
        "stride" => {
            f.tensor(obj, &o);
            if let Some(i) = call_args(src, call).positional.first().and_then(|a| int_lit(src, *a))
                && i >= 0
            {
                f.at_least(obj, i as usize + 1);
            }
        }
        "size" | "numel" | "is_contiguous" | "data_ptr" | "contiguous" | "element_size" | "view" | "reshape" => f.tensor(obj, &o),
        _ => {}
    }
}

/// `torch.zeros(num_bins, ...)`, `torch.empty((n, k))`, `x.new_zeros(num_bins)`: an input named among an
/// allocation's sizes is an int size.
fn allocation_sizes(src: &Src, call: Node, callee: &str, f: &mut CodeFacts, is_param: &dyn Fn(&str) -> bool) {
    let method = callee.rsplit('.').next().unwrap_or("");
    let torch_maker = callee.strip_prefix("torch.").is_some_and(|m| matches!(m, "zeros" | "empty" | "ones" | "full" | "rand" | "randn"));
    let new_maker = callee.contains('.') && matches!(method, "new_zeros" | "new_empty" | "new_ones" | "new_full");
    if !torch_maker && !new_maker {
        return;
    }
    let args = call_args(src, call).positional;
    // `full(size, value)` and `new_full(size, value)` take one size; the others may take several.
    let sizes: Vec<Node> = match args.first().map(|a| unparen(*a)) {
        Some(a) if matches!(a.kind(), "tuple" | "list") => named_children(a).collect(),
        Some(_) if matches!(method, "full" | "new_full") => args.iter().take(1).copied().collect(),
        Some(_) => args.clone(),
        None => Vec::new(),
    };
    for s in sizes.into_iter().map(unparen).filter(|s| s.kind() == "identifier") {
        let name = src.text(s);
        if is_param(name) && !f.tensors.contains_key(name) && f.scalars.get(name).is_none_or(|(t, _)| t == "int") {
            let o = src.origin(call);
            f.sizes.entry(name.to_string()).or_insert_with(|| o.clone());
            f.scalars.entry(name.to_string()).or_insert(("int".into(), o));
        }
    }
}

/// Facts through a launch: each input passed as a pointer is a tensor; one passed as anything else a
/// scalar; a block pointer or tensor descriptor `shape=(A, B)` over a pointer names the tensor's sizes.
fn launch_facts(src: &Src, launch: Node, kdef: Node, kparams: &[String], f: &mut CodeFacts, is_param: &dyn Fn(&str) -> bool) {
    let args = call_args(src, launch);
    if args.splat {
        return;
    }
    // kernel parameter → the wrapper's expression passed to it
    let mut passed: HashMap<&str, Node> = HashMap::new();
    for (i, a) in args.positional.iter().enumerate() {
        if let Some(k) = kparams.get(i) {
            passed.insert(k.as_str(), *a);
        }
    }
    for (k, v) in &args.keywords {
        passed.insert(k, *v);
    }
    let o = src.origin(launch);
    let pointers = pointer_params(src, kdef, kparams);
    // Inputs used in the grid are program counts: integers.
    if let Some(grid) = field(launch, "function").and_then(|f| field(f, "subscript")) {
        for n in descendants(grid).into_iter().filter(|n| n.kind() == "identifier" && is_param(src.text(*n))) {
            if !f.tensors.contains_key(src.text(n)) {
                f.scalars.insert(src.text(n).to_string(), ("int".into(), o.clone()));
            }
        }
    }
    for (k, v) in &passed {
        let v = unparen(*v);
        if v.kind() != "identifier" || !is_param(src.text(v)) {
            continue;
        }
        let p = src.text(v);
        if pointers.contains(*k) || k.ends_with("ptr") || f.tensors.contains_key(p) {
            f.tensor(p, &o);
        } else if !f.scalars.contains_key(p) {
            f.scalars.insert(p.to_string(), ("float".into(), o.clone()));
        }
    }
    // Inputs passed to pointers the kernel addresses at the same offsets.
    let mut by_offsets: HashMap<String, Vec<(String, Origin)>> = HashMap::new();
    for (k, offsets, at) in pointer_offsets(src, kdef, kparams) {
        let Some(v) = passed.get(k.as_str()).map(|v| unparen(*v)) else { continue };
        // A flattened input is still addressed as the input was, row by row or element by element.
        if v.kind() != "identifier" {
            continue;
        }
        let name = src.text(v);
        if is_param(name) || f.flattened.contains(name) || f.flat.contains_key(name) {
            by_offsets.entry(offsets).or_default().push((name.to_string(), at));
        } else if let Some((p, _)) = f.views.get(name) {
            by_offsets.entry(offsets).or_default().push((p.clone(), at));
        }
    }
    // Every pair of a group: the first may be of another rank (rows of `x` beside a weight read at the
    // same column offsets), and the others are still alike among themselves.
    for group in by_offsets.values() {
        for (i, (p, _)) in group.iter().enumerate() {
            for (q, at) in &group[i + 1..] {
                if p != q {
                    f.alike.push((p.clone(), q.clone(), at.clone()));
                }
            }
        }
    }
    for c in descendants(kdef).into_iter().filter(|c| c.kind() == "call") {
        let name = callee(src, c);
        if !(name.ends_with("make_block_ptr") || name.ends_with("make_tensor_descriptor")) {
            continue;
        }
        let cargs = call_args(src, c);
        let base = cargs.keyword("base").or_else(|| cargs.positional.first().copied());
        let shape = cargs.keyword("shape").or_else(|| cargs.positional.get(1).copied());
        let (Some(base), Some(shape)) = (base, shape) else {
            continue;
        };
        let Some(tensor) = passed.get(src.text(base)).map(|n| src.text(unparen(*n))).filter(|t| is_param(t)) else {
            continue;
        };
        let dims: Vec<Node> = named_children(unparen(shape)).collect();
        let ko = src.origin(c);
        f.rank.entry(tensor.to_string()).or_insert((dims.len(), ko.clone()));
        for (i, d) in dims.iter().enumerate() {
            let Some(w) = passed.get(src.text(*d)).map(|n| unparen(*n)) else {
                continue;
            };
            if w.kind() == "identifier" && !is_param(src.text(w)) {
                f.bind(tensor, i as i64, src.text(w), &ko);
            } else if let Some((q, axis)) = slot_expr(src, w, is_param)
                && axis >= 0
            {
                let other = slot(&q, axis as usize);
                f.bind(tensor, i as i64, &other, &ko);
            }
        }
    }
}

/// Each local a kernel body assigns, to the expression it assigns (the last one read wins).
fn assignments<'t>(src: &Src<'t>, nodes: &[Node<'t>]) -> HashMap<&'t str, Node<'t>> {
    nodes.iter().filter(|n| n.kind() == "assignment").filter_map(|a| Some((src.text(field(*a, "left")?), field(*a, "right")?))).collect()
}

/// The leftmost operand of `X + row * stride + cols`: `X`.
fn leftmost(mut n: Node) -> Node {
    while n.kind() == "binary_operator" {
        match field(n, "left") {
            Some(l) => n = unparen(l),
            None => break,
        }
    }
    n
}

/// (pointer parameter, the offsets added to it, where) for each `tl.load`/`tl.store` whose address is a
/// pointer parameter plus something (`e + offsets`, through a local such as `x_ptrs = X + offs`).
/// The offsets are compared as written: `X + row * stride_x` and `Y + row * stride_y` differ.
fn pointer_offsets(src: &Src, kdef: Node, kparams: &[String]) -> Vec<(String, String, Origin)> {
    let nodes = descendants(kdef);
    let assigned = assignments(src, &nodes);
    let mut out = Vec::new();
    for n in nodes.iter().filter(|n| n.kind() == "call") {
        let method = callee(src, *n).rsplit('.').next().unwrap_or("").to_string();
        if !matches!(method.as_str(), "load" | "store") {
            continue;
        }
        let args = call_args(src, *n);
        let Some(mut e) = args.keyword("pointer").or_else(|| args.positional.first().copied()).map(unparen) else {
            continue;
        };
        if e.kind() == "identifier"
            && let Some(r) = assigned.get(src.text(e))
        {
            e = unparen(*r);
        }
        if e.kind() != "binary_operator" || field(e, "operator").map(|o| src.text(o)) != Some("+") {
            continue;
        }
        let leaf = leftmost(e);
        let base = src.text(leaf);
        if leaf.kind() != "identifier" || leaf.start_byte() != e.start_byte() || !kparams.iter().any(|k| k == base) {
            continue;
        }
        let offsets: String = src.text[leaf.end_byte()..e.end_byte()].split_whitespace().collect();
        out.push((base.to_string(), offsets, src.origin(*n)));
    }
    out
}

/// Kernel parameters used as pointers: the base of what `tl.load`/`tl.store`/`tl.atomic_*`, a block
/// pointer or a tensor descriptor reads (the leftmost name of `X + row * stride + cols`, through
/// local names such as `x_ptrs = X + offs`), or whose `.dtype.element_ty` is read.
fn pointer_params(src: &Src, kdef: Node, kparams: &[String]) -> std::collections::HashSet<String> {
    let nodes = descendants(kdef);
    let assigned = assignments(src, &nodes);
    let mut out = std::collections::HashSet::new();
    for n in &nodes {
        if n.kind() == "attribute" && src.text(*n).ends_with(".dtype.element_ty") {
            let base = src.text(*n).trim_end_matches(".dtype.element_ty");
            if kparams.iter().any(|k| k == base) {
                out.insert(base.to_string());
            }
        }
        if n.kind() != "call" {
            continue;
        }
        let c = callee(src, *n);
        let method = c.rsplit('.').next().unwrap_or("");
        if !(matches!(method, "load" | "store" | "make_block_ptr" | "make_tensor_descriptor") || method.starts_with("atomic_")) {
            continue;
        }
        let args = call_args(src, *n);
        let Some(mut e) = args.keyword("pointer").or(args.keyword("base")).or_else(|| args.positional.first().copied()) else {
            continue;
        };
        for _ in 0..4 {
            let leaf = leftmost(unparen(e));
            let name = src.text(leaf);
            if leaf.kind() != "identifier" {
                break;
            }
            if kparams.iter().any(|k| k == name) {
                out.insert(name.to_string());
                break;
            }
            match assigned.get(name) {
                Some(r) => e = *r,
                None => break,
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{InputKind, infer::infer};

    /// `x`'s shape as inferred, `[]` when nothing says what it is.
    fn shape_of_x(wrapper: &str) -> Vec<String> {
        let src = format!(
            "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, M, N, B: tl.constexpr):\n    pass\n\n{wrapper}\n"
        );
        let p = infer(std::path::Path::new("k.py"), &src, None).unwrap();
        match p.inputs.iter().find(|i| i.name == "x").map(|i| &i.kind) {
            Some(InputKind::Tensor { shape, .. }) => shape.clone(),
            _ => Vec::new(),
        }
    }

    #[test]
    fn a_same_shape_rebinding_keeps_the_inputs_facts_and_a_reshape_ends_them() {
        let launch = "    k[(M,)](x, M, N, B=64)";
        assert_eq!(shape_of_x(&format!("def f(x):\n    x = x.contiguous().to(torch.float16)\n    M, N = x.shape\n{launch}")), ["M", "N"]);
        // After `x = x.view(...)`, `M, N = x.shape` is the view's shape, not the input's.
        let viewed = shape_of_x(&format!("def f(x):\n    x = x.view(-1, 64)\n    M, N = x.shape\n{launch}"));
        assert_ne!(viewed, ["M", "N"]);
    }

    /// Each tensor input's shape, by name, as inferred from a file.
    fn shapes(src: &str) -> Vec<(String, Vec<String>)> {
        let p = infer(std::path::Path::new("k.py"), src, None).unwrap();
        p.inputs
            .iter()
            .filter_map(|i| match &i.kind {
                InputKind::Tensor { shape, .. } => Some((i.name.clone(), shape.clone())),
                _ => None,
            })
            .collect()
    }

    const GATED: &str = "import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\n\
        def k(e, g, h, n, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    \
        m = offs < n\n    g_ptrs = g + offs\n    a = tl.load(e + offs, mask=m)\n    b = tl.load(g_ptrs, mask=m)\n    \
        tl.store(h + offs, a * b, mask=m)\n\n";

    #[test]
    fn an_input_read_at_the_same_offsets_as_one_of_known_shape_takes_its_shape() {
        // `g` is never unpacked: it is read where `e` is (through a local pointer), so it is `e`'s shape.
        let src = format!(
            "{GATED}def gated(e, g):\n    batch, seq, hd = e.shape\n    h = torch.empty_like(e)\n    \
             k[(triton.cdiv(e.numel(), 1024),)](e, g, h, e.numel(), BLOCK=1024)\n    return h\n"
        );
        let seen = shapes(&src);
        assert_eq!(
            seen,
            [("e".into(), vec!["batch".into(), "seq".into(), "hd".into()]), ("g".into(), vec!["batch".into(), "seq".into(), "hd".into()])]
        );
    }

    #[test]
    fn a_second_unpack_of_another_rank_is_another_case_not_more_names() {
        let launch = "    k[(M,)](x, M, N, B=64)";
        let two = format!(
            "def f(x, packed=None):\n    if packed is None:\n        B, M, H, N = x.shape\n    else:\n        T, H, N = x.shape\n{launch}"
        );
        assert_eq!(shape_of_x(&two), ["B", "M", "H", "N"]);
    }

    /// The sizes of the first variant of each family, by name.
    fn sized(src: &str) -> Vec<(String, std::collections::BTreeMap<String, f64>)> {
        let p = infer(std::path::Path::new("k.py"), src, None).unwrap();
        p.variants.iter().map(|v| (v.family.clone(), v.dims.clone())).collect()
    }

    #[test]
    fn sizes_meet_the_bounds_the_asserts_state_scaled_names_included() {
        let src = format!(
            "{GATED}def f(e, g):\n    s, d = e.shape\n    ro, half = g.shape\n    half *= 2\n    \
             assert half <= d\n    assert d <= 96\n    assert ro >= s\n    assert 2 * s < d\n    \
             k[(triton.cdiv(e.numel(), 1024),)](e, g, e, e.numel(), BLOCK=1024)\n"
        );
        for (family, d) in sized(&src) {
            let (s, dd, ro, half) = (d["s"], d["d"], d["ro"], d["half"]);
            assert!(2.0 * half <= dd && dd <= 96.0 && ro >= s && 2.0 * s < dd, "{family}: {d:?}");
        }
    }

    #[test]
    fn inputs_flattened_to_rows_through_a_shape_alias_are_rows_of_one_width_read_alike() {
        // Liger's layout: `ori_shape = a.shape; n_cols = ori_shape[-1]; a = a.view(-1, n_cols)`.
        let src = format!(
            "{GATED}def gated(e, g):\n    ori_shape = e.shape\n    n = ori_shape[-1]\n    e = e.view(-1, n)\n    g = g.view(-1, n)\n    \
             h = torch.empty_like(e)\n    k[(e.shape[0],)](e, g, h, n, BLOCK=1024)\n    return h.view(*ori_shape)\n"
        );
        assert_eq!(shapes(&src), [("e".into(), vec!["e_0".into(), "n".into()]), ("g".into(), vec!["e_0".into(), "n".into()])]);
    }

    #[test]
    fn inputs_of_known_and_different_ranks_keep_their_own_shapes() {
        // Same offsets, but the code says `g` is flat: nothing is tied by position.
        let src = format!(
            "{GATED}def gated(e, g):\n    batch, hd = e.shape\n    (n,) = g.shape\n    h = torch.empty_like(e)\n    \
             k[(triton.cdiv(n, 1024),)](e, g, h, n, BLOCK=1024)\n    return h\n"
        );
        assert_eq!(shapes(&src), [("e".into(), vec!["batch".into(), "hd".into()]), ("g".into(), vec!["n".into()])]);
    }
    #[test]
    fn an_input_flattened_to_one_dimension_is_any_shape_and_taken_as_one() {
        for flat in ["x.reshape(-1)", "x.contiguous().view(-1)", "x.flatten().contiguous()", "x.ravel()"] {
            let src = format!("{GATED}def f(x, y):\n    x = {flat}\n    k[(1,)](x, y, x, x.numel(), BLOCK=1024)\n");
            assert_eq!(shapes(&src), [("x".into(), vec!["x_0".into()]), ("y".into(), vec!["x_0".into()])], "{flat}");
        }
    }

    #[test]
    fn a_tuple_assignment_of_same_shape_values_keeps_both_inputs_facts() {
        let src = format!(
            "{GATED}def f(a, b):\n    a, b = a.contiguous(), b.contiguous()\n    n = a.numel()\n    \
             k[(triton.cdiv(n, 256),)](a, b, a, n, BLOCK=256)\n"
        );
        assert_eq!(shapes(&src), [("a".into(), vec!["n".into()]), ("b".into(), vec!["n".into()])]);
    }

    #[test]
    fn a_shape_asserted_equal_to_a_tuple_of_names_has_that_rank_and_those_sizes() {
        let src = format!(
            "{GATED}def f(x, s):\n    B, H, N = x.shape\n    assert s.shape == (H,)\n    assert tuple(x.shape) == torch.Size([B, H, N])\n    \
             k[(B, H)](x, s, x, N, BLOCK=64)\n"
        );
        assert_eq!(shapes(&src), [("x".into(), vec!["B".into(), "H".into(), "N".into()]), ("s".into(), vec!["H".into()])]);
    }

    #[test]
    fn an_int_that_sizes_an_allocation_is_chosen_like_a_dimension_and_integers_are_asserted() {
        let src = format!(
            "{GATED}def f(x: torch.Tensor, bins: int):\n    assert not x.is_floating_point()\n    x = x.view(-1)\n    \
             h = torch.zeros(bins, dtype=torch.int32, device=x.device)\n    k[(1,)](x, h, h, bins, BLOCK=64)\n    return h\n"
        );
        let p = infer(std::path::Path::new("k.py"), &src, None).unwrap();
        assert!(p.missing.is_empty(), "{:?}", p.missing);
        assert!(p.variants.iter().all(|v| v.dims.get("bins").is_some_and(|b| *b >= 1.0)), "{:?}", p.variants);
        let x = p.inputs.iter().find(|i| i.name == "x").unwrap();
        assert!(matches!(&x.kind, InputKind::Tensor { dtype: Some(d), .. } if d == "int64"), "{:?}", x.kind);
    }
    #[test]
    fn a_call_sites_rank_outranks_numel_for_an_input_and_the_one_asserted_equal_to_it() {
        let src = format!(
            "{GATED}def f(x, g):\n    assert x.shape == g.shape\n    n = x.numel()\n    k[(1,)](x, g, x, n, BLOCK=64)\n\n\
             if __name__ == '__main__':\n    f(torch.randn(3, 150), torch.randn(3, 150))\n"
        );
        assert_eq!(shapes(&src), [("x".into(), vec!["x_0".into(), "x_1".into()]), ("g".into(), vec!["x_0".into(), "x_1".into()])]);
    }
    #[test]
    fn a_size_asserted_equal_to_a_number_is_that_number_in_every_variant() {
        let src = format!(
            "{GATED}def f(x, g):\n    B, N, D = x.shape\n    assert D == 64 and g.shape == x.shape\n    k[(B,)](x, g, x, N, BLOCK=64)\n"
        );
        for (family, d) in sized(&src) {
            assert_eq!(d["D"], 64.0, "{family}: {d:?}");
        }
    }

    #[test]
    fn a_float_nothing_gives_is_checked_with_a_value_usual_for_its_name() {
        let src = format!(
            "{GATED}def f(x: torch.Tensor, eps: float, sm_scale: float, alpha: float):\n    M, N = x.shape\n    \
             k[(M,)](x, x, x, N, eps, sm_scale, alpha, BLOCK=64)\n"
        );
        let p = infer(std::path::Path::new("k.py"), &src, None).unwrap();
        assert!(p.missing.is_empty(), "{:?}", p.missing);
        for v in &p.variants {
            assert_eq!((v.dims["eps"], v.dims["sm_scale"], v.dims["alpha"]), (1e-5, 0.125, 0.5), "{}", v.family);
        }
        assert!(p.notes.iter().any(|n| n.contains("checked with sm_scale=0.125")), "{:?}", p.notes);
        // Unannotated and named like no float in particular: it may be a count, so it is asked for.
        let unsure = src.replace("alpha: float", "alpha");
        let p = infer(std::path::Path::new("k.py"), &unsure, None).unwrap();
        assert!(p.missing.iter().any(|m| m.what.contains("`alpha`")), "{:?}", p.missing);
    }
    #[test]
    fn a_call_in_a_loop_over_tensors_made_before_it_gives_each_ones_sizes() {
        let src = format!(
            "{GATED}def f(x, s: float):\n    M, N = x.shape\n    k[(M,)](x, x, x, N, s, BLOCK=64)\n\n\
             if __name__ == '__main__':\n    base = torch.randn(80, 50)\n    for x in (base, base.t()):\n        f(x, 1.5)\n"
        );
        let ci: Vec<(f64, f64, f64)> = sized(&src).into_iter().filter(|(f, _)| f == "ci").map(|(_, d)| (d["M"], d["N"], d["s"])).collect();
        assert_eq!(ci, [(80.0, 50.0, 1.5), (50.0, 80.0, 1.5)]);
    }
    #[test]
    fn a_smoke_tests_sizes_are_checked_as_seen_and_timed_scaled_up_with_their_ratios() {
        let src = format!(
            "{GATED}def f(x):\n    M, N = x.shape\n    k[(M,)](x, x, x, N, BLOCK=64)\n\n\
             if __name__ == '__main__':\n    f(torch.randn(100, 50))\n"
        );
        let v = sized(&src);
        assert_eq!((v[0].1["M"], v[0].1["N"]), (100.0, 50.0), "{v:?}");
        let (family, big) = &v[1];
        assert_eq!(family, "bench-gpu");
        let elements = big["M"] * big["N"];
        assert!(elements > (1 << 23) as f64 && elements < (1 << 25) as f64 && (big["M"] / big["N"] - 2.0).abs() < 0.01, "{big:?}");
        // Sizes the user wrote for the stage are timed as written.
        let hinted = src.replace("def f(x):", "# xeforge: dims x=[M, N] M=100 N=50\ndef f(x):");
        assert!(sized(&hinted).iter().all(|(_, d)| d["M"] == 100.0), "{:?}", sized(&hinted));
    }
}
