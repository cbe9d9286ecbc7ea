//! Sizes the user wrote down for stages: an inline `# xeforge: dims M=4096 N=4096 dtype=float16` on
//! the entry (one variant per comment; `x=[M,N]` gives an input's shape), or `[tool.xeforge.problems]`
//! in `pyproject.toml` (`[problems]` in `xeforge.toml`), keyed by the entry's name or the file's path:
//!
//! ```toml
//! [tool.xeforge.problems.matmul]
//! dims = [{M = 64, N = 48, K = 32}, {M = 4096, N = 4096, K = 4096}]   # or one table
//! dtype = "float16"
//! shapes = {a = ["M", "K"], b = ["K", "N"]}
//! entry = "matmul"        # when the key is the file's path
//! ```

use super::Origin;
use super::value::dtype_name;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hints {
    pub entry: Option<(String, Origin)>,
    pub variants: Vec<HintVariant>,
    pub shapes: BTreeMap<String, (Vec<String>, Origin)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HintVariant {
    pub dims: BTreeMap<String, f64>,
    pub dtype: Option<String>,
    pub origin: Origin,
}

/// `# xeforge: dims ...` comments in the lines just above `def_line` (1-based) and on it.
pub fn inline(text: &str, file: &str, def_line: usize, first_line: usize) -> Result<Hints, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut h = Hints::default();
    // The comment block directly above the decorators, then the decorator and def lines themselves.
    let mut from = first_line.saturating_sub(1);
    while from > 0 && lines.get(from - 1).is_some_and(|l| l.trim_start().starts_with('#')) {
        from -= 1;
    }
    for (i, line) in lines.iter().enumerate().take(def_line).skip(from) {
        let Some(at) = line.find("# xeforge:") else {
            continue;
        };
        let rest = line[at + "# xeforge:".len()..].trim();
        let Some(tokens) = rest.strip_prefix("dims") else {
            continue;
        };
        let origin = Origin { file: file.to_string(), line: i + 1, code: line.trim().to_string() };
        let mut v = HintVariant { dims: BTreeMap::new(), dtype: None, origin: origin.clone() };
        for tok in split_tokens(tokens) {
            let Some((k, val)) = tok.split_once('=') else {
                return Err(format!("{file}:{}: `{tok}` is not NAME=VALUE", i + 1));
            };
            let (k, val) = (k.trim(), val.trim());
            if k == "dtype" {
                v.dtype = Some(
                    dtype_name(val.trim_start_matches("torch."))
                        .ok_or_else(|| format!("{file}:{}: unknown dtype `{val}`", i + 1))?
                        .to_string(),
                );
            } else if let Some(inner) = val.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                let dims = inner.split(',').map(|d| d.trim().to_string()).filter(|d| !d.is_empty()).collect();
                h.shapes.insert(k.to_string(), (dims, origin.clone()));
            } else {
                let n: f64 = val.replace('_', "").parse().map_err(|_| format!("{file}:{}: `{k}={val}`: a size must be a number", i + 1))?;
                v.dims.insert(k.to_string(), n);
            }
        }
        if !v.dims.is_empty() || v.dtype.is_some() {
            h.variants.push(v);
        }
    }
    Ok(h)
}

/// Tokens separated by spaces, keeping `x=[M, N]` whole.
fn split_tokens(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    for c in s.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ => {}
        }
        if c.is_whitespace() && depth == 0 {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The `[tool.xeforge.problems]` entry for this file or entry, from the nearest config file upward.
pub fn configured(file: &Path, entry: Option<&str>) -> Result<Hints, String> {
    let abs = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let Some(dir) = abs.parent() else {
        return Ok(Hints::default());
    };
    for d in dir.ancestors() {
        for (name, nested) in [("xeforge.toml", false), ("pyproject.toml", true)] {
            let path = d.join(name);
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let table: toml::Table = text.parse().map_err(|e| format!("{}: {e}", path.display()))?;
            let xf = if nested { table.get("tool").and_then(|t| t.get("xeforge")) } else { Some(&toml::Value::Table(table.clone())) };
            let Some(xf) = xf else { continue };
            let Some(problems) = xf.get("problems").and_then(|p| p.as_table()) else {
                return Ok(Hints::default());
            };
            let rel = abs.strip_prefix(d).map(|p| p.to_string_lossy().replace('\\', "/")).unwrap_or_default();
            let key = problems.keys().find(|k| **k == rel || entry.is_some_and(|e| *k == e));
            let Some(key) = key else {
                return Ok(Hints::default());
            };
            return read_problem(
                &problems[key],
                &format!("{}: [tool.xeforge.problems.{key}]", path.display()),
                &path.display().to_string(),
                key,
            );
        }
    }
    Ok(Hints::default())
}

fn read_problem(v: &toml::Value, place: &str, file: &str, key: &str) -> Result<Hints, String> {
    let origin = Origin { file: file.to_string(), line: 0, code: format!("[tool.xeforge.problems.{key}]") };
    let mut h = Hints::default();
    let t = v.as_table().ok_or_else(|| format!("{place}: expected a table"))?;
    if let Some(e) = t.get("entry") {
        h.entry = Some((e.as_str().ok_or_else(|| format!("{place}: `entry` must be a string"))?.to_string(), origin.clone()));
    }
    let dtype = match t.get("dtype") {
        Some(d) => {
            let s = d.as_str().ok_or_else(|| format!("{place}: `dtype` must be a string"))?;
            Some(dtype_name(s.trim_start_matches("torch.")).ok_or_else(|| format!("{place}: unknown dtype `{s}`"))?.to_string())
        }
        None => None,
    };
    let dims: Vec<&toml::Table> = match t.get("dims") {
        None => Vec::new(),
        Some(toml::Value::Table(one)) => vec![one],
        Some(toml::Value::Array(many)) => many
            .iter()
            .map(|x| x.as_table().ok_or_else(|| format!("{place}: `dims` must hold tables such as {{M = 64}}")))
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(format!("{place}: `dims` must be a table or a list of tables"));
        }
    };
    for d in dims {
        let mut v = HintVariant { dims: BTreeMap::new(), dtype: dtype.clone(), origin: origin.clone() };
        for (k, n) in d {
            let n =
                n.as_integer().map(|i| i as f64).or_else(|| n.as_float()).ok_or_else(|| format!("{place}: `dims.{k}` must be a number"))?;
            v.dims.insert(k.clone(), n);
        }
        h.variants.push(v);
    }
    if h.variants.is_empty() && dtype.is_some() {
        h.variants.push(HintVariant { dims: BTreeMap::new(), dtype, origin: origin.clone() });
    }
    if let Some(s) = t.get("shapes") {
        let s = s.as_table().ok_or_else(|| format!("{place}: `shapes` must be a table such as {{a = [\"M\", \"K\"]}}"))?;
        for (k, dims) in s {
            let dims = dims.as_array().ok_or_else(|| format!("{place}: `shapes.{k}` must be a list of dimension names"))?;
            let names = dims
                .iter()
                .map(|d| d.as_str().map(str::to_string).ok_or_else(|| format!("{place}: `shapes.{k}` must be a list of dimension names")))
                .collect::<Result<_, _>>()?;
            h.shapes.insert(k.clone(), (names, origin.clone()));
        }
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_comments_above_the_def_are_variants() {
        let src = "import x\n# xeforge: dims M=64 N=32 dtype=float16\n# xeforge: dims M=4096 N=4096 a=[M, N]\n@deco\ndef f(a):\n    pass\n";
        let h = inline(src, "k.py", 5, 4).unwrap();
        assert_eq!(h.variants.len(), 2);
        assert_eq!(h.variants[0].dims["M"], 64.0);
        assert_eq!(h.variants[0].dtype.as_deref(), Some("float16"));
        assert_eq!(h.variants[1].origin.line, 3);
        assert_eq!(h.shapes["a"].0, vec!["M", "N"]);
        assert!(inline("# xeforge: dims M=big\ndef f(a):\n    pass\n", "k.py", 2, 2).unwrap_err().contains("number"));
    }
}
