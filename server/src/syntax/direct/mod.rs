//! A hand-written Python parser that builds, for text it is sure of, exactly the [`FlatTree`]
//! tree-sitter-python's parse gives (every node's kind, range, field and place), several times
//! faster. Text with a syntax error, or with a construct it does not model, is left to tree-sitter:
//! [`parse`] returns None and the caller parses as before.
//!
//! The contract is equality with tree-sitter, node for node: `tests` checks it on every fixture
//! (and on broken and edited variants of them), and `tests/bench/direct_parse.rs`-style runs over
//! a corpus report any file where the two differ.

mod build;
mod ids;
mod lex;
mod parse;

use super::flat::FlatTree;

/// Texts longer than this are left to tree-sitter.
const MAX_TEXT: usize = 64 << 20;

/// The parser is unsure of the text; tree-sitter decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsure;

thread_local! {
    /// Where the last [`unsure`] was raised on this thread (tests and the corpus bench tell why
    /// a file fell back).
    pub static LAST_UNSURE: std::cell::Cell<Option<&'static std::panic::Location<'static>>> = const { std::cell::Cell::new(None) };
}

#[track_caller]
#[inline]
fn unsure() -> Unsure {
    let at = std::panic::Location::caller();
    LAST_UNSURE.with(|l| l.set(Some(at)));
    Unsure
}

thread_local! {
    /// Byte offset in the text where the last declined parse stood.
    static LAST_OFFSET: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Where in this parser the last declined parse on this thread gave up (`file:line`), and the
/// byte offset in the text it had reached.
pub fn last_unsure() -> Option<(String, usize)> {
    LAST_UNSURE.with(|l| l.get()).map(|at| (format!("{}:{}", at.file(), at.line()), LAST_OFFSET.with(|o| o.get())))
}

/// The tree tree-sitter would give `text`, or None where that is not certain.
pub fn parse(text: &str) -> Option<FlatTree> {
    LAST_UNSURE.with(|l| l.set(None));
    let syms = ids::syms()?;
    // tree-sitter's lexer reads a NUL byte as the end of input inside tokens; not modelled.
    // Very large texts go to tree-sitter too: the token and node arrays here are reserved up front.
    if text.len() > MAX_TEXT || text.as_bytes().contains(&0) {
        return None;
    }
    let toks = lex::lex(text, syms).map_err(|(_, at)| LAST_OFFSET.with(|o| o.set(at))).ok()?;
    let nodes = parse::parse(text, &toks, syms).map_err(|(_, at)| LAST_OFFSET.with(|o| o.set(at))).ok()?;
    Some(FlatTree::from_preorder(nodes.iter().map(|n| (n.start, n.end, n.kind, n.field, n.named, n.depth))))
}

#[cfg(test)]
mod tests;
