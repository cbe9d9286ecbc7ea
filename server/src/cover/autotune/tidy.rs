//! After a rewrite: a local the launch read a tuned value through (`BLOCK_N = 256` above
//! `k[grid](..., BLOCK_N=BLOCK_N)`) that nothing reads any more. Left in place it is a stale number
//! beside the one the launch now runs with, and ruff's F841 (local variable assigned but never used).

use tree_sitter::Node;

/// `text` without each statement `NAME = <integer>` that stands alone on its line in a function body,
/// where NAME is one of `names` and nothing else in that function reads it. Module-level names stay
/// (another module may import them), as does anything not written exactly so.
pub fn drop_unread(text: &str, names: &[String]) -> String {
    if names.is_empty() {
        return text.to_string();
    }
    let tree = crate::syntax::parse(text);
    let mut cut: Vec<(usize, usize)> = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
        if n.kind() != "function_definition" {
            continue;
        }
        let Some(body) = n.child_by_field_name("body") else { continue };
        let mut c = body.walk();
        for stmt in body.named_children(&mut c) {
            let Some(name) = literal_binding(text, stmt).filter(|name| names.iter().any(|x| x == name)) else { continue };
            if reads(text, n, name) == 1
                && let Some(line) = own_line(text, stmt)
            {
                cut.push(line);
            }
        }
    }
    cut.sort_unstable();
    cut.dedup();
    let mut out = text.to_string();
    for (start, end) in cut.into_iter().rev() {
        out.replace_range(start..end, "");
    }
    out
}

/// `NAME` of a statement `NAME = <integer>`.
fn literal_binding<'t>(text: &'t str, stmt: Node) -> Option<&'t str> {
    let a = (stmt.kind() == "expression_statement" && stmt.named_child_count() == 1).then(|| stmt.named_child(0)).flatten()?;
    let (left, right) = (a.child_by_field_name("left")?, a.child_by_field_name("right")?);
    let plain = a.kind() == "assignment" && a.child_by_field_name("type").is_none();
    (plain && left.kind() == "identifier" && right.kind() == "integer").then(|| &text[left.byte_range()])
}

/// How many identifiers in `scope` name the variable `name` (its binding included): a keyword's name
/// (`BLOCK=128`) and an attribute (`cfg.BLOCK`) are other things.
fn reads(text: &str, scope: Node, name: &str) -> usize {
    let mut count = 0;
    let mut stack = vec![scope];
    while let Some(n) = stack.pop() {
        let field = |kind: &str, f: &str| {
            n.parent().is_some_and(|p| p.kind() == kind && p.child_by_field_name(f).is_some_and(|c| c.id() == n.id()))
        };
        if n.kind() == "identifier"
            && &text[n.byte_range()] == name
            && !field("keyword_argument", "name")
            && !field("attribute", "attribute")
        {
            count += 1;
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    count
}

/// The byte range of the whole line `stmt` is on, newline included, when nothing but blanks and a
/// comment share that line with it.
fn own_line(text: &str, stmt: Node) -> Option<(usize, usize)> {
    let r = stmt.byte_range();
    let start = text[..r.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[r.end..].find('\n').map_or(text.len(), |i| r.end + i + 1);
    let before = &text[start..r.start];
    let after = text[r.end..end].trim();
    (before.trim().is_empty() && (after.is_empty() || after.starts_with('#'))).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_local_nothing_reads_any_more_goes() {
        let src = "def f(x, n):\n    BLOCK = 256  # the tile\n    k[(n,)](x, n, BLOCK=128)\n    return x\n";
        assert_eq!(drop_unread(src, &names(&["BLOCK"])), "def f(x, n):\n    k[(n,)](x, n, BLOCK=128)\n    return x\n");
    }

    #[test]
    fn a_local_still_read_stays() {
        // Read by a lambda grid, by a buffer's size, or by another launch: kept.
        for src in [
            "def f(x, n):\n    BLOCK = 256\n    grid = lambda m: (n // BLOCK,)\n    k[grid](x, n)\n",
            "def f(x, n):\n    BLOCK = 256\n    buf = x.new_empty(n // BLOCK)\n    k[(n,)](x, n, BLOCK=128)\n",
        ] {
            assert_eq!(drop_unread(src, &names(&["BLOCK"])), src);
        }
    }

    #[test]
    fn only_the_names_given_locals_alone_on_a_line_and_never_module_level() {
        let src = "BLOCK = 256\nW = 4\n\ndef f(x, n):\n    W = 4; y = 2\n    T: int = 8\n    k[(n,)](x, y)\n";
        assert_eq!(drop_unread(src, &names(&["BLOCK", "W", "T"])), src);
        let src = "def f(x, n):\n    OTHER = 1\n    return x\n";
        assert_eq!(drop_unread(src, &names(&["BLOCK"])), src);
    }

    #[test]
    fn each_function_is_its_own_scope() {
        let src = "def f(x, n):\n    BLOCK = 64\n    k[(n,)](x, BLOCK=32)\n\ndef g(x, n):\n    BLOCK = 64\n    return n // BLOCK\n";
        let out = drop_unread(src, &names(&["BLOCK"]));
        assert_eq!(out, "def f(x, n):\n    k[(n,)](x, BLOCK=32)\n\ndef g(x, n):\n    BLOCK = 64\n    return n // BLOCK\n");
    }
}
