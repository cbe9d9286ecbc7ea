//! A launch that passes its tiles and options through a dict (`cfg = {"BLOCK": 512, "num_warps": 4}`
//! … `k[grid](x, y, n, **cfg)`) is spelled out before the stage reads it: each entry becomes a local
//! (`BLOCK = 512`), each `cfg["BLOCK"]` reads that local, and the splat becomes keywords
//! (`BLOCK=BLOCK, num_warps=num_warps`). The file then reads as any other launch does, and a config
//! can set each name; the harness checks the spelled-out file against the original like any candidate.
//! Only where that is the whole story: a dict literal bound once in the launch's function, with
//! identifier keys that name nothing else there, read only by item with those keys and by splats of
//! the kernel's launches.

use crate::cover::outline::{Outline, slice};
use crate::syntax::{named_children, node_text};
use tree_sitter::Node;

/// How [`Spelled::note`] begins: the CLI shows that note beside the summary.
pub const SPELLED_NOTE: &str = "spelled out";

/// The spelled-out file, and what the stage says it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Spelled {
    pub text: String,
    pub note: String,
}

/// `text` with every `**NAME` launch of `kernel` spelled out (see the module's doc); `None` when a
/// launch has no such splat or one cannot be spelled out safely (the stage then says why it refuses).
pub fn spell_out(text: &str, kernel: &str) -> Option<Spelled> {
    let o = Outline::build(text);
    let tree = crate::syntax::parse(text);
    let root = tree.root_node();
    let splats: Vec<(usize, usize, &str)> = o
        .launches
        .iter()
        .filter(|l| l.targets(kernel))
        .flat_map(|l| &l.args)
        .filter_map(|a| {
            let t = slice(text, a.range).trim();
            t.strip_prefix("**").map(|name| (a.range.start, a.range.end, name.trim()))
        })
        .collect();
    let first = splats.first()?;
    let name = first.2;
    if splats.iter().any(|s| s.2 != name) {
        return None;
    }
    let scope = super::bind::around(root, first.0, "function_definition").pop()?;
    if splats.iter().any(|s| super::bind::around(root, s.0, "function_definition").pop().map(|f| f.id()) != Some(scope.id())) {
        return None;
    }
    let body = scope.child_by_field_name("body")?;
    // The one binding: `NAME = {...}` as a statement of its own, before every launch.
    let mut uses = Vec::new();
    identifiers(text, body, name, &mut uses);
    let mut binding = None;
    let mut reads = Vec::new();
    for id in &uses {
        let p = id.parent()?;
        if p.kind() == "assignment" && p.child_by_field_name("left") == Some(*id) {
            if binding.replace(p).is_some() {
                return None;
            }
        } else if p.kind() == "subscript" && p.child_by_field_name("value") == Some(*id) && !super::bind::item_written(p) {
            reads.push(p);
        } else if splats.iter().any(|s| s.0 <= id.start_byte() && id.end_byte() <= s.1) {
            // a splat of the kernel's launch
        } else {
            return None;
        }
    }
    let assign = binding?;
    let dict = assign.child_by_field_name("right").filter(|r| r.kind() == "dictionary")?;
    let stmt = assign.parent().filter(|s| s.kind() == "expression_statement" && s.named_child_count() == 1)?;
    if stmt.parent() != Some(body) || splats.iter().any(|s| s.0 < stmt.end_byte()) {
        return None;
    }
    let mut entries: Vec<(String, String)> = Vec::new();
    for pair in named_children(dict) {
        let (k, v) = (pair.child_by_field_name("key")?, pair.child_by_field_name("value")?);
        if pair.kind() != "pair" || k.kind() != "string" {
            return None;
        }
        let key = node_text(text, k).trim_matches(['"', '\'']).to_string();
        if !super::bind::is_name(&key) || entries.iter().any(|(e, _)| e == &key) {
            return None;
        }
        // The local the entry becomes must name nothing else in the function, nor a parameter.
        if super::tidy::reads(text, scope, &key) > 0 {
            return None;
        }
        entries.push((key, node_text(text, v).to_string()));
    }
    if entries.is_empty() {
        return None;
    }
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for r in &reads {
        let key = r.child_by_field_name("subscript").filter(|k| k.kind() == "string")?;
        let key = node_text(text, key).trim_matches(['"', '\'']);
        let (local, _) = entries.iter().find(|(e, _)| e == key)?;
        edits.push((r.start_byte(), r.end_byte(), local.clone()));
    }
    let indent = {
        let line = text[..stmt.start_byte()].rfind('\n').map_or(0, |i| i + 1);
        text[line..stmt.start_byte()].to_string()
    };
    if !indent.trim().is_empty() {
        return None; // `x = 1; cfg = {...}`: not a line of its own
    }
    let locals: Vec<String> = entries.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    edits.push((stmt.start_byte(), stmt.end_byte(), locals.join(&format!("\n{indent}"))));
    let keywords: Vec<String> = entries.iter().map(|(k, _)| format!("{k}={k}")).collect();
    for s in &splats {
        edits.push((s.0, s.1, keywords.join(", ")));
    }
    edits.sort_by_key(|e| e.0);
    let mut out = text.to_string();
    for (start, end, with) in edits.into_iter().rev() {
        out.replace_range(start..end, &with);
    }
    let note = format!(
        "{SPELLED_NOTE}: `**{name}` as keywords ({}), its entries as locals, so that a config can set each; the \
         harness checks the result against the original as it stands",
        keywords.join(", ")
    );
    Some(Spelled { text: out, note })
}

/// Every identifier `name` in `n` (nested functions and lambdas too: they may read the dict), but not
/// a keyword's name nor an attribute's field.
fn identifiers<'a>(text: &str, n: Node<'a>, name: &str, out: &mut Vec<Node<'a>>) {
    for c in named_children(n) {
        if c.kind() == "identifier" && node_text(text, c) == name && !super::bind::is_field(c) {
            out.push(c);
        }
        identifiers(text, c, name, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str =
        "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, n, BLOCK_SIZE: tl.constexpr):\n    pass\n\n";

    #[test]
    fn a_dict_of_options_becomes_locals_and_keywords() {
        let src = format!(
            "{KERNEL}def run(x):\n    n = x.numel()\n    cfg = {{\"BLOCK_SIZE\": 512, \"num_warps\": 4}}\n    grid = (triton.cdiv(n, cfg[\"BLOCK_SIZE\"]),)\n    k[grid](x, n, **cfg)\n"
        );
        let s = spell_out(&src, "k").unwrap();
        let want = format!(
            "{KERNEL}def run(x):\n    n = x.numel()\n    BLOCK_SIZE = 512\n    num_warps = 4\n    grid = (triton.cdiv(n, BLOCK_SIZE),)\n    k[grid](x, n, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)\n"
        );
        assert_eq!(s.text, want);
        assert!(s.note.starts_with("spelled out: `**cfg` as keywords (BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)"), "{}", s.note);
    }

    #[test]
    fn a_dict_that_does_more_than_carry_options_is_left_alone() {
        for body in [
            // changed after it is built
            "    cfg = {\"BLOCK_SIZE\": 512}\n    cfg[\"BLOCK_SIZE\"] = 1024\n    k[(n,)](x, n, **cfg)\n",
            // handed to something else
            "    cfg = {\"BLOCK_SIZE\": 512}\n    log(cfg)\n    k[(n,)](x, n, **cfg)\n",
            // an entry's name is already a local, or a parameter
            "    BLOCK_SIZE = 64\n    cfg = {\"BLOCK_SIZE\": 512}\n    k[(n,)](x, n, **cfg)\n",
            "    cfg = {\"opts\": 512}\n    k[(n,)](x, n, **cfg)\n",
            // built elsewhere (a parameter) or by a call
            "    k[(n,)](x, n, **opts)\n",
            "    cfg = dict(BLOCK_SIZE=512)\n    k[(n,)](x, n, **cfg)\n",
            // an item read by a key it does not have
            "    cfg = {\"BLOCK_SIZE\": 512}\n    m = cfg[\"other\"]\n    k[(n,)](x, n, **cfg)\n",
        ] {
            let src = format!("{KERNEL}def run(x, opts):\n    n = x.numel()\n{body}");
            assert_eq!(spell_out(&src, "k"), None, "{body}");
        }
    }
}
