//! After a rewrite: a local the launch read a tuned value through (`BLOCK_N = 256` above
//! `k[grid](..., BLOCK_N=BLOCK_N)`, or chosen per size in an if-chain) that nothing reads any more.
//! Left in place it is a stale number beside the one the launch now runs with, and ruff's F841 (local
//! variable assigned but never used).

use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::Node;

/// `text` without each statement `NAME = <integer>` (or `NAME = <int> if cond else <int>`) that stands
/// alone on its line in a function, where NAME is one of `names` and nothing in that function reads
/// it: every such binding of it goes. A block left empty gets `pass`, and an `if` whose every branch
/// is left empty goes whole where its conditions call nothing that could act. Module-level names stay
/// (another module may import them), as does anything not written exactly so.
pub fn drop_unread(text: &str, names: &[String]) -> String {
    if names.is_empty() {
        return text.to_string();
    }
    let tree = crate::syntax::parse(text);
    let mut cut: BTreeSet<usize> = BTreeSet::new(); // statements' ids
    let mut functions = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
        if n.kind() == "function_definition" {
            functions.push(n);
        }
    }
    for f in &functions {
        let Some(body) = f.child_by_field_name("body") else { continue };
        let mut bindings: BTreeMap<&str, Vec<Node>> = BTreeMap::new();
        literal_bindings(text, body, &mut bindings);
        for (name, stmts) in bindings {
            if names.iter().any(|x| x == name) && reads(text, *f, name) == stmts.len() && stmts.iter().all(|s| own_line(text, *s).is_some())
            {
                cut.extend(stmts.iter().map(|s| s.id()));
            }
        }
    }
    if cut.is_empty() {
        return text.to_string();
    }
    // Edits, innermost blocks first resolved: whole `if` statements that go, `pass` for emptied blocks.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for f in &functions {
        if let Some(body) = f.child_by_field_name("body") {
            plan_block(text, body, &cut, &mut edits);
        }
    }
    edits.sort_by_key(|e| e.0);
    let mut out = text.to_string();
    for (start, end, with) in edits.into_iter().rev() {
        out.replace_range(start..end, &with);
    }
    out
}

/// Every `NAME = <int>` statement in `block` and the blocks nested in it (not in nested functions or
/// classes), by name.
fn literal_bindings<'t, 'a>(text: &'t str, block: Node<'a>, out: &mut BTreeMap<&'t str, Vec<Node<'a>>>) {
    let mut c = block.walk();
    for stmt in block.named_children(&mut c) {
        if let Some(name) = literal_binding(text, stmt) {
            out.entry(name).or_default().push(stmt);
            continue;
        }
        if matches!(stmt.kind(), "function_definition" | "class_definition" | "decorated_definition") {
            continue;
        }
        for b in blocks_of(stmt) {
            literal_bindings(text, b, out);
        }
    }
}

/// The blocks a compound statement holds (an `if`'s branches, a loop's body and `else`, a `with`'s or
/// `try`'s bodies).
fn blocks_of(stmt: Node) -> Vec<Node> {
    let mut out = Vec::new();
    let mut stack = vec![stmt];
    while let Some(n) = stack.pop() {
        let mut c = n.walk();
        for k in n.named_children(&mut c) {
            match k.kind() {
                "block" => out.push(k),
                "elif_clause" | "else_clause" | "except_clause" | "finally_clause" | "except_group_clause" => stack.push(k),
                _ => {}
            }
        }
    }
    out.sort_by_key(|b| b.start_byte());
    out
}

/// Whether every statement of `block` is cut (comments aside), after what its nested statements lose.
fn emptied(text: &str, block: Node, cut: &BTreeSet<usize>) -> bool {
    let mut c = block.walk();
    let stmts: Vec<Node> = block.named_children(&mut c).filter(|s| s.kind() != "comment").collect();
    !stmts.is_empty() && stmts.iter().all(|s| cut.contains(&s.id()) || removable_if(text, *s, cut))
}

/// An `if` whose every branch is emptied, with an `else` or not, and whose conditions only compare.
fn removable_if(text: &str, stmt: Node, cut: &BTreeSet<usize>) -> bool {
    stmt.kind() == "if_statement"
        && blocks_of(stmt).iter().all(|b| emptied(text, *b, cut))
        && own_line(text, stmt).is_some()
        && conditions_pure(text, stmt)
}

/// The `if`'s and `elif`s' conditions call nothing but what reads sizes (`len(x)`, `x.size(0)`,
/// `x.numel()`, `min`, `max`, `triton.next_power_of_2`, ...).
fn conditions_pure(text: &str, stmt: Node) -> bool {
    const PURE: &[&str] = &["len", "min", "max", "abs", "size", "dim", "numel", "stride", "next_power_of_2", "cdiv", "element_size"];
    let mut conds = vec![stmt.child_by_field_name("condition")];
    let mut c = stmt.walk();
    conds.extend(stmt.named_children(&mut c).filter(|k| k.kind() == "elif_clause").map(|k| k.child_by_field_name("condition")));
    conds.into_iter().all(|cond| {
        let Some(cond) = cond else { return false };
        let mut stack = vec![cond];
        while let Some(n) = stack.pop() {
            if n.kind() == "call" {
                let f = n.child_by_field_name("function").map(|f| &text[f.byte_range()]).unwrap_or("");
                if !PURE.contains(&f.rsplit('.').next().unwrap_or(f)) {
                    return false;
                }
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        true
    })
}

/// The edits for `block`: its cut statements' lines removed, an `if` that empties removed whole, and
/// `pass` where the block itself would be left with nothing.
fn plan_block(text: &str, block: Node, cut: &BTreeSet<usize>, edits: &mut Vec<(usize, usize, String)>) {
    let mut c = block.walk();
    let stmts: Vec<Node> = block.named_children(&mut c).collect();
    let empty = emptied(text, block, cut);
    let mut first = true;
    for s in stmts {
        let goes = cut.contains(&s.id()) || removable_if(text, s, cut);
        if goes {
            let Some((start, end)) = own_line(text, s) else { continue };
            let with = if empty && first {
                // The block's first statement keeps its line as `pass`, at its indentation.
                format!("{}pass\n", &text[start..s.start_byte()])
            } else {
                String::new()
            };
            first = false;
            edits.push((start, end, with));
        } else if !matches!(s.kind(), "function_definition" | "class_definition" | "decorated_definition") {
            for b in blocks_of(s) {
                plan_block(text, b, cut, edits);
            }
        }
    }
}

/// `NAME` of a statement `NAME = <integer>` (or a conditional of integers).
fn literal_binding<'t>(text: &'t str, stmt: Node) -> Option<&'t str> {
    let a = (stmt.kind() == "expression_statement" && stmt.named_child_count() == 1).then(|| stmt.named_child(0)).flatten()?;
    let (left, right) = (a.child_by_field_name("left")?, a.child_by_field_name("right")?);
    let plain = a.kind() == "assignment" && a.child_by_field_name("type").is_none();
    (plain && left.kind() == "identifier" && super::bind::int_choices(text, right).is_some()).then(|| &text[left.byte_range()])
}

/// How many identifiers in `scope` name the variable `name` (its binding included): a keyword's name
/// (`BLOCK=128`) and an attribute (`cfg.BLOCK`) are other things.
pub(super) fn reads(text: &str, scope: Node, name: &str) -> usize {
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

    #[test]
    fn an_if_chain_that_only_chose_tuned_values_goes_whole() {
        let src = "def f(a, M):\n    if M >= 1024:\n        BM = 128\n        warps = 8\n    elif M >= 256:\n        BM = 64\n        warps = 4\n    else:\n        BM = 32\n        warps = 4\n    BK = 32\n    k[(M,)](a, BM=64, BK=BK, num_warps=4)\n";
        let out = drop_unread(src, &names(&["BM", "warps"]));
        assert_eq!(out, "def f(a, M):\n    BK = 32\n    k[(M,)](a, BM=64, BK=BK, num_warps=4)\n");
    }

    #[test]
    fn a_branch_left_with_other_work_keeps_it_and_an_emptied_one_gets_pass() {
        let src = "def f(a, M):\n    if M >= 1024:\n        BM = 128\n        a = a.contiguous()\n    else:\n        BM = 32\n    k[(M,)](a, BM=64)\n";
        let out = drop_unread(src, &names(&["BM"]));
        assert_eq!(out, "def f(a, M):\n    if M >= 1024:\n        a = a.contiguous()\n    else:\n        pass\n    k[(M,)](a, BM=64)\n");
    }

    #[test]
    fn a_default_and_its_override_go_together_and_a_condition_that_acts_keeps_its_if() {
        let src = "def f(a, n):\n    BLOCK = 64\n    if n > 4096:\n        BLOCK = 128\n    k[(n,)](a, BLOCK=256)\n";
        assert_eq!(drop_unread(src, &names(&["BLOCK"])), "def f(a, n):\n    k[(n,)](a, BLOCK=256)\n");
        let src = "def f(a, n):\n    if log(n) > 3:\n        BLOCK = 128\n    else:\n        BLOCK = 64\n    k[(n,)](a, BLOCK=256)\n";
        let out = drop_unread(src, &names(&["BLOCK"]));
        assert_eq!(out, "def f(a, n):\n    if log(n) > 3:\n        pass\n    else:\n        pass\n    k[(n,)](a, BLOCK=256)\n");
    }

    #[test]
    fn a_choice_still_read_on_one_path_keeps_every_binding() {
        let src = "def f(a, M):\n    if M >= 1024:\n        BM = 128\n    else:\n        BM = 32\n    buf = a.new_empty(M // BM)\n    k[(M,)](a, buf, BM=64)\n";
        assert_eq!(drop_unread(src, &names(&["BM"])), src);
    }
}
