//! A problem as the harness reads it (AI Bench YAML + `entry:` + `provenance:`), and as people read
//! it: the missing facts with the line that gives each.

use super::{InputKind, Problem};
use std::fmt::Write;

/// The spec text. Every input of a variant uses the variant's dtype unless it has its own (indices).
pub fn spec_yaml(p: &Problem) -> String {
    let mut y = String::new();
    let _ = writeln!(
        y,
        "# Inferred by xeforge from {} (entry `{}`, kernel `{}`); regenerated on every stage run.",
        p.file, p.entry.name, p.kernel
    );
    let _ = writeln!(y, "# To change it, add `# xeforge: dims NAME=SIZE ... dtype=...` above the entry, or a spec beside the file.");
    let _ = writeln!(y, "entry: {}", quote(&p.entry.name));
    if p.entry.backward {
        y.push_str("backward: true\n");
    }
    y.push_str("inputs:\n");
    for i in &p.inputs {
        match &i.kind {
            InputKind::Tensor { shape, dtype, range } => {
                let dt = dtype.clone().unwrap_or_else(|| "inherit".into());
                let bound = |b: &String| if b.parse::<i64>().is_ok() { b.clone() } else { quote(b) };
                let r = range.as_ref().map(|(lo, hi)| format!(", range: [{}, {}]", bound(lo), bound(hi))).unwrap_or_default();
                let _ = writeln!(
                    y,
                    "  {}: {{shape: [{}], dtype: {dt}{r}}}",
                    quote(&i.name),
                    shape.iter().map(|s| quote(s)).collect::<Vec<_>>().join(", ")
                );
            }
            InputKind::Scalar { .. } => match p.flag(&i.name) {
                Some(on) => {
                    let _ = writeln!(y, "  {}: {{value: {on}}}", quote(&i.name));
                }
                None => {
                    let _ = writeln!(y, "  {}: {{value: {}}}", quote(&i.name), quote(&i.name));
                }
            },
            InputKind::Sizes { dims } => {
                let _ = writeln!(y, "  {}: {{value: [{}]}}", quote(&i.name), dims.iter().map(|d| quote(d)).collect::<Vec<_>>().join(", "));
            }
        }
    }
    if !p.inits.is_empty() {
        y.push_str("inits:\n");
        for d in &p.inits {
            let _ = writeln!(y, "  - dim: {}", quote(d));
        }
    }
    let params = p.inputs.iter().map(|i| quote(&i.name)).collect::<Vec<_>>().join(", ");
    for family in ["ci", "bench-gpu"] {
        let vs: Vec<_> = p.variants.iter().filter(|v| v.family == family).collect();
        if vs.is_empty() {
            continue;
        }
        let _ = writeln!(y, "{family}:");
        for v in vs {
            let dims = v
                .dims
                .iter()
                .filter(|(k, _)| p.flag(k).is_none())
                .map(|(k, x)| format!("{}: {}", quote(k), number(*x, p.is_int(k))))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(y, "  - params: [{params}]");
            let _ = writeln!(y, "    dtype: {}", v.dtype);
            let _ = writeln!(y, "    dims: {{{dims}}}");
            let _ = writeln!(y, "    # from {}", v.origin.replace('\n', " "));
        }
    }
    y.push_str("provenance:\n");
    for (k, v) in &p.provenance {
        let _ = writeln!(y, "  {}: {}", json(k), json(v));
    }
    y
}

impl Problem {
    /// A flag (a `bool` scalar) every variant passes the same: written as `true`/`false` in the spec,
    /// not as a dimension (the harness would pass `1`).
    fn flag(&self, name: &str) -> Option<bool> {
        self.inputs.iter().find(|i| i.name == name && matches!(&i.kind, InputKind::Scalar { py } if py == "bool"))?;
        let mut values = self.variants.iter().map(|v| v.dims.get(name).copied());
        let first = values.next()??;
        values.all(|v| v == Some(first)).then_some(first != 0.0)
    }

    /// Whether a dimension must stay an integer (a tensor size, or an int scalar).
    fn is_int(&self, dim: &str) -> bool {
        self.inputs.iter().any(|i| match &i.kind {
            InputKind::Tensor { shape, .. } => shape.iter().any(|s| s == dim),
            InputKind::Scalar { py } => i.name == dim && py != "float",
            InputKind::Sizes { dims } => dims.iter().any(|s| s == dim),
        }) || self.inits.iter().any(|d| d == dim)
    }
}

/// A number as YAML 1.1 reads it back as one (PyYAML, the harness's reader, takes `1e-5` for a
/// string: a float needs a `.` in its mantissa and a sign in its exponent).
fn number(x: f64, int: bool) -> String {
    if int && x.fract() == 0.0 {
        return format!("{}", x as i64);
    }
    if !x.is_finite() {
        return if x.is_nan() {
            ".nan".into()
        } else if x > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    let s = format!("{x:?}");
    match s.split_once('e') {
        Some((mantissa, exp)) => {
            let mantissa = if mantissa.contains('.') { mantissa.to_string() } else { format!("{mantissa}.0") };
            let exp = if exp.starts_with('-') { exp.to_string() } else { format!("+{exp}") };
            format!("{mantissa}e{exp}")
        }
        None => s,
    }
}

/// YAML-safe scalar: plain identifiers stay plain, everything else is a JSON string (valid YAML).
fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && !matches!(s.to_ascii_lowercase().as_str(), "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n");
    if plain && !s.starts_with(|c: char| c.is_ascii_digit()) { s.to_string() } else { json(s) }
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// What cannot be inferred, and the one line that gives all of it.
pub fn missing_report(p: &Problem) -> String {
    let mut s = format!("xeforge cannot run `{}` yet; nothing in the code says:\n", p.entry.name);
    for m in &p.missing {
        let _ = writeln!(s, "  - {}", m.what);
    }
    let line = p.missing.iter().map(|m| m.add.as_str()).collect::<Vec<_>>().join(" ");
    let _ = writeln!(s, "Add this line {} (the sizes are examples; the next run reads it):\n    # xeforge: dims {line}", p.place);
    let _ = write!(s, "or the same under [tool.xeforge.problems.{}] in pyproject.toml, or a spec with --spec.", toml_key(&p.entry.name));
    s
}

fn toml_key(k: &str) -> String {
    if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') { k.to_string() } else { json(k) }
}

/// One line per inferred fact, for the CLI.
pub fn summary(p: &Problem) -> String {
    let grads = if p.entry.backward { ", forward and backward" } else { "" };
    let mut s = format!("problem: entry `{}` ({:?}{grads}) of {}\n", p.entry.name, p.entry.kind, p.file);
    for i in &p.inputs {
        match &i.kind {
            InputKind::Tensor { shape, dtype, .. } => {
                let _ = writeln!(s, "  input {}: [{}] {}", i.name, shape.join(", "), dtype.as_deref().unwrap_or("(variant dtype)"));
            }
            InputKind::Scalar { py } => {
                let _ = writeln!(s, "  input {}: {py}", i.name);
            }
            InputKind::Sizes { dims } => {
                let _ = writeln!(s, "  input {}: sizes ({})", i.name, dims.join(", "));
            }
        }
    }
    for v in &p.variants {
        let dims = v
            .dims
            .iter()
            .map(|(k, x)| match p.flag(k) {
                Some(on) => format!("{k}={on}"),
                None => format!("{k}={}", number(*x, p.is_int(k))),
            })
            .collect::<Vec<_>>()
            .join(" ");
        let _ = writeln!(s, "  {}: {dims} {}   ({})", v.family, v.dtype, v.origin);
    }
    for n in &p.notes {
        let _ = writeln!(s, "  note: {n}");
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_are_written_as_yaml_1_1_reads_them() {
        for (x, int, out) in [
            (1e-5, false, "1.0e-5"),
            (2.5e-7, false, "2.5e-7"),
            (1e20, false, "1.0e+20"),
            (0.25, false, "0.25"),
            (4096.0, true, "4096"),
            (3.0, false, "3.0"),
        ] {
            assert_eq!(super::number(x, int), out);
        }
    }
}
