//! The build context: source text, resolved imports, module-level values and the helpers every
//! part of the builder uses to resolve names (canonical Triton paths, module constants, simple
//! local assignments).

use super::eval::expr_of;
use super::imports::normalize;
use super::types::{Binding, Imports, Value};
use crate::syntax::flat::Node;
use crate::syntax::flat::{named_children, node_text, range};
use crate::text::TextRange;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

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
    /// Per-function assignment summaries, by node id (see [`FnLocals`]).
    fn_locals: RefCell<HashMap<usize, Rc<FnLocals<'t>>, IdHash>>,
    /// [`Cx::canonical`] results by node id.
    canonical_cache: RefCell<HashMap<usize, Option<String>, IdHash>>,
    /// While recording (a kernel being built for reuse): every module-level fact read, by name.
    facts: RefCell<Option<Vec<Fact>>>,
}

/// A module-level fact a build step read, with what it found. A kernel built in an earlier version
/// of the text is reused only where each of its facts still holds ([`Cx::holds`]); the imports are
/// compared whole. Ranges are part of the facts: a reused kernel points at them unchanged.
#[derive(Debug, Clone, PartialEq)]
pub enum Fact {
    Shadowed(String, bool),
    Mutated(String, bool),
    /// The single module-level right-hand side of the name: its text and range.
    ModuleValue(String, Option<(String, TextRange)>),
    /// The module-level function of that name: its text and range.
    ModuleFunction(String, Option<(String, TextRange)>),
    Constant(String, Option<Binding>),
}

/// Hasher for node ids (addresses): one multiply instead of SipHash on the hot lookups.
#[derive(Default, Clone, Copy)]
pub struct IdHash;

impl std::hash::BuildHasher for IdHash {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
    }
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
            fn_locals: RefCell::new(HashMap::default()),
            canonical_cache: RefCell::new(HashMap::default()),
            facts: RefCell::new(None),
        }
    }

    /// Names the imports bind to something other than Triton's conventional spellings.
    pub fn shadowed(&self) -> &HashSet<String> {
        &self.shadowed
    }

    /// Starts recording the module-level facts read from now on.
    pub fn record_facts(&self) {
        *self.facts.borrow_mut() = Some(Vec::new());
    }

    /// Stops recording and returns what was read (None when not recording).
    pub fn take_facts(&self) -> Option<Vec<Fact>> {
        let mut facts = self.facts.borrow_mut().take()?;
        facts.dedup();
        Some(facts)
    }

    fn note(&self, fact: impl FnOnce() -> Fact) {
        if let Some(list) = self.facts.borrow_mut().as_mut() {
            let f = fact();
            if !list.contains(&f) {
                list.push(f);
            }
        }
    }

    /// Whether `fact` (recorded in another build) is true of this one.
    pub fn holds(&self, fact: &Fact) -> bool {
        let now = match fact {
            Fact::Shadowed(n, _) => Fact::Shadowed(n.clone(), self.shadowed.contains(n)),
            Fact::Mutated(n, _) => Fact::Mutated(n.clone(), self.mutated.contains(n)),
            Fact::ModuleValue(n, _) => Fact::ModuleValue(n.clone(), self.module_values.get(n).map(|v| self.located(*v))),
            Fact::ModuleFunction(n, _) => Fact::ModuleFunction(n.clone(), self.module_functions.get(n).map(|v| self.located(*v))),
            Fact::Constant(n, _) => Fact::Constant(n.clone(), self.constant_index.get(n).and_then(|i| self.constants.get(*i)).cloned()),
        };
        now == *fact
    }

    fn located(&self, node: Node) -> (String, TextRange) {
        (self.text_of(node).to_string(), range(node))
    }

    fn is_shadowed(&self, name: &str) -> bool {
        let v = self.shadowed.contains(name);
        self.note(|| Fact::Shadowed(name.to_string(), v));
        v
    }

    fn module_value(&self, name: &str) -> Option<Node<'t>> {
        let v = self.module_values.get(name).copied();
        self.note(|| Fact::ModuleValue(name.to_string(), v.map(|n| self.located(n))));
        v
    }

    /// The module-level function `name` (a config helper).
    pub fn module_function(&self, name: &str) -> Option<Node<'t>> {
        let v = self.module_functions.get(name).copied();
        self.note(|| Fact::ModuleFunction(name.to_string(), v.map(|n| self.located(n))));
        v
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
        if self.is_shadowed(name) {
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
        // The same callee is asked about by several passes (scan, memory-op checks, inference).
        if let Some(hit) = self.canonical_cache.borrow().get(&node.id()) {
            return hit.clone();
        }
        let c = self.canonical_uncached(node);
        self.canonical_cache.borrow_mut().insert(node.id(), c.clone());
        c
    }

    fn canonical_uncached(&self, node: Node) -> Option<String> {
        let mut parts: Vec<&str> = Vec::new();
        let mut cur = node;
        loop {
            match cur.kind() {
                "attribute" => {
                    parts.push(self.text_of(cur.field("attribute")?));
                    cur = cur.field("object")?;
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

    /// The single right-hand side assigned to `name` inside `func` (not in nested defs/classes).
    /// Parameters count as assignments: a parameter's value is not statically known.
    /// Each function body is summarised once ([`FnLocals`]).
    pub fn local_assignment(&self, func: Node<'t>, name: &str) -> LocalAssign<'t> {
        let cached = self.fn_locals.borrow().get(&func.id()).cloned();
        let locals = match cached {
            Some(l) => l,
            None => {
                let l = Rc::new(FnLocals::of(self.text, func));
                self.fn_locals.borrow_mut().insert(func.id(), l.clone());
                l
            }
        };
        locals.get(name)
    }

    pub fn is_builtin(&self, name: &str) -> bool {
        BUILTINS.contains(&name) && !self.is_shadowed(name) && self.module_value(name).is_none()
    }

    pub fn constant(&self, name: &str) -> Option<&Binding> {
        let c = self.constant_index.get(name).and_then(|i| self.constants.get(*i));
        self.note(|| Fact::Constant(name.to_string(), c.cloned()));
        c
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
            locals.iter().rev().find(|l| l.name == n).map(|l| l.value.clone()).or_else(|| self.constant(n).map(|c| c.value.clone()))
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
        let mutated = self.mutated.contains(name);
        self.note(|| Fact::Mutated(name.to_string(), mutated));
        if mutated {
            return None;
        }
        if let Some(func) = scope {
            match self.local_assignment(func, name) {
                LocalAssign::One(n) => return Some(n),
                LocalAssign::Many => return None,
                LocalAssign::None => {}
            }
        }
        self.module_value(name)
    }
}

pub enum LocalAssign<'t> {
    None,
    One(Node<'t>),
    Many,
}

/// What one function body assigns, per name: computed once per function and reused, since the
/// builder asks about many names of the same function (every launch argument, grid name, ...).
#[derive(Default)]
pub struct FnLocals<'t> {
    params: HashSet<&'t str>,
    /// name → (weighted assignment count, right-hand side of the last plain `name = rhs`).
    counts: HashMap<&'t str, (u32, Option<Node<'t>>)>,
}

impl<'t> FnLocals<'t> {
    fn of(text: &'t str, func: Node<'t>) -> Self {
        let mut out = FnLocals::default();
        if let Some(params) = func.field("parameters") {
            for p in named_children(params) {
                let id = match p.kind() {
                    "identifier" => Some(p),
                    "typed_parameter" => named_children(p).find(|c| c.kind() == "identifier"),
                    _ => p.field("name"),
                };
                if let Some(id) = id {
                    out.params.insert(node_text(text, id));
                }
            }
        }
        let Some(body) = func.field("body") else { return out };
        let mut names: Vec<&'t str> = Vec::new();
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "function_definition" | "class_definition" | "lambda" | "decorated_definition" => continue,
                "assignment" => {
                    if let Some(left) = n.field("left") {
                        names.clear();
                        assigned_names(text, left, &mut names);
                        let rhs = if left.kind() == "identifier" { n.field("right") } else { None };
                        for name in names.drain(..) {
                            let e = out.counts.entry(name).or_default();
                            e.0 += 1;
                            e.1 = rhs;
                        }
                    }
                }
                "augmented_assignment" => {
                    if let Some(left) = n.field("left")
                        && left.kind() == "identifier"
                    {
                        out.counts.entry(node_text(text, left)).or_default().0 += 2;
                    }
                }
                "for_statement" | "for_in_clause" => {
                    if let Some(left) = n.field("left") {
                        names.clear();
                        assigned_names(text, left, &mut names);
                        for name in names.drain(..) {
                            out.counts.entry(name).or_default().0 += 2;
                        }
                    }
                }
                _ => {}
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
        out
    }

    fn get(&self, name: &str) -> LocalAssign<'t> {
        if self.params.contains(name) {
            return LocalAssign::Many;
        }
        match self.counts.get(name) {
            None | Some((0, _)) => LocalAssign::None,
            Some((1, Some(n))) => LocalAssign::One(*n),
            Some(_) => LocalAssign::Many,
        }
    }
}

/// Names a target binds (each once, however often it repeats in a pattern).
fn assigned_names<'t>(text: &'t str, target: Node<'t>, out: &mut Vec<&'t str>) {
    match target.kind() {
        "identifier" => {
            let name = node_text(text, target);
            if !out.contains(&name) {
                out.push(name);
            }
        }
        "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" | "parenthesized_expression" | "list_splat_pattern" => {
            for c in named_children(target) {
                assigned_names(text, c, out);
            }
        }
        _ => {}
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
