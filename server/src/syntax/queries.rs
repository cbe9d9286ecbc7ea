//! The embedded queries (`queries/*.scm`), compiled once into a single `Query` so one
//! `QueryCursor` pass over a tree serves the whole model builder.

use std::sync::OnceLock;
use tree_sitter::{Query, QueryCursor, StreamingIterator, Tree};

/// The query files, in the order they are concatenated.
const SOURCES: [(&str, &str); 6] = [
    ("kernels.scm", include_str!("../../../queries/kernels.scm")),
    ("calls.scm", include_str!("../../../queries/calls.scm")),
    ("imports.scm", include_str!("../../../queries/imports.scm")),
    ("suppressions.scm", include_str!("../../../queries/suppressions.scm")),
    ("obfuscation.scm", include_str!("../../../queries/obfuscation.scm")),
    ("assignments.scm", include_str!("../../../queries/assignments.scm")),
];

/// What a capture found; the builder dispatches on this rather than on capture-name strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capture {
    KernelDecorated,
    Call,
    CallFunction,
    Import,
    Suppression,
    ObfuscationCall,
    ObfuscationFunc,
    Assignment,
    AssignmentLeft,
    AssignmentRight,
    Mutation,
    Other,
}

pub struct Queries {
    pub query: Query,
    kinds: Vec<Capture>,
}

impl Queries {
    fn compile() -> Self {
        let source: String = SOURCES.iter().map(|(_, s)| *s).collect::<Vec<_>>().join("\n");
        // The queries are part of the binary; a failure is a build bug caught by the unit test below.
        let query = Query::new(&super::language(), &source).unwrap_or_else(|e| panic!("invalid embedded query: {e}"));
        let kinds = query
            .capture_names()
            .iter()
            .map(|name| match *name {
                "kernel.decorated" => Capture::KernelDecorated,
                "call" => Capture::Call,
                "call.function" => Capture::CallFunction,
                "import" => Capture::Import,
                "suppression" => Capture::Suppression,
                "obfuscation.call" => Capture::ObfuscationCall,
                "obfuscation.func" => Capture::ObfuscationFunc,
                "assignment" => Capture::Assignment,
                "assignment.left" => Capture::AssignmentLeft,
                "assignment.right" => Capture::AssignmentRight,
                "mutation" => Capture::Mutation,
                _ => Capture::Other,
            })
            .collect();
        Queries { query, kinds }
    }

    /// Kind of a capture index of `self.query`.
    pub fn capture(&self, index: u32) -> Capture {
        self.kinds.get(index as usize).copied().unwrap_or(Capture::Other)
    }

    /// Runs every pattern over `tree`, calling `f` once per match with its captures.
    pub fn for_each_match<'t>(&self, tree: &'t Tree, text: &str, mut f: impl FnMut(&[(Capture, tree_sitter::Node<'t>)])) {
        let mut cursor = QueryCursor::new();
        let mut matches = cursor.matches(&self.query, tree.root_node(), text.as_bytes());
        let mut buf: Vec<(Capture, tree_sitter::Node<'t>)> = Vec::with_capacity(4);
        while let Some(m) = matches.next() {
            buf.clear();
            buf.extend(m.captures().iter().map(|c| (self.capture(c.index), c.node)));
            f(&buf);
        }
    }
}

/// The compiled queries (compiled on first use).
pub fn queries() -> &'static Queries {
    static Q: OnceLock<Queries> = OnceLock::new();
    Q.get_or_init(Queries::compile)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_queries_compile_and_name_every_capture() {
        let q = queries();
        for (i, name) in q.query.capture_names().iter().enumerate() {
            assert_ne!(q.capture(i as u32), Capture::Other, "capture @{name} is not dispatched");
        }
    }
}
