//! LSP positions ↔ byte offsets on a rope, in the negotiated position encoding.
//!
//! Every incoming position is clamped: a line past the end means the end of the document, a column
//! past the end of its line means the end of that line (before the line break), and a column inside a
//! UTF-8 sequence or a UTF-16 surrogate pair rounds down to the start of that character. Line breaks
//! are LF, CRLF and lone CR, as the LSP defines them (ropey built with `cr_lines` agrees).

use ropey::Rope;
use tower_lsp::lsp_types::{Position, PositionEncodingKind, Range};

use crate::text::TextRange;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    Utf8,
    #[default]
    Utf16,
    Utf32,
}

impl Encoding {
    /// UTF-8 when the client offers it (no conversion cost, exact columns), else the mandatory UTF-16.
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Encoding {
        match offered {
            Some(list) if list.contains(&PositionEncodingKind::UTF8) => Encoding::Utf8,
            _ => Encoding::Utf16,
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
            Encoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }
}

/// Number of chars on `line`, not counting its line break.
fn line_len_chars(rope: &Rope, line: usize) -> usize {
    let slice = rope.line(line);
    let mut n = slice.len_chars();
    while n > 0 && matches!(slice.char(n - 1), '\n' | '\r') {
        n -= 1;
    }
    n
}

/// Byte offset of an LSP position, clamped to the document (never panics).
pub fn position_to_byte(rope: &Rope, pos: Position, enc: Encoding) -> usize {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return rope.len_bytes();
    }
    let line_char = rope.line_to_char(line);
    let n = line_len_chars(rope, line);
    let col = pos.character as usize;
    let col_chars = match enc {
        Encoding::Utf32 => col.min(n),
        Encoding::Utf8 => {
            let line_byte = rope.char_to_byte(line_char);
            let max = rope.char_to_byte(line_char + n) - line_byte;
            // byte_to_char rounds a byte inside a multi-byte char down to that char.
            rope.byte_to_char(line_byte + col.min(max)) - line_char
        }
        Encoding::Utf16 => {
            let base = rope.char_to_utf16_cu(line_char);
            let max = rope.char_to_utf16_cu(line_char + n) - base;
            // utf16_cu_to_char rounds a unit inside a surrogate pair down to that char.
            rope.utf16_cu_to_char(base + col.min(max)) - line_char
        }
    };
    rope.char_to_byte(line_char + col_chars)
}

/// LSP position of a byte offset (clamped to the document and rounded down to a char boundary).
pub fn byte_to_position(rope: &Rope, byte: usize, enc: Encoding) -> Position {
    let byte = byte.min(rope.len_bytes());
    let ch = rope.byte_to_char(byte);
    let line = rope.char_to_line(ch);
    let line_char = rope.line_to_char(line);
    let character = match enc {
        Encoding::Utf8 => rope.char_to_byte(ch) - rope.char_to_byte(line_char),
        Encoding::Utf16 => rope.char_to_utf16_cu(ch) - rope.char_to_utf16_cu(line_char),
        Encoding::Utf32 => ch - line_char,
    };
    Position { line: line as u32, character: character as u32 }
}

pub fn range_to_lsp(rope: &Rope, range: TextRange, enc: Encoding) -> Range {
    Range { start: byte_to_position(rope, range.start, enc), end: byte_to_position(rope, range.end, enc) }
}

/// Byte range of an LSP range; a reversed range is normalised rather than rejected.
pub fn range_from_lsp(rope: &Rope, range: Range, enc: Encoding) -> TextRange {
    let a = position_to_byte(rope, range.start, enc);
    let b = position_to_byte(rope, range.end, enc);
    TextRange::new(a.min(b), a.max(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn astral_char_counts_two_utf16_units_four_bytes_one_scalar() {
        let rope = Rope::from_str("a🚀b");
        let after_rocket = 5;
        assert_eq!(byte_to_position(&rope, after_rocket, Encoding::Utf16), pos(0, 3));
        assert_eq!(byte_to_position(&rope, after_rocket, Encoding::Utf8), pos(0, 5));
        assert_eq!(byte_to_position(&rope, after_rocket, Encoding::Utf32), pos(0, 2));
        assert_eq!(position_to_byte(&rope, pos(0, 3), Encoding::Utf16), after_rocket);
    }

    #[test]
    fn positions_inside_a_character_round_down() {
        let rope = Rope::from_str("a🚀b");
        // Between the two surrogates of 🚀, and inside its UTF-8 bytes.
        assert_eq!(position_to_byte(&rope, pos(0, 2), Encoding::Utf16), 1);
        assert_eq!(position_to_byte(&rope, pos(0, 3), Encoding::Utf8), 1);
    }

    #[test]
    fn out_of_range_positions_clamp_to_line_or_document_end() {
        let rope = Rope::from_str("ab\r\ncd\nef");
        assert_eq!(position_to_byte(&rope, pos(0, 99), Encoding::Utf16), 2, "stops before CRLF");
        assert_eq!(position_to_byte(&rope, pos(1, 99), Encoding::Utf8), 6);
        assert_eq!(position_to_byte(&rope, pos(99, 0), Encoding::Utf32), rope.len_bytes());
        assert_eq!(position_to_byte(&rope, pos(u32::MAX, u32::MAX), Encoding::Utf16), rope.len_bytes());
    }

    #[test]
    fn lone_cr_is_a_line_break_and_form_feed_is_not() {
        let rope = Rope::from_str("a\rb\x0cc\nd");
        assert_eq!(position_to_byte(&rope, pos(1, 0), Encoding::Utf16), 2);
        assert_eq!(position_to_byte(&rope, pos(2, 0), Encoding::Utf16), 6);
        assert_eq!(byte_to_position(&rope, 4, Encoding::Utf16), pos(1, 2));
    }

    #[test]
    fn negotiation_prefers_utf8_and_falls_back_to_utf16() {
        let offered = [PositionEncodingKind::UTF16, PositionEncodingKind::UTF8];
        assert_eq!(Encoding::negotiate(Some(&offered)), Encoding::Utf8);
        assert_eq!(Encoding::negotiate(Some(&[PositionEncodingKind::UTF32])), Encoding::Utf16);
        assert_eq!(Encoding::negotiate(None), Encoding::Utf16);
    }
}
