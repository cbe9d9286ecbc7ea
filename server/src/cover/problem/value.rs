//! A small evaluator for the expressions users write around a call: literals, arithmetic, `range`,
//! simple comprehensions, and tensors made by `torch.randn(M, K, dtype=...)` and friends (their shape,
//! dtype, and the names the sizes were spelled with). Anything else is `Unknown`, never a guess.

use super::tree::{Src, call_args, callee, field, unparen};
use crate::syntax::named_children;
use std::collections::HashMap;
use tree_sitter::Node;

/// Most elements a `range` or comprehension may produce (benchmarks sweep ~100 sizes; more is noise).
const MAX_SEQ: usize = 512;

#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    /// `torch.float16` → "float16".
    Dtype(String),
    Tensor(TensorVal),
    Seq(Vec<Val>),
    Unknown,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TensorVal {
    pub dims: Vec<Dim>,
    pub dtype: Option<String>,
    /// Made by `torch.randint(low, high, ...)`: integer values in this range.
    pub range: Option<(i64, i64)>,
}

/// One size of a tensor and the name it was written with (`torch.randn(M, K)` → M, K), if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Dim {
    pub size: i64,
    pub name: Option<String>,
}

impl Val {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Val::Int(i) => Some(*i),
            Val::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }
}

pub type Env = HashMap<String, Val>;

/// Torch dtype spellings (`torch.half` and friends normalised to the names the harness uses).
pub fn dtype_name(attr: &str) -> Option<&'static str> {
    Some(match attr {
        "float16" | "half" => "float16",
        "bfloat16" => "bfloat16",
        "float32" | "float" => "float32",
        "float64" | "double" => "float64",
        "int8" => "int8",
        "int16" | "short" => "int16",
        "int32" | "int" => "int32",
        "int64" | "long" => "int64",
        "uint8" => "uint8",
        "bool" => "bool",
        "float8_e4m3fn" => "float8_e4m3fn",
        "float8_e5m2" => "float8_e5m2",
        _ => return None,
    })
}

/// `torch.float16`, `tl.float16` or a name bound to a dtype.
pub fn dtype_of(src: &Src, n: Node, env: &Env) -> Option<String> {
    match eval(src, n, env) {
        Val::Dtype(d) => Some(d),
        _ => None,
    }
}

const MAKERS: &[&str] = &["randn", "rand", "empty", "zeros", "ones", "full", "randint", "empty_strided"];
const LIKE: &[&str] = &["randn_like", "rand_like", "empty_like", "zeros_like", "ones_like", "full_like", "clone"];

pub fn eval(src: &Src, n: Node, env: &Env) -> Val {
    eval_depth(src, n, env, 0)
}

fn eval_depth(src: &Src, n: Node, env: &Env, depth: usize) -> Val {
    if depth > 24 {
        return Val::Unknown;
    }
    let ev = |x: Node| eval_depth(src, x, env, depth + 1);
    let n = unparen(n);
    match n.kind() {
        "integer" => parse_int(src.text(n)).map(Val::Int).unwrap_or(Val::Unknown),
        "float" => src.text(n).replace('_', "").parse().map(Val::Float).unwrap_or(Val::Unknown),
        "true" => Val::Bool(true),
        "false" => Val::Bool(false),
        "string" => Val::Str(src.text(n).trim_matches(|c| c == '"' || c == '\'').to_string()),
        "identifier" => env.get(src.text(n)).cloned().unwrap_or(Val::Unknown),
        "attribute" => attribute(src, n, env, depth),
        "tuple" | "list" | "expression_list" => Val::Seq(named_children(n).map(ev).collect()),
        "unary_operator" => match (src.text(n).starts_with('-'), field(n, "argument").map(ev)) {
            (true, Some(Val::Int(i))) => Val::Int(-i),
            (true, Some(Val::Float(f))) => Val::Float(-f),
            (false, Some(v)) => v,
            _ => Val::Unknown,
        },
        "binary_operator" => {
            let (Some(l), Some(r), Some(op)) = (field(n, "left"), field(n, "right"), field(n, "operator")) else {
                return Val::Unknown;
            };
            arith(src.text(op), ev(l), ev(r))
        }
        "subscript" => {
            let (Some(v), Some(i)) = (field(n, "value"), field(n, "subscript")) else {
                return Val::Unknown;
            };
            match ev(v) {
                Val::Tensor(t) => tensor_index(src, t, n, env, depth),
                other => match (other, ev(i)) {
                    (Val::Seq(items), Val::Int(k)) => index(&items, k).cloned().unwrap_or(Val::Unknown),
                    _ => Val::Unknown,
                },
            }
        }
        "call" => call(src, n, env, depth),
        "list_comprehension" | "generator_expression" => comprehension(src, n, env, depth),
        _ => Val::Unknown,
    }
}

fn parse_int(t: &str) -> Option<i64> {
    let t = t.replace('_', "");
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return i64::from_str_radix(h, 16).ok();
    }
    t.parse().ok()
}

fn index<T>(items: &[T], k: i64) -> Option<&T> {
    let k = if k < 0 { items.len() as i64 + k } else { k };
    usize::try_from(k).ok().and_then(|k| items.get(k))
}

fn arith(op: &str, l: Val, r: Val) -> Val {
    match (l, r) {
        (Val::Int(a), Val::Int(b)) => match op {
            "+" => a.checked_add(b).map(Val::Int).unwrap_or(Val::Unknown),
            "-" => a.checked_sub(b).map(Val::Int).unwrap_or(Val::Unknown),
            "*" => a.checked_mul(b).map(Val::Int).unwrap_or(Val::Unknown),
            "//" if b != 0 => Val::Int(a.div_euclid(b)),
            "%" if b != 0 => Val::Int(a.rem_euclid(b)),
            "/" if b != 0 => Val::Float(a as f64 / b as f64),
            "**" if (0..63).contains(&b) => a.checked_pow(b as u32).map(Val::Int).unwrap_or(Val::Unknown),
            "<<" if (0..63).contains(&b) => a.checked_shl(b as u32).map(Val::Int).unwrap_or(Val::Unknown),
            _ => Val::Unknown,
        },
        // `-2.3 + 0.5 * torch.randn(shape)`: a tensor scaled or shifted by a number keeps its shape.
        (Val::Tensor(t), other) | (other, Val::Tensor(t)) if matches!(op, "+" | "-" | "*" | "/") && num(&other).is_some() => {
            Val::Tensor(TensorVal { range: None, ..t })
        }
        (Val::Tensor(a), Val::Tensor(b)) if matches!(op, "+" | "-" | "*" | "/") => broadcast(a, b).map(Val::Tensor).unwrap_or(Val::Unknown),
        (a, b) => match (num(&a), num(&b)) {
            (Some(x), Some(y)) => match op {
                "+" => Val::Float(x + y),
                "-" => Val::Float(x - y),
                "*" => Val::Float(x * y),
                "/" if y != 0.0 => Val::Float(x / y),
                _ => Val::Unknown,
            },
            _ => Val::Unknown,
        },
    }
}

fn num(v: &Val) -> Option<f64> {
    match v {
        Val::Int(i) => Some(*i as f64),
        Val::Float(f) => Some(*f),
        _ => None,
    }
}

fn attribute(src: &Src, n: Node, env: &Env, depth: usize) -> Val {
    let (Some(obj), Some(attr)) = (field(n, "object"), field(n, "attribute")) else {
        return Val::Unknown;
    };
    let attr = src.text(attr);
    let obj_text = src.text(obj);
    if matches!(obj_text, "torch" | "tl" | "triton.language") {
        return dtype_name(attr).map(|d| Val::Dtype(d.to_string())).unwrap_or(Val::Unknown);
    }
    match (eval_depth(src, obj, env, depth + 1), attr) {
        (Val::Tensor(t), "shape") => Val::Seq(t.dims.iter().map(|d| Val::Int(d.size)).collect()),
        (Val::Tensor(t), "dtype") => t.dtype.map(Val::Dtype).unwrap_or(Val::Unknown),
        (Val::Tensor(mut t), "T" | "mT") => {
            t.dims.reverse();
            Val::Tensor(t)
        }
        _ => Val::Unknown,
    }
}

fn call(src: &Src, n: Node, env: &Env, depth: usize) -> Val {
    let f = callee(src, n);
    let args = call_args(src, n);
    let ev = |x: Node| eval_depth(src, x, env, depth + 1);
    let (base, method) = f.rsplit_once('.').unwrap_or(("", f));
    if matches!(base, "torch") && MAKERS.contains(&method) {
        return maker(src, method, &args, env, depth);
    }
    if matches!(base, "torch") && LIKE.contains(&method) {
        let Some(Val::Tensor(mut t)) = args.positional.first().map(|a| ev(*a)) else {
            return Val::Unknown;
        };
        if let Some(d) = args.keyword("dtype").and_then(|d| dtype_of(src, d, env)) {
            t.dtype = Some(d);
        }
        return Val::Tensor(t);
    }
    match f {
        "range" => {
            let v: Vec<Option<i64>> = args.positional.iter().map(|a| ev(*a).as_int()).collect();
            let (lo, hi, step) = match v.as_slice() {
                [Some(h)] => (0, *h, 1),
                [Some(l), Some(h)] => (*l, *h, 1),
                [Some(l), Some(h), Some(s)] if *s != 0 => (*l, *h, *s),
                _ => return Val::Unknown,
            };
            let mut out = Vec::new();
            let mut i = lo;
            while (step > 0 && i < hi || step < 0 && i > hi) && out.len() < MAX_SEQ {
                out.push(Val::Int(i));
                i += step;
            }
            return Val::Seq(out);
        }
        "int" => {
            return args.positional.first().map(|a| ev(*a)).and_then(|v| num(&v)).map(|x| Val::Int(x as i64)).unwrap_or(Val::Unknown);
        }
        "len" => {
            return match args.positional.first().map(|a| ev(*a)) {
                Some(Val::Seq(s)) => Val::Int(s.len() as i64),
                _ => Val::Unknown,
            };
        }
        "triton.cdiv" | "cdiv" => {
            return match (args.positional.first().map(|a| ev(*a)), args.positional.get(1).map(|a| ev(*a))) {
                (Some(Val::Int(a)), Some(Val::Int(b))) if b > 0 => Val::Int((a + b - 1) / b),
                _ => Val::Unknown,
            };
        }
        "triton.next_power_of_2" => {
            return match args.positional.first().map(|a| ev(*a)) {
                Some(Val::Int(a)) if a > 0 => Val::Int((a as u64).next_power_of_two() as i64),
                _ => Val::Unknown,
            };
        }
        _ => {}
    }
    // Methods on a tensor value: casts, moves, transposes.
    let Some(obj) = field(n, "function").and_then(|f| field(f, "object")) else {
        return Val::Unknown;
    };
    let Val::Tensor(mut t) = eval_depth(src, obj, env, depth + 1) else {
        return Val::Unknown;
    };
    match method {
        "to" => {
            let dt = args.keyword("dtype").or_else(|| args.positional.first().copied()).and_then(|d| dtype_of(src, d, env));
            if let Some(d) = dt {
                t.dtype = Some(d);
            }
        }
        "half" => t.dtype = Some("float16".into()),
        "float" => t.dtype = Some("float32".into()),
        "bfloat16" => t.dtype = Some("bfloat16".into()),
        "double" => t.dtype = Some("float64".into()),
        "int" => t.dtype = Some("int32".into()),
        "long" => t.dtype = Some("int64".into()),
        "t" => t.dims.reverse(),
        "cuda" | "xpu" | "cpu" | "contiguous" | "clone" | "detach" | "requires_grad_" | "normal_" | "uniform_" => {}
        // Element-wise: the shape stays, the values are no longer those drawn.
        "abs" | "neg" | "exp" | "log" | "sqrt" | "rsqrt" | "square" | "sigmoid" | "tanh" | "relu" | "sin" | "cos" | "clamp"
        | "clamp_min" | "clamp_max" | "abs_" | "exp_" | "sigmoid_" | "relu_" | "mul_" | "add_" | "div_" | "sub_" | "clamp_" => {
            t.range = None;
        }
        // Reductions over `dim` (one or a tuple), unless `keepdim=True`; over everything without one.
        "sum" | "mean" | "amax" | "amin" | "prod" | "norm" | "std" | "var" | "logsumexp" | "argmax" | "argmin" => {
            let ev = |x: Node| eval_depth(src, x, env, depth + 1);
            let dim =
                args.keyword("dim").or_else(|| if method == "norm" { args.positional.get(1) } else { args.positional.first() }.copied());
            let keep = args.keyword("keepdim").is_some_and(|k| src.text(k) == "True");
            let axes: Vec<i64> = match dim.map(ev) {
                None => (0..t.dims.len() as i64).collect(),
                Some(Val::Int(d)) => vec![d],
                Some(Val::Seq(ds)) => ds.iter().filter_map(Val::as_int).collect(),
                Some(_) => return Val::Unknown,
            };
            let rank = t.dims.len() as i64;
            let mut axes: Vec<usize> =
                axes.iter().map(|&a| if a < 0 { a + rank } else { a }).filter(|a| (0..rank).contains(a)).map(|a| a as usize).collect();
            axes.sort_unstable();
            axes.dedup();
            for &a in axes.iter().rev() {
                if keep {
                    t.dims[a] = Dim { size: 1, name: None };
                } else {
                    t.dims.remove(a);
                }
            }
            t.range = None;
            if matches!(method, "argmax" | "argmin") {
                t.dtype = Some("int64".into());
            }
        }
        "unsqueeze" => {
            let Some(Val::Int(d)) = args.positional.first().map(|a| eval_depth(src, *a, env, depth + 1)) else { return Val::Unknown };
            let rank = t.dims.len() as i64 + 1;
            let d = if d < 0 { d + rank } else { d };
            if !(0..rank).contains(&d) {
                return Val::Unknown;
            }
            t.dims.insert(d as usize, Dim { size: 1, name: None });
        }
        "transpose" => {
            let ev = |x: Node| eval_depth(src, x, env, depth + 1).as_int();
            let rank = t.dims.len() as i64;
            let (Some(a), Some(b)) = (args.positional.first().and_then(|x| ev(*x)), args.positional.get(1).and_then(|x| ev(*x))) else {
                return Val::Unknown;
            };
            let (a, b) = (if a < 0 { a + rank } else { a }, if b < 0 { b + rank } else { b });
            if !(0..rank).contains(&a) || !(0..rank).contains(&b) {
                return Val::Unknown;
            }
            t.dims.swap(a as usize, b as usize);
        }
        _ => return Val::Unknown,
    }
    Val::Tensor(t)
}

/// `a + b` of two tensors: NumPy's broadcasting, the trailing axes aligned; a size of 1 takes the
/// other's. `None` where the sizes disagree.
fn broadcast(a: TensorVal, b: TensorVal) -> Option<TensorVal> {
    let n = a.dims.len().max(b.dims.len());
    let at = |t: &TensorVal, i: usize| (i + t.dims.len()).checked_sub(n).and_then(|j| t.dims.get(j).cloned());
    let mut dims = Vec::with_capacity(n);
    for i in 0..n {
        dims.push(match (at(&a, i), at(&b, i)) {
            (Some(x), Some(y)) if x.size == y.size => {
                if x.name.is_some() {
                    x
                } else {
                    y
                }
            }
            (Some(x), Some(y)) if y.size == 1 => x,
            (Some(x), Some(y)) if x.size == 1 => y,
            (Some(x), None) | (None, Some(x)) => x,
            _ => return None,
        });
    }
    let dtype = if a.dtype == b.dtype { a.dtype } else { None };
    Some(TensorVal { dims, dtype, range: None })
}

/// `x[:, None]`, `x[0]`, `x[..., None]`: full slices keep an axis, `None` adds one of size 1, an integer
/// drops one. A bounded slice (`x[:n]`) changes a size: not followed.
fn tensor_index(src: &Src, mut t: TensorVal, n: Node, env: &Env, depth: usize) -> Val {
    let items: Vec<Node> = n.children_by_field_name("subscript", &mut n.walk()).collect();
    let mut out = Vec::new();
    let mut axis = 0;
    let ellipsis_at = items.iter().position(|i| i.kind() == "ellipsis");
    for (k, item) in items.iter().enumerate() {
        match item.kind() {
            "none" => out.push(Dim { size: 1, name: None }),
            "slice" if src.text(*item).trim() == ":" => {
                let Some(d) = t.dims.get(axis) else { return Val::Unknown };
                out.push(d.clone());
                axis += 1;
            }
            "ellipsis" => {
                // as many axes as the items after it leave
                let after = items[k + 1..].iter().filter(|i| i.kind() != "none").count();
                let take = t.dims.len().saturating_sub(axis + after);
                out.extend(t.dims[axis..axis + take].iter().cloned());
                axis += take;
            }
            _ => match eval_depth(src, *item, env, depth + 1) {
                Val::Int(_) if axis < t.dims.len() => axis += 1,
                _ => return Val::Unknown,
            },
        }
    }
    if axis > t.dims.len() || (ellipsis_at.is_none() && items.is_empty()) {
        return Val::Unknown;
    }
    out.extend(t.dims[axis..].iter().cloned());
    t.dims = out;
    t.range = None;
    Val::Tensor(t)
}

/// `torch.randn(M, K)`, `torch.randn((M, K))`, `torch.full((M,), 1.0)`, `torch.randint(0, 10, (N,))`.
fn maker(src: &Src, method: &str, args: &super::tree::CallArgs, env: &Env, depth: usize) -> Val {
    let ev = |x: Node| eval_depth(src, x, env, depth + 1);
    let mut positional: Vec<Node> = args.positional.clone();
    let mut range = None;
    if method == "randint" {
        // randint(high, size) or randint(low, high, size)
        let vals: Vec<Val> = positional.iter().map(|a| ev(*a)).collect();
        let shape_at = vals.iter().position(|v| matches!(v, Val::Seq(_)));
        let Some(at) = shape_at else {
            return Val::Unknown;
        };
        let bounds: Vec<i64> = vals[..at].iter().filter_map(Val::as_int).collect();
        range = match bounds.as_slice() {
            [h] => Some((0, *h)),
            [l, h] => Some((*l, *h)),
            _ => None,
        };
        positional = positional[at..=at].to_vec();
    } else if method == "full" {
        positional.truncate(1);
    }
    let shape_nodes: Vec<Node> = match args.keyword("size").or_else(|| (positional.len() == 1).then(|| positional[0])) {
        Some(one) if matches!(unparen(one).kind(), "tuple" | "list") => named_children(unparen(one)).collect(),
        Some(one) => match ev(one) {
            // `torch.randn(x.shape)` or a name bound to a shape tuple
            Val::Seq(items) => {
                return shaped(items.iter().map(|v| v.as_int().map(|s| Dim { size: s, name: None })).collect(), args, src, env, range);
            }
            _ => vec![one],
        },
        None => positional,
    };
    let dims = shape_nodes
        .iter()
        .map(|d| {
            let size = ev(*d).as_int()?;
            let d = unparen(*d);
            // A literal size is named by where it is written: tensors derived from this one
            // (`scale = x.amax(dim=1)`) keep the name, so their sizes stay equal when scaled.
            let name = if d.kind() == "identifier" { src.text(d).to_string() } else { format!("@{}", d.start_byte()) };
            Some(Dim { size, name: Some(name) })
        })
        .collect();
    shaped(dims, args, src, env, range)
}

fn shaped(dims: Vec<Option<Dim>>, args: &super::tree::CallArgs, src: &Src, env: &Env, range: Option<(i64, i64)>) -> Val {
    let Some(dims) = dims.into_iter().collect::<Option<Vec<Dim>>>() else {
        return Val::Unknown;
    };
    if dims.iter().any(|d| d.size < 0) {
        return Val::Unknown;
    }
    let dtype = args.keyword("dtype").and_then(|d| dtype_of(src, d, env)).or_else(|| range.map(|_| "int64".to_string()));
    Val::Tensor(TensorVal { dims, dtype, range })
}

/// `[expr for v in seq]` / `[expr for v in seq if cond]` with one `for`; the `if` is not evaluated
/// unless it is a plain comparison the evaluator can decide.
fn comprehension(src: &Src, n: Node, env: &Env, depth: usize) -> Val {
    let Some(body) = field(n, "body") else {
        return Val::Unknown;
    };
    let clauses: Vec<Node> = named_children(n).filter(|c| c.kind() == "for_in_clause").collect();
    let [clause] = clauses.as_slice() else {
        return Val::Unknown;
    };
    let (Some(left), Some(right)) = (field(*clause, "left"), field(*clause, "right")) else {
        return Val::Unknown;
    };
    let Val::Seq(items) = eval_depth(src, right, env, depth + 1) else {
        return Val::Unknown;
    };
    let mut out = Vec::new();
    for item in items.into_iter().take(MAX_SEQ) {
        let mut inner = env.clone();
        bind(src, left, item, &mut inner);
        out.push(eval_depth(src, body, &inner, depth + 1));
    }
    Val::Seq(out)
}

/// Binds an assignment or loop target (`x`, `a, b`, `(a, b)`) to a value.
pub fn bind(src: &Src, target: Node, value: Val, env: &mut Env) {
    let target = unparen(target);
    match target.kind() {
        "identifier" => {
            env.insert(src.text(target).to_string(), value);
        }
        "pattern_list" | "tuple_pattern" | "list_pattern" | "expression_list" | "tuple" | "list" => {
            let names: Vec<Node> = named_children(target).collect();
            match value {
                Val::Seq(items) if items.len() == names.len() => {
                    for (t, v) in names.into_iter().zip(items) {
                        bind(src, t, v, env);
                    }
                }
                _ => {
                    for t in names {
                        bind(src, t, Val::Unknown, env);
                    }
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval_last(code: &str) -> Val {
        let tree = crate::syntax::parse(code);
        let src = Src::new(code, "t.py");
        let root = tree.root_node();
        let mut env = Env::new();
        let stmts: Vec<Node> = named_children(root).collect();
        for s in &stmts[..stmts.len() - 1] {
            let a = named_children(*s).next().unwrap();
            bind(&src, field(a, "left").unwrap(), eval(&src, field(a, "right").unwrap(), &env), &mut env);
        }
        let last = named_children(*stmts.last().unwrap()).next().unwrap();
        eval(&src, last, &env)
    }

    #[test]
    fn tensors_keep_shape_names_and_dtype() {
        let v = eval_last("M = 64\nK = 2 * 16\nx = torch.randn(M, K, device='cuda', dtype=torch.float16)\nx.T\n");
        let Val::Tensor(t) = v else { panic!("{v:?}") };
        assert_eq!(t.dims, vec![Dim { size: 32, name: Some("K".into()) }, Dim { size: 64, name: Some("M".into()) }]);
        assert_eq!(t.dtype.as_deref(), Some("float16"));
    }

    #[test]
    fn comprehensions_ranges_and_randint() {
        assert_eq!(eval_last("[128 * i for i in range(2, 5)]\n"), Val::Seq(vec![Val::Int(256), Val::Int(384), Val::Int(512)]));
        let Val::Tensor(t) = eval_last("torch.randint(0, 10, (8,), device='cuda')\n") else { panic!() };
        assert_eq!((t.range, t.dtype.as_deref(), t.dims[0].size), (Some((0, 10)), Some("int64"), 8));
        assert_eq!(eval_last("x = torch.rand(3, 4)\nx.shape[-1]\n"), Val::Int(4));
        assert_eq!(eval_last("foo(3)\n"), Val::Unknown);
    }

    fn sizes(code: &str) -> Vec<i64> {
        match eval_last(code) {
            Val::Tensor(t) => t.dims.iter().map(|d| d.size).collect(),
            v => panic!("{code}: {v:?}"),
        }
    }

    /// A per-row scale made from the data (`x.abs().amax(dim=1) / 448.0`) and broadcast back
    /// (`x / scale[:, None]`): the shapes follow, and a literal size keeps the place it was written
    /// as its name, so tensors derived from one tensor share their sizes.
    #[test]
    fn reductions_indexing_and_broadcasting_follow_the_shape() {
        let x = "x = torch.randn(4, 7, 5)
";
        assert_eq!(sizes(&format!("{x}x.abs().amax(dim=1) / 448.0\n")), [4, 5]);
        assert_eq!(sizes(&format!("{x}x.sum(-1, keepdim=True)\n")), [4, 7, 1]);
        assert_eq!(sizes(&format!("{x}x.mean(dim=(0, 2))\n")), [7]);
        assert_eq!(sizes(&format!("{x}x.norm()\n")), Vec::<i64>::new());
        assert_eq!(sizes(&format!("{x}x[:, None]\n")), [4, 1, 7, 5]);
        assert_eq!(sizes(&format!("{x}x[..., None]\n")), [4, 7, 5, 1]);
        assert_eq!(sizes(&format!("{x}x[0]\n")), [7, 5]);
        assert_eq!(sizes(&format!("{x}x.unsqueeze(-1).transpose(0, 1)\n")), [7, 4, 5, 1]);
        assert_eq!(sizes(&format!("{x}s = x.amax(dim=2)\nx / s[..., None]\n")), [4, 7, 5]);
        assert_eq!(eval_last(&format!("{x}x + torch.randn(3)\n")), Val::Unknown);
        assert_eq!(eval_last(&format!("{x}x[:2]\n")), Val::Unknown);
        let (Val::Tensor(a), Val::Tensor(s)) = (eval_last(&format!("{x}x\n")), eval_last(&format!("{x}x.amax(dim=1)\n"))) else { panic!() };
        assert_eq!((a.dims[0].name.clone(), a.dims[2].name.clone()), (s.dims[0].name.clone(), s.dims[1].name.clone()));
        assert_ne!(a.dims[0].name, a.dims[1].name);
    }
}
