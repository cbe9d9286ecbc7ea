//! Open documents: text as a rope, the version the client gave it, and a tree-sitter tree kept in
//! step with the text by `Tree::edit`.
//!
//! Applying a change is cheap (a rope edit and `tree.edit`, both O(log n)) so it runs on the ordered
//! ingress path; the reparse is done later by the document's worker, on a snapshot.
//!
//! The invariant "a tree said to be current was parsed from exactly the current text" holds by
//! construction: every change to the text bumps `text_gen`, a snapshot carries the generation of
//! the text it holds, a tree is stored with the generation it was parsed from, and "current" is the
//! comparison of the two, never a flag some caller sets. Edits are logged with the generation they
//! produced, with or without a tree, so a parse of an older snapshot (the first parse racing the first
//! edits, say) gets the later edits replayed on install and stays not current.

use ropey::Rope;
use std::ops::ControlFlow;
use tower_lsp::lsp_types::TextDocumentContentChangeEvent;
use tree_sitter::{InputEdit, Parser, Point, Tree};

use super::encoding::{Encoding, position_to_byte};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ChangeError {
    #[error("version {got} is not newer than the document's version {current}")]
    StaleVersion { got: i32, current: i32 },
}

#[derive(Debug, Clone)]
pub struct Document {
    rope: Rope,
    version: i32,
    /// Bumped by every change to the text (several per didChange when it has several changes).
    text_gen: u64,
    /// The last installed tree with every later edit applied (`None` until the first parse, and
    /// after a full-text replacement).
    tree: Option<Tree>,
    /// The text generation `tree` was parsed from: the tree is current iff this is `text_gen`.
    parsed_gen: u64,
    /// Every edit after generation `log_from`, with the generation it produced.
    edit_log: Vec<(u64, InputEdit)>,
    /// Edits from here on are in `edit_log`; a snapshot older than this cannot be brought up to date
    /// (the text was replaced wholesale, or a newer tree installed) and its tree is dropped.
    log_from: u64,
    /// First byte changed since the last save or open: diagnostics before it are still placed right.
    dirty_from: Option<usize>,
}

/// Everything a worker needs to parse and analyse one version, without holding the document lock.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub rope: Rope,
    pub version: i32,
    /// The document's tree, edited to match `rope` (parsed from an older text unless `tree_current`).
    pub tree: Option<Tree>,
    pub tree_current: bool,
    /// The generation of the text in `rope`.
    pub text_gen: u64,
}

impl Document {
    pub fn new(text: &str, version: i32) -> Document {
        Document {
            rope: Rope::from_str(text),
            version,
            text_gen: 0,
            tree: None,
            parsed_gen: 0,
            edit_log: Vec::new(),
            log_from: 0,
            dirty_from: None,
        }
    }

    pub fn version(&self) -> i32 {
        self.version
    }
    pub fn rope(&self) -> &Rope {
        &self.rope
    }
    pub fn text(&self) -> String {
        self.rope.to_string()
    }
    pub fn dirty_from(&self) -> Option<usize> {
        self.dirty_from
    }
    pub fn mark_saved(&mut self) {
        self.dirty_from = None;
    }

    /// Forget the tree (a large idle document, see `worker::slim_when_idle`): the next parse starts
    /// from scratch. Logged edits stay for parses in flight.
    pub fn drop_tree(&mut self) {
        self.tree = None;
    }

    /// Whether the tree was parsed from exactly the current text.
    pub fn tree_current(&self) -> bool {
        self.tree.is_some() && self.parsed_gen == self.text_gen
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            rope: self.rope.clone(),
            version: self.version,
            tree: self.tree.clone(),
            tree_current: self.tree_current(),
            text_gen: self.text_gen,
        }
    }

    /// Apply one didChange notification: its changes in array order, each against the text the
    /// previous one produced. Versions must increase (not necessarily by one); an older or equal
    /// version is refused and nothing is applied.
    pub fn apply_changes(&mut self, version: i32, changes: &[TextDocumentContentChangeEvent], enc: Encoding) -> Result<(), ChangeError> {
        if version <= self.version {
            return Err(ChangeError::StaleVersion { got: version, current: self.version });
        }
        for change in changes {
            match change.range {
                None => self.replace_all(&change.text),
                Some(range) => {
                    let a = position_to_byte(&self.rope, range.start, enc);
                    let b = position_to_byte(&self.rope, range.end, enc);
                    self.edit_bytes(a.min(b), a.max(b), &change.text);
                }
            }
        }
        self.version = version;
        Ok(())
    }

    /// One change given in bytes (`[start, end)` on char boundaries, clamped): what a notebook's
    /// concatenated cells get from `lsp::notebook`. Versions must increase, as for [`apply_changes`].
    pub fn replace_bytes(&mut self, version: i32, start: usize, end: usize, text: &str) -> Result<(), ChangeError> {
        if version <= self.version {
            return Err(ChangeError::StaleVersion { got: version, current: self.version });
        }
        let len = self.rope.len_bytes();
        let (start, end) = (start.min(len), end.min(len).max(start.min(len)));
        if start != end || !text.is_empty() {
            self.edit_bytes(start, end, text);
        }
        self.version = version;
        Ok(())
    }

    fn replace_all(&mut self, text: &str) {
        self.rope = Rope::from_str(text);
        self.text_gen += 1;
        self.tree = None;
        // No edit leads from an older text to this one: older snapshots' trees are dropped.
        self.edit_log.clear();
        self.log_from = self.text_gen;
        self.dirty_from = Some(0);
    }

    /// Replace bytes `[start, end)` (char boundaries) with `text`, keeping the tree in step.
    fn edit_bytes(&mut self, start: usize, end: usize, text: &str) {
        let start_position = byte_point(&self.rope, start);
        let old_end_position = byte_point(&self.rope, end);
        let sc = self.rope.byte_to_char(start);
        let ec = self.rope.byte_to_char(end);
        self.rope.remove(sc..ec);
        self.rope.insert(sc, text);
        let edit = InputEdit {
            start_byte: start,
            old_end_byte: end,
            new_end_byte: start + text.len(),
            start_position,
            old_end_position,
            new_end_position: advance_point(start_position, text),
        };
        if let Some(tree) = self.tree.as_mut() {
            tree.edit(&edit);
        }
        self.text_gen += 1;
        // Logged with no tree too: a parse of a snapshot taken before this edit (the first parse,
        // racing the first edits) gets it replayed on install.
        self.edit_log.push((self.text_gen, edit));
        self.dirty_from = Some(self.dirty_from.map_or(start, |d| d.min(start)));
    }

    /// Install a tree parsed from `snap`'s text. Returns false (and drops it) when the text was replaced
    /// wholesale or a tree of a newer text installed since the snapshot; otherwise the edits made since
    /// are replayed onto it, and it is current exactly when there were none.
    pub fn install_tree(&mut self, snap: &Snapshot, mut tree: Tree) -> bool {
        if snap.text_gen < self.log_from || snap.text_gen > self.text_gen {
            return false;
        }
        for (_, edit) in self.edit_log.iter().filter(|(g, _)| *g > snap.text_gen) {
            tree.edit(edit);
        }
        self.edit_log.retain(|(g, _)| *g > snap.text_gen);
        self.log_from = snap.text_gen;
        self.tree = Some(tree);
        self.parsed_gen = snap.text_gen;
        true
    }
}

/// Tree-sitter point of a byte offset. Rows follow the rope's line breaks, which equal tree-sitter's
/// ('\n' only) for LF and CRLF text; only byte offsets are ever read back from the tree.
fn byte_point(rope: &Rope, byte: usize) -> Point {
    let row = rope.byte_to_line(byte);
    Point { row, column: byte - rope.line_to_byte(row) }
}

/// Where an insertion of `text` starting at `start` ends, computed from the text alone.
fn advance_point(start: Point, text: &str) -> Point {
    match text.rfind('\n') {
        None => Point { row: start.row, column: start.column + text.len() },
        Some(i) => Point { row: start.row + text.matches('\n').count(), column: text.len() - i - 1 },
    }
}

thread_local! {
    static PARSER: std::cell::RefCell<Option<Parser>> = const { std::cell::RefCell::new(None) };
}

/// Parse a rope, reusing `old` (already edited to match) when given. `cancelled` is polled during the
/// parse; when it returns true the parse stops and `None` comes back, so a newer version can start.
pub fn parse_rope(rope: &Rope, old: Option<&Tree>, cancelled: &dyn Fn() -> bool) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut p = Parser::new();
            p.set_language(&crate::syntax::language()).ok()?;
            *slot = Some(p);
        }
        let parser = slot.as_mut()?;
        let len = rope.len_bytes();
        let mut read = |b: usize, _: Point| -> &[u8] {
            if b >= len {
                return &[];
            }
            let (chunk, chunk_byte, _, _) = rope.chunk_at_byte(b);
            &chunk.as_bytes()[b - chunk_byte..]
        };
        let mut progress = |_: &tree_sitter::ParseState| if cancelled() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) };
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
        let tree = parser.parse_with_options(&mut read, old, Some(options));
        if tree.is_none() {
            // A stopped parse leaves resumable state behind; the next parse is of other text.
            parser.reset();
        }
        tree
    })
}

/// A parse of a snapshot, and whether it is certainly the tree `xeforge check` would build.
pub struct SnapshotTree {
    pub tree: Tree,
    /// Parsed from scratch, or incremental without syntax errors. An incremental tree with errors
    /// has been the fresh one on every text tried (see the test below), but tree-sitter does not
    /// promise it, so the worker checks it against a fresh parse once the document is idle.
    pub trusted: bool,
}

/// Parses incrementally from the snapshot's edited tree when there is one, else from scratch.
pub fn parse_snapshot(snap: &Snapshot, cancelled: &dyn Fn() -> bool) -> Option<SnapshotTree> {
    match snap.tree.as_ref() {
        Some(old) => {
            let tree = parse_rope(&snap.rope, Some(old), cancelled)?;
            let trusted = !tree.root_node().has_error();
            Some(SnapshotTree { tree, trusted })
        }
        None => Some(SnapshotTree { tree: parse_rope(&snap.rope, None, cancelled)?, trusted: true }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp::lsp_types::{Position, Range};

    fn change(l0: u32, c0: u32, l1: u32, c1: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range { start: Position::new(l0, c0), end: Position::new(l1, c1) }),
            range_length: None,
            text: text.into(),
        }
    }

    fn sexp(t: &Tree) -> String {
        t.root_node().to_sexp()
    }

    #[test]
    fn changes_apply_in_array_order_against_the_previous_result() {
        let mut d = Document::new("x = 1\n", 0);
        d.apply_changes(3, &[change(0, 4, 0, 5, "22"), change(0, 6, 0, 6, " # 🚀")], Encoding::Utf16).unwrap();
        assert_eq!(d.text(), "x = 22 # 🚀\n");
        assert_eq!(d.version(), 3);
    }

    #[test]
    fn older_or_equal_versions_are_refused_without_effect() {
        let mut d = Document::new("abc", 5);
        let err = d.apply_changes(5, &[change(0, 0, 0, 0, "z")], Encoding::Utf8).unwrap_err();
        assert_eq!(err, ChangeError::StaleVersion { got: 5, current: 5 });
        assert!(d.apply_changes(4, &[change(0, 0, 0, 0, "z")], Encoding::Utf8).is_err());
        assert_eq!(d.text(), "abc");
    }

    #[test]
    fn incremental_tree_matches_a_fresh_parse_after_edits() {
        let mut d = Document::new("def f(a):\n    return a + 1\n", 0);
        let snap = d.snapshot();
        let tree = parse_snapshot(&snap, &|| false).unwrap().tree;
        assert!(d.install_tree(&snap, tree));
        d.apply_changes(1, &[change(1, 15, 1, 16, "b * 2")], Encoding::Utf16).unwrap();
        let snap = d.snapshot();
        let incremental = parse_snapshot(&snap, &|| false).unwrap().tree;
        let fresh = parse_rope(&Rope::from_str(&d.text()), None, &|| false).unwrap();
        assert_eq!(sexp(&incremental), sexp(&fresh));
    }

    #[test]
    fn edits_arriving_during_a_parse_are_replayed_onto_the_new_tree() {
        let mut d = Document::new("a = 1\n", 0);
        let snap = d.snapshot();
        let tree = parse_snapshot(&snap, &|| false).unwrap().tree;
        d.apply_changes(1, &[change(1, 0, 1, 0, "b = 2\n")], Encoding::Utf16).unwrap();
        assert!(d.install_tree(&snap, tree));
        let snap = d.snapshot();
        let tree = parse_snapshot(&snap, &|| false).unwrap().tree;
        assert_eq!(tree.root_node().named_child_count(), 2);
    }

    /// The first parse races the first edits (no tree yet when they arrive): they are replayed onto
    /// it, so the next parse matches a fresh one even for an edit before everything it parsed.
    #[test]
    fn edits_before_the_first_tree_are_replayed_onto_it() {
        let mut d = Document::new("@triton.jit\ndef k(x):\n    pass\n\nk[(1,)](x)\n", 0);
        let snap = d.snapshot();
        let tree = parse_snapshot(&snap, &|| false).unwrap().tree;
        d.apply_changes(1, &[change(0, 0, 0, 1, "@)"), change(0, 0, 0, 0, "import triton\n\n")], Encoding::Utf16).unwrap();
        assert!(d.install_tree(&snap, tree));
        let snap = d.snapshot();
        assert!(!snap.tree_current, "a tree parsed from older text is not current");
        let incremental = parse_snapshot(&snap, &|| false).unwrap().tree;
        let fresh = parse_rope(&Rope::from_str(&d.text()), None, &|| false).unwrap();
        assert_eq!(sexp(&incremental), sexp(&fresh));
    }

    /// Two parses in flight: the newer snapshot's tree wins, the older one's arrives later and is
    /// dropped, and "current" follows the text, not the order in which parses finished.
    #[test]
    fn a_tree_of_older_text_never_replaces_a_newer_one() {
        let mut d = Document::new("a = 1\n", 0);
        let old = d.snapshot();
        let old_tree = parse_snapshot(&old, &|| false).unwrap().tree;
        d.apply_changes(1, &[change(0, 0, 0, 0, "b = 2\n")], Encoding::Utf16).unwrap();
        let new = d.snapshot();
        let new_tree = parse_snapshot(&new, &|| false).unwrap().tree;
        assert!(d.install_tree(&new, new_tree));
        assert!(d.tree_current());
        assert!(!d.install_tree(&old, old_tree), "a tree of older text is dropped once a newer one is in");
        assert!(d.tree_current());
        d.apply_changes(2, &[change(0, 0, 0, 0, "c = 3\n")], Encoding::Utf16).unwrap();
        assert!(!d.tree_current(), "any change makes the tree not current");
        assert!(!d.snapshot().tree_current);
    }

    #[test]
    fn a_full_replacement_discards_trees_parsed_before_it() {
        let mut d = Document::new("a = 1\n", 0);
        let snap = d.snapshot();
        let tree = parse_snapshot(&snap, &|| false).unwrap().tree;
        d.apply_changes(1, &[TextDocumentContentChangeEvent { range: None, range_length: None, text: "b = 2\n".into() }], Encoding::Utf16)
            .unwrap();
        assert!(!d.install_tree(&snap, tree));
    }

    #[test]
    fn a_cancelled_parse_returns_none_and_the_parser_recovers() {
        let big = "x = [1, 2, 3]\n".repeat(20_000);
        let rope = Rope::from_str(&big);
        assert!(parse_rope(&rope, None, &|| true).is_none());
        assert!(parse_rope(&Rope::from_str("y = 2\n"), None, &|| false).is_some());
    }

    /// Syntax-breaking edits (an opening bracket or quote, a colon), then one more character, then
    /// undoing both, at spread places of every fixture: each incremental tree, broken or not, has
    /// the shape of a fresh parse of the same text. This is what lets the worker publish broken
    /// incremental trees before their idle-time check.
    #[test]
    fn incremental_trees_of_broken_text_match_fresh_parses() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut broken = 0;
        for dir in ["rules", "model"] {
            for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
                let Ok(text) = std::fs::read_to_string(e.path()) else { continue };
                for i in 1..6 {
                    let Some(at) = (text.len() * i / 6..text.len()).find(|c| text.is_char_boundary(*c)) else { continue };
                    let (line, col) = (text[..at].matches('\n').count() as u32, at - text[..at].rfind('\n').map_or(0, |n| n + 1));
                    let col = text[at - col..at].encode_utf16().count() as u32;
                    let mut d = Document::new(&text, 0);
                    let snap = d.snapshot();
                    let t = parse_snapshot(&snap, &|| false).unwrap();
                    assert!(d.install_tree(&snap, t.tree));
                    let ch = ["(", "[", ":", "'", "{"][i % 5];
                    for (v, c) in
                        [change(line, col, line, col, ch), change(line, col + 1, line, col + 1, "x"), change(line, col, line, col + 2, "")]
                            .into_iter()
                            .enumerate()
                    {
                        d.apply_changes(v as i32 + 1, &[c], Encoding::Utf16).unwrap();
                        let snap = d.snapshot();
                        let inc = parse_snapshot(&snap, &|| false).unwrap();
                        let fresh = parse_rope(&Rope::from_str(&d.text()), None, &|| false).unwrap();
                        assert!(crate::syntax::same_shape(&inc.tree, &fresh), "{} step {v} at {at}", e.path().display());
                        broken += usize::from(!inc.trusted);
                        assert!(d.install_tree(&snap, inc.tree));
                    }
                }
            }
        }
        assert!(broken > 200, "only {broken} broken incremental trees");
    }

    #[test]
    fn same_shape_tells_different_trees_apart() {
        let parse = crate::syntax::parse;
        let a = parse("def f(a):\n    return a + 1\n");
        // Same kinds and ranges: the same shape, whatever the identifiers say.
        assert!(crate::syntax::same_shape(&a, &parse("def f(b):\n    return b + 1\n")));
        assert!(!crate::syntax::same_shape(&a, &parse("def f(a):\n    return a - 1\n")));
        assert!(!crate::syntax::same_shape(&a, &parse("def f(a):\n    return (a + 1\n")));
        assert!(!crate::syntax::same_shape(&a, &parse("def f(a):\n    return a + 1\nx = 2\n")));
    }
}
