//! Concrete calls of the entry in the user's code: tests, `if __name__ == "__main__":` blocks,
//! `pytest.mark.parametrize` values, loops over sizes and `triton.testing.Benchmark` `x_vals`. Each
//! call, under each binding of the names around it, is one observation of the entry's arguments.

use super::Origin;
use super::entry::{Entry, EntryKind, EntryParam};
use super::tree::{Src, call_args, callee, decorators, descendants, enclosing_defs, field, scope_nodes, unparen};
use super::value::{Env, Val, bind, eval};
use crate::syntax::named_children;
use tree_sitter::{Node, Tree};

/// Most bindings followed per call site (a parametrize grid or a benchmark sweep).
const MAX_ENVS: usize = 256;

#[derive(Debug, Clone)]
pub struct Observation {
    /// One value per entry parameter (`Unknown` where not passed or not known).
    pub args: Vec<Val>,
    /// The constructor arguments of a method entry's class, one per `__init__` parameter.
    pub inits: Vec<Val>,
    /// The `dtype=` the constructor call passes (`Embedding(v, d, dtype=torch.float16)`): the
    /// module's parameters' dtype, where no tensor argument names one.
    pub ctor_dtype: Option<String>,
    pub origin: Origin,
}

pub fn observe(src: &Src, tree: &Tree, entry: &Entry) -> Vec<Observation> {
    if entry.kind == EntryKind::Model {
        return Vec::new();
    }
    let root = tree.root_node();
    let module_env = module_env(src, root);
    let mut out = Vec::new();
    for call in descendants(root).into_iter().filter(|n| n.kind() == "call") {
        let Some((args, ctor)) = match_call(src, call, entry) else {
            continue;
        };
        if enclosing_defs(call).iter().any(|d| d.start_byte() == entry.def_start || entry.bodies.contains(&d.start_byte())) {
            continue; // the entry calling itself or its helper
        }
        for env in envs(src, root, call, &module_env, true) {
            let values = bind_args(src, entry, args, &env);
            let inits = ctor.map(|c| bind_ctor(src, entry, c, &env)).unwrap_or_default();
            let ctor_dtype = ctor.and_then(|c| keyword_dtype(src, c, &env));
            out.push(Observation { args: values, inits, ctor_dtype, origin: src.origin(call) });
        }
    }
    out
}

/// Module-level assignments, in order (constants, `DEVICE = ...`, shape lists, benchmark configs).
fn module_env(src: &Src, root: Node) -> Env {
    let mut env = Env::new();
    for stmt in named_children(root) {
        if stmt.kind() != "expression_statement" {
            continue;
        }
        if let Some(a) = named_children(stmt).next().filter(|a| a.kind() == "assignment")
            && let (Some(l), Some(r)) = (field(a, "left"), field(a, "right"))
        {
            let v = eval(src, r, &env);
            bind(src, l, v, &mut env);
        }
    }
    env
}

/// Whether `call` calls the entry: its arguments, and for a method entry the constructor call.
fn match_call<'t>(src: &Src<'t>, call: Node<'t>, entry: &Entry) -> Option<(Node<'t>, Option<Node<'t>>)> {
    let func = field(call, "function")?;
    let text = src.text(func);
    let args = field(call, "arguments")?;
    match entry.kind {
        EntryKind::Function | EntryKind::Apply => entry.spellings.iter().any(|s| s == text).then_some((args, None)),
        EntryKind::Method => {
            let class = entry.class.as_deref()?;
            let method = entry.name.rsplit('.').next()?;
            // `Cls(...).method(x)`, `obj.method(x)` / `obj(x)` (forward) with `obj = Cls(...)` in scope
            let (obj, called) = match func.kind() {
                "attribute" => (field(func, "object")?, src.text(field(func, "attribute")?)),
                "identifier" if method == "forward" => (func, "forward"),
                _ => return None,
            };
            if called != method {
                return None;
            }
            if entry.class_level && src.text(obj) == class {
                return Some((args, None)); // `Cls.m(x)` of a static or class method
            }
            let obj = constructed(src, unparen(obj));
            if obj.kind() == "call" && callee(src, obj) == class {
                return Some((args, Some(obj)));
            }
            if obj.kind() != "identifier" {
                return None;
            }
            let name = src.text(obj);
            let scope = enclosing_defs(call).first().and_then(|d| field(*d, "body")).unwrap_or(src_root(call));
            let ctor = scope_nodes(scope).into_iter().filter(|n| n.kind() == "assignment" && n.start_byte() < call.start_byte()).find_map(
                |a| {
                    let l = field(a, "left")?;
                    let r = constructed(src, unparen(field(a, "right")?));
                    (src.text(l) == name && r.kind() == "call" && callee(src, r) == class).then_some(r)
                },
            )?;
            Some((args, Some(ctor)))
        }
        EntryKind::Model => None,
    }
}

/// Module methods that return the module itself, as chained on a constructor:
/// `Cls(...).cuda()`, `Cls(...).to(device).eval()`.
const RETURNS_SELF: &[&str] = &["cuda", "xpu", "cpu", "to", "half", "float", "double", "bfloat16", "eval", "train", "requires_grad_"];

/// The constructor call under such a chain (the node itself when there is none).
fn constructed<'t>(src: &Src<'t>, mut n: Node<'t>) -> Node<'t> {
    while n.kind() == "call"
        && let Some(f) = field(n, "function").filter(|f| f.kind() == "attribute")
        && field(f, "attribute").is_some_and(|a| RETURNS_SELF.contains(&src.text(a)))
        && let Some(obj) = field(f, "object")
    {
        n = unparen(obj);
    }
    n
}

fn src_root(n: Node) -> Node {
    let mut cur = n;
    while let Some(p) = cur.parent() {
        cur = p;
    }
    cur
}

fn bind_args(src: &Src, entry: &Entry, args: Node, env: &Env) -> Vec<Val> {
    bind_params(src, &entry.params, args, env)
}

fn bind_ctor(src: &Src, entry: &Entry, ctor: Node, env: &Env) -> Vec<Val> {
    field(ctor, "arguments").map(|args| bind_params(src, &entry.init_params, args, env)).unwrap_or_default()
}

/// The dtype a call's `dtype=` keyword names, if it names one.
fn keyword_dtype(src: &Src, call: Node, env: &Env) -> Option<String> {
    let (_, keywords) = call_args_of(src, field(call, "arguments")?);
    let (_, v) = keywords.iter().find(|(k, _)| *k == "dtype")?;
    match eval(src, *v, env) {
        Val::Dtype(d) => Some(d),
        _ => None,
    }
}

/// Each parameter's value at a call: its keyword argument, else the positional one at its index.
fn bind_params(src: &Src, params: &[EntryParam], args: Node, env: &Env) -> Vec<Val> {
    let (positional, keywords) = call_args_of(src, args);
    params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            keywords
                .iter()
                .find(|(k, _)| *k == p.name)
                .map(|(_, v)| eval(src, *v, env))
                .or_else(|| positional.get(i).map(|v| eval(src, *v, env)))
                .unwrap_or(Val::Unknown)
        })
        .collect()
}

type Args<'t> = (Vec<Node<'t>>, Vec<(&'t str, Node<'t>)>);

fn call_args_of<'t>(src: &Src<'t>, args: Node<'t>) -> Args<'t> {
    let mut pos = Vec::new();
    let mut kw = Vec::new();
    for a in named_children(args) {
        match a.kind() {
            "keyword_argument" => {
                if let (Some(k), Some(v)) = (field(a, "name"), field(a, "value")) {
                    kw.push((src.text(k), v));
                }
            }
            "list_splat" | "dictionary_splat" => {}
            _ => pos.push(a),
        }
    }
    (pos, kw)
}

/// Every binding of the names around `call`: the enclosing function's parametrize grid or benchmark
/// sweep, the values it is called with elsewhere in the file (`callers`, one level) and its defaults,
/// enclosing `for` loops, then the assignments before the call, in order.
fn envs(src: &Src, root: Node, call: Node, module: &Env, follow_callers: bool) -> Vec<Env> {
    let mut sets = vec![module.clone()];
    let scope = enclosing_defs(call).last().copied();
    if let Some(def) = scope {
        for d in decorators(def) {
            let Some(c) = named_children(d).next().map(unparen).filter(|c| c.kind() == "call") else {
                continue;
            };
            let name = callee(src, c);
            if name.ends_with("parametrize") {
                sets = cross(sets, parametrize(src, c, module));
            } else if name.ends_with("perf_report") {
                sets = cross(sets, benchmark(src, root, c, module));
            }
        }
        if follow_callers {
            sets = cross(sets, callers(src, root, def, module));
        }
        if let Some(ps) = field(def, "parameters") {
            for p in named_children(ps).filter(|p| matches!(p.kind(), "default_parameter" | "typed_default_parameter")) {
                if let (Some(n), Some(v)) = (field(p, "name"), field(p, "value")) {
                    for e in sets.iter_mut() {
                        if !e.contains_key(src.text(n)) {
                            let val = eval(src, v, e);
                            e.insert(src.text(n).to_string(), val);
                        }
                    }
                }
            }
        }
    }
    // enclosing loops, outermost first
    let mut loops = Vec::new();
    let mut cur = call.parent();
    while let Some(p) = cur {
        if Some(p) == scope {
            break;
        }
        if p.kind() == "for_statement" {
            loops.push(p);
        }
        cur = p.parent();
    }
    let body = scope.and_then(|d| field(d, "body")).unwrap_or(root);
    let assigns: Vec<Node> =
        scope_nodes(body).into_iter().filter(|n| n.kind() == "assignment" && n.end_byte() <= call.start_byte()).collect();
    // Assignments before a loop are read by its iterable (`base = torch.randn(...)` then
    // `for x in (base, base.t()):`), those inside it after the loop's target is bound.
    let mut applied = 0;
    let apply = |sets: &mut Vec<Env>, upto: usize, applied: &mut usize| {
        while *applied < assigns.len() && assigns[*applied].end_byte() <= upto {
            let a = assigns[*applied];
            *applied += 1;
            if scope.is_none() && a.parent().is_some_and(|s| s.parent() == Some(root)) {
                continue; // module-level: already in the module env
            }
            if let (Some(l), Some(r)) = (field(a, "left"), field(a, "right")) {
                for e in sets.iter_mut() {
                    let v = eval(src, r, e);
                    bind(src, l, v, e);
                }
            }
        }
    };
    for l in loops.into_iter().rev() {
        apply(&mut sets, l.start_byte(), &mut applied);
        let (Some(left), Some(right)) = (field(l, "left"), field(l, "right")) else {
            continue;
        };
        let mut next = Vec::new();
        for e in &sets {
            match eval(src, right, e) {
                Val::Seq(items) => {
                    for item in items {
                        let mut e2 = e.clone();
                        bind(src, left, item, &mut e2);
                        next.push(e2);
                    }
                }
                _ => next.push(e.clone()),
            }
        }
        next.truncate(MAX_ENVS);
        sets = next;
    }
    apply(&mut sets, call.start_byte(), &mut applied);
    sets
}

/// A test function called with its sizes from elsewhere in the file, as Triton's layer-norm tutorial
/// does (`test_layer_norm(1151, 8192, torch.float16)` under `__main__`): each call (under each binding
/// around it: a loop over sizes, say) binds the function's parameters, as a parametrize grid would.
fn callers(src: &Src, root: Node, def: Node, module: &Env) -> Vec<Env> {
    let Some(name) = field(def, "name").map(|n| src.text(n)) else {
        return Vec::new();
    };
    let params = super::entry::params(src, def);
    let mut out = Vec::new();
    for call in descendants(root).into_iter().filter(|n| n.kind() == "call" && callee(src, *n) == name) {
        let (Some(args), false) = (field(call, "arguments"), enclosing_defs(call).contains(&def)) else {
            continue;
        };
        for around in envs(src, root, call, module, false) {
            let values = bind_params(src, &params, args, &around);
            // A parameter the call leaves unknown keeps its default (bound after this).
            out.push(params.iter().zip(values).filter(|(_, v)| *v != Val::Unknown).map(|(p, v)| (p.name.clone(), v)).collect());
            if out.len() >= MAX_ENVS {
                return out;
            }
        }
    }
    out
}

fn cross(sets: Vec<Env>, with: Vec<Env>) -> Vec<Env> {
    if with.is_empty() {
        return sets;
    }
    let mut out = Vec::new();
    for a in &sets {
        for b in &with {
            let mut e = a.clone();
            e.extend(b.iter().map(|(k, v)| (k.clone(), v.clone())));
            out.push(e);
            if out.len() >= MAX_ENVS {
                return out;
            }
        }
    }
    out
}

/// `@pytest.mark.parametrize("M, N", [(1, 2), pytest.param(3, 4, marks=...)])`.
fn parametrize(src: &Src, c: Node, module: &Env) -> Vec<Env> {
    let a = call_args(src, c);
    let (Some(names), Some(values)) = (a.positional.first(), a.positional.get(1)) else {
        return Vec::new();
    };
    let names = match eval(src, *names, module) {
        Val::Str(s) => s.split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect::<Vec<_>>(),
        Val::Seq(items) => items.into_iter().filter_map(|v| if let Val::Str(s) = v { Some(s) } else { None }).collect(),
        _ => return Vec::new(),
    };
    let items: Vec<Val> = match unparen(*values).kind() {
        "list" | "tuple" => named_children(unparen(*values))
            .map(|item| {
                if item.kind() == "call" && callee(src, item).ends_with("param") {
                    Val::Seq(call_args(src, item).positional.iter().map(|p| eval(src, *p, module)).collect())
                } else {
                    eval(src, item, module)
                }
            })
            .collect(),
        _ => match eval(src, *values, module) {
            Val::Seq(items) => items,
            _ => return Vec::new(),
        },
    };
    items
        .into_iter()
        .map(|item| {
            let mut e = Env::new();
            if names.len() == 1 {
                e.insert(names[0].clone(), item);
            } else if let Val::Seq(vals) = item {
                for (n, v) in names.iter().zip(vals) {
                    e.insert(n.clone(), v);
                }
            }
            e
        })
        .collect()
}

/// `@triton.testing.perf_report(triton.testing.Benchmark(x_names=[...], x_vals=[...], args={...}))`,
/// also a list of Benchmarks or a module-level name bound to either.
fn benchmark(src: &Src, root: Node, c: Node, module: &Env) -> Vec<Env> {
    let Some(arg) = call_args(src, c).positional.first().copied() else {
        return Vec::new();
    };
    let mut arg = unparen(arg);
    if arg.kind() == "identifier" {
        let name = src.text(arg);
        let def = named_children(root)
            .filter_map(|s| named_children(s).next())
            .filter(|a| a.kind() == "assignment")
            .find(|a| field(*a, "left").is_some_and(|l| src.text(l) == name));
        match def.and_then(|a| field(a, "right")) {
            Some(r) => arg = unparen(r),
            None => return Vec::new(),
        }
    }
    let benches: Vec<Node> = match arg.kind() {
        "call" => vec![arg],
        "list" | "tuple" => named_children(arg).filter(|n| n.kind() == "call").collect(),
        "list_comprehension" => named_children(arg).take(1).filter(|n| n.kind() == "call").collect(),
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    for b in benches {
        let a = call_args(src, b);
        let names: Vec<String> = match a.keyword("x_names").map(|n| eval(src, n, module)) {
            Some(Val::Seq(items)) => items.into_iter().filter_map(|v| if let Val::Str(s) = v { Some(s) } else { None }).collect(),
            _ => continue,
        };
        let Some(Val::Seq(vals)) = a.keyword("x_vals").map(|n| eval(src, n, module)) else {
            continue;
        };
        let mut fixed = Env::new();
        if let Some(d) = a.keyword("args").map(unparen).filter(|d| d.kind() == "dictionary") {
            for pair in named_children(d).filter(|p| p.kind() == "pair") {
                if let (Some(k), Some(v)) = (field(pair, "key"), field(pair, "value"))
                    && let Val::Str(k) = eval(src, k, module)
                {
                    fixed.insert(k, eval(src, v, module));
                }
            }
        }
        for v in vals {
            let mut e = fixed.clone();
            match v {
                Val::Seq(items) if items.len() == names.len() => {
                    for (n, x) in names.iter().zip(items) {
                        e.insert(n.clone(), x);
                    }
                }
                x => {
                    for n in &names {
                        e.insert(n.clone(), x.clone());
                    }
                }
            }
            out.push(e);
        }
    }
    out
}
