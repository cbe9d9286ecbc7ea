//! What a launch passes for the names an autotune config sets. Launches are written the way people
//! write them: `BLOCK=1024`, a tile passed by position (`k[grid](x, y, n, 512)`), a host name bound
//! once to a literal (`BLOCK_S = 32` … `BLOCK_S=BLOCK_S`; `BM, BN = 64, 64`; a parameter default
//! `block=BLOCK` with a module constant `BLOCK = 512`; `self.block = 256` in `__init__`), or nothing
//! at all (the kernel's `BLOCK: tl.constexpr = 1024`). A value computed at run time
//! (`triton.next_power_of_2(n)`, a name assigned on several paths) is not a literal: it stays at the
//! launch and is not tuned.

use super::space::ConfigValue;
use crate::cover::outline::{Arg, Function, LaunchSite, slice};
use crate::syntax::{named_children, node_text};
use crate::text::TextRange;
use std::collections::BTreeSet;
use tree_sitter::Node;

/// One launch argument that a config may set.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// The kernel parameter (or launch option: `num_warps`, `num_stages`, `grf_mode`, ...).
    pub name: String,
    pub value: ConfigValue,
    /// The host name the value was read through: its uses in the launch's grid are this tile.
    pub via: Option<String>,
    /// Passed by position (index into the launch's arguments), not by keyword.
    pub positional: Option<usize>,
    /// The wrapper chooses among several literals on its paths (`if M >= 1024: BM = 128 else: BM = 64`):
    /// `value` is the first written, and a config replaces the choice with one value.
    pub chosen: bool,
}

/// Launch options every config carries (`num_warps`, `num_stages`) or may carry (backend options).
pub const COUNTS: &[&str] = &["num_warps", "num_stages"];
pub const OPTIONS: &[&str] = &["grf_mode", "warp_size", "threads_per_warp"];

/// Names that only say how a kernel runs (tiles, groups, splits, warps, stages, backend options),
/// as opposed to switches that say what it computes (`ACTIVATION`, `HAS_BIAS`).
pub fn is_tuning_knob(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    COUNTS.contains(&name)
        || OPTIONS.contains(&name)
        || ["BLOCK", "TILE", "GROUP", "SPLIT", "WARPS", "STAGES"].iter().any(|k| up.contains(k))
        || (up.len() == 2 && up.starts_with('B'))
}

/// The arguments of `launch` a config may set: literal `num_warps`/`num_stages`, integer constexpr
/// parameters, backend options; each as a literal, or a host name bound once to one. `sites` are
/// every launch of the kernel: a host name the wrapper also reads elsewhere (to size a buffer of
/// partial results, say) ties the tile to host code, and is left at the launch.
pub fn bindings(text: &str, root: Node, kernel: &Function, launch: &LaunchSite, sites: &[TextRange]) -> Vec<Bound> {
    let constexpr = |n: &str| kernel.params.iter().any(|p| p.name == n && p.annotation.as_deref().is_some_and(|a| a.contains("constexpr")));
    let mut out = Vec::new();
    let (args, splat) = passed(text, kernel, launch);
    // Every parameter the launch passes, literal or not.
    let filled: Vec<&str> = args.iter().map(|(name, _, _)| name.as_str()).collect();
    for (name, positional, a) in &args {
        let (name, positional) = (name.clone(), *positional);
        let text_of = slice(text, a.value).trim();
        let at = launch.range.start;
        let (value, via, chosen) = match literal(text_of) {
            Some(v) => (v, None, false),
            None if is_name(text_of) => {
                let (v, chosen) = match resolve(text, root, at, text_of) {
                    Some(v) => (v, false),
                    None => match chosen_literal(text, root, at, text_of) {
                        Some(v) => (v, true),
                        None => continue,
                    },
                };
                if read_elsewhere(text, root, launch, sites, text_of) {
                    continue;
                }
                (v, Some(text_of.to_string()), chosen)
            }
            None if self_attribute(text_of).is_some() => match resolve_self(text, root, at, text_of) {
                Some(v) if !read_elsewhere(text, root, launch, sites, text_of) => (v, Some(text_of.to_string()), false),
                _ => continue,
            },
            // `num_warps=cfg["num_warps"]`: warps and stages only, as no grid reads them (a tile read
            // so would be read so by the grid too, which names no host variable to follow).
            None if COUNTS.contains(&name.as_str()) => {
                let mut scopes = vec![root];
                scopes.extend(around(root, at, "function_definition"));
                match root.descendant_for_byte_range(a.value.start, a.value.end).and_then(|n| value_of(text, &scopes, at, n, 0)) {
                    Some(v) => (v, None, false),
                    None => continue,
                }
            }
            None => continue,
        };
        let wanted = match (name.as_str(), &value) {
            (n, ConfigValue::Int(v)) if COUNTS.contains(&n) => *v > 0,
            (n, ConfigValue::Int(_)) if constexpr(n) => true,
            (n, _) => OPTIONS.contains(&n),
        };
        if wanted {
            out.push(Bound { name, value, via, positional, chosen });
        }
    }
    // A tile the launch leaves to the kernel's own default (`BLOCK: tl.constexpr = 1024`).
    for p in &kernel.params {
        if filled.contains(&p.name.as_str()) || !constexpr(&p.name) || !is_tuning_knob(&p.name) || splat {
            continue;
        }
        if let Some(v @ ConfigValue::Int(_)) = p.default.as_deref().and_then(literal) {
            out.push(Bound { name: p.name.clone(), value: v, via: None, positional: None, chosen: false });
        }
    }
    out
}

/// The kernel parameter each argument of `launch` fills, with its position when passed by position,
/// and whether the launch splats (`*args`, `**kw`): after one, a position no longer says which
/// parameter it is, so later positional arguments are left out.
pub fn passed<'l>(text: &str, kernel: &Function, launch: &'l LaunchSite) -> (Vec<(String, Option<usize>, &'l Arg)>, bool) {
    let mut splat = false;
    let mut out = Vec::new();
    for (i, a) in launch.args.iter().enumerate() {
        match &a.name {
            Some(n) => out.push((n.clone(), None, a)),
            None => {
                splat |= slice(text, a.range).trim_start().starts_with('*');
                if let Some(p) = kernel.params.get(i).filter(|_| !splat) {
                    out.push((p.name.clone(), Some(i), a));
                }
            }
        }
    }
    (out, splat)
}

/// Python literal → value: ints (`1024`, `1_024`, `1 << 10`, `2 ** 10`), strings, bools.
pub fn literal(s: &str) -> Option<ConfigValue> {
    let t = s.trim();
    if let Ok(i) = t.replace('_', "").parse::<i64>() {
        return Some(ConfigValue::Int(i));
    }
    for (op, f) in [
        ("<<", (|a: i64, b: i64| a.checked_shl(b as u32)) as fn(i64, i64) -> Option<i64>),
        ("**", |a: i64, b: i64| a.checked_pow(b as u32)),
    ] {
        if let Some((a, b)) = t.split_once(op) {
            let (a, b) = (a.trim().parse::<i64>().ok()?, b.trim().parse::<i64>().ok()?);
            return (0..=62).contains(&b).then(|| f(a, b)).flatten().map(ConfigValue::Int);
        }
    }
    if t.len() >= 2 && ((t.starts_with('\'') && t.ends_with('\'')) || (t.starts_with('"') && t.ends_with('"'))) {
        return Some(ConfigValue::Str(t[1..t.len() - 1].to_string()));
    }
    match t {
        "True" => Some(ConfigValue::Bool(true)),
        "False" => Some(ConfigValue::Bool(false)),
        _ => None,
    }
}

/// `self.block` → `block`.
fn self_attribute(s: &str) -> Option<&str> {
    s.strip_prefix("self.").filter(|a| is_name(a))
}

/// The literal `attr` (`self.NAME`) holds in a method: the class around `at` assigns it once,
/// `self.NAME = literal` (in `__init__`, say), and nowhere else.
fn resolve_self(text: &str, root: Node, at: usize, attr: &str) -> Option<ConfigValue> {
    let class = around(root, at, "class_definition").pop()?;
    let mut stores = Vec::new();
    let mut stack = vec![class.child_by_field_name("body")?];
    while let Some(n) = stack.pop() {
        let target = match n.kind() {
            "assignment" | "augmented_assignment" => n.child_by_field_name("left"),
            _ => None,
        };
        if let Some(t) = target {
            let mut names = vec![t];
            if matches!(t.kind(), "pattern_list" | "tuple_pattern") {
                names = named_children(t).collect();
            }
            if names.iter().any(|x| node_text(text, *x).trim() == attr) {
                stores.push(n);
            }
        }
        stack.extend(named_children(n));
    }
    match stores.as_slice() {
        [only] if only.kind() == "assignment" && only.child_by_field_name("left").is_some_and(|l| l.kind() == "attribute") => {
            literal(node_text(text, only.child_by_field_name("right")?))
        }
        _ => None,
    }
}

/// Whether the function around `launch` reads `name` anywhere but in a launch of the kernel and in
/// the definition of the launch's grid (`grid = ...`, `def grid(meta)`).
fn read_elsewhere(text: &str, root: Node, launch: &LaunchSite, sites: &[TextRange], name: &str) -> bool {
    first_read_elsewhere(text, root, launch, sites, name).is_some()
}

/// Where the function around `launch` first reads `name` outside its launches and the grid's own
/// definition (a byte offset): what ties the tile to host code, for the stage's note.
pub fn first_read_elsewhere(text: &str, root: Node, launch: &LaunchSite, sites: &[TextRange], name: &str) -> Option<usize> {
    // A module-level launch: nothing around it sizes host buffers by the tile.
    let scope = around(root, launch.range.start, "function_definition").pop()?;
    let grid = slice(text, launch.grid).trim();
    let mut allowed: Vec<TextRange> = sites.to_vec();
    allowed.push(launch.range);
    let mut stack = vec![scope];
    let mut reads = Vec::new();
    while let Some(n) = stack.pop() {
        let defines_grid = match n.kind() {
            "assignment" => n.child_by_field_name("left").is_some_and(|l| node_text(text, l) == grid),
            "function_definition" => n != scope && n.child_by_field_name("name").is_some_and(|x| node_text(text, x) == grid),
            _ => false,
        };
        if defines_grid {
            allowed.push(crate::syntax::range(n));
            continue;
        }
        let read = match n.kind() {
            "identifier" => node_text(text, n) == name && !is_store(n) && !is_field(n),
            // `self.block`: any use but an assignment to it
            "attribute" => {
                node_text(text, n) == name
                    && !n.parent().is_some_and(|p| p.kind() == "assignment" && p.child_by_field_name("left") == Some(n))
            }
            _ => false,
        };
        if read {
            reads.push(n.start_byte());
        }
        stack.extend(named_children(n));
    }
    reads.into_iter().filter(|&at| !allowed.iter().any(|r| r.start <= at && at < r.end)).min()
}

/// A name that is not read as a value: an attribute's field, a keyword, a parameter's or a
/// definition's own name.
pub(super) fn is_field(id: Node) -> bool {
    id.parent().is_some_and(|p| match p.kind() {
        "attribute" => p.child_by_field_name("attribute") == Some(id),
        "keyword_argument" => p.child_by_field_name("name") == Some(id),
        "function_definition" | "class_definition" | "parameters" | "lambda_parameters" | "typed_parameter" => true,
        "default_parameter" | "typed_default_parameter" => p.child_by_field_name("name") == Some(id),
        _ => false,
    })
}

/// The nodes of `kind` that contain byte `at`, outermost first.
pub(super) fn around<'a>(root: Node<'a>, at: usize, kind: &str) -> Vec<Node<'a>> {
    let mut out = Vec::new();
    let mut n = root;
    while let Some(inner) = named_children(n).find(|c| c.start_byte() <= at && at < c.end_byte()) {
        if inner.kind() == kind {
            out.push(inner);
        }
        n = inner;
    }
    out
}

pub(super) fn is_name(s: &str) -> bool {
    !s.is_empty() && !s.starts_with(|c: char| c.is_ascii_digit()) && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The literal `name` holds at byte `at`: the scopes around `at` from the innermost function out to
/// the module; the first that binds `name` decides. A parameter's default is read in the scope
/// around its function; any binding but one plain `name = literal` (before `at`, in a function) is
/// not a literal.
fn resolve(text: &str, root: Node, at: usize, name: &str) -> Option<ConfigValue> {
    let mut scopes = vec![root];
    scopes.extend(around(root, at, "function_definition"));
    resolve_in(text, &scopes, at, name, 0)
}

fn resolve_in(text: &str, scopes: &[Node], at: usize, name: &str, depth: usize) -> Option<ConfigValue> {
    let (value, keep, at) = binding_in(text, scopes, at, name, depth)?;
    value_of(text, &scopes[..keep], at, value, depth + 1)
}

/// The expression `name` is bound to at byte `at` (see [`resolve`]): its node, how many of `scopes`
/// are in view where it stands, and where it stands.
fn binding_in<'a>(text: &str, scopes: &[Node<'a>], at: usize, name: &str, depth: usize) -> Option<(Node<'a>, usize, usize)> {
    let (scope, outer) = scopes.split_last()?;
    if depth > 8 {
        return None;
    }
    let is_module = outer.is_empty();
    if !is_module && let Some(p) = parameter(text, *scope, name) {
        // A parameter: its default, read where the `def` stands; none means the caller decides.
        return Some((p.child_by_field_name("value")?, outer.len(), scope.start_byte()));
    }
    let body = if is_module { *scope } else { scope.child_by_field_name("body")? };
    let mut stores = Vec::new();
    stores_of(text, body, name, &mut stores);
    match stores.as_slice() {
        [] => binding_in(text, outer, scope.start_byte(), name, depth + 1),
        [only] => {
            // `name = value`, or `A, name = a, value` (the value at the same place).
            let (assign, right) = match only.parent() {
                Some(p) if p.kind() == "assignment" && p.child_by_field_name("left") == Some(*only) => (p, p.child_by_field_name("right")?),
                Some(p) if matches!(p.kind(), "pattern_list" | "tuple_pattern") => {
                    let assign = p.parent().filter(|a| a.kind() == "assignment" && a.child_by_field_name("left") == Some(p))?;
                    let mut values = assign.child_by_field_name("right")?;
                    if values.kind() == "parenthesized_expression" {
                        values = named_children(values).next()?;
                    }
                    let names: Vec<Node> = named_children(p).collect();
                    let items: Vec<Node> = named_children(values).collect();
                    if !matches!(values.kind(), "expression_list" | "tuple") || names.len() != items.len() {
                        return None;
                    }
                    (assign, items[names.iter().position(|n| n == only)?])
                }
                _ => return None,
            };
            if !is_module && assign.end_byte() > at {
                return None; // assigned after the launch: the launch reads an outer or unbound name
            }
            Some((right, scopes.len(), assign.start_byte()))
        }
        _ => None,
    }
}

/// The parameter of the function `def` named `name` (plain, with a default, annotated).
fn parameter<'a>(text: &str, def: Node<'a>, name: &str) -> Option<Node<'a>> {
    named_children(def.child_by_field_name("parameters")?).find(|p| {
        let own = if p.kind() == "identifier" { Some(*p) } else { p.child_by_field_name("name").or_else(|| named_children(*p).next()) };
        own.is_some_and(|o| node_text(text, o) == name)
    })
}

/// The literal an expression holds: a literal, a name bound to one, or an entry of a dict of
/// literals that nothing changes (`cfg = {"BM": 64, ...}` … `BM = cfg["BM"]`).
fn value_of(text: &str, scopes: &[Node], at: usize, node: Node, depth: usize) -> Option<ConfigValue> {
    let r = node_text(text, node).trim();
    if let Some(v) = literal(r) {
        return Some(v);
    }
    if is_name(r) {
        return resolve_in(text, scopes, at, r, depth + 1);
    }
    if node.kind() != "subscript" {
        return None;
    }
    let (dict, key) = (node.child_by_field_name("value")?, node.child_by_field_name("subscript")?);
    let (dict, key) = (node_text(text, dict), literal(node_text(text, key))?);
    if !is_name(dict) || mutated(text, *scopes.first()?, dict) {
        return None;
    }
    let (entries, keep, at) = binding_in(text, scopes, at, dict, depth + 1)?;
    if entries.kind() != "dictionary" {
        return None;
    }
    let entry = named_children(entries)
        .filter(|p| p.kind() == "pair")
        .find(|p| p.child_by_field_name("key").and_then(|k| literal(node_text(text, k))).as_ref() == Some(&key))?;
    value_of(text, &scopes[..keep], at, entry.child_by_field_name("value")?, depth + 1)
}

/// Whether anything in the file may change the dict `name` after it is built: an item stored or
/// deleted, a method that changes it, or the dict handed to a call (which may change it).
fn mutated(text: &str, root: Node, name: &str) -> bool {
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        stack.extend(named_children(n));
        if n.kind() != "identifier" || node_text(text, n) != name {
            continue;
        }
        let Some(p) = n.parent() else { continue };
        let changed = match p.kind() {
            // `cfg["BM"] = 128`, `del cfg["BM"]`, `cfg["BM"] += 1`
            "subscript" => item_written(p),
            // `cfg.update(...)`, `cfg.pop("BM")`
            "attribute" => {
                p.child_by_field_name("object") == Some(n)
                    && p.child_by_field_name("attribute").is_some_and(|a| {
                        matches!(node_text(text, a), "update" | "pop" | "popitem" | "setdefault" | "clear" | "__setitem__" | "__delitem__")
                    })
            }
            // `tweak(cfg)`: a callee may change it (`**cfg` copies it and is no such hand-over)
            "argument_list" => true,
            _ => false,
        };
        if changed {
            return true;
        }
    }
    false
}

/// `cfg["K"] = ...`, `cfg["K"] += 1`, `del cfg["K"]`: an item written, not read.
pub(super) fn item_written(subscript: Node) -> bool {
    subscript.parent().is_some_and(|g| match g.kind() {
        "assignment" | "augmented_assignment" => g.child_by_field_name("left") == Some(subscript),
        "delete_statement" => true,
        _ => false,
    })
}

/// The first of the integers a local of the launch's function is chosen among, where every binding
/// of it before the launch is `NAME = <int>` or `NAME = <int> if cond else <int>`: an if-chain on a
/// size (`if M >= 1024: BM = 128` … `else: BM = 32`), a default then an override
/// (`BLOCK = 64` … `if n > 4096: BLOCK = 128`). The wrapper picks per call; a tuned config picks one
/// value for all, which the stage says ([`Bound::chosen`]). Anything else (a call, arithmetic, a
/// binding after the launch, a parameter) is not chosen among literals.
fn chosen_literal(text: &str, root: Node, at: usize, name: &str) -> Option<ConfigValue> {
    let scope = around(root, at, "function_definition").pop()?;
    if parameter(text, scope, name).is_some() {
        return None;
    }
    let mut stores = Vec::new();
    stores_of(text, scope.child_by_field_name("body")?, name, &mut stores);
    let mut values = Vec::new();
    for s in &stores {
        let assign = s.parent().filter(|p| p.kind() == "assignment" && p.child_by_field_name("left") == Some(*s))?;
        if assign.end_byte() > at || assign.child_by_field_name("type").is_some() {
            return None;
        }
        let right = assign.child_by_field_name("right")?;
        if covers(text, right) || branch_condition(assign).is_some_and(|c| names_value(text, c, right)) {
            return None;
        }
        values.extend(int_choices(text, right)?);
    }
    (values.len() >= 2).then(|| values.into_iter().next()).flatten()
}

/// `32 if d <= 32 else 64`: a choice whose condition names the value it picks sizes the tile to cover
/// a dimension (the kernel has no loop over it), which no other value may replace.
fn covers(text: &str, n: Node) -> bool {
    match n.kind() {
        "parenthesized_expression" => named_children(n).next().is_some_and(|c| covers(text, c)),
        "conditional_expression" => {
            let kids: Vec<Node> = named_children(n).collect();
            match kids.as_slice() {
                [value, cond, rest] => names_value(text, *cond, *value) || covers(text, *value) || covers(text, *rest),
                _ => false,
            }
        }
        _ => false,
    }
}

/// The condition of the `if`/`elif` branch an assignment stands in (not an `else`).
fn branch_condition(assign: Node) -> Option<Node> {
    let mut n = assign;
    while let Some(p) = n.parent() {
        match p.kind() {
            "if_statement" | "elif_clause" if p.child_by_field_name("consequence") == Some(n) => return p.child_by_field_name("condition"),
            "else_clause" | "function_definition" => return None,
            _ => {}
        }
        n = p;
    }
    None
}

/// Whether `cond` names the integer `value` is (`rotary_dim <= 32` for `32`).
fn names_value(text: &str, cond: Node, value: Node) -> bool {
    let v = node_text(text, value).trim();
    v.parse::<i64>().is_ok() && node_text(text, cond).split(|c: char| !c.is_ascii_alphanumeric() && c != '_').any(|t| t == v)
}

/// The integers an expression is one of: `128`, `128 if c else 64` (nested too); `None` for anything else.
pub(super) fn int_choices(text: &str, n: Node) -> Option<Vec<ConfigValue>> {
    match n.kind() {
        "integer" => literal(node_text(text, n)).map(|v| vec![v]),
        "parenthesized_expression" => int_choices(text, named_children(n).next()?),
        "conditional_expression" => {
            let kids: Vec<Node> = named_children(n).collect();
            let (first, last) = (kids.first()?, kids.last()?);
            let mut v = int_choices(text, *first)?;
            v.extend(int_choices(text, *last)?);
            Some(v)
        }
        _ => None,
    }
}

/// Every place in `n` (not inside a nested function, lambda or class) where `name` is bound.
fn stores_of<'a>(text: &str, n: Node<'a>, name: &str, out: &mut Vec<Node<'a>>) {
    for c in named_children(n) {
        match c.kind() {
            "function_definition" | "class_definition" => {
                if c.child_by_field_name("name").is_some_and(|x| node_text(text, x) == name) {
                    out.push(c);
                }
                continue;
            }
            "lambda" => continue,
            "identifier" if node_text(text, c) == name && is_store(c) => out.push(c),
            _ => {}
        }
        stores_of(text, c, name, out);
    }
}

/// A host tensor descriptor built where a launch is (`TensorDescriptor.from_tensor(x, [64, 32])`,
/// `TensorDescriptor(base, shape, strides, [BM, BK])`).
#[derive(Debug, Clone, PartialEq)]
pub struct Descriptor {
    /// The name it is assigned to (`in_desc = ...`), or the call's own text when it is built inline.
    pub name: String,
    pub call: String,
    /// Its block shape, each size as written (`64`, `BM`).
    pub sizes: Vec<String>,
}

/// The host tensor descriptors built in the function around `launch`. A tile passed at the launch with
/// one of their sizes is the descriptor's too: a config that changes the kernel's tile must change the
/// descriptor's block with it (a config `pre_hook`), or leave both.
pub fn descriptor_blocks(text: &str, root: Node, launch: &LaunchSite) -> Vec<Descriptor> {
    let Some(scope) = around(root, launch.range.start, "function_definition").pop() else { return Vec::new() };
    let mut out = Vec::new();
    let mut stack = vec![scope];
    while let Some(n) = stack.pop() {
        stack.extend(named_children(n));
        if n.kind() != "call" {
            continue;
        }
        let Some(f) = n.child_by_field_name("function") else { continue };
        let callee = node_text(text, f);
        let at = match callee.rsplit('.').next() {
            Some("from_tensor") if callee.contains("TensorDescriptor") => 1,
            Some("TensorDescriptor") => 3,
            _ => continue,
        };
        let Some(args) = n.child_by_field_name("arguments") else { continue };
        let all: Vec<Node> = named_children(args).collect();
        let block = all
            .iter()
            .find(|a| a.kind() == "keyword_argument" && a.child_by_field_name("name").is_some_and(|k| node_text(text, k) == "block_shape"))
            .and_then(|a| a.child_by_field_name("value"))
            .or_else(|| all.iter().filter(|a| a.kind() != "keyword_argument").nth(at).copied());
        let Some(block) = block.filter(|b| matches!(b.kind(), "list" | "tuple")) else { continue };
        let name = n
            .parent()
            .filter(|p| p.kind() == "assignment")
            .and_then(|p| p.child_by_field_name("left"))
            .filter(|l| l.kind() == "identifier")
            .map_or_else(|| node_text(text, n).to_string(), |l| node_text(text, l).to_string());
        let sizes = named_children(block).map(|size| node_text(text, size).trim().to_string()).collect();
        out.push(Descriptor { name, call: node_text(text, n).to_string(), sizes });
    }
    out.sort_by_key(|d| d.call.clone());
    out
}

/// Parameters a launch may pass the same tensor (`k[grid](x, x, n)`, `k[grid](x, x.view(-1), n)`,
/// `out = x if inplace else torch.empty_like(x)` … `k[grid](x, out, n)`): a kernel that reads one and
/// writes the other updates that tensor in place, which its body alone does not show. Each pair
/// once, in parameter order.
pub fn aliased(text: &str, root: Node, kernel: &Function, launch: &LaunchSite) -> Vec<(String, String)> {
    let (passed, _) = passed(text, kernel, launch);
    let scope = around(root, launch.range.start, "function_definition").pop().and_then(|f| f.child_by_field_name("body"));
    let bases: Vec<(&str, BTreeSet<String>)> = passed
        .iter()
        .filter(|(p, _, _)| kernel.params.iter().any(|k| &k.name == p))
        .filter_map(|(p, _, a)| {
            let node = root.descendant_for_byte_range(a.value.start, a.value.end)?;
            let mut out = BTreeSet::new();
            tensor_bases(text, scope, node, 0, &mut out);
            Some((p.as_str(), out))
        })
        .collect();
    let order = |p: &str| kernel.params.iter().position(|k| k.name == p);
    let mut out = Vec::new();
    for (i, (p, b)) in bases.iter().enumerate() {
        for (q, c) in &bases[i + 1..] {
            if p != q && !b.is_disjoint(c) {
                let (a, z) = if order(p) <= order(q) { (p, q) } else { (q, p) };
                out.push((a.to_string(), z.to_string()));
            }
        }
    }
    out
}

/// The tensors an argument expression may pass without copying: `x`, `self.w`, `x.view(-1)`, `x[1:]`,
/// `x.data`, both branches of `a if c else b`, and what a local of the launch's function was
/// assigned; nothing for what allocates (`torch.empty_like(x)`, `x.clone()`, `x + 1`).
fn tensor_bases(text: &str, scope: Option<Node>, node: Node, depth: usize, out: &mut BTreeSet<String>) {
    // Methods that return a view of the same storage (or the tensor itself).
    const VIEWS: &[&str] = &[
        "view",
        "view_as",
        "reshape",
        "flatten",
        "contiguous",
        "squeeze",
        "unsqueeze",
        "t",
        "transpose",
        "permute",
        "expand",
        "detach",
        "as_strided",
        "narrow",
        "select",
        "unflatten",
    ];
    if depth > 4 {
        return;
    }
    match node.kind() {
        "identifier" => {
            let name = node_text(text, node);
            if out.insert(name.to_string())
                && let Some(body) = scope
            {
                let mut stores = Vec::new();
                stores_of(text, body, name, &mut stores);
                for s in stores {
                    if let Some(p) = s.parent().filter(|p| p.kind() == "assignment" && p.child_by_field_name("left") == Some(s))
                        && let Some(right) = p.child_by_field_name("right")
                    {
                        tensor_bases(text, scope, right, depth + 1, out);
                    }
                }
            }
        }
        "parenthesized_expression" | "conditional_expression" => {
            // `a if c else b`: the branches are the first and last named children.
            let kids: Vec<Node> = named_children(node).collect();
            for k in [kids.first(), kids.last()].into_iter().flatten() {
                tensor_bases(text, scope, *k, depth + 1, out);
            }
        }
        "subscript" => {
            if let Some(v) = node.child_by_field_name("value") {
                tensor_bases(text, scope, v, depth + 1, out);
            }
        }
        "attribute" => {
            let (Some(obj), Some(attr)) = (node.child_by_field_name("object"), node.child_by_field_name("attribute")) else { return };
            match node_text(text, attr) {
                "data" | "T" | "mT" => tensor_bases(text, scope, obj, depth + 1, out),
                // A dotted name (`self.weight`), never a module's function (`torch.ones`).
                _ if obj.kind() == "identifier" && !matches!(node_text(text, obj), "torch" | "triton" | "tl" | "np") => {
                    out.insert(node_text(text, node).to_string());
                }
                _ => {}
            }
        }
        "call" => {
            let Some(f) = node.child_by_field_name("function").filter(|f| f.kind() == "attribute") else { return };
            if f.child_by_field_name("attribute").is_some_and(|m| VIEWS.contains(&node_text(text, m)))
                && let Some(obj) = f.child_by_field_name("object")
            {
                tensor_bases(text, scope, obj, depth + 1, out);
            }
        }
        _ => {}
    }
}

fn is_store(id: Node) -> bool {
    let Some(p) = id.parent() else {
        return false;
    };
    let field_is = |f: &str| p.child_by_field_name(f) == Some(id);
    match p.kind() {
        "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => field_is("left"),
        "named_expression" => field_is("name"),
        "pattern_list" | "tuple_pattern" | "list_pattern" | "as_pattern_target" | "global_statement" | "nonlocal_statement" => true,
        "aliased_import" => field_is("alias"),
        "dotted_name" => p.parent().is_some_and(|g| matches!(g.kind(), "import_statement" | "import_from_statement")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cover::outline::Outline;

    fn bound(src: &str) -> Vec<(String, ConfigValue, Option<String>, Option<usize>)> {
        let o = Outline::build(src);
        let tree = crate::syntax::parse(src);
        let k = o.kernels().next().unwrap();
        let l = o.launches.iter().find(|l| l.kernel == k.name).unwrap();
        bindings(src, tree.root_node(), k, l, &[l.range]).into_iter().map(|b| (b.name, b.value, b.via, b.positional)).collect()
    }

    const KERNEL: &str =
        "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr, D: tl.constexpr):\n    pass\n\n";

    fn aliases(src: &str) -> Vec<(String, String)> {
        let o = Outline::build(src);
        let tree = crate::syntax::parse(src);
        let k = o.kernels().next().unwrap();
        let l = o.launches.iter().find(|l| l.kernel == k.name).unwrap();
        aliased(src, tree.root_node(), k, l)
    }

    const TWO: &str =
        "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n    pass\n\n";

    #[test]
    fn one_tensor_passed_as_two_pointers_is_an_alias_through_views_and_keywords() {
        for launch in [
            "k[g](x, x, n, BLOCK=8)",
            "k[g](x.view(-1), out_ptr=x, n=n, BLOCK=8)",
            "k[g](self.buf[1:], self.buf.data, n)",
            "k[g](x, out, n)",
        ] {
            let src = format!("{TWO}def run(x, n, g, inplace=True):\n    out = x if inplace else torch.empty_like(x)\n    {launch}\n");
            assert_eq!(aliases(&src), vec![("x_ptr".into(), "out_ptr".into())], "{launch}");
        }
    }

    #[test]
    fn a_copy_or_a_fresh_tensor_is_not_an_alias() {
        for launch in ["k[g](x, torch.empty_like(x), n)", "k[g](x, x.clone(), n)", "k[g](x, x + 1, n)", "k[g](x, y, n)", "k[g](x, out, n)"]
        {
            let src = format!("{TWO}def run(x, y, n, g):\n    out = torch.empty_like(x)\n    {launch}\n");
            assert_eq!(aliases(&src), vec![], "{launch}");
        }
    }

    #[test]
    fn a_local_bound_once_to_a_literal_is_that_literal() {
        let src = format!(
            "{KERNEL}def run(x, d):\n    BLOCK = 32\n    k[(triton.cdiv(x.numel(), BLOCK),)](x, x.numel(), BLOCK=BLOCK, D=d, num_warps=2)\n"
        );
        assert_eq!(
            bound(&src),
            vec![("BLOCK".into(), ConfigValue::Int(32), Some("BLOCK".into()), None), ("num_warps".into(), ConfigValue::Int(2), None, None)]
        );
    }

    #[test]
    fn a_positional_tile_through_a_default_and_a_module_constant() {
        let src =
            format!("BLOCK = 1 << 9\n{KERNEL}def run(x, block=BLOCK):\n    k[(triton.cdiv(x.numel(), block),)](x, x.numel(), block, 64)\n");
        assert_eq!(
            bound(&src),
            vec![("BLOCK".into(), ConfigValue::Int(512), Some("block".into()), Some(2)), ("D".into(), ConfigValue::Int(64), None, Some(3))]
        );
    }

    #[test]
    fn run_time_values_are_not_literals() {
        // Computed, a parameter without a default, assigned after the launch, one path of several
        // computed.
        let src = format!(
            "{KERNEL}def run(x, d, nw):\n    BLOCK = triton.next_power_of_2(x.numel())\n    w = 4\n    if d > 64:\n        w = d // 8\n    k[(1,)](x, 1, BLOCK=BLOCK, D=d, num_warps=w, num_stages=nw)\n    d = 3\n"
        );
        assert_eq!(bound(&src), vec![]);
        let src = format!("{KERNEL}def run(x):\n    k[(1,)](x, 1, BLOCK=B2, D=16)\n    B2 = 64\n");
        assert_eq!(bound(&src), vec![("D".into(), ConfigValue::Int(16), None, None)]);
    }

    #[test]
    fn an_entry_of_a_dict_of_literals_nothing_changes_is_that_literal() {
        let launch = "    k[(triton.cdiv(x.numel(), B),)](x, x.numel(), BLOCK=B, D=16, num_warps=cfg[\"num_warps\"])\n";
        let src = format!("CFG = {{'B': 256}}\n{KERNEL}def run(x):\n    cfg = {{\"num_warps\": 8}}\n    B = CFG['B']\n{launch}");
        assert_eq!(
            bound(&src),
            vec![
                ("BLOCK".into(), ConfigValue::Int(256), Some("B".into()), None),
                ("D".into(), ConfigValue::Int(16), None, None),
                ("num_warps".into(), ConfigValue::Int(8), None, None),
            ]
        );
        // Changed after it is built, or handed to a call that may change it: not a literal.
        for change in ["    CFG['B'] = 512\n", "    CFG.update(B=512)\n", "    tweak(CFG)\n"] {
            let src = format!("CFG = {{'B': 256}}\n{KERNEL}def run(x):\n{change}    B = CFG['B']\n    k[(1,)](x, 1, BLOCK=B, D=16)\n");
            assert_eq!(bound(&src), vec![("D".into(), ConfigValue::Int(16), None, None)], "{change}");
        }
    }

    #[test]
    fn literals_the_wrapper_chooses_among_are_bound_and_marked_chosen() {
        // An if-chain, a default and its override, a conditional expression: the first value written.
        for (body, first) in [
            ("    if x.numel() > 4096:\n        B = 256\n    else:\n        B = 64\n", 256),
            ("    B = 64\n    if x.numel() > 4096:\n        B = 1024\n", 64),
            ("    B = 128 if x.numel() > 4096 else 32\n", 128),
        ] {
            let src = format!("{KERNEL}def run(x):\n{body}    k[(triton.cdiv(x.numel(), B),)](x, x.numel(), BLOCK=B, D=16)\n");
            let o = Outline::build(&src);
            let tree = crate::syntax::parse(&src);
            let (k, l) = (o.kernels().next().unwrap(), &o.launches[0]);
            let b = bindings(&src, tree.root_node(), k, l, &[l.range]);
            assert_eq!(
                b[0],
                Bound { name: "BLOCK".into(), value: ConfigValue::Int(first), via: Some("B".into()), positional: None, chosen: true }
            );
            assert!(!b[1].chosen, "{b:?}");
        }
    }

    #[test]
    fn a_tile_chosen_to_cover_a_dimension_is_not_a_choice() {
        // The condition names the value it picks: the tile must cover `d` (flash-attn's rotary).
        for body in
            ["    B = 32 if d <= 32 else (64 if d <= 64 else 128)\n", "    if d <= 64:\n        B = 64\n    else:\n        B = 128\n"]
        {
            let src = format!("{KERNEL}def run(x, d):\n{body}    k[(x.numel(),)](x, d, BLOCK=B, D=16)\n");
            assert_eq!(bound(&src), vec![("D".into(), ConfigValue::Int(16), None, None)], "{body}");
        }
    }

    #[test]
    fn a_tile_that_also_sizes_a_host_buffer_stays_at_the_launch() {
        let src = format!(
            "{KERNEL}def run(x):\n    n = x.numel()\n    BLOCK = 1024\n    blocks = triton.cdiv(n, BLOCK)\n    partial = x.new_empty(blocks)\n    k[(blocks,)](x, n, BLOCK=BLOCK, D=16)\n    return partial.sum()\n"
        );
        assert_eq!(bound(&src), vec![("D".into(), ConfigValue::Int(16), None, None)]);
        // Read only by the grid's own definition: tuned.
        let src = format!(
            "{KERNEL}def run(x):\n    n = x.numel()\n    BLOCK = 1024\n    grid = (triton.cdiv(n, BLOCK),)\n    k[grid](x, n, BLOCK=BLOCK, D=16)\n"
        );
        assert_eq!(bound(&src)[0], ("BLOCK".into(), ConfigValue::Int(1024), Some("BLOCK".into()), None));
    }

    #[test]
    fn a_loop_or_unpacking_binding_is_not_a_literal() {
        let src = format!("{KERNEL}def run(x):\n    for B in (64, 128):\n        k[(1,)](x, 1, BLOCK=B, D=16)\n");
        assert_eq!(bound(&src), vec![("D".into(), ConfigValue::Int(16), None, None)]);
        let src = format!("{KERNEL}def run(x, shape):\n    B, D = shape\n    k[(1,)](x, 1, BLOCK=B, D=D)\n");
        assert_eq!(bound(&src), vec![]);
        let src = format!("{KERNEL}def run(x):\n    B, D = 64, (32, 1)\n    k[(1,)](x, 1, BLOCK=B, D=D)\n");
        assert_eq!(bound(&src), vec![("BLOCK".into(), ConfigValue::Int(64), Some("B".into()), None)]);
    }

    #[test]
    fn tiles_unpacked_from_a_tuple_of_literals() {
        let src = format!(
            "{KERNEL}def run(x):\n    BLOCK, D = 128, 64\n    k[(triton.cdiv(x.numel(), BLOCK),)](x, x.numel(), BLOCK=BLOCK, D=D)\n"
        );
        assert_eq!(
            bound(&src),
            vec![
                ("BLOCK".into(), ConfigValue::Int(128), Some("BLOCK".into()), None),
                ("D".into(), ConfigValue::Int(64), Some("D".into()), None)
            ]
        );
    }

    #[test]
    fn a_module_attribute_set_once_to_a_literal() {
        let src = format!(
            "{KERNEL}class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.block = 256\n        self.d = 16\n\n    def forward(self, x):\n        k[(triton.cdiv(x.numel(), self.block),)](x, x.numel(), BLOCK=self.block, D=self.d)\n\n    def grow(self):\n        self.d *= 2\n"
        );
        // `self.d` changes after construction: not a literal.
        assert_eq!(bound(&src), vec![("BLOCK".into(), ConfigValue::Int(256), Some("self.block".into()), None)]);
    }

    #[test]
    fn a_tile_left_to_the_kernels_default() {
        let src = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr = 1024, ACT: tl.constexpr = 0):\n    pass\n\ndef run(x):\n    k[(triton.cdiv(x.numel(), 1024),)](x, x.numel())\n";
        // The switch keeps its default at the launch.
        assert_eq!(bound(src), vec![("BLOCK".into(), ConfigValue::Int(1024), None, None)]);
    }

    #[test]
    fn literal_forms() {
        assert_eq!(literal("1_024"), Some(ConfigValue::Int(1024)));
        assert_eq!(literal("1 << 10"), Some(ConfigValue::Int(1024)));
        assert_eq!(literal("2**10"), Some(ConfigValue::Int(1024)));
        assert_eq!(literal("1 << 99"), None);
        assert_eq!(literal("'large'"), Some(ConfigValue::Str("large".into())));
        assert_eq!(literal("n // 2"), None);
    }
}
