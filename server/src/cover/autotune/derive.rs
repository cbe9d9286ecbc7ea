//! Verification variants the spec does not have: a family [`CHECK_FAMILY`] made of the small family's
//! variants plus one whose dimensions differ from each other and are not multiples of any tile, so a
//! grid read the wrong way launches too few programs somewhere and fails correctness. A spec with only
//! square, power-of-two dims cannot tell `cdiv(M, BM) * cdiv(N, BN)` from `cdiv(M, BN) * cdiv(N, BM)`.
//!
//! The spec is extended as text (YAML) or as JSON; the original spec is never rewritten.

/// A spec text with the check family, and the derived variant's dims.
pub type Derived = (String, Vec<(String, i64)>);

/// The family the stage checks correctness on when it derives variants.
pub const CHECK_FAMILY: &str = "xeforge-check";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// `d * k + 1`: uneven edges (for kernels with masks).
    Edges,
    /// `d * 2^k`: still multiples of the spec's own dims, and a power of two stays one (for kernels
    /// that assume divisibility, or a `tl.arange` over a dim, which Triton wants a power of two).
    Multiples,
    /// Dims equal in the spec stay equal, each size made odd and distinct sizes kept distinct: for
    /// code that ties two inputs' sizes without saying so (`a` and `b` of an element-wise op, each
    /// `torch.randn(10000)`), where making them unequal fails the original itself. Uneven edges are
    /// still checked; a reading that swaps two equal dims is not told apart.
    Tied,
}

impl Strategy {
    pub fn describe(self) -> &'static str {
        match self {
            Strategy::Edges => "dims made unequal and not multiples of any tile (d·k+1)",
            Strategy::Multiples => "dims made unequal multiples of the spec's (d·2^k)",
            Strategy::Tied => "dims equal in the spec kept equal, every size made odd (not a multiple of any tile)",
        }
    }
}

/// Dims of the derived variant: every dimension of at least 16 scaled in order by 1, 2, 3, 1, ...
/// (plus one: [`Strategy::Edges`]) or by 1, 2, 4, 1, ... ([`Strategy::Multiples`]); or each size
/// moved to an odd one of its own ([`Strategy::Tied`]).
pub fn derive_dims(dims: &[(String, i64)], s: Strategy) -> Vec<(String, i64)> {
    if s == Strategy::Tied {
        return tied(dims);
    }
    let mut i = 0;
    dims.iter()
        .map(|(k, v)| {
            if *v < 16 {
                return (k.clone(), *v);
            }
            let step = (i % 3) as u32;
            i += 1;
            (k.clone(), if s == Strategy::Edges { v * (1 + step as i64) + 1 } else { v << step })
        })
        .collect()
}

/// [`Strategy::Tied`]: each distinct size of at least 16 becomes the next odd number above it that no
/// other size became, in order of first appearance, so equal dims stay equal and unequal ones unequal.
fn tied(dims: &[(String, i64)]) -> Vec<(String, i64)> {
    let mut to: Vec<(i64, i64)> = Vec::new();
    dims.iter()
        .map(|(k, v)| {
            if *v < 16 {
                return (k.clone(), *v);
            }
            if let Some((_, n)) = to.iter().find(|(from, _)| from == v) {
                return (k.clone(), *n);
            }
            let mut n = if v % 2 == 0 { v + 1 } else { v + 2 };
            while to.iter().any(|(_, m)| *m == n) || dims.iter().any(|(_, d)| *d == n) {
                n += 2;
            }
            to.push((*v, n));
            (k.clone(), n)
        })
        .collect()
}

/// The spec with [`CHECK_FAMILY`] appended, built from `family`; None when that family cannot be read
/// or the derived variant would equal the first one.
pub fn check_spec(spec: &str, family: &str, s: Strategy) -> Option<Derived> {
    if spec.trim_start().starts_with('{') { json(spec, family, s) } else { yaml(spec, family, s) }
}

fn json(spec: &str, family: &str, s: Strategy) -> Option<Derived> {
    let mut v: serde_json::Value = serde_json::from_str(spec).ok()?;
    let entries = v.get(family)?.as_array()?.clone();
    let first = entries.first()?.clone();
    let dims: Vec<(String, i64)> = first.get("dims")?.as_object()?.iter().filter_map(|(k, x)| Some((k.clone(), x.as_i64()?))).collect();
    let derived = derive_dims(&dims, s);
    if derived == dims {
        return None;
    }
    let mut extra = first;
    let map: serde_json::Map<String, serde_json::Value> = derived.iter().map(|(k, x)| (k.clone(), serde_json::Value::from(*x))).collect();
    extra.as_object_mut()?.insert("dims".into(), serde_json::Value::Object(map));
    let mut all = entries;
    all.push(extra);
    v.as_object_mut()?.insert(CHECK_FAMILY.into(), serde_json::Value::Array(all));
    Some((serde_json::to_string_pretty(&v).ok()?, derived))
}

fn indent_of(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

fn yaml(spec: &str, family: &str, s: Strategy) -> Option<Derived> {
    let lines: Vec<&str> = spec.lines().collect();
    let head = lines.iter().position(|l| {
        let t = l.split('#').next().unwrap_or("").trim_end();
        t == format!("{family}:")
    })?;
    let end = (head + 1..lines.len()).find(|&i| {
        let l = lines[i];
        !l.trim().is_empty() && !l.trim_start().starts_with('#') && indent_of(l) == 0
    });
    let block = &lines[head + 1..end.unwrap_or(lines.len())];
    let starts: Vec<usize> = block.iter().enumerate().filter(|(_, l)| l.trim_start().starts_with("- ")).map(|(i, _)| i).collect();
    let first_start = *starts.first()?;
    let first_end = starts.get(1).copied().unwrap_or(block.len());
    let entry = &block[first_start..first_end];
    let (dims, dims_line, dims_end) = read_dims(entry)?;
    let derived = derive_dims(&dims, s);
    if derived == dims {
        return None;
    }
    let flow = format!("{{{}}}", derived.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", "));
    let mut new_entry: Vec<String> = Vec::new();
    for (i, l) in entry.iter().enumerate() {
        if i == dims_line {
            let at = l.find("dims:")?;
            new_entry.push(format!("{}dims: {flow}", &l[..at]));
        } else if i > dims_line && i < dims_end {
            continue;
        } else {
            new_entry.push(l.to_string());
        }
    }
    let mut out = spec.trim_end().to_string();
    out.push_str("\n\n# Added by xeforge's autotune stage: the family above plus a variant a wrong grid reading fails.\n");
    out.push_str(&format!("{CHECK_FAMILY}:\n"));
    for l in block.iter().rev().skip_while(|l| l.trim().is_empty()).collect::<Vec<_>>().into_iter().rev() {
        out.push_str(l);
        out.push('\n');
    }
    for l in new_entry {
        out.push_str(&l);
        out.push('\n');
    }
    Some((out, derived))
}

type DimsAt = (Vec<(String, i64)>, usize, usize);

/// The `dims` of one entry (flow `{A: 1}` or block form), its line, and the line after its block.
fn read_dims(entry: &[&str]) -> Option<DimsAt> {
    let line = entry.iter().position(|l| l.contains("dims:"))?;
    let l = entry[line];
    let after = l[l.find("dims:")? + 5..].split('#').next().unwrap_or("").trim();
    let pair = |s: &str| -> Option<(String, i64)> {
        let (k, v) = s.split_once(':')?;
        Some((k.trim().to_string(), v.trim().parse().ok()?))
    };
    if let Some(inner) = after.strip_prefix('{') {
        let inner = inner.trim_end_matches('}');
        let dims: Option<Vec<_>> = inner.split(',').filter(|p| !p.trim().is_empty()).map(pair).collect();
        return Some((dims?, line, line + 1));
    }
    let base = indent_of(l) + if l.trim_start().starts_with("- ") { 2 } else { 0 };
    let mut dims = Vec::new();
    let mut end = line + 1;
    while end < entry.len() && (entry[end].trim().is_empty() || indent_of(entry[end]) > base) {
        let t = entry[end].split('#').next().unwrap_or("").trim();
        if !t.is_empty() {
            dims.push(pair(t)?);
        }
        end += 1;
    }
    (!dims.is_empty()).then_some((dims, line, end))
}

/// Bytes per element of the widest floating-point dtype the spec gives its tensors (inputs' own
/// dtypes and every variant's), None when it names none (`inherit` with no variant dtype).
///
/// The kernel's text rarely says what its `tl.dot` reads (`tl.zeros(.., dtype=tl.float32)` is the
/// accumulator in every GEMM); the spec does, and every family the stage runs must fit the device,
/// so the widest one sizes the shared-memory estimate.
/// Names a spec gives a fractional number anywhere (`p: 0.5`, `"eps": 1e-06`, in flow or block style):
/// scalars, never shapes.
pub fn float_values(spec: &str) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for line in spec.lines().map(|l| l.find(" #").map_or(l, |at| &l[..at])).filter(|l| !l.trim_start().starts_with('#')) {
        for part in line.split([',', '{', '}']) {
            let Some((name, value)) = part.split_once(':') else { continue };
            let name = name.trim().trim_start_matches("- ").trim_matches(['"', '\'']);
            let value = value.trim().trim_matches(['"', '\'']);
            let fractional = (value.contains('.') || value.contains(['e', 'E'])) && value.parse::<f64>().is_ok_and(|v| v.fract() != 0.0);
            if fractional && !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                out.insert(name.to_string());
            }
        }
    }
    out
}

pub fn float_bytes(spec: &str) -> Option<u64> {
    // A YAML comment may name a dtype the spec does not use (`# fp64 reference: dtype: float64`).
    let text: String = if spec.trim_start().starts_with('{') {
        spec.to_string()
    } else {
        spec.lines()
            .map(|l| l.find(" #").map_or(l, |at| &l[..at]))
            .filter(|l| !l.trim_start().starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut widest = None;
    let mut rest = text.as_str();
    while let Some(at) = rest.find("dtype") {
        rest = &rest[at + 5..];
        let value = rest.trim_start_matches(['"', '\'']).trim_start();
        let Some(value) = value.strip_prefix(':') else { continue };
        let word: String = value
            .trim_start()
            .trim_start_matches(['"', '\''])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
            .collect();
        // torch's spellings (`half`, `double`) by the problem module's one table of them.
        let word = word.trim_start_matches("torch.");
        let bytes = match crate::cover::problem::value::dtype_name(word).unwrap_or(word) {
            "float16" | "bfloat16" => 2,
            "float32" => 4,
            "float64" => 8,
            w if w.starts_with("float8") => 1,
            _ => continue,
        };
        widest = Some(widest.map_or(bytes, |b: u64| b.max(bytes)));
    }
    widest
}

/// Top-level families of a spec (keys whose value is a list of variants), in file order.
pub fn families(spec: &str) -> Vec<String> {
    if spec.trim_start().starts_with('{') {
        return serde_json::from_str::<serde_json::Value>(spec)
            .ok()
            .and_then(|v| v.as_object().map(|o| o.iter().filter(|(_, x)| x.is_array()).map(|(k, _)| k.clone()).collect()))
            .unwrap_or_default();
    }
    let lines: Vec<&str> = spec.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.split('#').next().unwrap_or("").trim_end();
        if indent_of(l) != 0 || !t.ends_with(':') || t.contains(' ') {
            continue;
        }
        let next = lines[i + 1..].iter().find(|n| !n.trim().is_empty() && !n.trim_start().starts_with('#'));
        if next.is_some_and(|n| indent_of(n) > 0 && n.trim_start().starts_with("- ")) {
            out.push(t.trim_end_matches(':').to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractional_values_are_read_in_flow_and_block_style() {
        let spec = "ci:\n  - params: [x, p, seed]\n    dims: {\"n\": 10, p: 0.5, seed: 123, eps: 1e-6}\nbench:\n  - dims:\n      N: 4096\n      scale: 0.125\n      rtol: 1e-2  # not a dim: harmless\n";
        let v: Vec<String> = float_values(spec).into_iter().collect();
        assert_eq!(v, ["eps", "p", "rtol", "scale"]);
    }

    const FLOW: &str = "inputs:\n  a: {shape: [M, K], dtype: float16}\nci:\n  - params: [a]\n    dims: {M: 64, N: 64, K: 64}\n    rtol: 1.0e-2\nbench-gpu:\n  - params: [a]\n    dims: {M: 4096, N: 4096, K: 4096}\n";
    const BLOCK: &str = "inputs:\n  x:\n    shape: [N]\n    dtype: float32\n\nci:\n  - params: [x]\n    dims:\n      N: 1000   # small\n      B: 2\n  - params: [x]\n    dims:\n      N: 4099\n";

    #[test]
    fn the_widest_float_dtype_of_the_spec_sizes_a_dot_operand() {
        assert_eq!(float_bytes(FLOW), Some(2));
        assert_eq!(float_bytes(BLOCK), Some(4));
        // Inputs that inherit the variant's dtype: the variants decide; integer inputs never count.
        let inherit = "inputs:\n  a: {shape: [M, K], dtype: inherit}\n  i: {shape: [M], dtype: int64}\nci:\n  - params: [a, i]\n    dims: {M: 96}\n    dtype: float16\nbench-gpu:\n  - params: [a, i]\n    dims: {M: 8192}\n    dtype: bfloat16\n";
        assert_eq!(float_bytes(inherit), Some(2));
        assert_eq!(float_bytes(&inherit.replace("float16\n", "float32\n")), Some(4));
        assert_eq!(float_bytes(r#"{"inputs": {"x": {"shape": ["N"], "dtype": "float64"}}}"#), Some(8));
        assert_eq!(float_bytes("inputs:\n  a: {shape: [N], dtype: inherit}\n"), None);
        // Comments are not the spec.
        let commented = "# the reference ran with dtype: float64\ninputs:\n  a: {shape: [N], dtype: float16}  # dtype: float32 once\n";
        assert_eq!(float_bytes(commented), Some(2));
    }

    #[test]
    fn square_dims_become_unequal_uneven_ones() {
        let (text, dims) = check_spec(FLOW, "ci", Strategy::Edges).unwrap();
        assert_eq!(dims, vec![("M".into(), 65), ("N".into(), 129), ("K".into(), 193)]);
        assert!(text.starts_with(FLOW.trim_end()));
        assert!(
            text.ends_with(
                "xeforge-check:\n  - params: [a]\n    dims: {M: 64, N: 64, K: 64}\n    rtol: 1.0e-2\n  - params: [a]\n    dims: {M: 65, N: 129, K: 193}\n    rtol: 1.0e-2\n"
            ),
            "{text}"
        );
        assert_eq!(families(&text), vec!["ci", "bench-gpu", CHECK_FAMILY]);
    }

    #[test]
    fn block_dims_and_small_dims() {
        // One dimension of at least 16, scaled by 1: nothing new under Multiples.
        assert!(check_spec(BLOCK, "ci", Strategy::Multiples).is_none());
        let (text, dims) = check_spec(BLOCK, "ci", Strategy::Edges).unwrap();
        assert_eq!(dims, vec![("N".into(), 1001), ("B".into(), 2)]);
        assert!(text.ends_with("  - params: [x]\n    dims:\n      N: 4099\n  - params: [x]\n    dims: {N: 1001, B: 2}\n"), "{text}");
    }

    #[test]
    fn multiples_keep_a_power_of_two_a_power_of_two() {
        // An attention head dim feeds `tl.arange`: 64 · 3 would not compile, 64 · 4 does.
        let dims = [("Z".to_string(), 1), ("H".to_string(), 2), ("N_CTX".to_string(), 128), ("D".to_string(), 32), ("E".to_string(), 64)];
        let got = derive_dims(&dims, Strategy::Multiples);
        assert_eq!(got.iter().map(|(_, v)| *v).collect::<Vec<_>>(), vec![1, 2, 128, 64, 256]);
        assert!(got.iter().all(|(_, v)| (*v as u64).is_power_of_two()));
    }

    #[test]
    fn tied_dims_stay_equal_and_every_size_turns_odd() {
        // Two inputs of one element-wise op, sized apart by the inference but equal in the spec.
        let dims = [("b_0".to_string(), 10000), ("n".to_string(), 10000)];
        assert_eq!(derive_dims(&dims, Strategy::Tied), vec![("b_0".into(), 10001), ("n".into(), 10001)]);
        // Distinct sizes stay distinct, small ones stay, an odd size moves to the next odd one, and no
        // size lands on another dim's spec value.
        let dims = [("M".to_string(), 512), ("K".to_string(), 511), ("N".to_string(), 512), ("B".to_string(), 4), ("E".to_string(), 513)];
        let got = derive_dims(&dims, Strategy::Tied);
        assert_eq!(got.iter().map(|(_, v)| *v).collect::<Vec<_>>(), vec![515, 517, 515, 4, 519]);
        assert!(check_spec(BLOCK, "ci", Strategy::Tied).is_some());
    }

    #[test]
    fn json_specs_get_the_family_too() {
        let spec = r#"{"inputs": {"x": {"shape": ["N"], "dtype": "float32"}}, "ci": [{"params": ["x"], "dims": {"N": 64, "M": 32}}]}"#;
        let (text, dims) = check_spec(spec, "ci", Strategy::Edges).unwrap();
        assert_eq!(dims, vec![("M".into(), 33), ("N".into(), 129)]);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v[CHECK_FAMILY].as_array().unwrap().len(), 2);
    }
}
