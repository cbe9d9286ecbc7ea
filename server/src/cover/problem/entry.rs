//! The problem's entry: what users call to run the kernel. Found from the kernel's launch sites (the
//! model's resolved `Launch`es): the module-level function or class method holding the launch; a
//! `forward` of an `autograd.Function` is entered as users call it, `Fn.apply`; a private entry
//! (`_launch`) called by exactly one public function of the file is entered through that function.

use super::Origin;
use super::tree::{Src, at_module_level, class_of, decorators, descendants, enclosing_defs, field, scope_nodes};
use crate::model::FileModel;
use crate::syntax::named_children;
use serde::Serialize;
use tree_sitter::{Node, Tree};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    /// `class Model` (AI Bench): the harness's own convention; nothing to infer.
    Model,
    Function,
    /// A method of a class built with `inits` (`Attention.forward`).
    Method,
    /// `Fn.apply` of an `autograd.Function`.
    Apply,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntryParam {
    pub name: String,
    pub annotation: Option<String>,
    pub default: Option<String>,
    /// After `*` or `*args`: passed by keyword only, so never by the harness (it passes by position).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub keyword_only: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// As the spec spells it: `matmul`, `Attention.forward`, `_MatMul.apply`.
    pub name: String,
    pub kind: EntryKind,
    pub class: Option<String>,
    /// The inputs, in order (no `self`, `cls` or `ctx`).
    pub params: Vec<EntryParam>,
    /// `__init__`'s parameters of a method entry's class.
    pub init_params: Vec<EntryParam>,
    /// A static or class method: called on the class (`Cls.m(x)`), no instance built.
    #[serde(skip)]
    pub class_level: bool,
    /// Names a caller uses: `matmul`, `_MatMul.apply` and module-level aliases (`matmul = _MatMul.apply`).
    pub spellings: Vec<String>,
    /// Byte offset of the `def`, to find it again in the same text.
    #[serde(skip)]
    pub def_start: usize,
    /// Byte offsets of the functions whose code says what the inputs are (the entry and, when the
    /// entry only calls it, the private function holding the launch).
    #[serde(skip)]
    pub bodies: Vec<usize>,
    /// The kernel is launched by an `autograd.Function`'s `backward`: the entry is its forward (or a
    /// function over it), and the harness also compares the gradients of its inputs (`backward: true`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub backward: bool,
    pub origin: Origin,
}

/// The entry of `kernel`'s problem, or why there is none (a sentence saying what to add).
pub fn find(src: &Src, tree: &Tree, model: &FileModel, kernel: usize, named: Option<&str>) -> Result<Entry, String> {
    let root = tree.root_node();
    if let Some(name) = named {
        return by_name(src, root, name).ok_or_else(|| {
            format!("the entry `{name}` named in the configuration is not a function, `Class.method` or `Fn.apply` of {}", src.file)
        });
    }
    let kname = model.kernels.get(kernel).map(|k| k.name.clone()).unwrap_or_default();
    let mut defs: Vec<Node> = Vec::new();
    for l in model.launches.iter().filter(|l| l.kernel == kernel) {
        let Some(at) = root.descendant_for_byte_range(l.range.start, l.range.end) else {
            continue;
        };
        let chain = enclosing_defs(at);
        // The outermost definition that is module-level or a method of a module-level class.
        if let Some(d) = chain.iter().rev().find(|d| enterable(**d))
            && !defs.iter().any(|x| x.id() == d.id())
        {
            defs.push(*d);
        }
    }
    let Some(first) = defs.first().copied() else {
        return Err(format!(
            "no function of {} launches `{kname}`: the harness needs something to call. Put the launch in a function \
             (`def run(x): {kname}[grid](...)`), or name one with `entry = \"...\"` under [tool.xeforge.problems]",
            src.file
        ));
    };
    // Several launching functions: prefer a public one (what users call), and a forward over a backward.
    let backward = |d: &Node| autograd_forward(src, *d).is_some();
    let def = defs
        .iter()
        .copied()
        .filter(|d| !backward(d) || defs.iter().all(backward))
        .find(|d| !def_name(src, *d).starts_with('_'))
        .or_else(|| defs.iter().copied().find(|d| !backward(d)))
        .unwrap_or(first);
    // Launched in `backward` only: the harness calls the forward and then backward (`Entry::backward`).
    let (def, grads) = match autograd_forward(src, def) {
        Some(forward) => (forward, true),
        None => (def, false),
    };
    let mut entry = describe(src, root, def);
    entry.bodies = vec![def.start_byte()];
    climb_to_public_caller(src, root, &mut entry);
    entry.backward = grads;
    Ok(entry)
}

/// The `forward` beside `def` when `def` is the `backward` of an `autograd.Function`.
fn autograd_forward<'t>(src: &Src, def: Node<'t>) -> Option<Node<'t>> {
    let class = class_of(def).filter(|_| def_name(src, def) == "backward")?;
    field(class, "superclasses").map(|b| src.text(b)).filter(|b| b.contains("Function"))?;
    class_methods(class).into_iter().find(|m| def_name(src, *m) == "forward")
}

fn def_name<'t>(src: &Src<'t>, def: Node) -> &'t str {
    field(def, "name").map(|n| src.text(n)).unwrap_or("")
}

fn by_name<'t>(src: &Src, root: Node<'t>, name: &str) -> Option<Entry> {
    let (class, method) = match name.split_once('.') {
        Some((c, m)) => (Some(c), m),
        None => (None, name),
    };
    let defs = descendants(root).into_iter().filter(|n| n.kind() == "function_definition");
    for d in defs {
        let ok = match class {
            None => at_module_level(d) && def_name(src, d) == method,
            Some(c) => {
                class_of(d).is_some_and(|k| field(k, "name").is_some_and(|n| src.text(n) == c))
                    && (def_name(src, d) == method || method == "apply" && def_name(src, d) == "forward")
            }
        };
        if ok {
            let mut e = describe(src, root, d);
            e.bodies = vec![d.start_byte()];
            return Some(e);
        }
    }
    None
}

pub(super) fn params(src: &Src, def: Node) -> Vec<EntryParam> {
    let Some(ps) = field(def, "parameters") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut keyword_only = false;
    for p in named_children(ps) {
        let (name, annotation, default) = match p.kind() {
            "identifier" => (src.text(p), None, None),
            "typed_parameter" => {
                let name = named_children(p).next().map(|n| src.text(n)).unwrap_or("");
                (name, field(p, "type").map(|t| src.text(t).to_string()), None)
            }
            "default_parameter" => {
                (field(p, "name").map(|n| src.text(n)).unwrap_or(""), None, field(p, "value").map(|v| src.text(v).to_string()))
            }
            "typed_default_parameter" => (
                field(p, "name").map(|n| src.text(n)).unwrap_or(""),
                field(p, "type").map(|t| src.text(t).to_string()),
                field(p, "value").map(|v| src.text(v).to_string()),
            ),
            // `*args`, `**kwargs`, `*`, `/`: nothing a caller must pass by position.
            kind => {
                keyword_only |= matches!(kind, "keyword_separator" | "list_splat_pattern");
                continue;
            }
        };
        if !name.is_empty() {
            out.push(EntryParam { name: name.to_string(), annotation, default, keyword_only });
        }
    }
    out
}

/// `@staticmethod` or `@classmethod`: called on the class itself (`Cls.m(x)`), no instance built.
fn is_static(src: &Src, def: Node) -> bool {
    decorated(src, def, "staticmethod") || decorated(src, def, "classmethod")
}

fn decorated(src: &Src, def: Node, name: &str) -> bool {
    decorators(def).iter().any(|d| src.text(*d).trim_start_matches('@').trim() == name)
}

fn describe(src: &Src, root: Node, def: Node) -> Entry {
    let name = def_name(src, def).to_string();
    let mut ps = params(src, def);
    let origin = src.origin(def);
    let Some(class) = class_of(def) else {
        let spellings = aliases(src, root, &name);
        return Entry {
            name,
            kind: EntryKind::Function,
            class: None,
            params: ps,
            init_params: Vec::new(),
            class_level: false,
            spellings,
            def_start: def.start_byte(),
            bodies: Vec::new(),
            backward: false,
            origin,
        };
    };
    let cname = field(class, "name").map(|n| src.text(n).to_string()).unwrap_or_default();
    let bases = field(class, "superclasses").map(|b| src.text(b)).unwrap_or("");
    let autograd = bases.contains("Function") && name == "forward";
    if (!decorated(src, def, "staticmethod") || autograd) && !ps.is_empty() {
        ps.remove(0); // self, cls or ctx
    }
    if autograd {
        let full = format!("{cname}.apply");
        let spellings = aliases(src, root, &full);
        return Entry {
            name: full,
            kind: EntryKind::Apply,
            class: Some(cname),
            params: ps,
            init_params: Vec::new(),
            class_level: false,
            spellings,
            def_start: def.start_byte(),
            bodies: Vec::new(),
            backward: false,
            origin,
        };
    }
    let kind = if cname == "Model" && name == "forward" { EntryKind::Model } else { EntryKind::Method };
    let init_params = if is_static(src, def) {
        Vec::new()
    } else {
        class_methods(class)
            .into_iter()
            .find(|m| def_name(src, *m) == "__init__")
            .map(|m| params(src, m).into_iter().skip(1).collect())
            .unwrap_or_default()
    };
    let full = if kind == EntryKind::Model { "Model".to_string() } else { format!("{cname}.{name}") };
    Entry {
        name: full.clone(),
        kind,
        class: Some(cname),
        params: ps,
        init_params,
        class_level: is_static(src, def),
        spellings: vec![full],
        def_start: def.start_byte(),
        bodies: Vec::new(),
        backward: false,
        origin,
    }
}

fn class_methods(class: Node) -> Vec<Node> {
    let Some(body) = field(class, "body") else {
        return Vec::new();
    };
    named_children(body)
        .filter_map(|s| match s.kind() {
            "function_definition" => Some(s),
            "decorated_definition" => field(s, "definition").filter(|d| d.kind() == "function_definition"),
            _ => None,
        })
        .collect()
}

/// `name` and every module-level name assigned exactly it (`matmul = _MatMul.apply`).
fn aliases(src: &Src, root: Node, name: &str) -> Vec<String> {
    let mut out = vec![name.to_string()];
    for stmt in named_children(root) {
        let Some(a) = named_children(stmt).next().filter(|a| stmt.kind() == "expression_statement" && a.kind() == "assignment") else {
            continue;
        };
        if let (Some(l), Some(r)) = (field(a, "left"), field(a, "right"))
            && l.kind() == "identifier"
            && src.text(r).trim() == name
        {
            out.push(src.text(l).to_string());
        }
    }
    out
}

/// A private entry (`_matmul`, `_Fn.apply`) called by exactly one public module-level function of the
/// file that is not a test or benchmark: users call that function, so it becomes the entry.
fn climb_to_public_caller(src: &Src, root: Node, entry: &mut Entry) {
    for _ in 0..3 {
        let private = entry.spellings.iter().all(|s| s.split('.').next().is_some_and(|n| n.starts_with('_')));
        if !private || entry.kind == EntryKind::Method || entry.kind == EntryKind::Model {
            return;
        }
        let callers: Vec<Node> = named_children(root)
            .filter_map(|s| if s.kind() == "decorated_definition" { field(s, "definition") } else { Some(s) })
            .filter(|d| d.kind() == "function_definition")
            .filter(|d| {
                let n = def_name(src, *d);
                !n.starts_with('_') && !is_driver(n)
            })
            .filter(|d| calls(src, *d, entry))
            .collect();
        let [caller] = callers.as_slice() else { return };
        *entry = through(src, root, *caller, entry);
    }
}

/// A module-level function or a method of a module-level class: what a spec's `entry` can name.
fn enterable(def: Node) -> bool {
    at_module_level(def) || class_of(def).is_some_and(at_module_level)
}

/// A test, a benchmark or `main`: where the entry is called with sizes, not a layer over it.
fn is_driver(name: &str) -> bool {
    name.starts_with("test") || name.starts_with("bench") || name == "main"
}

/// Whether `def`'s own body calls `entry` by one of its spellings.
fn calls(src: &Src, def: Node, entry: &Entry) -> bool {
    scope_nodes(def)
        .iter()
        .any(|c| c.kind() == "call" && field(*c, "function").is_some_and(|f| entry.spellings.iter().any(|s| s == src.text(f))))
}

/// `caller` as the entry, its body read before those of `inner`, the entry it calls.
fn through(src: &Src, root: Node, caller: Node, inner: &Entry) -> Entry {
    let mut e = describe(src, root, caller);
    e.bodies = std::iter::once(caller.start_byte()).chain(inner.bodies.iter().copied()).collect();
    // A function over an `autograd.Function` whose backward launches the kernel reaches it only
    // through the gradients, as the inner entry does.
    e.backward = inner.backward;
    e
}

/// The functions and methods of the file that call `entry` by one of its spellings (a function,
/// `Fn.apply`, a method of a class, in source order), each as an entry of its own whose bodies
/// include the entry's: when nothing gives the entry's sizes, a caller's call sites may. Tests,
/// benchmarks and `main` are call sites, not callers. A method entry has none here: its callers
/// call an instance, which a spelling does not name.
pub fn callers(src: &Src, tree: &Tree, entry: &Entry) -> Vec<Entry> {
    if matches!(entry.kind, EntryKind::Method | EntryKind::Model) {
        return Vec::new();
    }
    let root = tree.root_node();
    descendants(root)
        .into_iter()
        .filter(|d| d.kind() == "function_definition" && d.start_byte() != entry.def_start)
        .filter(|d| enterable(*d))
        .filter(|d| !is_driver(def_name(src, *d)) && calls(src, *d, entry))
        .map(|d| through(src, root, d, entry))
        .collect()
}

/// The `def` node an entry was found at.
pub fn def_node<'t>(tree: &'t Tree, start: usize) -> Option<Node<'t>> {
    let mut n = tree.root_node().descendant_for_byte_range(start, start)?;
    loop {
        if n.kind() == "function_definition" && n.start_byte() == start {
            return Some(n);
        }
        n = n.parent()?;
    }
}

/// Every function definition holding a launch of the kernel, for quoting (line numbers).
pub fn launch_lines(src: &Src, tree: &Tree, model: &FileModel, kernel: usize) -> Vec<usize> {
    let root = tree.root_node();
    model
        .launches
        .iter()
        .filter(|l| l.kernel == kernel)
        .filter_map(|l| root.descendant_for_byte_range(l.range.start, l.range.end))
        .map(|n| src.line(n))
        .collect()
}
