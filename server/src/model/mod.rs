//! The Triton model of a file (kernels, configs, launches, tl ops, constants).
//!
//! `build` walks the tree once for the nodes `queries/*.scm` describe, resolves imports, evaluates module
//! constants, then builds kernels, aliases/functional autotunes and launches in that order.
//! Files without the substring "triton" take a fast path and yield an empty model.

mod collect;
mod config;
mod cx;
mod display;
mod env;
mod eval;
mod imports;
mod kernel;
mod launch;
mod ops;
mod reflect;
mod reuse;
pub mod shift;
mod suppressions;
mod types;

pub use display::shape_string;
pub use env::{BindingSet, MAX_BINDING_SETS, binding_sets, binding_sets_with};
pub use eval::{canonical_dtype, parse_int};
pub use reuse::Reuse;
pub use types::*;

use crate::syntax;
use crate::syntax::flat::{FlatTree, Node, named_children, node_text, range};
use crate::text::LineIndex;
use crate::timings::{self, Phase};
use cx::{Cx, unparen};
use std::collections::{HashMap, HashSet};
use tree_sitter::Tree;

/// Whether `text` can hold a kernel at all. A kernel is a function decorated with a name that
/// resolves to `triton.jit`, so both words appear in the source (in the decorator or in the import
/// that binds it); a file without them is skipped unparsed.
pub fn may_have_kernels(text: &str) -> bool {
    text.contains("triton") && text.contains("jit")
}

/// The flat tree of `text` from the direct parser, when it is sure of the text (then the tree is
/// tree-sitter's and free of errors).
fn parse_direct(text: &str) -> Option<FlatTree> {
    let _t = timings::span(Phase::Parse);
    let flat = syntax::direct::parse(text);
    if flat.is_some() {
        timings::parsed(text.len());
    }
    flat
}

/// Parses and builds in one go.
pub fn build_text(text: &str) -> FileModel {
    if !may_have_kernels(text) {
        return FileModel::default();
    }
    if let Some(flat) = parse_direct(text) {
        let _t = timings::span(Phase::Model);
        return build_flat(text, &flat, FileModel::default(), None).0;
    }
    let tree = {
        let _t = timings::span(Phase::Parse);
        timings::parsed(text.len());
        syntax::parse(text)
    };
    let model = build(text, &tree);
    let _t = timings::span(Phase::Drop);
    drop(tree);
    model
}

/// The model of a file that another file imports from: [`build_text`] when it may hold kernels,
/// else its imports alone (an `__init__.py` that re-exports a helper names neither word).
pub fn build_module(text: &str) -> FileModel {
    if may_have_kernels(text) {
        return build_text(text);
    }
    let mut model = FileModel::default();
    if !text.contains("import") {
        return model;
    }
    let flat = match parse_direct(text) {
        Some(flat) => flat,
        None => {
            let tree = {
                let _t = timings::span(Phase::Parse);
                timings::parsed(text.len());
                syntax::parse(text)
            };
            let flat = {
                let _t = timings::span(Phase::Flat);
                FlatTree::reusing(&tree, text, None)
            };
            let _t = timings::span(Phase::Drop);
            drop(tree);
            flat
        }
    };
    let _t = timings::span(Phase::Model);
    let found = collect::collect(text, &flat);
    let mut shadowed = HashSet::new();
    for stmt in &found.imports {
        imports::collect(text, *stmt, &mut model.imports, &mut shadowed);
    }
    model
}

/// Builds the model of `text` from its tree (which must have been parsed from `text`).
pub fn build(text: &str, tree: &Tree) -> FileModel {
    build_reusing(text, tree, None).0
}

/// [`build`], reusing from `prev` (what an earlier build of `prev_text` returned) the syntax of
/// unchanged statements and the kernels they define; also returns this build's for the next one.
pub fn build_reusing(text: &str, tree: &Tree, prev: Option<(&Reuse, &str)>) -> (FileModel, Option<Reuse>) {
    if !may_have_kernels(text) {
        return (FileModel::default(), None);
    }
    let mut model = FileModel::default();
    let root = tree.root_node();
    if root.end_byte() > text.len() {
        // A tree from another version of the text: ranges would not fit.
        return (model, None);
    }
    let model_time = timings::span(Phase::Model);
    model.syntax_errors = syntax::error_ranges(tree);
    model.has_syntax_errors = !model.syntax_errors.is_empty();
    drop(model_time);
    let flat = {
        let _t = timings::span(Phase::Flat);
        FlatTree::reusing(tree, text, prev.map(|(r, t)| (&r.flat, t)))
    };
    let _t = timings::span(Phase::Model);
    let (model, kernels, launches) = build_flat(text, &flat, model, prev.map(|(r, t)| (&r.kernels, &r.launches, t)));
    (model, Some(Reuse { flat, kernels, launches }))
}

fn build_flat(
    text: &str,
    flat: &FlatTree,
    mut model: FileModel,
    prev: Option<(&reuse::KernelCache, &reuse::LaunchCache, &str)>,
) -> (FileModel, reuse::KernelCache, reuse::LaunchCache) {
    let root = flat.root_node();
    let found = collect::collect(text, flat);

    let mut imports = Imports::default();
    let mut shadowed = HashSet::new();
    for stmt in &found.imports {
        imports::collect(text, *stmt, &mut imports, &mut shadowed);
    }
    let mut cx = Cx::new(text, imports, shadowed);
    for m in &found.mutations {
        cx.mutated.insert(node_text(text, *m).to_string());
    }
    for call in &found.calls {
        if let Some(name) = mutated_name(text, *call) {
            cx.mutated.insert(name.to_string());
        }
    }
    for (left, _) in &found.assignments {
        if left.kind() == "subscript"
            && let Some(obj) = left.field("value").filter(|v| v.kind() == "identifier")
        {
            cx.mutated.insert(node_text(text, obj).to_string());
        }
    }
    module_level(&mut cx, root);

    let mut kernels = Vec::new();
    let mut sites = Vec::new();
    let mut cache = reuse::KernelCache::new(&cx);
    let prev = prev.filter(|(c, _, _)| c.compatible(&cx));
    for d in &found.decorated {
        let top = reusable_statement(*d);
        if top
            && let Some((c, _, prev_text)) = prev
            && let Some((k, facts, was)) = c.reuse(prev_text, text, range(*d), &cx)
        {
            cache.insert(text, range(*d), k.clone(), facts);
            if let Some(was) = was {
                cache.note_moved(&k, &was);
            }
            cache.reused += 1;
            kernels.push(k);
            sites.push(kernel::KernelSite { scope: None, made: None });
            continue;
        }
        if top {
            cx.record_facts();
        }
        let built = kernel::build(&cx, *d);
        let facts = cx.take_facts();
        if let Some((k, site)) = built {
            let k = std::sync::Arc::new(k);
            if let Some(facts) = facts {
                cache.insert(text, range(*d), k.clone(), facts);
            }
            kernels.push(k);
            sites.push(site);
        }
    }

    // Kernels made by an assignment (`add = triton.jit(_add_impl)`): built afresh each time, since
    // two statements make one and the cache keeps what one statement builds. Then all in document order.
    let made: Vec<_> = found.assignments.iter().filter_map(|(left, right)| kernel::build_made(&cx, *left, *right)).collect();
    if !made.is_empty() {
        for (k, site) in made {
            kernels.push(std::sync::Arc::new(k));
            sites.push(site);
        }
        let mut both: Vec<_> = kernels.into_iter().zip(sites).collect();
        both.sort_by_key(|(k, _)| k.range.start);
        (kernels, sites) = both.into_iter().unzip();
    }

    // Aliases and tuners first (document order), then functional autotune/heuristics.
    let mut launch_cache = reuse::LaunchCache::default();
    let mut attach: Vec<(usize, Node)> = Vec::new();
    let mut heur: Vec<(usize, Heuristics)> = Vec::new();
    let launches = {
        let mut res = launch::Resolver::new(&cx, &kernels, &sites);
        for (left, right) in &found.assignments {
            res.assignment(*left, *right);
        }
        for call in &found.calls {
            if let Some((k, tuner)) = res.functional_autotune(*call) {
                attach.push((k, tuner));
            }
            if let Some(h) = functional_heuristics(&cx, &res, *call) {
                heur.push(h);
            }
        }
        launches_by_statement(text, &cx, &res, &found.calls, prev.map(|(_, l, t)| (l, t)), &mut launch_cache)
    };
    for (k, tuner) in attach {
        if let Some(kernel) = kernels.get_mut(k) {
            launch::attach_autotune(&cx, std::sync::Arc::make_mut(kernel), tuner);
        }
    }
    for (k, h) in heur {
        if let Some(kernel) = kernels.get_mut(k)
            && !kernel.heuristics.iter().any(|x| x.range == h.range)
        {
            std::sync::Arc::make_mut(kernel).heuristics.push(h);
        }
    }
    // `tl.dot` in a `@triton.jit` helper counts for every kernel that calls it (recomputed on every
    // build: a reused kernel's helper may have changed).
    for (k, via) in types::dot_in_callees(&kernels).into_iter().enumerate() {
        if kernels[k].dot_in_callees != via {
            std::sync::Arc::make_mut(&mut kernels[k]).dot_in_callees = via;
        }
    }
    model.kernels = kernels;
    model.launches = launches;

    if !found.suppressions.is_empty() {
        let lines = LineIndex::new(text);
        model.suppressions =
            found.suppressions.iter().filter_map(|c| suppressions::parse(node_text(text, *c), range(*c), &lines)).collect();
    }
    let computed: Vec<(Node, Node)> = found
        .obfuscations
        .iter()
        .filter(|(call, func)| !(node_text(text, *func) == "getattr" && getattr_is_literal(text, *call)))
        .copied()
        .collect();
    model.obfuscated_calls = reflect::reaching(&cx, text, &computed, &found.assignments, &found.calls)
        .into_iter()
        .map(|(call, func)| ObfuscatedCall { func: node_text(text, func).to_string(), range: range(call) })
        .collect();
    model.obfuscated_calls.dedup_by(|a, b| a.range == b.range);
    model.constants = std::mem::take(&mut cx.constants);
    model.imports = cx.imports;
    (model, cache, launch_cache)
}

/// The launches among `calls` (document order), built per top-level statement, or taken from
/// `prev` for a statement whose launches still resolve as before (see `reuse::LaunchCache`).
fn launches_by_statement<'t>(
    text: &str,
    cx: &Cx<'t>,
    res: &launch::Resolver<'_, 't>,
    calls: &[Node<'t>],
    prev: Option<(&reuse::LaunchCache, &str)>,
    out_cache: &mut reuse::LaunchCache,
) -> Vec<Launch> {
    let target = |c: Node<'t>| res.launch_target(c).map(|(t, _)| t);
    let params = |k: usize| res.kernels.get(k).map(|k| k.params.iter().map(|p| p.name.clone()).collect::<Vec<_>>());
    let subs: Vec<Node<'t>> = calls.iter().copied().filter(|c| target(*c).is_some()).collect();
    let mut launches = Vec::new();
    let mut i = 0;
    while i < subs.len() {
        let top = top_statement(subs[i]);
        let mut j = i + 1;
        while j < subs.len() && top_statement(subs[j]) == top {
            j += 1;
        }
        let group = &subs[i..j];
        i = j;
        let at = range(top);
        let cacheable = reusable_statement(top);
        if cacheable
            && let Some((cache, prev_text)) = prev
            && let Some(hit) = cache.reuse(prev_text, text, at, cx)
        {
            let now: Vec<Option<usize>> = group.iter().map(|c| target(*c).and_then(|t| res.kernel_of(t, 0))).collect();
            let records = &hit.calls;
            if records.len() == group.len()
                && records.iter().zip(&now).all(|(r, k)| r.same_target(k.and_then(|k| res.kernels.get(k)).map(|k| &**k)))
            {
                for ((r, k), c) in records.iter().zip(&now).zip(group) {
                    if let (Some(l), Some(k)) = (&r.launch, k) {
                        let mut l = l.clone();
                        l.kernel = *k;
                        l.via_fn = target(*c).is_some_and(|t| res.is_fn_of_kernel(t));
                        l.via_tuner = target(*c).is_some_and(|t| res.is_tuned(t));
                        launches.push(l);
                    }
                }
                out_cache.keep(text, hit);
                continue;
            }
        }
        if cacheable {
            cx.record_facts();
        }
        let records: Vec<reuse::CallRecord> = group
            .iter()
            .map(|c| {
                let launch = res.launch(*c);
                reuse::CallRecord { params: launch.as_ref().and_then(|l| params(l.kernel)), launch }
            })
            .collect();
        let facts = cx.take_facts();
        launches.extend(records.iter().filter_map(|r| r.launch.clone()));
        if let Some(facts) = facts {
            out_cache.insert(text, at, facts, records);
        }
    }
    launches
}

/// Whether what is built from `node` may be kept for the next version: only top-level, error-free
/// statements, whose build reads nothing outside them but the module-level facts it records.
fn reusable_statement(node: Node) -> bool {
    !node.has_error() && node.parent().is_some_and(|p| p.parent().is_none())
}

/// The top-level statement holding `node` (the root's child on its path).
fn top_statement(node: Node) -> Node {
    let mut cur = node;
    while let Some(p) = cur.parent() {
        if p.parent().is_none() {
            return cur;
        }
        cur = p;
    }
    cur
}

/// `x.append(...)`-style calls mutate `x`.
fn mutated_name<'t>(text: &'t str, call: Node) -> Option<&'t str> {
    let func = call.field("function")?;
    if func.kind() != "attribute" {
        return None;
    }
    let attr = node_text(text, func.field("attribute")?);
    let obj = func.field("object")?;
    (obj.kind() == "identifier"
        && matches!(attr, "append" | "extend" | "insert" | "update" | "pop" | "remove" | "clear" | "setdefault" | "__setitem__"))
    .then(|| node_text(text, obj))
}

fn getattr_is_literal(text: &str, call: Node) -> bool {
    call.field("arguments").and_then(|a| named_children(a).nth(1)).is_some_and(|n| eval::string_value(text, unparen(n)).is_some())
}

/// Module-level names: constants (assigned once, statically known), single-assignment values
/// (lists and comprehensions for config expansion) and function definitions.
fn module_level<'t>(cx: &mut Cx<'t>, root: Node<'t>) {
    let mut assigns: Vec<(Node<'t>, Node<'t>, Node<'t>)> = Vec::new(); // (statement, name, rhs)
    let mut counts: HashMap<&'t str, usize> = HashMap::new();
    let mut stack: Vec<Node<'t>> = vec![root];
    while let Some(n) = stack.pop() {
        for s in named_children(n) {
            match s.kind() {
                "expression_statement" => {
                    for a in named_children(s) {
                        if a.kind() == "assignment" {
                            count_targets(cx.text, a, &mut counts);
                            if let (Some(l), Some(r)) = (a.field("left"), a.field("right"))
                                && l.kind() == "identifier"
                            {
                                assigns.push((a, l, r));
                            }
                        } else if a.kind() == "augmented_assignment"
                            && let Some(l) = a.field("left")
                        {
                            *counts.entry(node_text(cx.text, l)).or_default() += 2;
                        }
                    }
                }
                "function_definition" => {
                    if let Some(name) = s.field("name") {
                        let name = node_text(cx.text, name);
                        *counts.entry(name).or_default() += 1;
                        cx.module_functions.insert(name.to_string(), s);
                    }
                }
                "decorated_definition" => {
                    if let Some(def) = s.field("definition")
                        && let Some(name) = def.field("name")
                    {
                        *counts.entry(node_text(cx.text, name)).or_default() += 1;
                    }
                }
                k if crate::syntax::is_guard(k) => stack.push(s),
                "for_statement" | "while_statement" => {
                    if let Some(left) = s.field("left") {
                        *counts.entry(node_text(cx.text, left)).or_default() += 2;
                    }
                    stack.push(s);
                }
                _ => {}
            }
        }
    }
    // A function defined twice (if/else variants) is not a reliable config helper.
    cx.module_functions.retain(|name, _| counts.get(name.as_str()).copied().unwrap_or(0) <= 1);
    assigns.sort_by_key(|(a, _, _)| a.start_byte());
    for (stmt, name_node, rhs) in assigns {
        let name = node_text(cx.text, name_node);
        if counts.get(name).copied().unwrap_or(0) != 1 || cx.mutated.contains(name) {
            continue;
        }
        cx.module_values.insert(name.to_string(), rhs);
        let (value, r) = cx.value_of(rhs, &[]);
        if !value.is_unknown() {
            cx.add_constant(Binding { name: name.to_string(), value, range: r, site: range(stmt), key_range: range(name_node) });
        }
    }
}

fn count_targets<'t>(text: &'t str, assignment: Node<'t>, counts: &mut HashMap<&'t str, usize>) {
    let Some(left) = assignment.field("left") else { return };
    let mut stack = vec![left];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "identifier" => *counts.entry(node_text(text, n)).or_default() += 1,
            "pattern_list" | "tuple_pattern" | "list_pattern" | "parenthesized_expression" | "list_splat_pattern" => {
                stack.extend(named_children(n))
            }
            _ => {}
        }
    }
    // `a = b = 1` chains: the right side may itself be an assignment.
    if let Some(r) = assignment.field("right")
        && r.kind() == "assignment"
    {
        count_targets(text, r, counts);
    }
}

/// `triton.heuristics({...})(k)`.
fn functional_heuristics<'t>(cx: &Cx<'t>, res: &launch::Resolver<'_, 't>, call: Node<'t>) -> Option<(usize, Heuristics)> {
    let func = unparen(call.field("function")?);
    if func.kind() != "call" || func.field("function").and_then(|f| cx.canonical(f)).as_deref() != Some("triton.heuristics") {
        return None;
    }
    let first = named_children(call.field("arguments")?).next()?;
    let k = res.kernel_of(first, 0)?;
    Some((k, Heuristics { range: range(func), names: config::heuristic_names(cx, func) }))
}
