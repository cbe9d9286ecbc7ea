//! Python-like rendering of values and symbolic expressions, for messages, hovers and snapshots.

use super::types::{BinOp, Expr, Value};
use std::fmt;

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => {
                if x.fract() == 0.0 && x.abs() < 1e16 {
                    write!(f, "{x:.1}")
                } else {
                    write!(f, "{x}")
                }
            }
            Value::Str(s) => write!(f, "'{s}'"),
            Value::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            Value::None => f.write_str("None"),
            Value::Tuple(items) => {
                f.write_str("(")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str(if items.len() == 1 { ",)" } else { ")" })
            }
            Value::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Dtype(d) => write!(f, "tl.{d}"),
            Value::Unknown => f.write_str("?"),
        }
    }
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::FloorDiv => "//",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Const(v) => write!(f, "{v}"),
            Expr::Name(n) => f.write_str(n),
            Expr::Unknown => f.write_str("?"),
            Expr::Neg(a) => write!(f, "-{a}"),
            Expr::BinOp(op, a, b) => {
                let wrap = |e: &Expr| matches!(e, Expr::BinOp(..));
                if wrap(a) {
                    write!(f, "({a})")?
                } else {
                    write!(f, "{a}")?
                }
                write!(f, " {} ", op.symbol())?;
                if wrap(b) { write!(f, "({b})") } else { write!(f, "{b}") }
            }
            Expr::Call(name, args) => {
                let (open, close) = match name.as_str() {
                    "tuple" => ("(", ")"),
                    "list" => ("[", "]"),
                    _ => {
                        write!(f, "{name}")?;
                        ("(", ")")
                    }
                };
                f.write_str(open)?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(close)
            }
        }
    }
}

/// Renders a shape as `[BLOCK_M, BLOCK_K]`.
pub fn shape_string(shape: &[Expr]) -> String {
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    format!("[{}]", dims.join(", "))
}
