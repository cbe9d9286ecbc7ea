//! Byte ranges and the line index that turns them into human (1-based) or LSP positions.
//!
//! Everything inside the analyser speaks byte offsets into the UTF-8 source; only the edges
//! (CLI output, LSP) convert, so the model never depends on an encoding.

use serde::{Deserialize, Serialize};

/// A half-open byte range `[start, end)` into a source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct TextRange {
    pub start: usize,
    pub end: usize,
}

impl TextRange {
    pub fn new(start: usize, end: usize) -> Self {
        debug_assert!(start <= end);
        Self { start, end }
    }
    pub fn empty(at: usize) -> Self {
        Self { start: at, end: at }
    }
    pub fn len(&self) -> usize {
        self.end - self.start
    }
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
    pub fn contains(&self, offset: usize) -> bool {
        self.start <= offset && offset < self.end
    }
    pub fn contains_range(&self, other: TextRange) -> bool {
        self.start <= other.start && other.end <= self.end
    }
    pub fn intersects(&self, other: TextRange) -> bool {
        self.start < other.end && other.start < self.end
    }
    pub fn cover(&self, other: TextRange) -> TextRange {
        TextRange::new(self.start.min(other.start), self.end.max(other.end))
    }
}

impl From<std::ops::Range<usize>> for TextRange {
    fn from(r: std::ops::Range<usize>) -> Self {
        TextRange::new(r.start, r.end)
    }
}

/// 1-based row and column (column counted in Unicode scalar values, like ruff's JSON output).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SourceLocation {
    pub row: usize,
    pub column: usize,
}

/// Line starts of a text, for converting byte offsets to rows and columns.
/// Line breaks are LF, CRLF and lone CR (the LSP's set), so rows agree with editors.
#[derive(Debug, Clone)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut line_starts = vec![0];
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => line_starts.push(i + 1),
                b'\r' => {
                    if bytes.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    line_starts.push(i + 1);
                }
                _ => {}
            }
            i += 1;
        }
        Self { line_starts, len: text.len() }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// 0-based line containing `offset` (clamped to the text).
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.len);
        match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        }
    }

    /// Byte offset at which 0-based `line` starts (clamped).
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts.get(line).copied().unwrap_or(self.len)
    }

    /// Byte range of 0-based `line`, without its line break.
    pub fn line_range(&self, text: &str, line: usize) -> TextRange {
        let start = self.line_start(line);
        let mut end = self.line_starts.get(line + 1).copied().unwrap_or(self.len);
        let b = text.as_bytes();
        while end > start && matches!(b[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        TextRange::new(start, end)
    }

    /// 1-based row/column of a byte offset; the column counts chars.
    pub fn location(&self, text: &str, offset: usize) -> SourceLocation {
        let offset = clamp_to_char_boundary(text, offset.min(self.len));
        let line = self.line_of(offset);
        let start = self.line_start(line);
        let column = text[start..offset].chars().count() + 1;
        SourceLocation { row: line + 1, column }
    }

    /// Inverse of [`location`]: 1-based row/column (chars) to a byte offset, clamped.
    pub fn offset(&self, text: &str, loc: SourceLocation) -> usize {
        let line = loc.row.saturating_sub(1);
        if line >= self.line_starts.len() {
            return self.len;
        }
        let r = self.line_range(text, line);
        let mut off = r.start;
        for (n, ch) in text[r.start..r.end].chars().enumerate() {
            if n + 1 >= loc.column {
                return off;
            }
            off += ch.len_utf8();
        }
        off
    }
}

pub fn clamp_to_char_boundary(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_columns_follow_lsp_line_breaks() {
        let t = "ab\r\nc\rdé\nx";
        let li = LineIndex::new(t);
        assert_eq!(li.line_count(), 4);
        assert_eq!(li.location(t, 0), SourceLocation { row: 1, column: 1 });
        assert_eq!(li.location(t, 4), SourceLocation { row: 2, column: 1 });
        assert_eq!(li.location(t, 6), SourceLocation { row: 3, column: 1 });
        // 'é' is two bytes but one column.
        assert_eq!(li.location(t, 9), SourceLocation { row: 3, column: 3 });
        assert_eq!(li.offset(t, SourceLocation { row: 3, column: 3 }), 9);
        assert_eq!(li.location(t, 999), SourceLocation { row: 4, column: 2 });
    }
}
