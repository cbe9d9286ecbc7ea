//! The build context: source text, resolved imports, module-level values and the helpers every
//! part of the builder uses to resolve names (canonical Triton paths, module constants, simple
//! local assignments).

use super::eval::expr_of;
use super::imports::normalize;
use super::types::{Binding, Imports, Value};
use crate::syntax::{named_children, node_text, range};
use crate::text::TextRange;
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;

/// Python builtins the evaluator understands, unless the file rebinds them.
const BUILTINS: &[&str] = &["min", "max", "abs", "int", "float", "range", "len", "dict"];

/// A statically known name in a comprehension or helper-call scope: value and the literal
/// that produced it (so a binding points at the list element, not the loop variable).
#[derive(Debug, Clone)]
pub struct Local {
    pub name: String,
    pub value: Value,
    pub range: TextRange,
}

pub struct Cx<'t> {
    pub text: &'t str,
    pub imports: Imports,
    shadowed: HashSet<String>,
    /// Module-level constants with known values, in document order.
    pub constants: Vec<Binding>,
    constant_index: HashMap<String, usize>,
    /// Right-hand side of names assigned exactly once at module level.
    pub module_values: HashMap<String, Node<'t>>,
    /// Module-level function definitions by name (helpers that return config lists).
    pub module_functions: HashMap<String, Node<'t>>,
    /// Names mutated in place somewhere (`x.append`, `x += ...`, `x[i] = ...`): their literal
    /// value is not the whole story.
    pub mutated: HashSet<String>,
}

impl<'t> Cx<'t> {
    pub fn new(text: &'t str, imports: Imports, shadowed: HashSet<String>) -> Self {
        Cx {
            text,
            imports,
            shadowed,
            constants: Vec::new(),
            constant_index: HashMap::new(),
            module_values: HashMap::new(),
            module_functions: HashMap::new(),
            mutated: HashSet::new(),
        }
    }

    pub fn text_of(&self, node: Node) -> &'t str {
        node_text(self.text, node)
    }

    /// The canonical path a local head name stands for ("triton", "tl", "libdevice", "triton.jit").
    fn head(&self, name: &str) -> Option<String> {
        if let Some((_, c)) = self.imports.names.iter().find(|(l, _)| l == name) {
            return Some(c.clone());
        }
        if self.imports.language.iter().any(|l| l == name) {
            return Some("tl".into());
        }
        if self.imports.triton.iter().any(|l| l == name) {
            return Some("triton".into());
        }
        if self.imports.libdevice.iter().any(|l| l == name) {
            return Some("libdevice".into());
        }
        // Conventional spellings in snippets that omit their imports; never when the file
        // binds the name to something else.
        if self.shadowed.contains(name) {
            return None;
        }
        match name {
            "triton" => Some("triton".into()),
            "tl" => Some("tl".into()),
            _ => None,
        }
    }

    /// Canonical Triton path of an identifier or attribute chain (`tl.dot`, `triton.Config`,
    /// `libdevice.exp`), or None when it does not resolve to Triton.
    pub fn canonical(&self, node: Node) -> Option<String> {
        let mut parts: Vec<&str> = Vec::new();
        let mut cur = node;
        loop {
            match cur.kind() {
                "attribute" => {
                    parts.push(self.text_of(cur.child_by_field_name("attribute")?));
                    cur = cur.child_by_field_name("object")?;
                }
                "identifier" => break,
                _ => return None,
            }
            if parts.len() > 16 {
                return None;
            }
        }
        let mut path = self.head(self.text_of(cur))?;
        if path == "tl" {
            path = "triton.language".into();
        } else if path == "libdevice" {
            path = "triton.language.extra.libdevice".into();
        } else if let Some(rest) = path.strip_prefix("tl.") {
            path = format!("triton.language.{rest}");
        }
        for p in parts.iter().rev() {
            path.push('.');
            path.push_str(p);
        }
        Some(normalize(&path))
    }

    pub fn is_builtin(&self, name: &str) -> bool {
        BUILTINS.contains(&name) && !self.shadowed.contains(name) && !self.module_values.contains_key(name)
    }

    pub fn constant(&self, name: &str) -> Option<&Binding> {
        self.constant_index.get(name).and_then(|i| self.constants.get(*i))
    }

    pub fn add_constant(&mut self, b: Binding) {
        self.constant_index.insert(b.name.clone(), self.constants.len());
        self.constants.push(b);
    }

    /// Value of `node` with comprehension/helper `locals` first, then module constants;
    /// returns the value and the range of the literal that produced it.
    pub fn value_of(&self, node: Node, locals: &[Local]) -> (Value, TextRange) {
        let node = unparen(node);
        if node.kind() == "identifier" {
            let name = self.text_of(node);
            if let Some(l) = locals.iter().rev().find(|l| l.name == name) {
                return (l.value.clone(), l.range);
            }
            if let Some(c) = self.constant(name) {
                return (c.value.clone(), c.range);
            }
        }
        let expr = expr_of(self, node);
        let v = expr.eval(&|n| {
            locals
                .iter()
                .rev()
                .find(|l| l.name == n)
                .map(|l| l.value.clone())
                .or_else(|| self.constant(n).map(|c| c.value.clone()))
        });
        (v, range(node))
    }

    /// A binding for `name = <node>` at `site`.
    pub fn binding(&self, name: &str, value_node: Node, site: TextRange, key_range: TextRange, locals: &[Local]) -> Binding {
        let (value, range) = self.value_of(value_node, locals);
        Binding { name: name.to_string(), value, range, site, key_range }
    }

    /// Resolves an identifier to the expression assigned to it: exactly one simple assignment in
    /// the enclosing function `scope` (excluding nested functions), else a module-level value.
    pub fn resolve_name(&self, name: &str, scope: Option<Node<'t>>) -> Option<Node<'t>> {
        if self.mutated.contains(name) {
            return None;
        }
        if let Some(func) = scope {
            match single_local_assignment(self.text, func, name) {
                LocalAssign::One(n) => return Some(n),
                LocalAssign::Many => return None,
                LocalAssign::None => {}
            }
        }
        self.module_values.get(name).copied()
    }
}

pub enum LocalAssign<'t> {
    None,
    One(Node<'t>),
    Many,
}

/// The single right-hand side assigned to `name` inside `func` (not in nested defs/classes).
/// Parameters count as assignments: a parameter's value is not statically known.
pub fn single_local_assignment<'t>(text: &str, func: Node<'t>, name: &str) -> LocalAssign<'t> {
    if let Some(params) = func.child_by_field_name("parameters") {
        for p in named_children(params) {
            let id = match p.kind() {
                "identifier" => Some(p),
                "typed_parameter" => named_children(p).find(|c| c.kind() == "identifier"),
                _ => p.child_by_field_name("name"),
            };
            if id.is_some_and(|id| node_text(text, id) == name) {
                return LocalAssign::Many;
            }
        }
    }
    let Some(body) = func.child_by_field_name("body") else { return LocalAssign::None };
    let mut found: Option<Node> = None;
    let mut count = 0;
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "function_definition" | "class_definition" | "lambda" | "decorated_definition" => continue,
            "assignment" => {
                if let Some(left) = n.child_by_field_name("left") {
                    if assigns_name(text, left, name) {
                        count += 1;
                        found = if left.kind() == "identifier" { n.child_by_field_name("right") } else { None };
                    }
                }
            }
            "augmented_assignment" => {
                if let Some(left) = n.child_by_field_name("left") {
                    if left.kind() == "identifier" && node_text(text, left) == name {
                        count += 2;
                    }
                }
            }
            "for_statement" | "for_in_clause" => {
                if let Some(left) = n.child_by_field_name("left") {
                    if assigns_name(text, left, name) {
                        count += 2;
                    }
                }
            }
            _ => {}
        }
        let mut cursor = n.walk();
        for c in n.named_children(&mut cursor) {
            stack.push(c);
        }
    }
    match (count, found) {
        (0, _) => LocalAssign::None,
        (1, Some(n)) => LocalAssign::One(n),
        _ => LocalAssign::Many,
    }
}

fn assigns_name(text: &str, target: Node, name: &str) -> bool {
    match target.kind() {
        "identifier" => node_text(text, target) == name,
        "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" | "parenthesized_expression" => {
            named_children(target).any(|c| assigns_name(text, c, name))
        }
        "list_splat_pattern" => named_children(target).any(|c| assigns_name(text, c, name)),
        _ => false,
    }
}

/// Strips redundant parentheses.
pub fn unparen(mut node: Node) -> Node {
    while node.kind() == "parenthesized_expression" {
        match named_children(node).next() {
            Some(inner) => node = inner,
            None => break,
        }
    }
    node
}

/// The innermost enclosing function definition of `node`, if any.
pub fn enclosing_function(node: Node) -> Option<Node> {
    let mut cur = node.parent();
    while let Some(n) = cur {
        if n.kind() == "function_definition" {
            return Some(n);
        }
        cur = n.parent();
    }
    None
}
