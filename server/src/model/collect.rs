//! The one pass over the tree that finds what the builder starts from: decorated definitions,
//! calls, imports, suppression comments, reflection calls, assignments and in-place updates.
//!
//! `queries/*.scm` is the specification of what is found; this pass implements it over the flat
//! tree's pre-order array with kind-id dispatch, because running the compiled query over every
//! node cost more than the rest of the build. A unit test checks both agree on every fixture,
//! broken or not.

use crate::syntax::flat::{Cursor, FlatTree, Node};
use crate::syntax::flat::{named_children, node_text};
use crate::syntax::{KindTag, kinds};

/// Nodes the pass collects, each list in document order.
#[derive(Default, Debug, PartialEq, Eq)]
pub struct Found<'t> {
    pub decorated: Vec<Node<'t>>,
    pub calls: Vec<Node<'t>>,
    pub imports: Vec<Node<'t>>,
    pub suppressions: Vec<Node<'t>>,
    pub obfuscations: Vec<(Node<'t>, Node<'t>)>,
    pub assignments: Vec<(Node<'t>, Node<'t>)>,
    pub mutations: Vec<Node<'t>>,
}

/// What a query wildcard `(_)` matches: a named node that is not an ERROR node.
fn wildcard(n: Node) -> bool {
    n.is_named() && !n.is_error()
}

pub fn collect<'t>(text: &str, tree: &'t FlatTree) -> Found<'t> {
    let k = kinds();
    let mut f = Found::default();
    for n in tree.preorder() {
        match k.tag(n) {
            KindTag::DecoratedDefinition if n.field("definition").is_some_and(|d| k.is(d, KindTag::FunctionDefinition)) => {
                f.decorated.push(n);
            }
            KindTag::Call => {
                if let Some(func) = n.field("function").filter(|x| wildcard(*x)) {
                    f.calls.push(n);
                    match k.tag(func) {
                        KindTag::Identifier => {
                            if matches!(node_text(text, func), "__import__" | "eval" | "exec" | "getattr") {
                                f.obfuscations.push((n, func));
                            }
                        }
                        KindTag::Attribute => {
                            if let Some(obj) = func.field("object")
                                && k.is(obj, KindTag::Identifier)
                                && node_text(text, obj) == "importlib"
                            {
                                f.obfuscations.push((n, obj));
                            }
                        }
                        _ => {}
                    }
                }
            }
            KindTag::ImportStatement => {
                f.imports.push(n);
                for name in n.children_by_field_name("name", &mut Cursor) {
                    if let Some(id) = importlib_head(text, name) {
                        f.obfuscations.push((n, id));
                    }
                }
            }
            KindTag::ImportFromStatement => {
                f.imports.push(n);
                if let Some(id) = n.field("module_name").and_then(|m| importlib_head(text, m)) {
                    f.obfuscations.push((n, id));
                }
            }
            KindTag::Comment if is_suppression(node_text(text, n)) => {
                f.suppressions.push(n);
            }
            KindTag::Assignment => {
                let left = n.field("left").filter(|x| wildcard(*x));
                let right = n.field("right").filter(|x| wildcard(*x));
                if let (Some(l), Some(r)) = (left, right) {
                    f.assignments.push((l, r));
                }
            }
            KindTag::AugmentedAssignment => {
                if let Some(l) = n.field("left").filter(|l| k.is(*l, KindTag::Identifier)) {
                    f.mutations.push(l);
                }
            }
            KindTag::GlobalStatement => {
                f.mutations.extend(named_children(n).filter(|c| k.is(*c, KindTag::Identifier)));
            }
            _ => {}
        }
    }
    // Nested matches share a start byte only when the outer one comes first, so a stable sort
    // keeps the pre-order the walk produced.
    f.decorated.sort_by_key(|n| n.start_byte());
    f.calls.sort_by_key(|n| n.start_byte());
    f.assignments.sort_by_key(|(l, _)| l.start_byte());
    f.obfuscations.sort_by_key(|(c, _)| c.start_byte());
    f
}

/// `importlib` as the first identifier of a `dotted_name` (`import importlib.util`).
fn importlib_head<'t>(text: &str, name: Node<'t>) -> Option<Node<'t>> {
    let k = kinds();
    if !k.is(name, KindTag::DottedName) {
        return None;
    }
    let first = name.named_children(&mut Cursor).next()?;
    (k.is(first, KindTag::Identifier) && node_text(text, first) == "importlib").then_some(first)
}

/// `xeforge\s*:\s*ignore` anywhere in a comment.
fn is_suppression(comment: &str) -> bool {
    let mut rest = comment;
    while let Some(at) = rest.find("xeforge") {
        let after = rest[at + "xeforge".len()..].trim_start();
        if let Some(after) = after.strip_prefix(':')
            && after.trim_start().starts_with("ignore")
        {
            return true;
        }
        rest = &rest[at + 1..];
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{self, Capture};
    use tree_sitter::Tree;

    /// The lists as byte ranges, comparable across tree types.
    #[derive(Default, Debug, PartialEq, Eq)]
    struct Ranges {
        decorated: Vec<(usize, usize)>,
        calls: Vec<(usize, usize)>,
        imports: Vec<(usize, usize)>,
        suppressions: Vec<(usize, usize)>,
        obfuscations: Vec<((usize, usize), (usize, usize))>,
        assignments: Vec<((usize, usize), (usize, usize))>,
        mutations: Vec<(usize, usize)>,
    }

    /// The same lists, found by running `queries/*.scm` (the specification) on tree-sitter's tree.
    fn by_query(text: &str, tree: &Tree) -> Ranges {
        let r = |n: tree_sitter::Node| (n.start_byte(), n.end_byte());
        let mut f = Ranges::default();
        syntax::queries().for_each_match(tree, text, |caps| {
            let get = |want: Capture| caps.iter().find(|(c, _)| *c == want).map(|(_, n)| *n);
            if let Some(n) = get(Capture::KernelDecorated) {
                f.decorated.push(r(n));
            } else if let Some(n) = get(Capture::Call) {
                f.calls.push(r(n));
            } else if let Some(n) = get(Capture::Import) {
                f.imports.push(r(n));
            } else if let Some(n) = get(Capture::Suppression) {
                f.suppressions.push(r(n));
            } else if let (Some(call), Some(func)) = (get(Capture::ObfuscationCall), get(Capture::ObfuscationFunc)) {
                f.obfuscations.push((r(call), r(func)));
            } else if let (Some(l), Some(rr)) = (get(Capture::AssignmentLeft), get(Capture::AssignmentRight)) {
                f.assignments.push((r(l), r(rr)));
            } else if let Some(n) = get(Capture::Mutation) {
                f.mutations.push(r(n));
            }
        });
        // Stable sorts by start byte, as the walk does; then the lists whose order the builder
        // does not depend on (it dedups obfuscations by range) are compared as multisets.
        f.decorated.sort_by_key(|n| n.0);
        f.calls.sort_by_key(|n| n.0);
        f.assignments.sort_by_key(|(l, _)| l.0);
        f.obfuscations.sort();
        f.mutations.sort();
        f
    }

    fn ranges(f: Found) -> Ranges {
        let r = |n: &Node| (n.start_byte(), n.end_byte());
        let mut out = Ranges {
            decorated: f.decorated.iter().map(r).collect(),
            calls: f.calls.iter().map(r).collect(),
            imports: f.imports.iter().map(r).collect(),
            suppressions: f.suppressions.iter().map(r).collect(),
            obfuscations: f.obfuscations.iter().map(|(a, b)| (r(a), r(b))).collect(),
            assignments: f.assignments.iter().map(|(a, b)| (r(a), r(b))).collect(),
            mutations: f.mutations.iter().map(r).collect(),
        };
        out.obfuscations.sort();
        out.mutations.sort();
        out
    }

    fn python_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                python_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "py") {
                out.push(p);
            }
        }
    }

    fn assert_same(text: &str, what: &str) {
        let tree = syntax::parse(text);
        let flat = FlatTree::new(&tree);
        assert_eq!(ranges(collect(text, &flat)), by_query(text, &tree), "walk and queries differ on {what}");
    }

    #[test]
    fn walk_finds_what_the_queries_find_on_every_fixture_and_its_broken_variants() {
        let mut files = Vec::new();
        python_files(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"), &mut files);
        assert!(!files.is_empty());
        for path in files {
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            assert_same(&text, &path.display().to_string());
            // Broken variants: a deleted or inserted bracket/colon at spread positions.
            let cuts: Vec<usize> = (1..12).map(|i| text.len() * i / 12).filter(|c| text.is_char_boundary(*c)).collect();
            for (i, c) in cuts.into_iter().enumerate() {
                let mut broken = text.clone();
                let ch = ["(", ")", ":", "[", "=", "\n    "][i % 6];
                broken.insert_str(c, ch);
                assert_same(&broken, &format!("{} + {ch:?} at {c}", path.display()));
                let mut cut = text.clone();
                cut.truncate(c);
                assert_same(&cut, &format!("{} cut at {c}", path.display()));
            }
        }
    }

    #[test]
    fn suppression_comments_follow_the_query_pattern() {
        assert!(is_suppression("# xeforge: ignore"));
        assert!(is_suppression("#xeforge :ignore[XF101]"));
        assert!(is_suppression("# note xeforge xeforge\t:  ignore"));
        assert!(!is_suppression("# xeforge ignore"));
        assert!(!is_suppression("# XEFORGE: ignore"));
        assert_same("import triton\nx = 1  # xeforge: ignore\ny = 2  # xeforge:nothing\n", "comments");
    }

    #[test]
    fn reflection_and_mutations_match_the_queries() {
        assert_same(
            "import importlib.util, importlib, os\nimport importlib as il\nfrom importlib import x\n\
             getattr(a, 'b')\neval(s)\nimportlib.import_module(n)\n(eval)(s)\n\
             def f():\n    global A, B\n    C += 1\n    d[0] = 1\n    a = b = c\n    x: int = 3\n    y: int\n",
            "reflection",
        );
    }
}
