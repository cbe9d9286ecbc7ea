//! Parsing Python with tree-sitter and the compiled queries the model builder runs.
//!
//! One parser per thread (tree-sitter parsers are not `Sync`, and creating one per file would
//! dominate the cost of small files); every query in `queries/*.scm` is compiled once into a
//! single `Query`, so the model builder walks the tree once for all of them.

pub mod direct;
pub mod flat;
mod queries;

pub use queries::{Capture, Queries, queries};

use crate::text::TextRange;
use std::cell::RefCell;
use tree_sitter::{Node, Parser, Tree};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// The tree-sitter Python grammar this crate is built against.
pub fn language() -> tree_sitter::Language {
    tree_sitter_python::LANGUAGE.into()
}

fn with_parser<R>(f: impl FnOnce(&mut Parser) -> R) -> R {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let parser = slot.get_or_insert_with(|| {
            let mut p = Parser::new();
            // The grammar is compiled into this binary with a supported ABI; failing here is a build bug.
            p.set_language(&language()).expect("tree-sitter-python ABI is supported by tree-sitter 0.27");
            p
        });
        f(parser)
    })
}

/// Parses `text` from scratch. Syntax errors become ERROR/MISSING nodes, never a failure.
pub fn parse(text: &str) -> Tree {
    with_parser(|p| {
        p.reset();
        // `parse` only returns None without a language or when cancelled; neither can happen here.
        p.parse(text, None).expect("a parser with a language and no cancellation always yields a tree")
    })
}

/// Re-parses `text` reusing `old_tree`, which the caller has already `edit`ed to match `text`.
pub fn parse_incremental(text: &str, old_tree: &Tree) -> Tree {
    with_parser(|p| {
        p.reset();
        p.parse(text, Some(old_tree)).expect("a parser with a language and no cancellation always yields a tree")
    })
}

/// Field names the builder asks for, resolved to grammar field ids once (tree-sitter's own
/// lookup scans every field name of the grammar on each call).
const FIELDS: [&str; 21] = [
    "name",
    "left",
    "function",
    "right",
    "arguments",
    "value",
    "body",
    "operator",
    "object",
    "attribute",
    "parameters",
    "definition",
    "argument",
    "type",
    "module_name",
    "key",
    "condition",
    "alias",
    "consequence",
    "alternative",
    "subscript",
];

fn field_id(name: &str) -> Option<u16> {
    static IDS: std::sync::OnceLock<Vec<Option<u16>>> = std::sync::OnceLock::new();
    // A match compiles to a switch on the length and one comparison; the builder asks often.
    let i = match name {
        "name" => 0,
        "left" => 1,
        "function" => 2,
        "right" => 3,
        "arguments" => 4,
        "value" => 5,
        "body" => 6,
        "operator" => 7,
        "object" => 8,
        "attribute" => 9,
        "parameters" => 10,
        "definition" => 11,
        "argument" => 12,
        "type" => 13,
        "module_name" => 14,
        "key" => 15,
        "condition" => 16,
        "alias" => 17,
        "consequence" => 18,
        "alternative" => 19,
        "subscript" => 20,
        _ => return None,
    };
    let ids = IDS.get_or_init(|| {
        let lang = language();
        FIELDS.iter().map(|f| lang.field_id_for_name(f).map(|id| id.get())).collect()
    });
    ids[i]
}

/// Byte range of a node.
pub fn range(node: Node) -> TextRange {
    TextRange::new(node.start_byte(), node.end_byte().max(node.start_byte()))
}

/// Source text of a node; empty when the node does not fit `text` (a tree from another version).
pub fn node_text<'a>(text: &'a str, node: Node) -> &'a str {
    text.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

/// True for nodes that carry no syntax (comments), which argument walkers must skip.
pub fn is_trivia(node: Node) -> bool {
    !node.is_named() || is_comment(node)
}

/// An `if`/`try`/`with` statement, one of its clauses, or a block: what runs at the level it is
/// written at, so a definition under `if triton_available():` at module level is the module's.
pub fn is_guard(kind: &str) -> bool {
    matches!(
        kind,
        "if_statement" | "elif_clause" | "else_clause" | "try_statement" | "except_clause" | "finally_clause" | "with_statement" | "block"
    )
}

/// Named, non-comment children of a node.
pub fn named_children(node: Node<'_>) -> NamedChildren<'_> {
    NamedChildren { cursor: node.walk(), state: Walk::Start }
}

/// Iterator behind [`named_children`]: one cursor, no allocation per call (the builder calls it
/// for nearly every node it looks at).
pub struct NamedChildren<'t> {
    cursor: tree_sitter::TreeCursor<'t>,
    state: Walk,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Walk {
    Start,
    Running,
    Done,
}

impl<'t> Iterator for NamedChildren<'t> {
    type Item = Node<'t>;

    fn next(&mut self) -> Option<Node<'t>> {
        loop {
            let moved = match self.state {
                Walk::Done => return None,
                Walk::Start => self.cursor.goto_first_child(),
                Walk::Running => self.cursor.goto_next_sibling(),
            };
            if !moved {
                self.state = Walk::Done;
                return None;
            }
            self.state = Walk::Running;
            let n = self.cursor.node();
            if n.is_named() && !is_comment(n) {
                return Some(n);
            }
        }
    }
}

/// Whether `node` is a comment, by symbol id (cheaper than comparing `kind()` strings).
pub fn is_comment(node: Node) -> bool {
    kinds().is(node, KindTag::Comment)
}

/// Node kinds the hot paths test by id. Built once from the grammar; every symbol id whose
/// name matches is tagged, so aliased symbols are covered too.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum KindTag {
    Other,
    Comment,
    Call,
    DecoratedDefinition,
    FunctionDefinition,
    ImportStatement,
    ImportFromStatement,
    Assignment,
    AugmentedAssignment,
    GlobalStatement,
    Identifier,
    Attribute,
    DottedName,
    BinaryOperator,
}

pub struct Kinds {
    tags: Vec<KindTag>,
    names: Vec<&'static str>,
}

/// A node of either tree type, as far as kind dispatch needs it.
pub trait KindOf: Copy {
    fn kind_id(&self) -> u16;
    fn is_named(&self) -> bool;
}

impl KindOf for Node<'_> {
    #[inline]
    fn kind_id(&self) -> u16 {
        Node::kind_id(self)
    }
    #[inline]
    fn is_named(&self) -> bool {
        Node::is_named(self)
    }
}

impl KindOf for flat::Node<'_> {
    #[inline]
    fn kind_id(&self) -> u16 {
        flat::Node::kind_id(self)
    }
    #[inline]
    fn is_named(&self) -> bool {
        flat::Node::is_named(self)
    }
}

impl Kinds {
    fn build() -> Self {
        // Kind names borrow from the language; this one lives as long as the table (the program).
        let lang: &'static tree_sitter::Language = Box::leak(Box::new(language()));
        let count = lang.node_kind_count();
        let mut tags = vec![KindTag::Other; count];
        let names = (0..count).map(|id| u16::try_from(id).ok().and_then(|id| lang.node_kind_for_id(id)).unwrap_or("")).collect();
        for (id, tag) in tags.iter_mut().enumerate() {
            let Ok(id16) = u16::try_from(id) else { break };
            if !lang.node_kind_is_named(id16) {
                continue;
            }
            *tag = match lang.node_kind_for_id(id16) {
                Some("comment") => KindTag::Comment,
                Some("call") => KindTag::Call,
                Some("decorated_definition") => KindTag::DecoratedDefinition,
                Some("function_definition") => KindTag::FunctionDefinition,
                Some("import_statement") => KindTag::ImportStatement,
                Some("import_from_statement") => KindTag::ImportFromStatement,
                Some("assignment") => KindTag::Assignment,
                Some("augmented_assignment") => KindTag::AugmentedAssignment,
                Some("global_statement") => KindTag::GlobalStatement,
                Some("identifier") => KindTag::Identifier,
                Some("attribute") => KindTag::Attribute,
                Some("dotted_name") => KindTag::DottedName,
                Some("binary_operator") => KindTag::BinaryOperator,
                _ => KindTag::Other,
            };
        }
        Kinds { tags, names }
    }

    /// The tag of a node (`Other` for anonymous nodes and untracked kinds).
    pub fn tag(&self, node: impl KindOf) -> KindTag {
        if !node.is_named() {
            return KindTag::Other;
        }
        self.tags.get(usize::from(node.kind_id())).copied().unwrap_or(KindTag::Other)
    }

    pub fn is(&self, node: impl KindOf, tag: KindTag) -> bool {
        self.tag(node) == tag
    }

    /// The kind name of a kind id (what `Node::kind` returns).
    #[inline]
    pub fn name(&self, id: u16) -> &'static str {
        // ERROR nodes carry tree-sitter's builtin symbol, outside the grammar's table.
        if id == u16::MAX {
            return "ERROR";
        }
        self.names.get(usize::from(id)).copied().unwrap_or("")
    }
}

/// The kind table (built on first use).
pub fn kinds() -> &'static Kinds {
    static K: std::sync::OnceLock<Kinds> = std::sync::OnceLock::new();
    K.get_or_init(Kinds::build)
}

/// Whether two trees have the same nodes (kind, byte range, missing flag, field) in the same
/// shape. One walk of both with cursors, no allocation.
pub fn same_shape(a: &Tree, b: &Tree) -> bool {
    let (mut x, mut y) = (a.walk(), b.walk());
    loop {
        let (n, m) = (x.node(), y.node());
        if n.kind_id() != m.kind_id()
            || n.byte_range() != m.byte_range()
            || n.is_missing() != m.is_missing()
            || x.field_id() != y.field_id()
        {
            return false;
        }
        let (dx, dy) = (x.goto_first_child(), y.goto_first_child());
        if dx != dy {
            return false;
        }
        if dx {
            continue;
        }
        loop {
            let (sx, sy) = (x.goto_next_sibling(), y.goto_next_sibling());
            if sx != sy {
                return false;
            }
            if sx {
                break;
            }
            let (px, py) = (x.goto_parent(), y.goto_parent());
            if px != py {
                return false;
            }
            if !px {
                return true;
            }
        }
    }
}

/// Ranges of ERROR and MISSING nodes, outermost only.
pub fn error_ranges(tree: &Tree) -> Vec<TextRange> {
    let mut out = Vec::new();
    let root = tree.root_node();
    if !root.has_error() {
        return out;
    }
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        let mut descend = node.has_error();
        if node.is_error() || node.is_missing() {
            out.push(range(node));
            descend = false;
        }
        if descend && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_reports_errors() {
        let tree = parse("def f(:\n    pass\n");
        assert!(tree.root_node().has_error());
        assert!(!error_ranges(&tree).is_empty());
        let ok = parse("x = 1\n");
        assert!(error_ranges(&ok).is_empty());
    }

    #[test]
    fn incremental_parse_matches_fresh_parse() {
        let old_text = "x = 1\n";
        let mut tree = parse(old_text);
        let new_text = "x = 12\n";
        tree.edit(&tree_sitter::InputEdit {
            start_byte: 5,
            old_end_byte: 5,
            new_end_byte: 6,
            start_position: tree_sitter::Point { row: 0, column: 5 },
            old_end_position: tree_sitter::Point { row: 0, column: 5 },
            new_end_position: tree_sitter::Point { row: 0, column: 6 },
        });
        let inc = parse_incremental(new_text, &tree);
        assert_eq!(inc.root_node().to_sexp(), parse(new_text).root_node().to_sexp());
    }
}
