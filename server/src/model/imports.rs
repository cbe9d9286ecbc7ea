//! Import alias resolution: which local names mean `triton`, `triton.language`, libdevice, or a
//! specific Triton object (`from triton import jit, autotune, Config, heuristics`); every other
//! import is recorded as written (`Imports::modules`) for `package` to follow into other files.
//!
//! Imports anywhere in the file count (function-local `import triton.language as tl` is common,
//! corpus edge case 7). Names bound by non-Triton imports are remembered so that the default
//! spellings (`triton`, `tl`) are not assumed for them.

use super::types::{Imports, ModuleImport, STAR};
use crate::syntax::flat::Node;
use crate::syntax::flat::{named_children, node_text};
use std::collections::HashSet;

/// Normalises a fully qualified Triton path to the short canonical form the model uses:
/// `triton.language.dot` → `tl.dot`, any `...libdevice.exp` → `libdevice.exp`,
/// `triton.runtime.jit.jit` → `triton.jit`.
pub fn normalize(path: &str) -> String {
    if let Some(pos) = path.find("libdevice") {
        let head = &path[..pos];
        if head.is_empty() || head.starts_with("triton.language.") || head.starts_with("tl.") {
            return path[pos..].to_string();
        }
    }
    match path {
        "triton.runtime.jit.jit" | "triton.runtime.jit" => return "triton.jit".into(),
        "triton.runtime.autotuner.autotune" | "triton.runtime.autotune" => return "triton.autotune".into(),
        "triton.runtime.autotuner.heuristics" | "triton.runtime.heuristics" => return "triton.heuristics".into(),
        "triton.runtime.autotuner.Config" | "triton.runtime.Config" => return "triton.Config".into(),
        _ => {}
    }
    if path == "triton.language" {
        return "tl".into();
    }
    if let Some(rest) = path.strip_prefix("triton.language.") {
        return format!("tl.{rest}");
    }
    path.to_string()
}

fn dotted(text: &str, node: Node) -> String {
    // `dotted_name` text may contain whitespace or comments inside parentheses; rebuild it.
    if node.kind() == "dotted_name" {
        named_children(node).map(|n| node_text(text, n)).collect::<Vec<_>>().join(".")
    } else {
        node_text(text, node).to_string()
    }
}

/// Records that `local` is bound to the module/object at `path`.
fn bind(imports: &mut Imports, shadowed: &mut HashSet<String>, local: &str, path: &str) {
    if !(path == "triton" || path.starts_with("triton.")) {
        shadowed.insert(local.to_string());
        return;
    }
    let canon = normalize(path);
    let push = |v: &mut Vec<String>| {
        if !v.iter().any(|x| x == local) {
            v.push(local.to_string());
        }
    };
    if path == "triton" {
        push(&mut imports.triton);
    } else if canon == "tl" {
        push(&mut imports.language);
    } else if canon == "libdevice" {
        push(&mut imports.libdevice);
    } else if !imports.names.iter().any(|(l, c)| l == local && *c == canon) {
        imports.names.push((local.to_string(), canon));
    }
}

fn is_triton_path(path: &str) -> bool {
    path == "triton" || path.starts_with("triton.")
}

/// Records a non-Triton import binding (the last binding of a name wins when resolved).
fn bind_module(imports: &mut Imports, local: &str, level: usize, module: &str, name: Option<&str>) {
    if level == 0 && is_triton_path(module) {
        return;
    }
    imports.modules.push(ModuleImport { local: local.to_string(), level, module: module.to_string(), name: name.map(str::to_string) });
}

/// Adds what one `import ...` / `from ... import ...` statement binds.
pub fn collect(text: &str, stmt: Node, imports: &mut Imports, shadowed: &mut HashSet<String>) {
    match stmt.kind() {
        "import_statement" => {
            let mut cursor = stmt.walk();
            for name in stmt.children_by_field_name("name", &mut cursor) {
                match name.kind() {
                    "dotted_name" => {
                        // `import triton.language` binds `triton` only.
                        let path = dotted(text, name);
                        let head = path.split('.').next().unwrap_or("");
                        bind(imports, shadowed, head, head);
                        bind_module(imports, head, 0, head, None);
                    }
                    "aliased_import" => {
                        let (Some(n), Some(alias)) = (name.field("name"), name.field("alias")) else {
                            continue;
                        };
                        let path = dotted(text, n);
                        bind(imports, shadowed, node_text(text, alias), &path);
                        bind_module(imports, node_text(text, alias), 0, &path, None);
                    }
                    _ => {}
                }
            }
        }
        "import_from_statement" => {
            let Some(module) = stmt.field("module_name") else { return };
            let relative = module.kind() == "relative_import";
            let module_path = dotted(text, module);
            // `..a.b` is a relative_import node: its dots, then the dotted name.
            let (level, from) = if relative {
                let dots = module_path.chars().take_while(|c| *c == '.').count();
                let rest = named_children(module).find(|n| n.kind() == "dotted_name").map(|n| dotted(text, n)).unwrap_or_default();
                (dots, rest)
            } else {
                (0, module_path.clone())
            };
            // `from m import *` binds every public name of m: recorded as one import that
            // `package` looks names up in when nothing else binds them.
            if named_children(stmt).any(|n| n.kind() == "wildcard_import") {
                bind_module(imports, STAR, level, &from, Some(STAR));
            }
            let mut cursor = stmt.walk();
            for name in stmt.children_by_field_name("name", &mut cursor) {
                let (object, local) = match name.kind() {
                    "dotted_name" => {
                        let o = dotted(text, name);
                        (o.clone(), o)
                    }
                    "aliased_import" => {
                        let (Some(n), Some(alias)) = (name.field("name"), name.field("alias")) else {
                            continue;
                        };
                        (dotted(text, n), node_text(text, alias).to_string())
                    }
                    _ => continue,
                };
                bind_module(imports, &local, level, &from, Some(&object));
                if relative {
                    shadowed.insert(local);
                } else {
                    bind(imports, shadowed, &local, &format!("{module_path}.{object}"));
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_paths() {
        assert_eq!(normalize("triton.language.dot"), "tl.dot");
        assert_eq!(normalize("triton.language.extra.cuda.libdevice.exp"), "libdevice.exp");
        assert_eq!(normalize("tl.extra.intel.libdevice.tanh"), "libdevice.tanh");
        assert_eq!(normalize("triton.language.extra.libdevice"), "libdevice");
        assert_eq!(normalize("triton.jit"), "triton.jit");
        assert_eq!(normalize("triton.runtime.jit.jit"), "triton.jit");
    }
}
