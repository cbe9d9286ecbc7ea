//! Building a tree in pre-order the way tree-sitter's parser shapes it, extras included.
//!
//! Nodes are appended as the parser opens them; a node whose kind is known only after its first
//! child (`a + b`, `f(x)`, `a = b`) is inserted before that child ([`Builder::wrap`]). Each node
//! keeps its depth, so the links are computed once at the end. Extras (comments, line
//! continuations) go where tree-sitter's reductions leave them: into the innermost node that has a
//! token before them and one after them; a node's trailing extras belong to its parent.

use super::lex::{K, Tok};
use super::{Unsure, unsure};

#[derive(Clone, Copy, Debug)]
pub struct Pre {
    pub start: u32,
    pub end: u32,
    pub kind: u16,
    pub field: u16,
    pub named: bool,
    pub depth: u16,
}

const UNSET: u32 = u32::MAX;

pub struct Builder<'a> {
    pub toks: &'a [Tok],
    /// Index of the next token that is not an extra.
    pub pos: usize,
    /// Extras between the last consumed token and `pos`.
    extras_from: usize,
    pub nodes: Vec<Pre>,
    /// Open nodes, outermost first (the root is never closed).
    open: Vec<usize>,
    /// End of the last consumed token.
    last_end: u32,
    comment: u16,
    line_continuation: u16,
}

impl<'a> Builder<'a> {
    pub fn new(toks: &'a [Tok], root_kind: u16, comment: u16, line_continuation: u16) -> Self {
        let mut b = Builder {
            toks,
            pos: 0,
            extras_from: 0,
            nodes: Vec::with_capacity(toks.len() + toks.len() / 2),
            open: vec![0],
            last_end: 0,
            comment,
            line_continuation,
        };
        b.nodes.push(Pre { start: 0, end: 0, kind: root_kind, field: 0, named: true, depth: 0 });
        b.skip_extras();
        b
    }

    fn skip_extras(&mut self) {
        while self.toks.get(self.pos).is_some_and(Tok::is_extra) {
            self.pos += 1;
        }
    }

    #[inline]
    pub fn peek(&self) -> &'a Tok {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }

    /// The token after the next one, extras skipped.
    pub fn peek2(&self) -> &'a Tok {
        let mut i = self.pos + 1;
        while self.toks.get(i).is_some_and(Tok::is_extra) {
            i += 1;
        }
        &self.toks[i.min(self.toks.len() - 1)]
    }

    /// Opens a node; it starts at its first token. Its index is known once that token is
    /// consumed ([`Builder::top`]), since extras met first are inserted before it.
    pub fn open(&mut self, kind: u16, field: u16) {
        let idx = self.nodes.len();
        self.nodes.push(Pre { start: UNSET, end: UNSET, kind, field, named: true, depth: self.open.len() as u16 });
        self.open.push(idx);
    }

    /// How many nodes are open (the root included).
    pub fn depth(&self) -> usize {
        self.open.len()
    }

    /// Index of the innermost open node.
    pub fn top(&self) -> usize {
        *self.open.last().unwrap_or(&0)
    }

    pub fn close(&mut self) -> Result<usize, Unsure> {
        let idx = self.open.pop().ok_or_else(|| unsure())?;
        let n = &mut self.nodes[idx];
        if n.start == UNSET {
            return Err(unsure());
        }
        n.end = self.last_end;
        Ok(idx)
    }

    /// Sets the kind of a node already built (`(a, b)` turns out to be a target).
    pub fn relabel(&mut self, idx: usize, kind: u16) {
        self.nodes[idx].kind = kind;
    }

    pub fn set_field(&mut self, idx: usize, field: u16) {
        self.nodes[idx].field = field;
    }

    /// Makes the finished node `child` (with its subtree, which runs to the end) the first child
    /// of a new open node of `kind`, and gives `child` the field `child_field`.
    pub fn wrap(&mut self, child: usize, kind: u16, field: u16, child_field: u16) -> usize {
        let depth = self.nodes[child].depth;
        let start = self.nodes[child].start;
        for n in &mut self.nodes[child..] {
            n.depth += 1;
        }
        self.nodes[child].field = child_field;
        self.nodes.insert(child, Pre { start, end: UNSET, kind, field, named: true, depth });
        self.open.push(child);
        child
    }

    /// Consumes the next token: as a leaf of `kind` (anonymous unless `named`), or hidden when
    /// `kind` is None. Returns the leaf's index.
    pub fn consume(&mut self, kind: Option<u16>, named: bool, field: u16) -> usize {
        let t = &self.toks[self.pos];
        self.attach_extras();
        // Every open node without a token yet starts here.
        for &i in self.open.iter().rev() {
            if self.nodes[i].start != UNSET {
                break;
            }
            self.nodes[i].start = t.start;
        }
        if let Some(kind) = kind {
            self.nodes.push(Pre { start: t.start, end: t.end, kind, field, named, depth: self.open.len() as u16 });
        }
        self.last_end = t.end;
        self.pos += 1;
        self.extras_from = self.pos;
        self.skip_extras();
        self.nodes.len() - 1
    }

    /// Consumes the next token as one anonymous leaf of `kind` per byte (`...` read as dots).
    pub fn consume_split(&mut self, kind: u16) {
        let t = self.toks[self.pos];
        self.consume(Some(kind), false, 0);
        let last = self.nodes.len() - 1;
        self.nodes[last].end = t.start + 1;
        for b in t.start + 1..t.end {
            self.nodes.push(Pre { start: b, end: b + 1, ..self.nodes[last] });
        }
    }

    /// Consumes the next token as a leaf child of `parent`, the last leaf consumed (escapes in
    /// string content).
    pub fn consume_kid(&mut self, parent: usize, kind: u16, named: bool) {
        let t = &self.toks[self.pos];
        let depth = self.nodes[parent].depth + 1;
        self.nodes.push(Pre { start: t.start, end: t.end, kind, field: 0, named, depth });
        self.pos += 1;
        self.extras_from = self.pos;
    }

    /// The extras before the token about to be consumed, into the innermost open node that has
    /// consumed a token already, before its children that have not.
    fn attach_extras(&mut self) {
        if self.extras_from == self.pos {
            return;
        }
        let Some(k) = self.open.iter().rposition(|&i| self.nodes[i].start != UNSET) else { return };
        let depth = self.open.len().min(k + 1) as u16;
        let at = self.open.get(k + 1).copied().unwrap_or(self.nodes.len());
        let extras: Vec<Pre> = self.toks[self.extras_from..self.pos]
            .iter()
            .map(|t| Pre {
                start: t.start,
                end: t.end,
                kind: if t.k == K::Comment { self.comment } else { self.line_continuation },
                field: 0,
                named: true,
                depth,
            })
            .collect();
        let n = extras.len();
        self.nodes.splice(at..at, extras);
        for i in &mut self.open[k + 1..] {
            *i += n;
        }
    }

    /// Extras left before the end of the text go into the root.
    pub fn finish(mut self, len: u32) -> Result<Vec<Pre>, Unsure> {
        if self.open.len() != 1 {
            return Err(unsure());
        }
        self.attach_extras();
        // The root starts at its first child (comments included; with none, at the end of the
        // whitespace) and ends at the end of the text.
        let first = self.nodes.get(1).map_or(len, |n| n.start);
        let root = &mut self.nodes[0];
        root.start = first;
        root.end = len;
        Ok(self.nodes)
    }
}
