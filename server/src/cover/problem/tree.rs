//! Small read-only helpers over a tree-sitter Python tree for problem inference: source text, lines,
//! walking, call shapes. Nothing here knows about tensors.

use crate::syntax::named_children;
use crate::text::LineIndex;
use tree_sitter::Node;

/// A parsed file and what is needed to quote it.
pub struct Src<'t> {
    pub text: &'t str,
    pub file: String,
    lines: LineIndex,
}

impl<'t> Src<'t> {
    pub fn new(text: &'t str, file: &str) -> Self {
        Src { text, file: file.to_string(), lines: LineIndex::new(text) }
    }

    pub fn text(&self, n: Node) -> &'t str {
        self.text.get(n.start_byte()..n.end_byte()).unwrap_or("")
    }

    /// 1-based line of a node's start.
    pub fn line(&self, n: Node) -> usize {
        self.lines.line_of(n.start_byte()) + 1
    }

    /// Where a fact came from: `file:line` and the first line of the node's text.
    pub fn origin(&self, n: Node) -> super::Origin {
        let first = self.text(n).lines().next().unwrap_or("").trim();
        let quoted: String = if first.chars().count() > 90 { first.chars().take(89).chain(['…']).collect() } else { first.to_string() };
        super::Origin { file: self.file.clone(), line: self.line(n), code: quoted }
    }
}

pub fn field<'t>(n: Node<'t>, name: &str) -> Option<Node<'t>> {
    n.child_by_field_name(name)
}

/// Every named descendant in source order (the node itself first).
pub fn descendants(n: Node) -> Vec<Node> {
    let mut out = Vec::new();
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        out.push(x);
        let kids: Vec<Node> = named_children(x).collect();
        stack.extend(kids.into_iter().rev());
    }
    out
}

/// Descendants without entering nested function or class definitions (their bodies are other scopes).
pub fn scope_nodes(body: Node) -> Vec<Node> {
    let mut out = Vec::new();
    let mut stack: Vec<Node> = named_children(body).collect::<Vec<_>>().into_iter().rev().collect();
    while let Some(x) = stack.pop() {
        out.push(x);
        if matches!(x.kind(), "function_definition" | "class_definition") {
            continue;
        }
        let kids: Vec<Node> = named_children(x).collect();
        stack.extend(kids.into_iter().rev());
    }
    out
}

/// `f(a, b, k=v)`: positional argument nodes and keyword (name, value) pairs; None with `*x`/`**x`.
pub struct CallArgs<'t> {
    pub positional: Vec<Node<'t>>,
    pub keywords: Vec<(&'t str, Node<'t>)>,
    pub splat: bool,
}

pub fn call_args<'t>(src: &Src<'t>, call: Node<'t>) -> CallArgs<'t> {
    let mut out = CallArgs { positional: Vec::new(), keywords: Vec::new(), splat: false };
    let Some(args) = field(call, "arguments") else {
        return out;
    };
    for a in named_children(args) {
        match a.kind() {
            "keyword_argument" => {
                if let (Some(k), Some(v)) = (field(a, "name"), field(a, "value")) {
                    out.keywords.push((src.text(k), v));
                }
            }
            "list_splat" | "dictionary_splat" => out.splat = true,
            _ => out.positional.push(a),
        }
    }
    out
}

impl<'t> CallArgs<'t> {
    pub fn keyword(&self, name: &str) -> Option<Node<'t>> {
        self.keywords.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
    }
}

/// Strips parentheses around an expression.
pub fn unparen(mut n: Node) -> Node {
    while n.kind() == "parenthesized_expression" {
        match named_children(n).next() {
            Some(inner) => n = inner,
            None => break,
        }
    }
    n
}

/// The function definitions enclosing `n`, innermost first.
pub fn enclosing_defs(n: Node) -> Vec<Node> {
    let mut out = Vec::new();
    let mut cur = n.parent();
    while let Some(p) = cur {
        if p.kind() == "function_definition" {
            out.push(p);
        }
        cur = p.parent();
    }
    out
}

/// The class whose body directly holds the method `def_node`, if any.
pub fn class_of(def_node: Node) -> Option<Node> {
    let mut p = def_node.parent()?;
    if p.kind() == "decorated_definition" {
        p = p.parent()?;
    }
    if p.kind() != "block" {
        return None;
    }
    let c = p.parent()?;
    (c.kind() == "class_definition").then_some(c)
}

/// Whether `def_node` sits directly at module level (possibly decorated).
pub fn at_module_level(def_node: Node) -> bool {
    let mut p = def_node.parent();
    if p.is_some_and(|x| x.kind() == "decorated_definition") {
        p = p.and_then(|x| x.parent());
    }
    // Under a module-level guard (`if triton_available():`, `try:`) is module level too.
    while let Some(x) = p.filter(|x| crate::syntax::is_guard(x.kind())) {
        p = x.parent();
    }
    p.is_some_and(|x| x.kind() == "module")
}

/// The decorators on a definition (`@x` nodes), empty when undecorated.
pub fn decorators(def_node: Node) -> Vec<Node> {
    match def_node.parent() {
        Some(p) if p.kind() == "decorated_definition" => named_children(p).filter(|c| c.kind() == "decorator").collect(),
        _ => Vec::new(),
    }
}

/// The callee's dotted text of a call (`torch.randn`, `x.to`), or "" for other callees.
pub fn callee<'t>(src: &Src<'t>, call: Node<'t>) -> &'t str {
    field(call, "function").map(|f| src.text(f)).unwrap_or("")
}
