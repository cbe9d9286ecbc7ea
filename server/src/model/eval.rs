//! The small constant evaluator: syntax → `Expr`, and `Expr` → `Value` under a binding lookup.
//!
//! It understands literals, tuples/lists, arithmetic, comparisons, `a if c else b`,
//! `triton.next_power_of_2`, `triton.cdiv`, `min`, `max`, `abs`, `int`, `float` and
//! `tl.constexpr(x)`. Everything else is `Unknown`: the evaluator never guesses.
//! Tuples, lists and comparisons are encoded as `Expr::Call` with reserved names
//! ("tuple", "list", "operator.lt", ...) so the shared `Expr` type stays small.

use super::cx::Cx;
use super::types::{BinOp, Expr, Value};
use crate::syntax::flat::Node;
use crate::syntax::flat::{named_children, node_text};

/// Triton dtypes reachable as `tl.<name>`; the canonical name is the attribute itself.
const DTYPES: &[&str] = &[
    "float16",
    "float32",
    "float64",
    "bfloat16",
    "int1",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float8e4nv",
    "float8e5",
    "float8e4b15",
    "float8e4b8",
    "float8e5b16",
    "fp16",
    "fp32",
    "fp64",
    "bf16",
    "float8e4m3fn",
    "float8e5m2",
];

/// Canonical dtype spelling ("fp16" and "float16" are the same type).
pub fn canonical_dtype(name: &str) -> Option<String> {
    if !DTYPES.contains(&name) {
        return None;
    }
    Some(
        match name {
            "fp16" => "float16",
            "fp32" => "float32",
            "fp64" => "float64",
            "bf16" => "bfloat16",
            other => other,
        }
        .to_string(),
    )
}

/// Largest list/tuple/string the evaluator builds; bigger values are Unknown (keeps it linear).
const MAX_SEQ: usize = 4096;

/// Parses a Python integer literal (`0x10`, `1_000`, `0o7`, `0b1`).
pub fn parse_int(s: &str) -> Option<i64> {
    let s: String = s.chars().filter(|c| *c != '_').collect();
    let lower = s.to_ascii_lowercase();
    let (digits, radix) = if let Some(d) = lower.strip_prefix("0x") {
        (d.to_string(), 16)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (d.to_string(), 8)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (d.to_string(), 2)
    } else {
        (lower, 10)
    };
    i64::from_str_radix(&digits, radix).ok()
}

/// The value of a plain (non-f, non-bytes) string literal; None for anything interpolated.
pub fn string_value(text: &str, node: Node) -> Option<String> {
    if node.kind() == "concatenated_string" {
        let mut out = String::new();
        for part in named_children(node) {
            out.push_str(&string_value(text, part)?);
        }
        return Some(out);
    }
    if node.kind() != "string" {
        return None;
    }
    let mut out = String::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "string_start" => {
                let prefix = node_text(text, child).to_ascii_lowercase();
                if prefix.contains('f') || prefix.contains('b') || prefix.contains('t') {
                    return None;
                }
            }
            "string_content" => out.push_str(node_text(text, child)),
            "interpolation" => return None,
            _ => {}
        }
    }
    Some(out)
}

fn binop_of(op: &str) -> Option<BinOp> {
    Some(match op {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "//" => BinOp::FloorDiv,
        "/" => BinOp::Div,
        "%" => BinOp::Mod,
        "**" => BinOp::Pow,
        "<<" => BinOp::Shl,
        ">>" => BinOp::Shr,
        _ => return None,
    })
}

fn compare_name(op: &str) -> Option<&'static str> {
    Some(match op {
        "<" => "operator.lt",
        "<=" => "operator.le",
        ">" => "operator.gt",
        ">=" => "operator.ge",
        "==" => "operator.eq",
        "!=" => "operator.ne",
        "in" => "operator.contains",
        "is" => "operator.eq",
        "is not" => "operator.ne",
        "not in" => "operator.not_contains",
        _ => return None,
    })
}

/// Syntax → symbolic expression. Names stay symbolic; known calls become `Expr::Call`.
pub fn expr_of(cx: &Cx, node: Node) -> Expr {
    expr_depth(cx, node, 0)
}

fn expr_depth(cx: &Cx, node: Node, depth: usize) -> Expr {
    // Deeply nested expressions (generated code) are not worth a stack overflow.
    if depth > 64 {
        return Expr::Unknown;
    }
    let text = cx.text;
    let sub = |n: Node| expr_depth(cx, n, depth + 1);
    match node.kind() {
        "integer" => parse_int(node_text(text, node)).map_or(Expr::Unknown, |i| Expr::Const(Value::Int(i))),
        "float" => {
            let s: String = node_text(text, node).chars().filter(|c| *c != '_').collect();
            s.parse::<f64>().map_or(Expr::Unknown, |f| Expr::Const(Value::Float(f)))
        }
        "true" => Expr::Const(Value::Bool(true)),
        "false" => Expr::Const(Value::Bool(false)),
        "none" => Expr::Const(Value::None),
        "string" | "concatenated_string" => string_value(text, node).map_or(Expr::Unknown, |s| Expr::Const(Value::Str(s))),
        "identifier" => Expr::Name(node_text(text, node).to_string()),
        "parenthesized_expression" => named_children(node).next().map_or(Expr::Unknown, sub),
        "attribute" => match cx.canonical(node) {
            Some(c) => match c.strip_prefix("tl.").and_then(canonical_dtype) {
                Some(d) => Expr::Const(Value::Dtype(d)),
                None => Expr::Unknown,
            },
            None => Expr::Unknown,
        },
        "unary_operator" => {
            let Some(arg) = node.field("argument") else { return Expr::Unknown };
            match node.field("operator").map(|o| node_text(text, o)) {
                Some("-") => Expr::Neg(Box::new(sub(arg))),
                Some("+") => sub(arg),
                _ => Expr::Unknown,
            }
        }
        "binary_operator" => {
            let (Some(l), Some(r), Some(op)) = (node.field("left"), node.field("right"), node.field("operator")) else {
                return Expr::Unknown;
            };
            match binop_of(node_text(text, op)) {
                Some(op) => Expr::BinOp(op, Box::new(sub(l)), Box::new(sub(r))),
                None => Expr::Unknown,
            }
        }
        "tuple" | "list" | "expression_list" => {
            let name = if node.kind() == "list" { "list" } else { "tuple" };
            let items: Vec<Expr> = named_children(node).map(sub).collect();
            Expr::Call(name.to_string(), items)
        }
        "comparison_operator" => {
            // Python chains `a < b < c` as `a < b and b < c`.
            let mut operands = Vec::new();
            let mut ops = Vec::new();
            let mut cursor = node.walk();
            let mut pending_not = false;
            for child in node.children(&mut cursor) {
                if child.is_named() {
                    if child.kind() == "comment" {
                        continue;
                    }
                    operands.push(child);
                } else {
                    let t = node_text(text, child);
                    match (t, pending_not) {
                        ("not", _) => pending_not = true,
                        ("in", true) => {
                            ops.push("not in");
                            pending_not = false;
                        }
                        ("is", _) => ops.push("is"),
                        (other, _) => {
                            if ops.last() == Some(&"is") && other == "not" {
                                ops.pop();
                                ops.push("is not");
                            } else {
                                ops.push(other);
                            }
                        }
                    }
                }
            }
            if operands.len() != ops.len() + 1 || ops.is_empty() {
                return Expr::Unknown;
            }
            let mut parts = Vec::new();
            for (i, op) in ops.iter().enumerate() {
                let Some(name) = compare_name(op) else { return Expr::Unknown };
                parts.push(Expr::Call(name.to_string(), vec![sub(operands[i]), sub(operands[i + 1])]));
            }
            if parts.len() == 1 { parts.pop().unwrap_or(Expr::Unknown) } else { Expr::Call("operator.and".into(), parts) }
        }
        "boolean_operator" => {
            let (Some(l), Some(r), Some(op)) = (node.field("left"), node.field("right"), node.field("operator")) else {
                return Expr::Unknown;
            };
            let name = if node_text(text, op) == "and" { "operator.and" } else { "operator.or" };
            Expr::Call(name.into(), vec![sub(l), sub(r)])
        }
        "not_operator" => match node.field("argument") {
            Some(a) => Expr::Call("operator.not".into(), vec![sub(a)]),
            None => Expr::Unknown,
        },
        "conditional_expression" => {
            let kids: Vec<Node> = named_children(node).collect();
            if kids.len() != 3 {
                return Expr::Unknown;
            }
            Expr::Call("operator.ifelse".into(), vec![sub(kids[1]), sub(kids[0]), sub(kids[2])])
        }
        "call" => call_expr(cx, node, depth),
        _ => Expr::Unknown,
    }
}

fn call_expr(cx: &Cx, node: Node, depth: usize) -> Expr {
    let (Some(func), Some(args)) = (node.field("function"), node.field("arguments")) else {
        return Expr::Unknown;
    };
    if args.kind() != "argument_list" {
        return Expr::Unknown;
    }
    let name = match func.kind() {
        "identifier" => {
            let local = node_text(cx.text, func);
            match cx.canonical(func) {
                Some(c) => c,
                None if cx.is_builtin(local) => local.to_string(),
                None => return Expr::Unknown,
            }
        }
        "attribute" => match cx.canonical(func) {
            Some(c) => c,
            None => return Expr::Unknown,
        },
        _ => return Expr::Unknown,
    };
    let name = match name.as_str() {
        "triton.cdiv" | "tl.cdiv" => "triton.cdiv",
        "triton.next_power_of_2" => "triton.next_power_of_2",
        "tl.constexpr" => "tl.constexpr",
        "min" | "max" | "abs" | "int" | "float" => name.as_str(),
        _ => return Expr::Unknown,
    }
    .to_string();
    let mut items = Vec::new();
    for a in named_children(args) {
        if matches!(a.kind(), "keyword_argument" | "list_splat" | "dictionary_splat") {
            return Expr::Unknown;
        }
        items.push(expr_depth(cx, a, depth + 1));
    }
    if name == "tl.constexpr" {
        return if items.len() == 1 { items.pop().unwrap_or(Expr::Unknown) } else { Expr::Unknown };
    }
    Expr::Call(name, items)
}

impl Expr {
    /// Evaluates under `lookup` (a name's value, or None when not bound). Unbound → Unknown.
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Option<Value>) -> Value {
        eval_depth(self, lookup, 0)
    }

    /// Evaluates with no bindings at all (literals only).
    pub fn eval_const(&self) -> Value {
        self.eval(&|_| None)
    }

    /// Names this expression reads.
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        fn walk<'a>(e: &'a Expr, out: &mut Vec<&'a str>) {
            match e {
                Expr::Name(n) => out.push(n),
                Expr::BinOp(_, a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Expr::Neg(a) => walk(a, out),
                Expr::Call(_, args) => args.iter().for_each(|a| walk(a, out)),
                Expr::Const(_) | Expr::Unknown => {}
            }
        }
        walk(self, &mut out);
        out
    }
}

fn eval_depth(e: &Expr, lookup: &dyn Fn(&str) -> Option<Value>, depth: usize) -> Value {
    if depth > 64 {
        return Value::Unknown;
    }
    let ev = |x: &Expr| eval_depth(x, lookup, depth + 1);
    match e {
        Expr::Const(v) => v.clone(),
        Expr::Name(n) => lookup(n).unwrap_or(Value::Unknown),
        Expr::Unknown => Value::Unknown,
        Expr::Neg(a) => match ev(a) {
            Value::Int(i) => i.checked_neg().map_or(Value::Unknown, Value::Int),
            Value::Bool(b) => Value::Int(-(b as i64)),
            Value::Float(f) => Value::Float(-f),
            _ => Value::Unknown,
        },
        Expr::BinOp(op, a, b) => binop(*op, ev(a), ev(b)),
        Expr::Call(name, args) => {
            // Short-circuit forms evaluate lazily, like Python.
            match name.as_str() {
                "operator.ifelse" if args.len() == 3 => {
                    return match truthy(&ev(&args[0])) {
                        Some(true) => ev(&args[1]),
                        Some(false) => ev(&args[2]),
                        None => Value::Unknown,
                    };
                }
                "operator.and" => {
                    for a in args {
                        match truthy(&ev(a)) {
                            Some(true) => {}
                            Some(false) => return Value::Bool(false),
                            None => return Value::Unknown,
                        }
                    }
                    return Value::Bool(true);
                }
                "operator.or" if args.len() == 2 => {
                    let l = ev(&args[0]);
                    return match truthy(&l) {
                        Some(true) => l,
                        Some(false) => ev(&args[1]),
                        None => Value::Unknown,
                    };
                }
                _ => {}
            }
            let vals: Vec<Value> = args.iter().map(ev).collect();
            call(name, vals)
        }
    }
}

fn truthy(v: &Value) -> Option<bool> {
    Some(match v {
        Value::Int(i) => *i != 0,
        Value::Float(f) => *f != 0.0,
        Value::Bool(b) => *b,
        Value::None => false,
        Value::Str(s) => !s.is_empty(),
        Value::Tuple(t) | Value::List(t) => !t.is_empty(),
        Value::Dtype(_) => true,
        Value::Unknown => return None,
    })
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Bool(b) => Some(*b as i64 as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

fn binop(op: BinOp, a: Value, b: Value) -> Value {
    use Value::*;
    if a.is_unknown() || b.is_unknown() {
        return Unknown;
    }
    if let (Some(x), Some(y)) = (a.as_int(), b.as_int())
        && !matches!(a, Float(_))
        && !matches!(b, Float(_))
    {
        return int_op(op, x, y);
    }
    match (op, &a, &b) {
        (BinOp::Add, Str(x), Str(y)) if x.len() + y.len() <= MAX_SEQ => return Str(format!("{x}{y}")),
        (BinOp::Add, Tuple(x), Tuple(y)) if x.len() + y.len() <= MAX_SEQ => {
            return Tuple(x.iter().chain(y).cloned().collect());
        }
        (BinOp::Add, List(x), List(y)) if x.len() + y.len() <= MAX_SEQ => {
            return List(x.iter().chain(y).cloned().collect());
        }
        (BinOp::Mul, List(x), Int(n)) | (BinOp::Mul, Int(n), List(x)) if *n >= 0 && x.len() * (*n as usize) <= MAX_SEQ => {
            return List(x.iter().cloned().cycle().take(x.len() * *n as usize).collect());
        }
        _ => {}
    }
    let (Some(x), Some(y)) = (num(&a), num(&b)) else { return Unknown };
    let r = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div if y != 0.0 => x / y,
        BinOp::FloorDiv if y != 0.0 => (x / y).floor(),
        BinOp::Mod if y != 0.0 => x - y * (x / y).floor(),
        BinOp::Pow => x.powf(y),
        _ => return Unknown,
    };
    if r.is_finite() { Float(r) } else { Unknown }
}

fn int_op(op: BinOp, x: i64, y: i64) -> Value {
    let r = match op {
        BinOp::Add => x.checked_add(y),
        BinOp::Sub => x.checked_sub(y),
        BinOp::Mul => x.checked_mul(y),
        BinOp::FloorDiv => floor_div(x, y),
        BinOp::Mod => floor_div(x, y).and_then(|q| q.checked_mul(y)).and_then(|p| x.checked_sub(p)),
        BinOp::Div => {
            return if y == 0 { Value::Unknown } else { Value::Float(x as f64 / y as f64) };
        }
        BinOp::Pow => {
            if y < 0 {
                return if x == 0 { Value::Unknown } else { Value::Float((x as f64).powf(y as f64)) };
            }
            u32::try_from(y).ok().and_then(|e| x.checked_pow(e))
        }
        BinOp::Shl => u32::try_from(y).ok().filter(|s| *s < 63).and_then(|s| x.checked_mul(1i64 << s)),
        BinOp::Shr => u32::try_from(y).ok().map(|s| if s >= 63 { if x < 0 { -1 } else { 0 } } else { x >> s }),
    };
    r.map_or(Value::Unknown, Value::Int)
}

fn floor_div(x: i64, y: i64) -> Option<i64> {
    if y == 0 {
        return None;
    }
    let q = x.checked_div(y)?;
    if (x % y != 0) && ((x < 0) != (y < 0)) { q.checked_sub(1) } else { Some(q) }
}

fn compare(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        _ => num(a)?.partial_cmp(&num(b)?),
    }
}

fn equal(a: &Value, b: &Value) -> Option<bool> {
    if a.is_unknown() || b.is_unknown() {
        return None;
    }
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return Some(x == y);
    }
    Some(a == b)
}

fn call(name: &str, vals: Vec<Value>) -> Value {
    use std::cmp::Ordering::*;
    if vals.iter().any(Value::is_unknown) {
        return Value::Unknown;
    }
    match (name, vals.as_slice()) {
        ("tuple", _) if vals.len() <= MAX_SEQ => Value::Tuple(vals),
        ("list", _) if vals.len() <= MAX_SEQ => Value::List(vals),
        ("triton.cdiv", [Value::Int(a), Value::Int(b)]) if *b != 0 => {
            a.checked_add(*b - 1).and_then(|s| floor_div(s, *b)).map_or(Value::Unknown, Value::Int)
        }
        ("triton.next_power_of_2", [Value::Int(n)]) => {
            if *n <= 1 {
                Value::Int(1)
            } else {
                (*n as u64).checked_next_power_of_two().and_then(|p| i64::try_from(p).ok()).map_or(Value::Unknown, Value::Int)
            }
        }
        ("min" | "max", [Value::Tuple(items) | Value::List(items)]) => call(name, items.clone()),
        ("min" | "max", [first, rest @ ..]) if !rest.is_empty() => {
            let mut best = first.clone();
            for v in rest {
                let Some(ord) = compare(v, &best) else { return Value::Unknown };
                if (name == "min" && ord == Less) || (name == "max" && ord == Greater) {
                    best = v.clone();
                }
            }
            best
        }
        ("abs", [Value::Int(i)]) => i.checked_abs().map_or(Value::Unknown, Value::Int),
        ("abs", [Value::Float(f)]) => Value::Float(f.abs()),
        ("int", [Value::Int(i)]) => Value::Int(*i),
        ("int", [Value::Bool(b)]) => Value::Int(*b as i64),
        ("int", [Value::Float(f)]) if f.is_finite() && f.abs() < 9.0e18 => Value::Int(f.trunc() as i64),
        ("int", [Value::Str(s)]) => s.trim().parse::<i64>().map_or(Value::Unknown, Value::Int),
        ("float", [v]) => num(v).map_or(Value::Unknown, Value::Float),
        ("operator.lt", [a, b]) => compare(a, b).map_or(Value::Unknown, |o| Value::Bool(o == Less)),
        ("operator.le", [a, b]) => compare(a, b).map_or(Value::Unknown, |o| Value::Bool(o != Greater)),
        ("operator.gt", [a, b]) => compare(a, b).map_or(Value::Unknown, |o| Value::Bool(o == Greater)),
        ("operator.ge", [a, b]) => compare(a, b).map_or(Value::Unknown, |o| Value::Bool(o != Less)),
        ("operator.eq", [a, b]) => equal(a, b).map_or(Value::Unknown, Value::Bool),
        ("operator.ne", [a, b]) => equal(a, b).map_or(Value::Unknown, |e| Value::Bool(!e)),
        ("operator.contains" | "operator.not_contains", [a, Value::Tuple(items) | Value::List(items)]) => {
            let mut found = false;
            for it in items {
                match equal(a, it) {
                    Some(true) => found = true,
                    Some(false) => {}
                    None => return Value::Unknown,
                }
            }
            Value::Bool(found == (name == "operator.contains"))
        }
        ("operator.not", [a]) => truthy(a).map_or(Value::Unknown, |t| Value::Bool(!t)),
        _ => Value::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(v: i64) -> Box<Expr> {
        Box::new(Expr::Const(Value::Int(v)))
    }

    #[test]
    fn integer_arithmetic_follows_python() {
        assert_eq!(Expr::BinOp(BinOp::FloorDiv, c(-7), c(2)).eval_const(), Value::Int(-4));
        assert_eq!(Expr::BinOp(BinOp::Mod, c(-7), c(2)).eval_const(), Value::Int(1));
        assert_eq!(Expr::BinOp(BinOp::Div, c(7), c(2)).eval_const(), Value::Float(3.5));
        assert_eq!(Expr::BinOp(BinOp::Div, c(7), c(0)).eval_const(), Value::Unknown);
        assert_eq!(Expr::BinOp(BinOp::Mul, c(i64::MAX), c(2)).eval_const(), Value::Unknown);
        assert_eq!(Expr::BinOp(BinOp::Shl, c(1), c(6)).eval_const(), Value::Int(64));
    }

    #[test]
    fn known_calls() {
        let npo2 = Expr::Call("triton.next_power_of_2".into(), vec![Expr::Const(Value::Int(100))]);
        assert_eq!(npo2.eval_const(), Value::Int(128));
        let cdiv = Expr::Call("triton.cdiv".into(), vec![Expr::Const(Value::Int(100)), Expr::Const(Value::Int(32))]);
        assert_eq!(cdiv.eval_const(), Value::Int(4));
        let mx = Expr::Call("max".into(), vec![Expr::Const(Value::Int(3)), Expr::Name("B".into())]);
        assert_eq!(mx.eval(&|n| (n == "B").then_some(Value::Int(9))), Value::Int(9));
        assert_eq!(mx.eval_const(), Value::Unknown);
    }

    #[test]
    fn integer_literals() {
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int("1_024"), Some(1024));
        assert_eq!(parse_int("0b101"), Some(5));
        assert_eq!(parse_int("99999999999999999999999"), None);
    }
}
