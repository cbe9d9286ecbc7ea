//! Which reflective calls of a user's file reach a PyTorch compute op (XF901, narrowed): a computed
//! name or a dynamic import whose result, through attributes, computed `getattr`s and plain names it
//! is assigned to, is finally *called*, and whose root is torch (`__import__('torch')`,
//! `importlib.import_module('torch...')`, `getattr(torch.nn, name)`, or an `eval`/`exec` of code that
//! names torch). `getattr(torch, dtype_name)` used as a value, `eval("y")`, test scaffolding and a
//! bare `import importlib` reach nothing. Name-based and flow-insensitive: a name is what any of its
//! assignments in the file makes it.

use std::collections::{HashMap, HashSet};

use super::cx::{Cx, unparen};
use super::eval;
use crate::syntax::flat::{Node, named_children};

/// The reflective calls among `obfuscations` (call, callee) that reach a compute op.
pub fn reaching<'t>(
    cx: &Cx<'t>,
    text: &str,
    obfuscations: &[(Node<'t>, Node<'t>)],
    assignments: &[(Node<'t>, Node<'t>)],
    calls: &[Node<'t>],
) -> Vec<(Node<'t>, Node<'t>)> {
    if obfuscations.is_empty() {
        return Vec::new();
    }
    let sources: HashSet<usize> = obfuscations.iter().map(|(c, _)| c.id()).collect();
    let mut bound: HashMap<&str, Vec<Node<'t>>> = HashMap::new();
    for (left, right) in assignments {
        if left.kind() == "identifier" {
            bound.entry(cx.text_of(*left)).or_default().push(*right);
        }
    }
    let r = Reach { cx, text, sources, bound };
    let mut flagged: HashSet<usize> = HashSet::new();
    for call in calls {
        let Some(f) = call.field("function") else { continue };
        let mut chain = Chain::default();
        r.walk(f, &mut chain, &mut HashSet::new(), 0);
        if chain.torch && !chain.obfuscations.is_empty() {
            flagged.extend(chain.obfuscations);
        }
    }
    // `exec`/`eval` of code that names torch: the code itself is the computed name.
    for (call, callee) in obfuscations {
        if matches!(cx.text_of(*callee), "eval" | "exec") && r.code_names_torch(*call) {
            flagged.insert(call.id());
        }
    }
    obfuscations.iter().filter(|(c, _)| flagged.contains(&c.id())).copied().collect()
}

#[derive(Default)]
struct Chain {
    /// Reflective calls met on the way to the root.
    obfuscations: Vec<usize>,
    /// The root is torch.
    torch: bool,
}

struct Reach<'a, 't> {
    cx: &'a Cx<'t>,
    text: &'a str,
    sources: HashSet<usize>,
    bound: HashMap<&'a str, Vec<Node<'t>>>,
}

impl<'t> Reach<'_, 't> {
    /// Follows the head of an expression (`a.b`, `getattr(a, n)`, `__import__(...)`, a bound name)
    /// back to its roots, collecting the reflective calls on the way.
    fn walk(&self, node: Node<'t>, chain: &mut Chain, seen: &mut HashSet<&'t str>, depth: usize) {
        if depth > 32 {
            return;
        }
        let node = unparen(node);
        match node.kind() {
            "attribute" => {
                if let Some(obj) = node.field("object") {
                    self.walk(obj, chain, seen, depth + 1);
                }
            }
            "call" => {
                let is_source = self.sources.contains(&node.id());
                let callee = node.field("function").map(|f| self.cx.text_of(f)).unwrap_or("");
                if is_source {
                    chain.obfuscations.push(node.id());
                }
                let first = node.field("arguments").and_then(|a| named_children(a).next());
                match callee {
                    "getattr" => {
                        if let Some(obj) = first {
                            self.walk(obj, chain, seen, depth + 1);
                        }
                    }
                    "__import__" | "importlib.import_module" => {
                        // A literal module: torch or not; a computed one could be anything.
                        chain.torch |=
                            first.is_none_or(|a| eval::string_value(self.text, unparen(a)).is_none_or(|m| m.starts_with("torch")));
                    }
                    "eval" => chain.torch |= is_source && self.code_names_torch(node),
                    _ => {}
                }
            }
            "identifier" => {
                let name = self.cx.text_of(node);
                if self.cx.canonical(node).is_some_and(|c| c == "torch" || c.starts_with("torch.")) {
                    chain.torch = true;
                }
                if !seen.insert(name) {
                    return;
                }
                for right in self.bound.get(name).into_iter().flatten() {
                    self.walk(*right, chain, seen, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// `eval`/`exec` whose code argument names torch (a literal), or is computed (could be anything
    /// that reaches torch: not decided here, so not a finding).
    fn code_names_torch(&self, call: Node<'t>) -> bool {
        call.field("arguments")
            .and_then(|a| named_children(a).next())
            .and_then(|a| eval::string_value(self.text, unparen(a)))
            .is_some_and(|code| code.contains("torch"))
    }
}
