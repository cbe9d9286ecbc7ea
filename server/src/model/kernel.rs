//! Kernels: functions decorated with `@triton.jit` (or `@jit` bound by `from triton import jit`),
//! with their parameters, jit options, and the autotune/heuristics decorators stacked above; and
//! module-level `def`s made kernels by an assignment, `name = triton.jit(fn)` ([`build_made`]).
//! `@cute.jit`, `@gluon.jit`, `@torch.jit.script` resolve to other paths and are not kernels.

use super::config;
use super::cx::{Cx, unparen};
use super::ops;
use super::types::{Heuristics, Kernel, MadeBy, Param};
use crate::syntax::flat::Node;
use crate::syntax::flat::{named_children, range};
use crate::text::TextRange;

/// Where a kernel sits in the tree, kept beside `FileModel::kernels` while building.
#[derive(Clone, Copy)]
pub struct KernelSite<'t> {
    /// Innermost enclosing function or class of the definition (None at module level).
    pub scope: Option<Node<'t>>,
    /// For a kernel made by a call: the call that applies the JIT (`triton.jit(fn)`), which denotes it.
    pub made: Option<TextRange>,
}

/// What a decorator expression is, by its canonical callee.
enum Decorator<'t> {
    Jit { options: Option<Node<'t>> },
    Autotune(Node<'t>),
    Heuristics(Node<'t>),
    Other,
}

fn classify<'t>(cx: &Cx<'t>, decorator: Node<'t>) -> Decorator<'t> {
    let Some(expr) = named_children(decorator).next() else { return Decorator::Other };
    let (callee, call) = if expr.kind() == "call" {
        match expr.field("function") {
            Some(f) => (f, Some(expr)),
            None => return Decorator::Other,
        }
    } else {
        (expr, None)
    };
    match (cx.canonical(callee).as_deref(), call) {
        (Some("triton.jit"), c) => Decorator::Jit { options: c.and_then(|c| c.field("arguments")) },
        (Some("triton.autotune"), Some(c)) => Decorator::Autotune(c),
        (Some("triton.heuristics"), Some(c)) => Decorator::Heuristics(c),
        _ => Decorator::Other,
    }
}

/// Builds a kernel from a `decorated_definition`, or None when no decorator is Triton's jit.
pub fn build<'t>(cx: &Cx<'t>, decorated: Node<'t>) -> Option<(Kernel, KernelSite<'t>)> {
    let def = decorated.field("definition")?;
    if def.kind() != "function_definition" {
        return None;
    }
    let name_node = def.field("name")?;
    let mut jit = None;
    let mut autotune = None;
    let mut heuristics = Vec::new();
    for d in named_children(decorated).filter(|n| n.kind() == "decorator") {
        match classify(cx, d) {
            Decorator::Jit { options } => jit = Some((d, options)),
            Decorator::Autotune(call) if autotune.is_none() => {
                autotune = Some(config::autotune(cx, call, false, super::cx::enclosing_function(decorated)));
            }
            Decorator::Heuristics(call) => heuristics.push(Heuristics { range: range(d), names: config::heuristic_names(cx, call) }),
            _ => {}
        }
    }
    let (jit_decorator, jit_args) = jit?;
    let name = cx.text_of(name_node).to_string();
    let (qualified_name, scope) = qualify(cx, decorated, &name);
    let mut kernel = of_def(cx, def, name, qualified_name, range(jit_decorator), jit_args);
    kernel.range = range(decorated);
    kernel.autotune = autotune;
    kernel.heuristics = heuristics;
    kernel.has_syntax_errors = decorated.has_error();
    Some((kernel, KernelSite { scope, made: None }))
}

/// Builds the kernel an assignment makes of a module-level `def` (see [`MadeBy`]), or None when
/// `left = right` is not one. Wrappers other than the JIT are read as their decorators would be:
/// a functional `triton.autotune`/`triton.heuristics` is attached later, as for `triton.autotune(...)(k)`.
pub fn build_made<'t>(cx: &Cx<'t>, left: Node<'t>, right: Node<'t>) -> Option<(Kernel, KernelSite<'t>)> {
    let right = unparen(right);
    if left.kind() != "identifier" || right.kind() != "call" {
        return None;
    }
    // At module level only (a guard's blocks are the module's), where launches elsewhere can see
    // it. Asked first: most assignments are statements of function bodies.
    let mut statement = left.parent()?;
    while statement.kind() != "expression_statement" {
        statement = statement.parent()?;
    }
    let mut up = statement.parent();
    while let Some(p) = up {
        if p.kind() != "module" && !crate::syntax::is_guard(p.kind()) {
            return None;
        }
        up = p.parent();
    }
    let mut chain = Vec::new();
    let mut node = right;
    let (jit_call, jit_args, fn_node) = loop {
        if node.kind() != "call" || chain.len() > 8 {
            return None;
        }
        let callee = unparen(node.field("function")?);
        let args = node.field("arguments").filter(|a| a.kind() == "argument_list")?;
        let positional: Vec<Node> = named_children(args).filter(|a| a.kind() != "keyword_argument").collect();
        chain.push((range(callee), range(node)));
        // `triton.jit(fn, **options)`, `triton.jit(**options)(fn)`.
        let options = if cx.canonical(callee).as_deref() == Some("triton.jit") {
            Some(args)
        } else if callee.kind() == "call" && callee.field("function").and_then(|f| cx.canonical(f)).as_deref() == Some("triton.jit") {
            callee.field("arguments")
        } else {
            None
        };
        match (options, positional.as_slice()) {
            (Some(options), [f]) if f.kind() == "identifier" => break (node, options, *f),
            (Some(_), _) => return None,
            // Any other call of one argument applies a function to what that argument makes, as a
            // decorator does (`triton.autotune(...)(...)`, a library's `libentry()(...)`).
            (None, [inner]) if named_children(args).count() == 1 => node = unparen(*inner),
            (None, _) => return None,
        }
    };
    let def = module_def(cx, statement, cx.text_of(fn_node))?;
    let name = cx.text_of(left).to_string();
    let mut kernel = of_def(cx, def, name.clone(), name, range(unparen(jit_call.field("function")?)), Some(jit_args));
    // Its code and what makes it a kernel, as decorators and `def` are for a decorated one.
    kernel.range = range(def).cover(range(statement));
    kernel.has_syntax_errors = def.has_error() || statement.has_error();
    kernel.made_by = Some(MadeBy { statement: range(statement), def_name: cx.text_of(fn_node).to_string(), chain });
    Some((kernel, KernelSite { scope: None, made: Some(range(jit_call)) }))
}

/// The undecorated module-level `def name` that a statement at `at` sees: the last one before it.
fn module_def<'t>(cx: &Cx<'t>, at: Node<'t>, name: &str) -> Option<Node<'t>> {
    let mut root = at;
    while let Some(p) = root.parent() {
        root = p;
    }
    let mut found = None;
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        for s in named_children(n) {
            if s.start_byte() >= at.start_byte() {
                break;
            }
            match s.kind() {
                "function_definition"
                    if s.field("name").is_some_and(|f| cx.text_of(f) == name)
                        && found.is_none_or(|d: Node| d.start_byte() < s.start_byte()) =>
                {
                    found = Some(s)
                }
                k if crate::syntax::is_guard(k) => stack.push(s),
                _ => {}
            }
        }
    }
    found
}

/// A kernel of `def` with its parameters, ops and calls; the caller sets what its decorators or
/// the assignment that makes it add.
fn of_def<'t>(
    cx: &Cx<'t>,
    def: Node<'t>,
    name: String,
    qualified_name: String,
    jit_range: TextRange,
    jit_args: Option<Node<'t>>,
) -> Kernel {
    let jit_options = jit_args
        .map(|args| {
            named_children(args)
                .filter(|a| a.kind() == "keyword_argument")
                .filter_map(|kw| {
                    let key = kw.field("name")?;
                    let value = kw.field("value")?;
                    Some(cx.binding(cx.text_of(key), value, range(kw), range(key), &[]))
                })
                .collect()
        })
        .unwrap_or_default();
    let params = params(cx, def);
    let (ops, api_calls, is_persistent) = ops::collect(cx, def, &params);
    let body = def.field("body");
    Kernel {
        name,
        qualified_name,
        range: range(def),
        def_range: range(def),
        name_range: def.field("name").map_or(range(def), range),
        body_range: body.map_or(range(def), range),
        jit_range,
        jit_options,
        params,
        autotune: None,
        heuristics: Vec::new(),
        ops,
        api_calls,
        is_persistent,
        has_syntax_errors: def.has_error(),
        calls: body.map(|b| called_names(cx, b)).unwrap_or_default(),
        dot_in_callees: false,
        made_by: None,
    }
}

/// The names called anywhere in `body`, each once, in order of first call: plain names
/// (`helper(...)`) and dotted names whose first part a non-Triton import binds (`h.helper(...)`).
fn called_names(cx: &Cx<'_>, body: Node<'_>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        if n.kind() == "call"
            && let Some(f) = n.field("function")
            && let Some(name) = callee_name(cx, f)
            && !out.contains(&name)
        {
            out.push(name);
        }
        stack.extend(named_children(n));
    }
    out
}

/// `f` as a plain or dotted name worth following: an identifier, or an attribute chain of
/// identifiers rooted at a module import (`tl.load` and `x.to` are not).
fn callee_name(cx: &Cx<'_>, f: Node<'_>) -> Option<String> {
    if f.kind() == "identifier" {
        return Some(cx.text_of(f).to_string());
    }
    let mut parts = Vec::new();
    let mut cur = f;
    while cur.kind() == "attribute" {
        parts.push(cx.text_of(cur.field("attribute")?));
        cur = cur.field("object")?;
    }
    if cur.kind() != "identifier" || parts.is_empty() {
        return None;
    }
    let root = cx.text_of(cur);
    cx.imports.module_binding(root)?;
    parts.push(root);
    parts.reverse();
    Some(parts.join("."))
}

/// Dotted path of enclosing classes/functions, and the innermost enclosing scope node.
fn qualify<'t>(cx: &Cx<'t>, node: Node<'t>, name: &str) -> (String, Option<Node<'t>>) {
    let mut parts = vec![name.to_string()];
    let mut scope = None;
    let mut cur = node.parent();
    while let Some(n) = cur {
        if matches!(n.kind(), "function_definition" | "class_definition") {
            if scope.is_none() {
                scope = Some(n);
            }
            if let Some(nm) = n.field("name") {
                parts.push(cx.text_of(nm).to_string());
            }
        }
        cur = n.parent();
    }
    parts.reverse();
    (parts.join("."), scope)
}

fn is_constexpr_annotation(ann: &str) -> bool {
    let a = ann.trim();
    a == "constexpr" || a.ends_with(".constexpr") || a.starts_with("tl.constexpr[") || a.contains("constexpr[")
}

fn params(cx: &Cx, def: Node) -> Vec<Param> {
    let Some(list) = def.field("parameters") else { return Vec::new() };
    let mut out = Vec::new();
    for p in named_children(list) {
        let (name, ann, default) = match p.kind() {
            "identifier" => (Some(p), None, None),
            "typed_parameter" => (named_children(p).find(|c| c.kind() == "identifier"), p.field("type"), None),
            "default_parameter" => (p.field("name"), None, p.field("value")),
            "typed_default_parameter" => (p.field("name"), p.field("type"), p.field("value")),
            _ => continue, // *args, **kwargs, `*`, `/`
        };
        let Some(name) = name else { continue };
        let annotation = ann.map(|a| cx.text_of(a).to_string());
        let pname = cx.text_of(name).to_string();
        out.push(Param {
            is_constexpr: annotation.as_deref().is_some_and(is_constexpr_annotation),
            default: default.map(|d| cx.binding(&pname, d, range(p), range(name), &[])),
            name: pname,
            range: range(p),
            annotation,
            annotation_range: ann.map(range),
        });
    }
    out
}
