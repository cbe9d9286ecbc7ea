//! Where things are in a notebook's JSON text: the byte span of each cell's `source` value and of the
//! string items of a list. Only read after `serde_json` accepted the text (so nesting is bounded by
//! its recursion limit); anything unexpected gives `None`, never a panic.

use std::ops::Range;

/// The span of each cell's `source` value, in the order of the top-level `cells` array (`None` for a
/// cell without one). `None` when the text has no `cells` array of objects.
pub fn source_spans(text: &str) -> Option<Vec<Option<Range<usize>>>> {
    let mut p = Scanner { b: text.as_bytes(), i: 0 };
    let mut spans = None;
    p.object(&mut |p, key| {
        if key == b"cells" {
            spans = Some(p.cells()?);
            Some(())
        } else {
            p.value().map(drop)
        }
    })?;
    spans
}

/// The string items of the JSON array at `span` (a `source` in its list form), with the bytes
/// between them: what is before the first item, and what is before the closing bracket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListLayout {
    pub items: Vec<Range<usize>>,
    /// Between `[` and the first item (or `]` when empty).
    pub open: Range<usize>,
    /// Between the last item and `]`.
    pub close: Range<usize>,
}

pub fn list_layout(text: &str, span: Range<usize>) -> Option<ListLayout> {
    let mut p = Scanner { b: text.as_bytes().get(..span.end)?, i: span.start };
    p.expect(b'[')?;
    let open_from = p.i;
    p.ws();
    let mut layout = ListLayout { items: Vec::new(), open: open_from..p.i, close: p.i..p.i };
    if p.peek()? == b']' {
        return Some(layout);
    }
    loop {
        p.ws();
        let item = p.string()?;
        layout.items.push(item.clone());
        let close_from = p.i;
        p.ws();
        match p.peek()? {
            b',' => p.i += 1,
            b']' => {
                layout.close = close_from..p.i;
                return Some(layout);
            }
            _ => return None,
        }
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string token, quotes included.
    fn string(&mut self) -> Option<Range<usize>> {
        self.ws();
        let start = self.i;
        if self.peek()? != b'"' {
            return None;
        }
        self.i += 1;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(start..self.i);
                }
                _ => self.i += 1,
            }
        }
    }

    /// Any value, skipped; its span.
    fn value(&mut self) -> Option<Range<usize>> {
        self.ws();
        let start = self.i;
        match self.peek()? {
            b'"' => return self.string(),
            b'{' => self.object(&mut |p, _| p.value().map(drop))?,
            b'[' => self.array(&mut |p| p.value().map(drop))?,
            _ => {
                while self.peek().is_some_and(|c| !matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')) {
                    self.i += 1;
                }
                if self.i == start {
                    return None;
                }
            }
        }
        Some(start..self.i)
    }

    /// An object; `member` reads each value, the key given as its raw bytes between the quotes.
    fn object(&mut self, member: &mut dyn FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
        self.expect(b'{')?;
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            let key = self.string()?;
            let key = self.b.get(key.start + 1..key.end - 1)?;
            self.expect(b':')?;
            member(self, key)?;
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, item: &mut dyn FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.expect(b'[')?;
        self.ws();
        if self.peek()? == b']' {
            self.i += 1;
            return Some(());
        }
        loop {
            item(self)?;
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The `cells` array: each cell's `source` span.
    fn cells(&mut self) -> Option<Vec<Option<Range<usize>>>> {
        let mut out = Vec::new();
        self.array(&mut |p| {
            p.ws();
            if p.peek()? != b'{' {
                p.value()?;
                out.push(None);
                return Some(());
            }
            let mut source = None;
            p.object(&mut |p, key| {
                let span = p.value()?;
                if key == b"source" {
                    source = Some(span);
                }
                Some(())
            })?;
            out.push(source);
            Some(())
        })?;
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_cells_source_past_nested_values_and_escapes() {
        let text = r##"{"metadata": {"a": [1, {"source": "no"}]}, "cells": [
 {"cell_type": "code", "outputs": [{"text": ["x\"]", "{"]}], "source": ["a = 1\n", "b"]},
 {"cell_type": "markdown", "source": "# t\u00e9"},
 {"cell_type": "raw"}
], "nbformat": 4}"##;
        let spans = source_spans(text).unwrap();
        assert_eq!(spans.len(), 3);
        assert_eq!(&text[spans[0].clone().unwrap()], r#"["a = 1\n", "b"]"#);
        assert_eq!(&text[spans[1].clone().unwrap()], r##""# t\u00e9""##);
        assert!(spans[2].is_none());
        let l = list_layout(text, spans[0].clone().unwrap()).unwrap();
        assert_eq!(l.items.iter().map(|r| &text[r.clone()]).collect::<Vec<_>>(), [r#""a = 1\n""#, r#""b""#]);
        assert_eq!((&text[l.open.clone()], &text[l.close.clone()]), ("", ""));
    }

    #[test]
    fn list_layout_keeps_the_whitespace_around_items() {
        let text = "[\n    \"a\\n\",\n    \"b\"\n   ]";
        let l = list_layout(text, 0..text.len()).unwrap();
        assert_eq!((&text[l.open.clone()], &text[l.close.clone()]), ("\n    ", "\n   "));
        let empty = "[ ]";
        let l = list_layout(empty, 0..3).unwrap();
        assert!(l.items.is_empty());
    }

    #[test]
    fn truncated_or_odd_text_gives_none() {
        for t in ["", "{", r#"{"cells": [{"source": "#, r#"{"cells": 3"#, "[1, 2]", r#"{"cells": [{"source": "x"}"#] {
            let _ = source_spans(t);
        }
        assert!(source_spans("[1, 2]").is_none());
        assert!(list_layout("[\"a\", 3]", 0..8).is_none());
    }
}
