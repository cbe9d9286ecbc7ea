//! A read-only copy of a tree-sitter tree in one flat array, for the model builder.
//!
//! The builder looks at most nodes many times (fields, children, parents, kinds). Each such step
//! on a `tree_sitter::Node` is an FFI call that re-derives positions and skips hidden nodes; on
//! this copy it is an array index. The copy is made with one cursor walk, in pre-order, so a
//! node's descendants are the indices right after it.
//!
//! [`Node`] mirrors the part of `tree_sitter::Node`'s API the builder uses, with the same
//! signatures (the cursor arguments are unused), so the builder reads the same over either.

use super::{KindTag, kinds, language};
use crate::text::TextRange;
use tree_sitter::Tree;

const NONE: u32 = u32::MAX;
const NAMED: u8 = 1;
const ERROR: u8 = 2;
const MISSING: u8 = 4;
const HAS_ERROR: u8 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Raw {
    start: u32,
    end: u32,
    parent: u32,
    first_child: u32,
    next_sibling: u32,
    kind: u16,
    /// The field this node fills in its parent (0 = none).
    field: u16,
    flags: u8,
}

/// Every node of one tree, in pre-order.
pub struct FlatTree {
    nodes: Vec<Raw>,
    /// Index of each top-level child of the root (each one's nodes run up to the next one's).
    top: Vec<u32>,
    /// How many of those were copied from the previous version.
    reused: usize,
}

impl std::fmt::Debug for FlatTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FlatTree({} nodes)", self.nodes.len())
    }
}

fn raw_of(n: tree_sitter::Node, field: u16, parent: u32) -> Raw {
    let mut flags = 0;
    if n.is_named() {
        flags |= NAMED;
    }
    if n.is_error() {
        flags |= ERROR;
    }
    if n.is_missing() {
        flags |= MISSING;
    }
    if n.has_error() {
        flags |= HAS_ERROR;
    }
    Raw {
        start: n.start_byte() as u32,
        end: n.end_byte() as u32,
        parent,
        first_child: NONE,
        next_sibling: NONE,
        kind: n.kind_id(),
        field,
        flags,
    }
}

/// Whether each kind (by id) is named, from the grammar's tables once.
fn named_kinds() -> &'static [bool] {
    static NAMED: std::sync::OnceLock<Vec<bool>> = std::sync::OnceLock::new();
    NAMED.get_or_init(|| {
        let lang = language();
        (0..lang.node_kind_count()).map(|k| lang.node_kind_is_named(k as u16)).collect()
    })
}

/// The kind id tree-sitter gives ERROR nodes (`ts_builtin_sym_error`).
const ERROR_KIND: u16 = u16::MAX;

/// [`raw_of`] for a node under a subtree without errors, in fewer calls into tree-sitter. No node
/// there is missing or has an error (a missing node's cost counts in every ancestor's); it may
/// still be an ERROR token (an inline leaf carries no error cost), which its kind says. Whether a
/// node is named follows from its kind (its alias's when aliased, as `kind_id` is).
#[inline]
fn raw_of_clean(n: tree_sitter::Node, field: u16, parent: u32, named: &[bool]) -> Raw {
    let kind = n.kind_id();
    let is_named = named.get(kind as usize).copied().unwrap_or_else(|| n.is_named());
    let is_error = kind == ERROR_KIND;
    debug_assert_eq!(is_named, n.is_named(), "kind {kind}");
    debug_assert_eq!(is_error, n.is_error(), "kind {kind}");
    debug_assert!(!n.is_missing() && !n.has_error(), "{n:?}");
    Raw {
        start: n.start_byte() as u32,
        end: n.end_byte() as u32,
        parent,
        first_child: NONE,
        next_sibling: NONE,
        kind,
        field,
        flags: if is_named { NAMED } else { 0 } | if is_error { ERROR } else { 0 },
    }
}

/// Appends `top` and its descendants in pre-order, `top` as a child of `parent`.
fn walk_into(top: tree_sitter::Node, parent: u32, nodes: &mut Vec<Raw>) {
    // Without errors under `top`, each node's flags come from its kind alone.
    let clean = (!top.has_error()).then(named_kinds);
    let mut cursor = top.walk();
    // For each open ancestor: its index and the index of its last child so far.
    let mut open: Vec<(u32, u32)> = Vec::with_capacity(64);
    loop {
        let n = cursor.node();
        let idx = nodes.len() as u32;
        let up = open.last().map_or(parent, |&(p, _)| p);
        if let Some((p, last)) = open.last_mut() {
            if *last == NONE {
                nodes[*p as usize].first_child = idx;
            } else {
                nodes[*last as usize].next_sibling = idx;
            }
            *last = idx;
        }
        let field = if open.is_empty() { 0 } else { cursor.field_id().map_or(0, |f| f.get()) };
        nodes.push(match clean {
            Some(named) => raw_of_clean(n, field, up, named),
            None => raw_of(n, field, up),
        });
        if cursor.goto_first_child() {
            open.push((idx, NONE));
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            open.pop();
        }
    }
}

impl FlatTree {
    pub fn new(tree: &Tree) -> Self {
        Self::reusing(tree, "", None)
    }

    /// The flat copy of `tree` (parsed from `text`), copying from `prev` (the copy of an earlier
    /// version, parsed from `prev_text`) every top-level statement whose text is unchanged.
    ///
    /// A top-level statement without syntax errors starts with an empty indent stack and no open
    /// bracket, so the grammar gives it the same subtree wherever it stands: only its byte offsets
    /// move. Statements with errors are always walked afresh (error recovery looks around).
    pub fn reusing(tree: &Tree, text: &str, prev: Option<(&FlatTree, &str)>) -> Self {
        let root = tree.root_node();
        let mut nodes: Vec<Raw> = Vec::with_capacity(root.descendant_count());
        nodes.push(raw_of(root, 0, NONE));
        let mut top = Vec::new();
        let old: std::collections::HashMap<(u16, &str), (u32, u32, u32)> = match prev {
            Some((p, ptext)) if !p.top.is_empty() => p
                .top
                .iter()
                .enumerate()
                .filter_map(|(k, &first)| {
                    let r = &p.nodes[first as usize];
                    let end = p.top.get(k + 1).copied().unwrap_or(p.nodes.len() as u32);
                    let t = ptext.get(r.start as usize..r.end as usize)?;
                    (r.flags & HAS_ERROR == 0).then_some(((r.kind, t), (first, end, r.start)))
                })
                .collect(),
            _ => Default::default(),
        };
        let mut reused = 0;
        let mut cursor = root.walk();
        if cursor.goto_first_child() {
            let mut last = NONE;
            loop {
                let n = cursor.node();
                let idx = nodes.len() as u32;
                top.push(idx);
                let field = cursor.field_id().map_or(0, |f| f.get());
                let reuse = (!n.has_error())
                    .then(|| text.get(n.start_byte()..n.end_byte()))
                    .flatten()
                    .and_then(|t| old.get(&(n.kind_id(), t)))
                    .zip(prev);
                match reuse {
                    Some((&(first, end, start), (p, _))) => {
                        let (shift, bytes) = (idx.wrapping_sub(first), (n.start_byte() as u32).wrapping_sub(start));
                        let moved = |i: u32| if i == NONE { NONE } else { i.wrapping_add(shift) };
                        nodes.extend(p.nodes[first as usize..end as usize].iter().map(|r| Raw {
                            start: r.start.wrapping_add(bytes),
                            end: r.end.wrapping_add(bytes),
                            parent: moved(r.parent),
                            first_child: moved(r.first_child),
                            next_sibling: moved(r.next_sibling),
                            ..*r
                        }));
                        let head = &mut nodes[idx as usize];
                        head.parent = 0;
                        head.next_sibling = NONE;
                        head.field = field;
                        reused += 1;
                    }
                    None => {
                        walk_into(n, 0, &mut nodes);
                        nodes[idx as usize].field = field;
                    }
                }
                if last == NONE {
                    nodes[0].first_child = idx;
                } else {
                    nodes[last as usize].next_sibling = idx;
                }
                last = idx;
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        FlatTree { nodes, top, reused }
    }

    /// A tree given in pre-order as (start, end, kind, field, named, depth) per node, the root
    /// first at depth 0, without error nodes (what [`super::direct`] builds).
    pub fn from_preorder(items: impl Iterator<Item = (u32, u32, u16, u16, bool, u16)>) -> Self {
        let mut nodes: Vec<Raw> = Vec::with_capacity(items.size_hint().0);
        let mut top = Vec::new();
        // For each open ancestor: its index and the index of its last child so far.
        let mut open: Vec<(u32, u32)> = Vec::with_capacity(64);
        for (start, end, kind, field, named, depth) in items {
            let idx = nodes.len() as u32;
            open.truncate(depth as usize);
            let parent = match open.last_mut() {
                Some((p, last)) => {
                    if *last == NONE {
                        nodes[*p as usize].first_child = idx;
                    } else {
                        nodes[*last as usize].next_sibling = idx;
                    }
                    *last = idx;
                    *p
                }
                None => NONE,
            };
            if depth == 1 {
                top.push(idx);
            }
            nodes.push(Raw {
                start,
                end,
                parent,
                first_child: NONE,
                next_sibling: NONE,
                kind,
                field,
                flags: if named { NAMED } else { 0 },
            });
            open.push((idx, NONE));
        }
        FlatTree { nodes, top, reused: 0 }
    }

    pub fn root_node(&self) -> Node<'_> {
        Node { tree: self, i: 0 }
    }

    /// Every node, in pre-order (the order of a cursor walk).
    pub fn preorder(&self) -> impl Iterator<Item = Node<'_>> {
        (0..self.nodes.len() as u32).map(move |i| Node { tree: self, i })
    }

    /// Top-level statements copied from the previous version by [`FlatTree::reusing`].
    pub fn reused_statements(&self) -> usize {
        self.reused
    }

    /// Byte ranges of the top-level statements (and comments), in order.
    pub fn top_ranges(&self) -> Vec<TextRange> {
        self.top.iter().map(|&i| TextRange::new(self.nodes[i as usize].start as usize, self.nodes[i as usize].end as usize)).collect()
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Every node on its own line, indented by depth (for test failures).
    pub fn describe(&self, text: &str) -> String {
        let mut out = String::new();
        for (i, r) in self.nodes.iter().enumerate() {
            let mut depth = 0;
            let mut p = r.parent;
            while p != NONE {
                depth += 1;
                p = self.nodes[p as usize].parent;
            }
            let t = text.get(r.start as usize..r.end as usize).unwrap_or("?");
            let t: String = t.chars().take(30).collect::<String>().replace('\n', "\\n");
            out += &format!("{i:4} {}{} {}..{} f{} {:?}\n", "  ".repeat(depth), kinds().name(r.kind), r.start, r.end, r.field, t);
        }
        out
    }

    /// Where `self` and `other` first differ (node, links or top-level list), described with
    /// both nodes' kinds and ranges; None when they are the same tree.
    pub fn first_difference(&self, other: &FlatTree) -> Option<String> {
        let show = |t: &FlatTree, i: usize| {
            t.nodes.get(i).map_or("(none)".to_string(), |r| {
                let parent = if r.parent == NONE { "-".to_string() } else { kinds().name(t.nodes[r.parent as usize].kind).to_string() };
                format!("{} {}..{} field {} named {} in {}", kinds().name(r.kind), r.start, r.end, r.field, r.flags & NAMED != 0, parent)
            })
        };
        let own = |r: Option<&Raw>| r.map(|r| (r.start, r.end, r.kind, r.field, r.flags));
        let n = self.nodes.len().max(other.nodes.len());
        let first = (0..n).find(|&i| own(self.nodes.get(i)) != own(other.nodes.get(i)));
        for i in first.into_iter().chain(0..n) {
            if self.nodes.get(i) != other.nodes.get(i) {
                return Some(format!(
                    "node {i}: {} vs {} ({:?} vs {:?})",
                    show(self, i),
                    show(other, i),
                    self.nodes.get(i),
                    other.nodes.get(i)
                ));
            }
        }
        (self.top != other.top).then(|| "top-level lists differ".to_string())
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

/// One node of a [`FlatTree`].
#[derive(Clone, Copy)]
pub struct Node<'t> {
    tree: &'t FlatTree,
    i: u32,
}

impl PartialEq for Node<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.i == other.i && std::ptr::eq(self.tree, other.tree)
    }
}

impl Eq for Node<'_> {}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{{Node {} {}..{}}}", self.kind(), self.start_byte(), self.end_byte())
    }
}

/// Stands in for `tree_sitter::TreeCursor` in the mirrored signatures; holds nothing.
pub struct Cursor;

impl<'t> Node<'t> {
    #[inline]
    fn raw(&self) -> &'t Raw {
        &self.tree.nodes[self.i as usize]
    }

    #[inline]
    fn at(&self, i: u32) -> Option<Node<'t>> {
        (i != NONE).then_some(Node { tree: self.tree, i })
    }

    /// Unique within the tree (the pre-order index).
    #[inline]
    pub fn id(&self) -> usize {
        self.i as usize
    }

    #[inline]
    pub fn kind_id(&self) -> u16 {
        self.raw().kind
    }

    pub fn kind(&self) -> &'static str {
        kinds().name(self.raw().kind)
    }

    #[inline]
    pub fn is_named(&self) -> bool {
        self.raw().flags & NAMED != 0
    }

    #[inline]
    pub fn is_error(&self) -> bool {
        self.raw().flags & ERROR != 0
    }

    #[inline]
    pub fn is_missing(&self) -> bool {
        self.raw().flags & MISSING != 0
    }

    #[inline]
    pub fn has_error(&self) -> bool {
        self.raw().flags & HAS_ERROR != 0
    }

    #[inline]
    pub fn start_byte(&self) -> usize {
        self.raw().start as usize
    }

    #[inline]
    pub fn end_byte(&self) -> usize {
        self.raw().end as usize
    }

    #[inline]
    pub fn parent(&self) -> Option<Node<'t>> {
        self.at(self.raw().parent)
    }

    /// Every child, named or not, in order.
    #[inline]
    pub fn all_children(&self) -> Children<'t> {
        Children { tree: self.tree, next: self.raw().first_child }
    }

    /// The first child that fills `name` (`child_by_field_name`).
    pub fn child_by_field_name(&self, name: &str) -> Option<Node<'t>> {
        // tree-sitter answers from the node's field map, which an ERROR node lacks, even where a
        // cursor (and so `children_by_field_name`) infers fields from the hidden rules inside it.
        if self.is_error() {
            return None;
        }
        let id = field_id(name)?;
        self.all_children().find(|c| c.raw().field == id)
    }

    /// Same as [`Node::child_by_field_name`], under the shorter name the builder uses.
    #[inline]
    pub fn field(&self, name: &str) -> Option<Node<'t>> {
        self.child_by_field_name(name)
    }

    pub fn children_by_field_name(&self, name: &str, _: &mut Cursor) -> impl Iterator<Item = Node<'t>> + 't {
        let id = field_id(name).unwrap_or(u16::MAX);
        self.all_children().filter(move |c| c.raw().field == id)
    }

    pub fn walk(&self) -> Cursor {
        Cursor
    }

    pub fn children(&self, _: &mut Cursor) -> Children<'t> {
        self.all_children()
    }

    /// Named children, comments included (tree-sitter's meaning; `syntax::flat::named_children`
    /// leaves comments out).
    pub fn named_children(&self, _: &mut Cursor) -> impl Iterator<Item = Node<'t>> + 't {
        self.all_children().filter(|c| c.is_named())
    }
}

/// Children of one node, in order.
pub struct Children<'t> {
    tree: &'t FlatTree,
    next: u32,
}

impl<'t> Iterator for Children<'t> {
    type Item = Node<'t>;

    #[inline]
    fn next(&mut self) -> Option<Node<'t>> {
        if self.next == NONE {
            return None;
        }
        let n = Node { tree: self.tree, i: self.next };
        self.next = n.raw().next_sibling;
        Some(n)
    }
}

/// Grammar field id of `name` (None when the grammar has no such field).
fn field_id(name: &str) -> Option<u16> {
    super::field_id(name).or_else(|| language().field_id_for_name(name).map(|f| f.get()))
}

/// Named, non-comment children of a node.
#[inline]
pub fn named_children(node: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    node.all_children().filter(|c| c.is_named() && !is_comment(*c))
}

#[inline]
pub fn is_comment(node: Node) -> bool {
    kinds().is(node, KindTag::Comment)
}

/// Byte range of a node.
#[inline]
pub fn range(node: Node) -> TextRange {
    TextRange::new(node.start_byte(), node.end_byte().max(node.start_byte()))
}

/// Source text of a node; empty when the node does not fit `text`.
#[inline]
pub fn node_text<'a>(text: &'a str, node: Node) -> &'a str {
    text.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax;

    /// Every node and every step the builder takes agrees with tree-sitter's own answer.
    fn assert_mirrors(text: &str) {
        let tree = syntax::parse(text);
        let flat = FlatTree::new(&tree);
        let mut cursor = tree.walk();
        let mut ts_nodes = Vec::new();
        loop {
            ts_nodes.push(cursor.node());
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    assert_eq!(ts_nodes.len(), flat.len());
                    for (t, f) in ts_nodes.iter().zip(flat.preorder()) {
                        assert_eq!((t.kind(), t.start_byte(), t.end_byte()), (f.kind(), f.start_byte(), f.end_byte()));
                        assert_eq!(
                            (t.is_named(), t.is_error(), t.is_missing(), t.has_error()),
                            (f.is_named(), f.is_error(), f.is_missing(), f.has_error())
                        );
                        assert_eq!(t.parent().map(|p| p.start_byte()), f.parent().map(|p| p.start_byte()));
                        let mut c = t.walk();
                        let kids: Vec<_> = t.children(&mut c).map(|k| (k.kind(), k.start_byte())).collect();
                        let fkids: Vec<_> = f.all_children().map(|k| (k.kind(), k.start_byte())).collect();
                        assert_eq!(kids, fkids);
                        for name in [
                            "name",
                            "left",
                            "right",
                            "function",
                            "arguments",
                            "value",
                            "body",
                            "subscript",
                            "alternative",
                            "key",
                            "type",
                            "module_name",
                            "definition",
                        ] {
                            assert_eq!(
                                t.child_by_field_name(name).map(|n| (n.kind(), n.start_byte())),
                                f.field(name).map(|n| (n.kind(), n.start_byte())),
                                "field {name} of {}",
                                t.kind()
                            );
                            let mut c = t.walk();
                            let all: Vec<_> = t.children_by_field_name(name, &mut c).map(|n| n.start_byte()).collect();
                            let fall: Vec<_> = f.children_by_field_name(name, &mut Cursor).map(|n| n.start_byte()).collect();
                            assert_eq!(all, fall, "fields {name} of {}", t.kind());
                        }
                    }
                    return;
                }
            }
        }
    }

    /// Edits at spread positions of every fixture: the copy that reuses the previous version's
    /// statements equals a fresh copy, node for node.
    #[test]
    fn reusing_unchanged_statements_gives_the_fresh_copy() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules");
        let mut reused_some = 0;
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let Ok(text) = std::fs::read_to_string(e.path()) else { continue };
            let prev = FlatTree::new(&syntax::parse(&text));
            for (i, cut) in (1..10).map(|i| text.len() * i / 10).enumerate() {
                let Some(cut) = (cut..text.len()).find(|c| text.is_char_boundary(*c)) else { continue };
                let edit = ["x", "(", "\n\n", "", "    y = 1\n", "é", ":", "#", "'"][i % 9];
                let mut new_text = text.clone();
                new_text.insert_str(cut, edit);
                if i % 3 == 0 {
                    new_text.replace_range(..text[..cut].rfind('\n').unwrap_or(0), "");
                }
                let tree = syntax::parse(&new_text);
                let fresh = FlatTree::new(&tree);
                let reused = FlatTree::reusing(&tree, &new_text, Some((&prev, &text)));
                assert_eq!(fresh.nodes, reused.nodes, "{} edited at {cut} with {edit:?}", e.path().display());
                assert_eq!(fresh.top, reused.top);
                reused_some += reused.reused_statements();
            }
        }
        assert!(reused_some > 100, "only {reused_some} statements reused");
    }

    #[test]
    fn flat_tree_mirrors_tree_sitter_on_fixtures_and_broken_text() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules");
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let Ok(text) = std::fs::read_to_string(e.path()) else { continue };
            assert_mirrors(&text);
            let mid = (0..=text.len() / 2).rev().find(|i| text.is_char_boundary(*i)).unwrap();
            assert_mirrors(&format!("{}(:[\n{}", &text[..mid], &text[mid..]));
            n += 1;
        }
        assert!(n > 0);
        assert_mirrors("");
        assert_mirrors("def f(:\n  x = [1,\n");
    }
}
