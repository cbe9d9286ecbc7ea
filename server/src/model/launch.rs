//! Launches `k[grid](...)`, kernel aliases, and functional autotune (`triton.autotune(...)(k)`,
//! `tuner = triton.autotune(...)` then `tuner(k)`).
//!
//! `a[b](c)` is a launch only when `a` resolves to a kernel of this file: a kernel name (the
//! innermost definition visible from the call), `k.fn`, `Class.kernel` / `self.kernel`, a name or
//! attribute assigned a kernel (`x = triton.autotune(...)(k)`), or a wrapper call whose first
//! argument is a kernel (`wrap(k)`, `capture_triton(k)`). `self.net[0](x)` is not a launch.

use super::config;
use super::cx::{Cx, LocalAssign, enclosing_function, unparen};
use super::eval::expr_of;
use super::kernel::KernelSite;
use super::types::{Autotune, Binding, Expr, Kernel, Launch, Value};
use crate::syntax::flat::Node;
use crate::syntax::flat::{named_children, range};
use crate::text::TextRange;
use std::collections::HashMap;

/// Literal program counts that only make sense as an NVIDIA SM count (A100, H100 PCIe/SXM, H200...).
const CUDA_SM_COUNTS: &[i64] = &[108, 114, 132, 144];
/// Spellings that read a device's compute-unit count in a grid.
const DEVICE_COUNT_MARKERS: &[&str] = &["multi_processor_count", "NUM_SMS", "num_sms", "sm_count", "get_device_properties", "num_SMs"];

pub struct Resolver<'a, 't> {
    pub cx: &'a Cx<'t>,
    pub kernels: &'a [std::sync::Arc<Kernel>],
    pub sites: &'a [KernelSite<'t>],
    /// Source text of an assignment target → kernel (`fwd = triton.autotune(...)(k)`).
    pub aliases: HashMap<String, usize>,
    /// Source text of an assignment target → the `triton.autotune(...)` call it holds.
    pub tuners: HashMap<String, Node<'t>>,
    /// Aliases bound to a functional autotune's result (`fwd = triton.autotune(...)(k)`): launching
    /// them goes through the autotuner; launching `k` itself does not.
    pub tuned: std::collections::HashSet<String>,
    /// Kernel indices by plain name (duplicates under if/else share a name).
    by_name: HashMap<&'a str, Vec<usize>>,
}

impl<'a, 't> Resolver<'a, 't> {
    pub fn new(cx: &'a Cx<'t>, kernels: &'a [std::sync::Arc<Kernel>], sites: &'a [KernelSite<'t>]) -> Self {
        let mut by_name: HashMap<&'a str, Vec<usize>> = HashMap::new();
        for (i, k) in kernels.iter().enumerate() {
            by_name.entry(k.name.as_str()).or_default().push(i);
        }
        Resolver { cx, kernels, sites, aliases: HashMap::new(), tuners: HashMap::new(), tuned: Default::default(), by_name }
    }

    /// The key a binding of `left` is kept under: a plain name bound in a function body is local to
    /// that function (`kernel = patch(_k)` in one test does not rebind `kernel` in another); attributes
    /// (`self.k = ...`) and module-level names are file-wide.
    fn binding_key(&self, left: Node<'t>) -> String {
        match enclosing_function(left).filter(|_| left.kind() == "identifier") {
            Some(f) => format!("{}#{}", f.start_byte(), self.cx.text_of(left)),
            None => self.cx.text_of(left).to_string(),
        }
    }

    /// The keys a use of `node` may read, innermost scope first: each enclosing function, then the module.
    fn lookup_keys(&self, node: Node<'t>) -> Vec<String> {
        let text = self.cx.text_of(node);
        let mut keys = Vec::new();
        if node.kind() == "identifier" {
            let mut scope = enclosing_function(node);
            while let Some(f) = scope {
                keys.push(format!("{}#{text}", f.start_byte()));
                scope = enclosing_function(f);
            }
        }
        keys.push(text.to_string());
        keys
    }

    fn alias_of(&self, node: Node<'t>) -> Option<(usize, bool)> {
        if self.aliases.is_empty() {
            return None;
        }
        self.lookup_keys(node).into_iter().find_map(|k| self.aliases.get(&k).map(|i| (*i, self.tuned.contains(&k))))
    }

    /// Records `left = right` when `right` is a kernel (alias) or an autotune call (tuner).
    pub fn assignment(&mut self, left: Node<'t>, right: Node<'t>) {
        let right = unparen(right);
        let key = self.binding_key(left);
        let key = key.as_str();
        if right.kind() == "call"
            && let Some(f) = right.field("function").filter(|f| may_name_autotune(self.cx, *f))
            && self.cx.canonical(f).as_deref() == Some("triton.autotune")
        {
            self.tuners.insert(key.to_string(), right);
            return;
        }
        match self.kernel_of(right, 0) {
            Some(k) => {
                self.aliases.insert(key.to_string(), k);
                if right.kind() == "call" && self.functional_autotune(right).is_some() {
                    self.tuned.insert(key.to_string());
                } else {
                    self.tuned.remove(key);
                }
            }
            None => {
                // Most assignments (every statement of every kernel body) bind no kernel.
                if !self.aliases.is_empty() {
                    self.aliases.remove(key);
                    self.tuned.remove(key);
                }
            }
        }
    }

    /// For `triton.autotune(...)(k)` and `tuner(k)`: the kernel and the autotune call.
    pub fn functional_autotune(&self, call: Node<'t>) -> Option<(usize, Node<'t>)> {
        let func = unparen(call.field("function")?);
        let tuner = match func.kind() {
            "call" if func.field("function").and_then(|f| self.cx.canonical(f)).as_deref() == Some("triton.autotune") => func,
            "identifier" | "attribute" => *self.lookup_keys(func).iter().find_map(|k| self.tuners.get(k))?,
            _ => return None,
        };
        let first = named_children(call.field("arguments")?).next()?;
        Some((self.kernel_of(first, 0)?, tuner))
    }

    /// The kernel an expression denotes, if any.
    pub fn kernel_of(&self, node: Node<'t>, depth: usize) -> Option<usize> {
        if depth > 8 {
            return None;
        }
        let node = unparen(node);
        if let Some((k, _)) = self.alias_of(node) {
            return Some(k);
        }
        match node.kind() {
            "identifier" => self.by_name(self.cx.text_of(node), node),
            "attribute" => {
                let obj = node.field("object")?;
                let attr = self.cx.text_of(node.field("attribute")?);
                if attr == "fn"
                    && let Some(k) = self.kernel_of(obj, depth + 1)
                {
                    return Some(k);
                }
                let obj_text = self.cx.text_of(obj);
                if matches!(obj_text, "self" | "cls") {
                    // A kernel defined in the class whose method holds this expression.
                    return self.kernels.iter().enumerate().find_map(|(i, k)| {
                        let (class, kname) = k.qualified_name.rsplit_once('.')?;
                        let class_name = class.rsplit('.').next()?;
                        (kname == attr && self.inside_class(node, class_name)).then_some(i)
                    });
                }
                let want = format!("{obj_text}.{attr}");
                self.kernels.iter().position(|k| k.qualified_name == want || k.qualified_name.ends_with(&format!(".{want}")))
            }
            "call" => {
                // `triton.jit(fn)` in `k = triton.jit(fn)`: the kernel that assignment makes.
                if let Some(k) = self.sites.iter().position(|s| s.made == Some(range(node))) {
                    return Some(k);
                }
                // `wrap(k)`, `capture_triton(k)`, `triton.autotune(...)(k)`, `tuner(k)`.
                let args = call_first_arg(node)?;
                self.kernel_of(args, depth + 1)
            }
            _ => None,
        }
    }

    /// A launch target that goes through a functional autotune: an alias of its result, or the
    /// `triton.autotune(...)(k)` / `tuner(k)` call itself.
    pub fn is_tuned(&self, node: Node<'t>) -> bool {
        let node = unparen(node);
        self.alias_of(node).is_some_and(|(_, tuned)| tuned) || (node.kind() == "call" && self.functional_autotune(node).is_some())
    }

    /// `k.fn` (or `self.k.fn`) where `k` denotes a kernel: the wrapped function, not the wrapper.
    pub fn is_fn_of_kernel(&self, node: Node<'t>) -> bool {
        let node = unparen(node);
        node.kind() == "attribute"
            && node.field("attribute").is_some_and(|a| self.cx.text_of(a) == "fn")
            && node.field("object").is_some_and(|o| self.kernel_of(o, 1).is_some())
    }

    fn inside_class(&self, node: Node, class_name: &str) -> bool {
        let mut cur = node.parent();
        while let Some(n) = cur {
            if n.kind() == "class_definition" && n.field("name").is_some_and(|c| self.cx.text_of(c) == class_name) {
                return true;
            }
            cur = n.parent();
        }
        false
    }

    /// The kernel named `name` visible from `at`: innermost enclosing scope first, then module level.
    fn by_name(&self, name: &str, at: Node) -> Option<usize> {
        let mut best: Option<(usize, usize)> = None; // (kernel, scope depth rank)
        for &i in self.by_name.get(name).map(Vec::as_slice).unwrap_or(&[]) {
            let site = self.sites.get(i)?;
            let rank = match site.scope {
                None => 1,
                Some(scope) if scope.kind() == "function_definition" && range(scope).contains(at.start_byte()) => 2 + scope.start_byte(),
                Some(_) => continue, // a method or a kernel local to another function
            };
            if best.is_none_or(|(_, r)| rank > r) {
                best = Some((i, rank));
            }
        }
        best.map(|(i, _)| i)
    }

    /// What a call may launch: `k` in `k[grid](...)`, or in `k.warmup(..., grid=...)` (which compiles
    /// with the same options; `true` for that form).
    pub fn launch_target(&self, call: Node<'t>) -> Option<(Node<'t>, bool)> {
        let f = call.field("function")?;
        match f.kind() {
            "subscript" => Some((f.field("value")?, false)),
            "attribute" if f.field("attribute").is_some_and(|a| self.cx.text_of(a) == "warmup") => Some((f.field("object")?, true)),
            _ => None,
        }
    }

    /// Builds a launch from `k[grid](...)` or `k.warmup(..., grid=...)`, when `k` is a kernel.
    pub fn launch(&self, call: Node<'t>) -> Option<Launch> {
        let sub = call.field("function")?;
        let (target, warmup) = self.launch_target(call)?;
        let kernel = self.kernel_of(target, 0)?;
        let scope = enclosing_function(call);
        let grid_nodes: Vec<Node> = if warmup {
            // `grid=` is warmup's own argument, not a kernel option.
            call.field("arguments")
                .into_iter()
                .flat_map(named_children)
                .filter(|a| a.kind() == "keyword_argument" && a.field("name").is_some_and(|n| self.cx.text_of(n) == "grid"))
                .filter_map(|a| a.field("value"))
                .collect()
        } else {
            let mut cursor = sub.walk();
            sub.children_by_field_name("subscript", &mut cursor).collect()
        };
        let grid_range = match (grid_nodes.first(), grid_nodes.last()) {
            (Some(a), Some(b)) => range(*a).cover(range(*b)),
            _ => range(sub),
        };
        // `k[grid, num_warps=4](...)` (invalid) recovers with ERROR nodes inside the brackets.
        let (grid, grid_texts) = if sub.has_error() { (None, Vec::new()) } else { self.grid(&grid_nodes, scope) };
        let grid_uses_device_count = grid_texts.iter().any(|t| DEVICE_COUNT_MARKERS.iter().any(|m| t.contains(m)))
            || grid
                .as_ref()
                .is_some_and(|dims| dims.iter().any(|d| matches!(d.eval_const(), Value::Int(n) if CUDA_SM_COUNTS.contains(&n))));
        let mut launch = Launch {
            range: range(call),
            target_range: range(target),
            kernel,
            grid_range,
            grid,
            positional: 0,
            kwargs: Vec::new(),
            opaque_kwargs: false,
            grid_uses_device_count,
            positional_args: Vec::new(),
            via_fn: self.is_fn_of_kernel(target),
            via_tuner: self.is_tuned(target),
            warmup,
        };
        let params = &self.kernels[kernel].params;
        let mut positional_known = true;
        if let Some(args) = call.field("arguments") {
            for a in named_children(args) {
                match a.kind() {
                    "keyword_argument" => {
                        let (Some(k), Some(v)) = (a.field("name"), a.field("value")) else { continue };
                        if warmup && self.cx.text_of(k) == "grid" {
                            continue;
                        }
                        launch.kwargs.push(self.local_binding(self.cx.text_of(k), v, range(a), range(k), scope));
                    }
                    "dictionary_splat" => launch.opaque_kwargs = true,
                    "list_splat" => positional_known = false,
                    _ => {
                        if positional_known && let Some(p) = params.get(launch.positional) {
                            launch.positional_args.push(self.local_binding(&p.name, a, range(a), range(a), scope));
                        }
                        launch.positional += 1;
                    }
                }
            }
        }
        Some(launch)
    }

    /// A launch argument's value: a literal, a module constant, or a name assigned exactly once
    /// in the enclosing function (whose literal becomes the binding's range).
    fn local_binding(&self, name: &str, value: Node<'t>, site: TextRange, key: TextRange, scope: Option<Node<'t>>) -> Binding {
        let mut node = unparen(value);
        for _ in 0..4 {
            if node.kind() != "identifier" {
                break;
            }
            let id = self.cx.text_of(node);
            match scope.map(|s| self.cx.local_assignment(s, id)) {
                Some(LocalAssign::One(rhs)) => node = unparen(rhs),
                Some(LocalAssign::Many) => {
                    return Binding { name: name.to_string(), value: Value::Unknown, range: range(value), site, key_range: key };
                }
                // Not assigned locally: a module constant or unknown.
                _ => break,
            }
        }
        self.cx.binding(name, node, site, key, &[])
    }

    /// Grid dims from a literal tuple/list, a lambda or `def grid(meta)` returning one, or a
    /// name bound to either; also the source texts read (for device-count detection).
    fn grid(&self, nodes: &[Node<'t>], scope: Option<Node<'t>>) -> (Option<Vec<Expr>>, Vec<&'t str>) {
        let mut texts: Vec<&'t str> = nodes.iter().map(|n| self.cx.text_of(*n)).collect();
        if nodes.len() > 1 {
            return (Some(nodes.iter().map(|n| expr_of(self.cx, *n)).collect()), texts);
        }
        let Some(mut node) = nodes.first().map(|n| unparen(*n)) else { return (None, texts) };
        for _ in 0..4 {
            match node.kind() {
                "tuple" | "list" => {
                    let dims: Vec<Expr> = named_children(node).map(|d| expr_of(self.cx, d)).collect();
                    // Names inside the dims may be locals computed from a device query.
                    for d in named_children(node) {
                        self.collect_local_texts(d, scope, &mut texts);
                    }
                    return (Some(dims), texts);
                }
                "lambda" => match node.field("body") {
                    Some(b) => node = unparen(b),
                    None => return (None, texts),
                },
                "identifier" => {
                    let name = self.cx.text_of(node);
                    if let Some(def) = scope.and_then(|s| local_def(self.cx, s, name)).or_else(|| self.cx.module_function(name)) {
                        texts.push(self.cx.text_of(def));
                        match returned(def) {
                            Some(r) => node = unparen(r),
                            None => return (None, texts),
                        }
                    } else if let Some(v) = self.cx.resolve_name(name, scope) {
                        texts.push(self.cx.text_of(v));
                        node = unparen(v);
                    } else {
                        return (None, texts);
                    }
                }
                _ => return (None, texts),
            }
        }
        (None, texts)
    }

    fn collect_local_texts(&self, node: Node<'t>, scope: Option<Node<'t>>, texts: &mut Vec<&'t str>) {
        let Some(scope) = scope else { return };
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if n.kind() == "identifier"
                && let LocalAssign::One(rhs) = self.cx.local_assignment(scope, self.cx.text_of(n))
            {
                texts.push(self.cx.text_of(rhs));
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
    }
}

/// Attaches a functional autotune to a kernel (first one wins; a decorator wins over both).
pub fn attach_autotune<'t>(cx: &Cx<'t>, kernel: &mut Kernel, tuner: Node<'t>) {
    if kernel.autotune.is_none() {
        let at: Autotune = config::autotune(cx, tuner, true, enclosing_function(tuner));
        kernel.autotune = Some(at);
    }
}

fn call_first_arg(call: Node) -> Option<Node> {
    let args = call.field("arguments")?;
    named_children(args).find(|a| !matches!(a.kind(), "keyword_argument" | "list_splat" | "dictionary_splat"))
}

/// A `def name(...)` directly in function `scope`'s body.
fn local_def<'t>(cx: &Cx<'t>, scope: Node<'t>, name: &str) -> Option<Node<'t>> {
    let body = scope.field("body")?;
    named_children(body).find(|s| s.kind() == "function_definition" && s.field("name").is_some_and(|n| cx.text_of(n) == name))
}

/// The expression of the last `return` in a one-statement (or docstring + return) body.
fn returned(def: Node) -> Option<Node> {
    let body = def.field("body")?;
    let last = named_children(body).last()?;
    if last.kind() == "return_statement" { named_children(last).next() } else { None }
}

/// Whether a callee can denote `triton.autotune` at all: a bare name (an import alias) or an
/// attribute chain ending in `.autotune` (every spelling the import table normalises ends so).
/// Skips the canonical-name lookup for the many calls that cannot.
fn may_name_autotune(cx: &Cx, f: Node) -> bool {
    match f.kind() {
        "identifier" => true,
        "attribute" => f.field("attribute").is_some_and(|a| cx.text_of(a) == "autotune"),
        _ => false,
    }
}
