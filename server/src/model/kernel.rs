//! Kernels: functions decorated with `@triton.jit` (or `@jit` bound by `from triton import jit`),
//! with their parameters, jit options, and the autotune/heuristics decorators stacked above.
//! `@cute.jit`, `@gluon.jit`, `@torch.jit.script` resolve to other paths and are not kernels.

use super::config;
use super::cx::Cx;
use super::ops;
use super::types::{Heuristics, Kernel, Param};
use crate::syntax::flat::Node;
use crate::syntax::flat::{named_children, range};

/// Where a kernel sits in the tree, kept beside `FileModel::kernels` while building.
#[derive(Clone, Copy)]
pub struct KernelSite<'t> {
    /// Innermost enclosing function or class of the definition (None at module level).
    pub scope: Option<Node<'t>>,
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
    let name = cx.text_of(name_node).to_string();
    let (qualified_name, scope) = qualify(cx, decorated, &name);
    let body = def.field("body");
    let kernel = Kernel {
        name,
        qualified_name,
        range: range(decorated),
        def_range: range(def),
        name_range: range(name_node),
        body_range: body.map_or(range(def), range),
        jit_range: range(jit_decorator),
        jit_options,
        params,
        autotune,
        heuristics,
        ops,
        api_calls,
        is_persistent,
        has_syntax_errors: decorated.has_error(),
        calls: body.map(|b| called_names(cx, b)).unwrap_or_default(),
        dot_in_callees: false,
    };
    Some((kernel, KernelSite { scope }))
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
