//! `xeforge spec`: a first AI Bench spec (`<kernel>.yaml`) from what the file shows. A file without
//! `class Model` gets the problem `cover::problem` infers (entry, inputs, sizes from the wrapper, call
//! sites and `# xeforge: dims`, with provenance). A `Model` file: `forward`'s parameters, tensor
//! shapes and dtypes in `get_inputs`, constructor arguments in `get_init_inputs`, and module-level
//! integer constants as dimension values. Whatever no source gives is a `TODO`.

use super::outline::{Outline, slice};
use super::problem;
use std::collections::BTreeMap;
use std::path::Path;

/// The draft for the file at `path` holding `text`.
pub fn draft_file(path: &Path, text: &str) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    if Outline::build(text).class("Model").is_some() {
        return draft(text, &name);
    }
    match problem::infer(path, text, None) {
        Ok(p) => {
            let mut y = format!("# Drafted by `xeforge spec` from {name}: the problem as the code shows it (provenance below).\n");
            for m in &p.missing {
                y.push_str(&format!("# TODO: {} (or add `# xeforge: dims {}` {})\n", m.what, m.add, p.place));
            }
            y.push_str(&problem::render::spec_yaml(&p));
            y
        }
        // No entry: say what to add, then the Model-style skeleton.
        Err(why) => format!("# TODO: {why}\n{}", draft(text, &name)),
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Input {
    name: String,
    dims: Option<Vec<String>>,
    dtype: Option<String>,
}

/// The YAML text of the draft.
pub fn draft(text: &str, file_name: &str) -> String {
    let o = Outline::build(text);
    let constants = int_constants(&o, text);
    let forward: Vec<String> = o
        .class("Model")
        .and_then(|m| m.methods.iter().find(|f| f.name == "forward"))
        .map(|f| f.params.iter().map(|p| p.name.clone()).filter(|n| n != "self").collect())
        .unwrap_or_default();
    let tensors = o.function("get_inputs").map(|f| tensor_calls(slice(text, f.range))).unwrap_or_default();
    let inputs: Vec<Input> = forward
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let t = tensors.get(i);
            Input { name: n.clone(), dims: t.map(|t| t.0.clone()), dtype: t.and_then(|t| t.1.clone()) }
        })
        .collect();
    let inits: Vec<String> = o.function("get_init_inputs").map(|f| list_items(slice(text, f.range))).unwrap_or_default();

    let mut dims: BTreeMap<String, Option<i64>> = BTreeMap::new();
    for i in &inputs {
        for d in i.dims.iter().flatten() {
            dims.insert(d.clone(), constants.get(d).copied().or_else(|| d.parse().ok()));
        }
    }
    for d in &inits {
        dims.entry(d.clone()).or_insert_with(|| constants.get(d).copied());
    }

    let mut y = format!("# Drafted by `xeforge spec` from {file_name}. Complete every TODO, then check it with `xeforge verify`.\n");
    y.push_str("inputs:\n");
    if inputs.is_empty() {
        y.push_str("  TODO: {shape: [TODO], dtype: float32}  # no Model.forward found\n");
    }
    for i in &inputs {
        let shape =
            i.dims.as_ref().map(|d| d.iter().map(|x| dim_symbol(x)).collect::<Vec<_>>().join(", ")).unwrap_or_else(|| "TODO".into());
        let dtype = i.dtype.clone().unwrap_or_else(|| "float32".into());
        let note = if i.dims.is_none() { "  # TODO: shape not found in get_inputs" } else { "" };
        y.push_str(&format!("  {}: {{shape: [{shape}], dtype: {dtype}}}{note}\n", i.name));
    }
    if !inits.is_empty() {
        y.push_str("inits:\n");
        for d in &inits {
            y.push_str(&format!("  - dim: {}\n", dim_symbol(d)));
        }
    }
    let params = inputs.iter().map(|i| i.name.clone()).collect::<Vec<_>>().join(", ");
    let dims_of = |f: &dyn Fn(Option<i64>) -> String| {
        dims.iter().map(|(k, v)| format!("{}: {}", dim_symbol(k), f(*v))).collect::<Vec<_>>().join(", ")
    };
    y.push_str("ci:\n");
    y.push_str(&format!(
        "  - params: [{params}]\n    dims: {{{}}}\n",
        dims_of(&|v| v.map(|x| x.to_string()).unwrap_or_else(|| "TODO".into()))
    ));
    y.push_str("bench-gpu:\n");
    y.push_str(&format!(
        "  - params: [{params}]\n    dims: {{{}}}  # TODO: benchmark sizes\n    # flop: \"TODO formula over the dims\"\n",
        dims_of(&|v| v.map(|x| x.to_string()).unwrap_or_else(|| "TODO".into()))
    ));
    y
}

/// A dimension's YAML symbol: names as they are, literal sizes as `D<size>`.
fn dim_symbol(d: &str) -> String {
    if d.chars().all(|c| c.is_ascii_digit()) { format!("D{d}") } else { d.to_string() }
}

fn int_constants(o: &Outline, text: &str) -> BTreeMap<String, i64> {
    let mut m = BTreeMap::new();
    for (_, r) in &o.others {
        let s = slice(text, *r);
        if let Some((lhs, rhs)) = s.split_once('=') {
            let lhs = lhs.split(':').next().unwrap_or("").trim();
            if lhs.chars().all(|c| c.is_alphanumeric() || c == '_')
                && !lhs.is_empty()
                && let Ok(v) = rhs.trim().replace('_', "").parse::<i64>()
            {
                m.insert(lhs.to_string(), v);
            }
        }
    }
    m
}

/// `torch.randn(a, b, dtype=torch.float16)` and friends in source order: (dims, dtype).
fn tensor_calls(body: &str) -> Vec<(Vec<String>, Option<String>)> {
    let mut out = Vec::new();
    for ctor in ["torch.randn(", "torch.rand(", "torch.empty(", "torch.zeros(", "torch.ones(", "torch.randn_like("] {
        let mut from = 0;
        while let Some(p) = body[from..].find(ctor) {
            let start = from + p + ctor.len();
            let Some(len) = balanced(&body[start..]) else { break };
            let inner = &body[start..start + len];
            let mut dims = Vec::new();
            let mut dtype = None;
            for part in split_top(inner) {
                let part = part.trim().trim_start_matches('(').trim_end_matches(')');
                if let Some(v) = part.strip_prefix("dtype=") {
                    dtype = Some(v.trim().trim_start_matches("torch.").to_string());
                } else if part.contains('=') || part.is_empty() {
                    continue;
                } else {
                    dims.extend(part.split(',').map(|d| d.trim().to_string()).filter(|d| !d.is_empty()));
                }
            }
            out.push((start, (dims, dtype)));
            from = start + len;
        }
    }
    out.sort_by_key(|(at, _)| *at);
    out.into_iter().map(|(_, t)| t).collect()
}

/// Length up to the `)` closing an already-open parenthesis.
fn balanced(s: &str) -> Option<usize> {
    let mut depth = 1;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn split_top(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// Items of the list a `get_init_inputs` returns (`return [dim, 4]`).
fn list_items(body: &str) -> Vec<String> {
    let Some(ret) = body.rfind("return") else { return Vec::new() };
    let rest = body[ret + 6..].trim();
    let inner = rest.trim_start_matches(['[', '(']);
    let end = inner.find([']', ')', '\n']).unwrap_or(inner.len());
    inner[..end].split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drafts_from_forward_get_inputs_and_constants() {
        let src = "import torch\nM = 128\nK = 64\n\nclass Model(torch.nn.Module):\n    def __init__(self, n):\n        super().__init__()\n    def forward(self, a, b):\n        return a\n\ndef get_inputs():\n    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, 32)]\n\ndef get_init_inputs():\n    return [K]\n";
        let y = draft(src, "mm.py");
        assert!(y.contains("  a: {shape: [M, K], dtype: float16}\n"), "{y}");
        assert!(y.contains("  b: {shape: [K, D32], dtype: float32}\n"), "{y}");
        assert!(y.contains("inits:\n  - dim: K\n"), "{y}");
        assert!(y.contains("dims: {D32: 32, K: 64, M: 128}"), "{y}");
    }

    #[test]
    fn a_wrapper_file_drafts_from_the_inferred_problem() {
        let src = "import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef k(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):\n    pass\n\ndef matmul(A, B):\n    M, K = A.shape\n    N = B.shape[1]\n    assert A.shape[1] == B.shape[0]\n    C = torch.empty((M, N), device=A.device, dtype=torch.bfloat16)\n    k[(1,)](A, B, C, M, N, K, BLOCK=32)\n    return C\n";
        let y = draft_file(Path::new("mm.py"), src);
        assert!(!y.contains("TODO"), "{y}");
        assert!(
            y.contains("entry: matmul\n")
                && y.contains("  A: {shape: [M, K], dtype: inherit}\n")
                && y.contains("  B: {shape: [K, \"N\"], dtype: inherit}\n"),
            "{y}"
        );
        assert!(y.contains("    dtype: bfloat16\n") && y.contains("mm.py:13"), "{y}");
        let y = draft_file(
            Path::new("c.py"),
            "import triton\n@triton.jit\ndef k(p, BLOCK: tl.constexpr):\n    tl.store(p + tl.arange(0, BLOCK), 0.0)\n\ndef run(x, n):\n    k[(n,)](x, BLOCK=4)\n",
        );
        assert_eq!(y.matches("TODO").count(), 2, "{y}");
        assert!(y.contains("# xeforge: dims x=[x_0]") && y.contains("n=<value>"), "{y}");
    }

    #[test]
    fn unknown_shapes_are_todo() {
        let y = draft("class Model:\n    def forward(self, x):\n        return x\n", "k.py");
        assert!(y.contains("x: {shape: [TODO], dtype: float32}  # TODO"), "{y}");
    }
}
