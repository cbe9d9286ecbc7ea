//! The top-level shape of a kernel file, as the stage guard and the autotune rewriter need it:
//! imports, functions (kernels flagged), classes with their methods, other statements, kernel
//! launches `k[grid](...)`, and the constructs banned in candidates. Read from the tree-sitter tree;
//! everything is a byte range into the text it was built from.

use crate::syntax::{named_children, node_text, range};
use crate::text::TextRange;
use tree_sitter::Node;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// Normalised statement text (whitespace collapsed).
    pub text: String,
    /// Top-level modules it imports from (`torch` for `import torch.nn as nn`).
    pub roots: Vec<String>,
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub annotation: Option<String>,
    pub default: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    /// From the first decorator to the end of the body.
    pub range: TextRange,
    /// The `def` itself (without decorators).
    pub def_range: TextRange,
    /// Each decorator's range, including the `@`.
    pub decorators: Vec<TextRange>,
    pub params: Vec<Param>,
    /// `@triton.jit` / `@jit` / `@triton.jit(...)`.
    pub is_kernel: bool,
    /// Index into `decorators` of `@triton.autotune(...)`, if any.
    pub autotune: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Class {
    pub name: String,
    pub range: TextRange,
    /// The `class X(bases):` header up to the colon.
    pub header: String,
    pub methods: Vec<Function>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// `None` for a positional argument.
    pub name: Option<String>,
    /// The whole argument (`num_warps=4`).
    pub range: TextRange,
    pub value: TextRange,
}

/// `kernel[grid](args)` anywhere in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSite {
    pub kernel: String,
    pub range: TextRange,
    pub grid: TextRange,
    /// The parenthesised argument list.
    pub args_range: TextRange,
    pub args: Vec<Arg>,
}

/// A construct a candidate may not introduce, with the category the guard reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspect {
    pub kind: SuspectKind,
    pub what: String,
    pub range: TextRange,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SuspectKind {
    /// XF901: `__import__`, `eval`, `exec`, computed `getattr`, `importlib`.
    Obfuscated,
    /// try/except: a candidate that falls back to the reference when its kernel fails.
    TryExcept,
    /// Rebinding timing or framework functions (`time.perf_counter = ...`, `torch.cuda.synchronize = ...`).
    TimingPatch,
    Threads,
    Streams,
    /// Memoising results across calls (`functools.cache`, `lru_cache`).
    ResultCache,
}

impl SuspectKind {
    pub fn label(self) -> &'static str {
        match self {
            SuspectKind::Obfuscated => "XF901 obfuscated-call",
            SuspectKind::TryExcept => "try/except fallback",
            SuspectKind::TimingPatch => "patched timing or framework function",
            SuspectKind::Threads => "threads or processes",
            SuspectKind::Streams => "extra streams or graphs",
            SuspectKind::ResultCache => "result caching across calls",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    pub syntax_errors: Vec<TextRange>,
    pub imports: Vec<Import>,
    pub functions: Vec<Function>,
    pub classes: Vec<Class>,
    /// Other top-level statements (constants, `if __name__ == ...`), normalised text and range.
    pub others: Vec<(String, TextRange)>,
    pub launches: Vec<LaunchSite>,
    pub suspects: Vec<Suspect>,
}

impl Outline {
    pub fn build(text: &str) -> Outline {
        let tree = crate::syntax::parse(text);
        let root = tree.root_node();
        let mut o = Outline { syntax_errors: crate::syntax::error_ranges(&tree), ..Default::default() };
        for stmt in named_children(root) {
            o.top_level(text, stmt);
        }
        walk(root, &mut |n| o.visit(text, n));
        o
    }

    pub fn kernels(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter(|f| f.is_kernel)
    }

    pub fn kernel(&self, name: &str) -> Option<&Function> {
        self.kernels().find(|f| f.name == name)
    }

    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    pub fn class(&self, name: &str) -> Option<&Class> {
        self.classes.iter().find(|c| c.name == name)
    }

    fn top_level(&mut self, text: &str, stmt: Node) {
        match stmt.kind() {
            "import_statement" | "import_from_statement" | "future_import_statement" => {
                self.imports.push(Import { text: squash(node_text(text, stmt)), roots: import_roots(text, stmt), range: range(stmt) })
            }
            "function_definition" | "decorated_definition" | "class_definition" => {
                let (decorators, def) = split_decorated(stmt);
                let Some(def) = def else { return };
                if def.kind() == "function_definition" {
                    self.functions.push(function(text, stmt, def, &decorators));
                } else if def.kind() == "class_definition" {
                    self.classes.push(class(text, stmt, def));
                }
            }
            _ => self.others.push((squash(node_text(text, stmt)), range(stmt))),
        }
    }

    fn visit(&mut self, text: &str, n: Node) {
        match n.kind() {
            "call" => {
                let Some(func) = n.child_by_field_name("function") else { return };
                if func.kind() == "subscript" {
                    if let (Some(value), Some(args)) = (func.child_by_field_name("value"), n.child_by_field_name("arguments")) {
                        let grid = func.child_by_field_name("subscript").map(range).unwrap_or_else(|| range(func));
                        self.launches.push(LaunchSite {
                            kernel: node_text(text, value).to_string(),
                            range: range(n),
                            grid,
                            args_range: range(args),
                            args: arguments(text, args),
                        });
                    }
                }
                let callee = squash(node_text(text, func));
                let last = callee.rsplit('.').next().unwrap_or(&callee);
                let suspect = match last {
                    "__import__" | "eval" | "exec" => Some(SuspectKind::Obfuscated),
                    "getattr" if !second_arg_is_literal(text, n) => Some(SuspectKind::Obfuscated),
                    "Thread" | "ThreadPoolExecutor" | "ProcessPoolExecutor" | "Process" | "Pool" => Some(SuspectKind::Threads),
                    "Stream" | "CUDAGraph" | "XPUGraph" | "graph" | "stream" if callee.contains("torch") || last.starts_with(char::is_uppercase) || callee.starts_with("stream") => {
                        Some(SuspectKind::Streams)
                    }
                    "lru_cache" | "cache" if callee.contains("functools") || callee == last => Some(SuspectKind::ResultCache),
                    _ => None,
                };
                if let Some(kind) = suspect {
                    self.suspects.push(Suspect { kind, what: format!("{callee}(...)"), range: range(n) });
                }
            }
            "try_statement" => self.suspects.push(Suspect { kind: SuspectKind::TryExcept, what: "try:".into(), range: range(n) }),
            "decorator" => {
                let t = squash(node_text(text, n));
                if t.ends_with("lru_cache") || t.ends_with("functools.cache") || t == "@cache" {
                    self.suspects.push(Suspect { kind: SuspectKind::ResultCache, what: t, range: range(n) });
                }
            }
            "identifier" | "dotted_name" => {
                let t = node_text(text, n);
                let kind = match t {
                    "importlib" => Some(SuspectKind::Obfuscated),
                    "threading" | "multiprocessing" | "concurrent" => Some(SuspectKind::Threads),
                    _ => None,
                };
                // Count each module name once per statement, at its identifier.
                if let Some(kind) = kind.filter(|_| n.kind() == "identifier") {
                    self.suspects.push(Suspect { kind, what: t.to_string(), range: range(n) });
                }
            }
            "assignment" | "augmented_assignment" => {
                if let Some(left) = n.child_by_field_name("left") {
                    if left.kind() == "attribute" {
                        let target = squash(node_text(text, left));
                        let root = target.split('.').next().unwrap_or("");
                        if matches!(root, "time" | "torch" | "triton" | "tl" | "timeit" | "F" | "nn" | "np") {
                            self.suspects.push(Suspect { kind: SuspectKind::TimingPatch, what: format!("{target} = ..."), range: range(n) });
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Pre-order walk of every node.
fn walk(root: Node, f: &mut impl FnMut(Node)) {
    let mut cursor = root.walk();
    loop {
        f(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

fn second_arg_is_literal(text: &str, call: Node) -> bool {
    let Some(args) = call.child_by_field_name("arguments") else { return false };
    let kids: Vec<Node> = named_children(args).collect();
    kids.get(1).is_some_and(|a| a.kind() == "string" && !node_text(text, *a).starts_with(['f', 'F']))
}

/// Collapse runs of whitespace: formatting changes are not edits of meaning.
pub fn squash(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for line in s.lines() {
        let code = strip_comment(line);
        for w in code.split_whitespace() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
    }
    out
}

/// A line without its trailing `#` comment (quotes respected, roughly).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev = '\0';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q && prev != '\\' => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' => return &line[..i],
            None => {}
        }
        prev = c;
    }
    line
}

fn split_decorated(stmt: Node) -> (Vec<Node>, Option<Node>) {
    if stmt.kind() != "decorated_definition" {
        return (Vec::new(), Some(stmt));
    }
    let decorators = named_children(stmt).filter(|n| n.kind() == "decorator").collect();
    (decorators, stmt.child_by_field_name("definition"))
}

fn function(text: &str, outer: Node, def: Node, decorators: &[Node]) -> Function {
    let name = def.child_by_field_name("name").map(|n| node_text(text, n).to_string()).unwrap_or_default();
    let mut is_kernel = false;
    let mut autotune = None;
    for (i, d) in decorators.iter().enumerate() {
        let t = squash(node_text(text, *d));
        let head = t.trim_start_matches('@').split('(').next().unwrap_or("").trim().to_string();
        if head == "triton.jit" || head == "jit" || head.ends_with(".jit") {
            is_kernel = true;
        }
        if head == "triton.autotune" || head == "autotune" || head.ends_with(".autotune") {
            autotune = Some(i);
        }
    }
    let params = def.child_by_field_name("parameters").map(|p| params(text, p)).unwrap_or_default();
    Function {
        name,
        range: range(outer),
        def_range: range(def),
        decorators: decorators.iter().map(|d| range(*d)).collect(),
        params,
        is_kernel,
        autotune,
    }
}

fn params(text: &str, list: Node) -> Vec<Param> {
    named_children(list)
        .filter_map(|p| {
            let (name, annotation, default) = match p.kind() {
                "identifier" => (node_text(text, p).to_string(), None, None),
                "typed_parameter" => {
                    let name = named_children(p).next().map(|n| node_text(text, n).to_string()).unwrap_or_default();
                    (name, p.child_by_field_name("type").map(|t| squash(node_text(text, t))), None)
                }
                "default_parameter" | "typed_default_parameter" => (
                    p.child_by_field_name("name").map(|n| node_text(text, n).to_string()).unwrap_or_default(),
                    p.child_by_field_name("type").map(|t| squash(node_text(text, t))),
                    p.child_by_field_name("value").map(|v| squash(node_text(text, v))),
                ),
                _ => return None,
            };
            Some(Param { name, annotation, default })
        })
        .collect()
}

fn class(text: &str, outer: Node, def: Node) -> Class {
    let name = def.child_by_field_name("name").map(|n| node_text(text, n).to_string()).unwrap_or_default();
    let header_end = def.child_by_field_name("body").map(|b| b.start_byte()).unwrap_or(def.end_byte());
    let header = squash(text.get(def.start_byte()..header_end).unwrap_or(""));
    let mut methods = Vec::new();
    if let Some(body) = def.child_by_field_name("body") {
        for stmt in named_children(body) {
            let (decorators, inner) = split_decorated(stmt);
            if let Some(f) = inner.filter(|n| n.kind() == "function_definition") {
                methods.push(function(text, stmt, f, &decorators));
            }
        }
    }
    Class { name, range: range(outer), header, methods }
}

fn import_roots(text: &str, stmt: Node) -> Vec<String> {
    let mut roots = Vec::new();
    let mut push = |n: Node| {
        let t = node_text(text, n);
        let root = t.trim_start_matches('.').split('.').next().unwrap_or("").trim().to_string();
        if !root.is_empty() && !roots.contains(&root) {
            roots.push(root);
        }
    };
    match stmt.kind() {
        "import_from_statement" => {
            if let Some(m) = stmt.child_by_field_name("module_name") {
                push(m);
            }
        }
        _ => {
            for c in named_children(stmt) {
                match c.kind() {
                    "dotted_name" => push(c),
                    "aliased_import" => {
                        if let Some(n) = c.child_by_field_name("name") {
                            push(n)
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    roots
}

fn arguments(text: &str, args: Node) -> Vec<Arg> {
    named_children(args)
        .map(|a| {
            if a.kind() == "keyword_argument" {
                let name = a.child_by_field_name("name").map(|n| node_text(text, n).to_string());
                let value = a.child_by_field_name("value").map(range).unwrap_or_else(|| range(a));
                Arg { name, range: range(a), value }
            } else {
                Arg { name: None, range: range(a), value: range(a) }
            }
        })
        .collect()
}

/// The text of a range, empty when out of bounds.
pub fn slice(text: &str, r: TextRange) -> &str {
    text.get(r.start..r.end).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 64

@triton.autotune(configs=[triton.Config({'BLOCK': 32})], key=['n'])
@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)

def helper(x):
    return x

class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()

    def forward(self, x):
        out = torch.empty_like(x)
        add_kernel[(4,)](x, out, x.numel(), num_warps=4)
        return out
"#;

    #[test]
    fn finds_items_kernels_and_launches() {
        let o = Outline::build(SRC);
        assert!(o.syntax_errors.is_empty());
        assert_eq!(o.imports.len(), 4);
        assert_eq!(o.imports[1].roots, vec!["torch".to_string()]);
        let k = o.kernel("add_kernel").unwrap();
        assert_eq!(k.autotune, Some(0));
        assert_eq!(k.params.last().unwrap().annotation.as_deref(), Some("tl.constexpr"));
        assert!(!o.function("helper").unwrap().is_kernel);
        let m = o.class("Model").unwrap();
        assert_eq!(m.header, "class Model(nn.Module):");
        assert_eq!(m.methods.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["__init__", "forward"]);
        assert_eq!(o.launches.len(), 1);
        assert_eq!(slice(SRC, o.launches[0].grid), "(4,)");
        assert_eq!(o.launches[0].args.last().unwrap().name.as_deref(), Some("num_warps"));
        assert_eq!(o.others.len(), 1);
        assert!(o.suspects.is_empty());
    }

    #[test]
    fn flags_reflection_fallbacks_and_patches() {
        let src = "_nn = __import__('torch').nn\n_fn = getattr(_nn, ''.join(['fu','nctional']))\nok = getattr(_nn, 'Linear')\ntry:\n    pass\nexcept Exception:\n    pass\nimport time\ntime.perf_counter = lambda: 0\n";
        let kinds: Vec<SuspectKind> = Outline::build(src).suspects.iter().map(|s| s.kind).collect();
        assert_eq!(kinds.iter().filter(|k| **k == SuspectKind::Obfuscated).count(), 2);
        assert!(kinds.contains(&SuspectKind::TryExcept));
        assert!(kinds.contains(&SuspectKind::TimingPatch));
    }

    #[test]
    fn squash_ignores_layout_and_comments() {
        assert_eq!(squash("def f(a,  b):  # note\n    return a"), squash("def f(a, b):\n  return a"));
    }
}
