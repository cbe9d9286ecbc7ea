//! `triton.autotune(...)` / `triton.heuristics(...)` and the config lists they take.
//!
//! A config list is enumerated statically when it is built from literal lists, comprehensions
//! over literal lists and `range(...)`, `+` of lists, `*splat` elements, module-level names and
//! helper functions whose body returns one of those. Each comprehension combination becomes
//! one `Config` whose bindings point at the list elements that produced them. Anything else
//! (loops with `append`, env-var conditionals, calls into other modules) leaves
//! `configs_complete = false` and no values are guessed.

use super::cx::{Cx, Local, enclosing_function, unparen};
use super::eval::string_value;
use super::types::{Autotune, Config, Value};
use crate::syntax::flat::Node;
use crate::syntax::flat::{named_children, range};

/// Most configs one autotune list is expanded into; larger spaces are marked incomplete.
pub const MAX_CONFIGS: usize = 4096;
/// Deepest chain of names/helpers/`+` followed while expanding a list.
const MAX_DEPTH: usize = 16;

/// Positional parameters of `triton.Config` after the kwargs dict (triton 3.x signature).
const CONFIG_POSITIONAL: &[&str] = &["num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook", "ir_override"];

/// Parses an autotune call's arguments (decorator or functional form).
pub fn autotune<'t>(cx: &Cx<'t>, call: Node<'t>, functional: bool, scope: Option<Node<'t>>) -> Autotune {
    let mut at = Autotune {
        range: range(call),
        configs: Vec::new(),
        configs_complete: true,
        configs_range: None,
        key: Vec::new(),
        has_prune_configs_by: false,
        other_kwargs: Vec::new(),
        opaque_kwargs: false,
        functional,
    };
    let Some(args) = call.field("arguments") else {
        at.configs_complete = false;
        return at;
    };
    let mut configs_node = None;
    let mut key_node = None;
    let mut positional = 0;
    for a in named_children(args) {
        match a.kind() {
            "keyword_argument" => {
                let (Some(k), Some(v)) = (a.field("name"), a.field("value")) else { continue };
                match cx.text_of(k) {
                    "configs" => configs_node = Some(v),
                    "key" => key_node = Some(v),
                    "prune_configs_by" => at.has_prune_configs_by = !matches!(unparen(v).kind(), "none"),
                    other => at.other_kwargs.push(other.to_string()),
                }
            }
            "dictionary_splat" => at.opaque_kwargs = true,
            "list_splat" => {
                at.opaque_kwargs = true;
                positional = usize::MAX;
            }
            _ => {
                match positional {
                    0 => configs_node = Some(a),
                    1 => key_node = Some(a),
                    2 => at.has_prune_configs_by = !matches!(unparen(a).kind(), "none"),
                    _ => {}
                }
                positional = positional.saturating_add(1);
            }
        }
    }
    match configs_node {
        Some(node) => {
            at.configs_range = Some(range(node));
            let mut ex = Expander { cx, scope, out: Vec::new(), complete: true };
            ex.expand(node, &mut Vec::new(), 0);
            at.configs = ex.out;
            at.configs_complete = ex.complete;
        }
        None => at.configs_complete = false,
    }
    if let Some(k) = key_node {
        at.key = string_list(cx, k, scope);
    }
    at
}

/// Names a `triton.heuristics({...})` dict supplies.
pub fn heuristic_names<'t>(cx: &Cx<'t>, call: Node<'t>) -> Vec<String> {
    let Some(args) = call.field("arguments") else { return Vec::new() };
    let Some(dict) = named_children(args).next().map(unparen) else { return Vec::new() };
    let dict = if dict.kind() == "identifier" {
        match cx.resolve_name(cx.text_of(dict), enclosing_function(call)) {
            Some(n) => unparen(n),
            None => return Vec::new(),
        }
    } else {
        dict
    };
    if dict.kind() != "dictionary" {
        return Vec::new();
    }
    named_children(dict).filter(|p| p.kind() == "pair").filter_map(|p| p.field("key").and_then(|k| string_value(cx.text, k))).collect()
}

fn string_list<'t>(cx: &Cx<'t>, node: Node<'t>, scope: Option<Node<'t>>) -> Vec<String> {
    let node = unparen(node);
    let node = if node.kind() == "identifier" {
        match cx.resolve_name(cx.text_of(node), scope) {
            Some(n) => unparen(n),
            None => return Vec::new(),
        }
    } else {
        node
    };
    if !matches!(node.kind(), "list" | "tuple") {
        return Vec::new();
    }
    named_children(node).filter_map(|s| string_value(cx.text, s)).collect()
}

struct Expander<'a, 't> {
    cx: &'a Cx<'t>,
    scope: Option<Node<'t>>,
    out: Vec<Config>,
    complete: bool,
}

/// One element of an iterable in a comprehension: its value, the literal it came from, and the
/// node (for destructuring tuple elements into their own ranges).
struct Item<'t> {
    value: Value,
    range: crate::text::TextRange,
    node: Option<Node<'t>>,
}

impl<'a, 't> Expander<'a, 't> {
    fn full(&mut self) -> bool {
        if self.out.len() >= MAX_CONFIGS {
            self.complete = false;
            true
        } else {
            false
        }
    }

    fn expand(&mut self, node: Node<'t>, env: &mut Vec<Local>, depth: usize) {
        if depth > MAX_DEPTH || self.full() {
            self.complete = false;
            return;
        }
        let node = unparen(node);
        match node.kind() {
            "list" | "tuple" => {
                for el in named_children(node) {
                    if el.kind() == "list_splat" {
                        match named_children(el).next() {
                            Some(inner) => self.expand(inner, env, depth + 1),
                            None => self.complete = false,
                        }
                    } else {
                        self.element(el, env, depth);
                    }
                }
            }
            "list_comprehension" | "generator_expression" => self.comprehension(node, env, depth),
            "binary_operator" => {
                let op = node.field("operator").map(|o| self.cx.text_of(o));
                match (op, node.field("left"), node.field("right")) {
                    (Some("+"), Some(l), Some(r)) => {
                        self.expand(l, env, depth + 1);
                        self.expand(r, env, depth + 1);
                    }
                    _ => self.complete = false,
                }
            }
            "identifier" => match self.cx.resolve_name(self.cx.text_of(node), self.scope) {
                Some(value) => self.expand(value, env, depth + 1),
                None => self.complete = false,
            },
            "call" => {
                if self.is_config_call(node) {
                    self.push_config(node, env);
                } else if !self.helper_call(node, env, depth) {
                    self.complete = false;
                }
            }
            _ => self.complete = false,
        }
    }

    /// One element of a literal config list.
    fn element(&mut self, el: Node<'t>, env: &mut Vec<Local>, depth: usize) {
        let el = unparen(el);
        match el.kind() {
            "call" if self.is_config_call(el) => self.push_config(el, env),
            "identifier" => match self.cx.resolve_name(self.cx.text_of(el), self.scope) {
                Some(v) if depth < MAX_DEPTH => self.element(v, env, depth + 1),
                _ => self.complete = false,
            },
            _ => self.complete = false,
        }
    }

    fn is_config_call(&self, call: Node) -> bool {
        call.field("function").and_then(|f| self.cx.canonical(f)).as_deref() == Some("triton.Config")
    }

    /// `get_configs()` / `get_configs(arg)` where the helper's body returns a list expression.
    fn helper_call(&mut self, call: Node<'t>, env: &[Local], depth: usize) -> bool {
        let Some(func) = call.field("function") else { return false };
        if func.kind() != "identifier" {
            return false;
        }
        let name = self.cx.text_of(func);
        let Some(def) = self.cx.module_function(name) else { return false };
        let Some(ret) = returned_expression(def) else { return false };
        // Bind the helper's parameters to the call's positional arguments (or defaults).
        let mut locals: Vec<Local> = Vec::new();
        let args: Vec<Node> = call.field("arguments").map(|a| named_children(a).collect()).unwrap_or_default();
        if let Some(params) = def.field("parameters") {
            for (i, p) in named_children(params).enumerate() {
                let (pname, default) = match p.kind() {
                    "identifier" => (Some(p), None),
                    "typed_parameter" => (named_children(p).find(|c| c.kind() == "identifier"), None),
                    "default_parameter" | "typed_default_parameter" => (p.field("name"), p.field("value")),
                    _ => (None, None),
                };
                let Some(pname) = pname else { continue };
                let pname = self.cx.text_of(pname);
                let keyword =
                    args.iter().find(|a| a.kind() == "keyword_argument" && a.field("name").is_some_and(|k| self.cx.text_of(k) == pname));
                let source = keyword
                    .and_then(|k| k.field("value"))
                    .or_else(|| {
                        args.get(i).copied().filter(|a| !matches!(a.kind(), "keyword_argument" | "list_splat" | "dictionary_splat"))
                    })
                    .or(default);
                let (value, r) = match source {
                    Some(s) => self.cx.value_of(s, env),
                    None => (Value::Unknown, range(p)),
                };
                locals.push(Local { name: pname.to_string(), value, range: r });
            }
        }
        let saved = self.scope.replace(def);
        let mut env2: Vec<Local> = env.to_vec();
        env2.extend(locals);
        self.expand(ret, &mut env2, depth + 1);
        self.scope = saved;
        true
    }

    fn comprehension(&mut self, node: Node<'t>, env: &mut Vec<Local>, depth: usize) {
        let Some(body) = node.field("body") else {
            self.complete = false;
            return;
        };
        let clauses: Vec<Node> = named_children(node).filter(|c| matches!(c.kind(), "for_in_clause" | "if_clause")).collect();
        self.clauses(body, &clauses, env, depth);
    }

    fn clauses(&mut self, body: Node<'t>, clauses: &[Node<'t>], env: &mut Vec<Local>, depth: usize) {
        if self.full() {
            return;
        }
        let Some((first, rest)) = clauses.split_first() else {
            let body = unparen(body);
            if body.kind() == "call" && self.is_config_call(body) {
                self.push_config(body, env);
            } else {
                self.complete = false;
            }
            return;
        };
        if first.kind() == "if_clause" {
            let Some(cond) = named_children(*first).next() else { return };
            let (v, _) = self.cx.value_of(cond, env);
            match v {
                Value::Bool(true) => self.clauses(body, rest, env, depth),
                Value::Bool(false) => {}
                Value::Int(i) if i != 0 => self.clauses(body, rest, env, depth),
                Value::Int(_) => {}
                _ => self.complete = false,
            }
            return;
        }
        let (Some(left), Some(right)) = (first.field("left"), first.field("right")) else {
            self.complete = false;
            return;
        };
        let Some(items) = self.items(right, env, depth) else {
            self.complete = false;
            return;
        };
        for item in items {
            let mark = env.len();
            if !self.bind_target(left, &item, env) {
                env.truncate(mark);
                self.complete = false;
                return;
            }
            self.clauses(body, rest, env, depth);
            env.truncate(mark);
            if self.full() {
                return;
            }
        }
    }

    /// Binds a comprehension target (`x`, `a, b`, `(a, b)`) to one item.
    fn bind_target(&self, target: Node<'t>, item: &Item<'t>, env: &mut Vec<Local>) -> bool {
        let target = unparen(target);
        match target.kind() {
            "identifier" => {
                env.push(Local { name: self.cx.text_of(target).to_string(), value: item.value.clone(), range: item.range });
                true
            }
            "pattern_list" | "tuple_pattern" | "tuple" | "list_pattern" | "list" => {
                let names: Vec<Node> = named_children(target).collect();
                let sub_nodes: Option<Vec<Node>> =
                    item.node.map(unparen).filter(|n| matches!(n.kind(), "tuple" | "list")).map(|n| named_children(n).collect());
                let values = match &item.value {
                    Value::Tuple(v) | Value::List(v) => v.clone(),
                    _ => vec![Value::Unknown; names.len()],
                };
                if values.len() != names.len() {
                    return false;
                }
                for (i, n) in names.iter().enumerate() {
                    let sub_node = sub_nodes.as_ref().and_then(|s| s.get(i).copied());
                    let sub = Item { value: values[i].clone(), range: sub_node.map_or(item.range, range), node: sub_node };
                    if !self.bind_target(*n, &sub, env) {
                        return false;
                    }
                }
                true
            }
            _ => false,
        }
    }

    /// Elements of an iterable: a literal list/tuple, `range(...)`, a name bound to one, or `+` of them.
    fn items(&self, node: Node<'t>, env: &[Local], depth: usize) -> Option<Vec<Item<'t>>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let node = unparen(node);
        match node.kind() {
            "list" | "tuple" => {
                let mut out = Vec::new();
                for el in named_children(node) {
                    if el.kind() == "list_splat" {
                        out.extend(self.items(named_children(el).next()?, env, depth + 1)?);
                        continue;
                    }
                    let (value, r) = self.cx.value_of(el, env);
                    out.push(Item { value, range: r, node: Some(el) });
                }
                Some(out)
            }
            "identifier" => {
                let name = self.cx.text_of(node);
                if let Some(l) = env.iter().rev().find(|l| l.name == name) {
                    return match &l.value {
                        Value::List(v) | Value::Tuple(v) => {
                            Some(v.iter().map(|x| Item { value: x.clone(), range: l.range, node: None }).collect())
                        }
                        _ => None,
                    };
                }
                let value = self.cx.resolve_name(name, self.scope)?;
                self.items(value, env, depth + 1)
            }
            "binary_operator" => {
                let op = node.field("operator").map(|o| self.cx.text_of(o));
                if op != Some("+") {
                    return None;
                }
                let mut l = self.items(node.field("left")?, env, depth + 1)?;
                l.extend(self.items(node.field("right")?, env, depth + 1)?);
                Some(l)
            }
            "call" => {
                let func = node.field("function")?;
                let fname = self.cx.text_of(func);
                let is_range = (fname == "range" && self.cx.is_builtin("range"))
                    || matches!(self.cx.canonical(func).as_deref(), Some("tl.range" | "tl.static_range"));
                if !is_range {
                    return None;
                }
                let args: Vec<Node> = named_children(node.field("arguments")?).collect();
                let mut nums = Vec::new();
                for a in &args {
                    nums.push(self.cx.value_of(*a, env).0.as_int()?);
                }
                let (start, stop, step) = match nums.as_slice() {
                    [stop] => (0, *stop, 1),
                    [start, stop] => (*start, *stop, 1),
                    [start, stop, step] if *step != 0 => (*start, *stop, *step),
                    _ => return None,
                };
                let r = range(node);
                let mut out = Vec::new();
                let mut i = start;
                while (step > 0 && i < stop) || (step < 0 && i > stop) {
                    if out.len() >= MAX_CONFIGS {
                        return None;
                    }
                    out.push(Item { value: Value::Int(i), range: r, node: None });
                    i = i.checked_add(step)?;
                }
                Some(out)
            }
            _ => None,
        }
    }

    fn push_config(&mut self, call: Node<'t>, env: &[Local]) {
        let instance = self.out.len();
        let cfg = parse_config(self.cx, call, env, self.scope, instance);
        self.out.push(cfg);
    }
}

/// The expression a helper returns when its body is (docstring +) a single `return <expr>`.
fn returned_expression(def: Node) -> Option<Node> {
    let body = def.field("body")?;
    let stmts: Vec<Node> = named_children(body).collect();
    let mut iter = stmts.iter().peekable();
    // Skip a docstring.
    if let Some(first) = iter.peek()
        && first.kind() == "expression_statement"
        && named_children(**first).next().is_some_and(|n| n.kind() == "string")
    {
        iter.next();
    }
    let rest: Vec<&Node> = iter.collect();
    match rest.as_slice() {
        [ret] if ret.kind() == "return_statement" => named_children(**ret).next(),
        _ => None,
    }
}

/// One `triton.Config(...)` call under comprehension bindings `env`.
pub fn parse_config<'t>(cx: &Cx<'t>, call: Node<'t>, env: &[Local], scope: Option<Node<'t>>, instance: usize) -> Config {
    let mut cfg = Config { range: range(call), kwargs: Vec::new(), options: Vec::new(), kwargs_range: None, opaque: false, instance };
    let Some(args) = call.field("arguments") else {
        cfg.opaque = true;
        return cfg;
    };
    let mut positional = 0usize;
    for a in named_children(args) {
        match a.kind() {
            "keyword_argument" => {
                let (Some(k), Some(v)) = (a.field("name"), a.field("value")) else { continue };
                let key = cx.text_of(k);
                if key == "kwargs" {
                    read_kwargs(cx, v, env, scope, &mut cfg);
                } else {
                    cfg.options.push(cx.binding(key, v, range(a), range(k), env));
                }
            }
            "dictionary_splat" | "list_splat" => cfg.opaque = true,
            _ => {
                if positional == 0 {
                    read_kwargs(cx, a, env, scope, &mut cfg);
                } else if let Some(name) = CONFIG_POSITIONAL.get(positional - 1) {
                    cfg.options.push(cx.binding(name, a, range(a), range(a), env));
                }
                positional += 1;
            }
        }
    }
    cfg
}

/// The kwargs dict of a Config: a dict literal, `dict(A=1, ...)`, or a name bound to one.
fn read_kwargs<'t>(cx: &Cx<'t>, node: Node<'t>, env: &[Local], scope: Option<Node<'t>>, cfg: &mut Config) {
    let mut node = unparen(node);
    if node.kind() == "identifier"
        && !env.iter().any(|l| l.name == cx.text_of(node))
        && let Some(v) = cx.resolve_name(cx.text_of(node), scope)
    {
        node = unparen(v);
    }
    match node.kind() {
        "dictionary" => {
            cfg.kwargs_range = Some(range(node));
            for p in named_children(node) {
                match p.kind() {
                    "pair" => {
                        let (Some(k), Some(v)) = (p.field("key"), p.field("value")) else { continue };
                        match string_value(cx.text, k) {
                            Some(name) => cfg.kwargs.push(cx.binding(&name, v, range(p), range(k), env)),
                            None => cfg.opaque = true,
                        }
                    }
                    _ => cfg.opaque = true,
                }
            }
        }
        "call" if node.field("function").is_some_and(|f| cx.text_of(f) == "dict" && cx.is_builtin("dict")) => {
            cfg.kwargs_range = Some(range(node));
            let Some(args) = node.field("arguments") else { return };
            for a in named_children(args) {
                match (a.kind(), a.field("name"), a.field("value")) {
                    ("keyword_argument", Some(k), Some(v)) => cfg.kwargs.push(cx.binding(cx.text_of(k), v, range(a), range(k), env)),
                    _ => cfg.opaque = true,
                }
            }
        }
        _ => cfg.opaque = true,
    }
}
