//! Tokens as tree-sitter-python's lexer and external scanner give them, for text without errors.
//!
//! Besides the visible tokens this yields the hidden ones the grammar consumes (newline, indent,
//! dedent: zero-width, where the scanner puts them, right after the previous token) and the extras
//! (comments, line continuations) in the order the parser meets them, because that order decides
//! which node an extra lands in. Anything this does not model exactly is an `Err(unsure())`, and the
//! caller parses with tree-sitter instead.

use super::{Unsure, unsure};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum K {
    /// A word: identifier or keyword (`sym` tells).
    Name,
    Int,
    Float,
    /// Punctuation or operator (`sym` is its anonymous kind).
    Op,
    StrStart,
    /// A run of string content; its escapes follow it as separate tokens.
    StrContent,
    Escape,
    EscInterp,
    /// A backslash that starts no escape sequence (visible, anonymous `\`).
    Backslash,
    /// Hidden text of a format specifier.
    FmtText,
    TypeConv,
    StrEnd,
    Newline,
    Indent,
    Dedent,
    Comment,
    LineCont,
    Eof,
}

#[derive(Clone, Copy, Debug)]
pub struct Tok {
    pub k: K,
    /// For `Name` and `Op`: which word or operator (see [`super::ids::Sym`]).
    pub sym: u16,
    pub start: u32,
    pub end: u32,
}

impl Tok {
    pub fn is_extra(&self) -> bool {
        matches!(self.k, K::Comment | K::LineCont)
    }
}

pub struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    pub toks: Vec<Tok>,
    indents: Vec<u32>,
    /// Open brackets of the current logical line (outside f-string interpolations' own count).
    depth: u32,
    /// f-string interpolations open around the current position (bounded: the lexer recurses).
    nested: u32,
    /// Index of the first token of the current logical line.
    line_start: usize,
    syms: &'a super::ids::Syms,
}

/// The tokens of `text`, or where the lexer gave up.
pub fn lex(text: &str, syms: &super::ids::Syms) -> Result<Vec<Tok>, (Unsure, usize)> {
    let mut lx = Lexer {
        src: text.as_bytes(),
        pos: 0,
        toks: Vec::with_capacity(text.len() / 4),
        indents: vec![0],
        depth: 0,
        nested: 0,
        line_start: 0,
        syms,
    };
    lx.run().map_err(|u| (u, lx.pos))?;
    Ok(lx.toks)
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl<'a> Lexer<'a> {
    fn peek(&self, k: usize) -> u8 {
        self.src.get(self.pos + k).copied().unwrap_or(0)
    }

    fn push(&mut self, k: K, sym: u16, start: usize, end: usize) {
        self.toks.push(Tok { k, sym, start: start as u32, end: end as u32 });
    }

    /// A zero-width hidden token right after the previous token (extras included).
    fn push_zero(&mut self, k: K) {
        let at = self.toks.last().map_or(0, |t| t.end as usize);
        self.push(k, 0, at, at);
    }

    /// The last token that is not an extra.
    fn last_real(&self) -> Option<&Tok> {
        self.toks.iter().rev().find(|t| !t.is_extra())
    }

    fn run(&mut self) -> Result<(), Unsure> {
        // Leading blank and comment lines; the first statement must start at column 0.
        self.skip_leading()?;
        let mut line_has_tokens = false;
        loop {
            let c = self.peek(0);
            match c {
                b' ' => self.pos += 1,
                b'\t' if self.depth > 0 || line_has_tokens => self.pos += 1,
                // CRLF: the scanner skips the CR as whitespace before the line end.
                b'\r' if self.peek(1) == b'\n' && (self.depth > 0 || line_has_tokens) => self.pos += 1,
                0 if self.pos >= self.src.len() => {
                    if line_has_tokens {
                        self.end_line(true)?;
                    }
                    self.push(K::Eof, 0, self.src.len(), self.src.len());
                    return Ok(());
                }
                b'\n' => {
                    if self.depth > 0 {
                        self.pos += 1;
                        // A line inside brackets indented less than the block can end the block
                        // for the scanner (a dedent where no bracket may close): tree-sitter's call.
                        let (n, first) = self.indent_at(self.pos)?;
                        if n < *self.indents.last().unwrap_or(&0) && !matches!(self.src.get(first), Some(b'\n' | b'\r')) {
                            return Err(unsure());
                        }
                    } else if line_has_tokens {
                        self.pos += 1;
                        if self.end_line(false)? {
                            line_has_tokens = false;
                        }
                    } else {
                        return Err(unsure());
                    }
                }
                b'#' => self.comment(),
                b'\\' => {
                    // A continuation before the line's first token: the scanner reads it apart.
                    let len = match (self.peek(1), self.peek(2)) {
                        (b'\n', _) => 2,
                        (b'\r', b'\n') => 3,
                        _ => return Err(unsure()),
                    };
                    if !line_has_tokens {
                        return Err(unsure());
                    }
                    // Before a string the scanner skips the continuation as it looks for a
                    // string start: it becomes whitespace, not a node.
                    let mut at = self.pos + len;
                    let next = self.src[at..].iter().position(|&b| b != b' ' && b != b'\t').map(|p| self.src[at + p]);
                    if matches!(next, None | Some(b'\n' | b'\r' | b'#' | b'\\')) {
                        // Followed by a blank line, a comment or another continuation: the
                        // scanner's newline handling decides; not modelled.
                        return Err(unsure());
                    }
                    loop {
                        match self.src.get(at) {
                            Some(b' ' | b'\t' | b'\n') => at += 1,
                            Some(b'\r') if self.src.get(at + 1) == Some(&b'\n') => at += 1,
                            Some(b'\\') if self.src.get(at + 1) == Some(&b'\n') => at += 2,
                            Some(b'\\') if self.src.get(at + 1) == Some(&b'\r') && self.src.get(at + 2) == Some(&b'\n') => at += 3,
                            _ => break,
                        }
                    }
                    let mut word = at;
                    while self.src.get(word).is_some_and(|b| b"rRbBuUfFtT".contains(b)) {
                        word += 1;
                    }
                    if !matches!(self.src.get(word), Some(b'\'' | b'"')) {
                        self.push(K::LineCont, 0, self.pos, self.pos + len);
                    }
                    self.pos += len;
                }
                _ => {
                    if !line_has_tokens {
                        self.line_start = self.toks.len();
                    }
                    self.token(0)?;
                    line_has_tokens = true;
                }
            }
        }
    }

    fn comment(&mut self) {
        let start = self.pos;
        while self.pos < self.src.len() && self.src[self.pos] != b'\n' {
            self.pos += 1;
        }
        self.push(K::Comment, 0, start, self.pos);
    }

    fn skip_leading(&mut self) -> Result<(), Unsure> {
        loop {
            let line = self.pos;
            while matches!(self.peek(0), b' ' | b'\t') {
                self.pos += 1;
            }
            match self.peek(0) {
                b'\n' => self.pos += 1,
                b'\r' if self.peek(1) == b'\n' => self.pos += 2,
                b'#' => {
                    self.comment();
                    if self.peek(0) == b'\n' {
                        self.pos += 1;
                    }
                }
                0 if self.pos >= self.src.len() => return Ok(()),
                _ => {
                    return if self.pos == line { Ok(()) } else { Err(unsure()) };
                }
            }
        }
    }

    /// Measures the indent of the line at `at` (the scanner's count: tab = 8); the index of its
    /// first other byte.
    fn indent_at(&self, mut at: usize) -> Result<(u32, usize), Unsure> {
        let mut n = 0u32;
        loop {
            match self.src.get(at) {
                Some(b' ') => n += 1,
                Some(b'\t') => n += 8,
                // A CR before LF ends the line as the LF does (the scanner resets the count).
                Some(b'\r') if self.src.get(at + 1) == Some(&b'\n') => return Ok((n, at)),
                Some(b'\r' | b'\x0c') => return Err(unsure()),
                _ => return Ok((n, at)),
            }
            at += 1;
        }
    }

    /// At the end of a logical line (just past its `\n`, or at the end of the text): the hidden
    /// tokens and the comment lines up to the next statement, as the scanner orders them.
    /// Returns whether a new logical line starts (always, unless an error).
    fn end_line(&mut self, at_eof: bool) -> Result<bool, Unsure> {
        let header = self.last_real().is_some_and(|t| t.k == K::Op && t.sym == self.syms.colon);
        // Comment lines before the next code line: (indent, start, end).
        let mut comments: Vec<(u32, usize, usize)> = Vec::new();
        let mut code_indent = 0;
        let mut code_at = self.src.len();
        if !at_eof {
            let mut at = self.pos;
            loop {
                let (n, first) = self.indent_at(at)?;
                match self.src.get(first) {
                    None => break,
                    Some(b'\n') => at = first + 1,
                    Some(b'\r') => at = first + 2,
                    Some(b'#') => {
                        let end = self.src[first..].iter().position(|&b| b == b'\n').map_or(self.src.len(), |p| first + p);
                        comments.push((n, first, end));
                        at = (end + 1).min(self.src.len());
                        if end == self.src.len() {
                            break;
                        }
                    }
                    Some(_) => {
                        code_indent = n;
                        code_at = first;
                        break;
                    }
                }
            }
        }
        let top = *self.indents.last().unwrap_or(&0);
        if header {
            if code_indent <= top || code_at == self.src.len() {
                return Err(unsure());
            }
            self.push_zero(K::Indent);
            self.indents.push(code_indent);
            for &(_, s, e) in &comments {
                self.push(K::Comment, 0, s, e);
            }
        } else {
            // After a decorator line a comment indented less than the block (and no dedent) is an
            // error to tree-sitter's parser; not modelled.
            let decorator = self.toks.get(self.line_start).is_some_and(|t| t.k == K::Op && self.src[t.start as usize] == b'@');
            let top = *self.indents.last().unwrap_or(&0);
            if decorator && comments.iter().any(|&(n, _, _)| n < top) {
                return Err(unsure());
            }
            // `a, b,` may be the start of a target list that goes on over the next line
            // (`c = 1`): tree-sitter's parser keeps both readings; not modelled.
            let (comma, assign) = (self.syms.comma, self.syms.assign);
            let line = &self.toks[self.line_start.min(self.toks.len())..];
            if self.last_real().is_some_and(|t| t.k == K::Op && t.sym == comma) && !line.iter().any(|t| t.k == K::Op && t.sym == assign) {
                return Err(unsure());
            }
            self.push_zero(K::Newline);
            for &(n, s, e) in &comments {
                while self.indents.len() > 1 && code_indent < *self.indents.last().unwrap() && n < *self.indents.last().unwrap() {
                    self.indents.pop();
                    self.push_zero(K::Dedent);
                }
                self.push(K::Comment, 0, s, e);
            }
            while self.indents.len() > 1 && code_indent < *self.indents.last().unwrap() {
                self.indents.pop();
                self.push_zero(K::Dedent);
            }
            if code_indent != *self.indents.last().unwrap() {
                return Err(unsure());
            }
        }
        self.pos = code_at;
        Ok(true)
    }

    /// One token at `self.pos` (not whitespace, newline, comment or continuation). `fdepth` > 0
    /// inside an f-string interpolation, where the caller watches for its end.
    fn token(&mut self, fdepth: u32) -> Result<(), Unsure> {
        let _ = fdepth;
        let c = self.peek(0);
        let start = self.pos;
        if is_ident_start(c) {
            let mut end = start + 1;
            while end < self.src.len() && is_ident(self.src[end]) {
                end += 1;
            }
            let next = self.src.get(end).copied().unwrap_or(0);
            if (next == b'\'' || next == b'"') && self.src[start..end].iter().all(|b| b"rRbBuUfFtT".contains(b)) {
                return self.string();
            }
            if next >= 0x80 {
                return Err(unsure());
            }
            let sym = self.syms.word(&self.src[start..end]);
            self.push(K::Name, sym, start, end);
            self.pos = end;
            return Ok(());
        }
        if c == b'\'' || c == b'"' {
            return self.string();
        }
        if c.is_ascii_digit() || (c == b'.' && self.peek(1).is_ascii_digit()) {
            return self.number();
        }
        let Some((i, n)) = super::ids::op_at(&self.src[start..]) else { return Err(unsure()) };
        match self.src[start] {
            b'(' | b'[' | b'{' => self.depth += 1,
            b')' | b']' | b'}' => self.depth = self.depth.checked_sub(1).ok_or_else(|| unsure())?,
            _ => {}
        }
        self.push(K::Op, self.syms.op_kind(i), start, start + n);
        self.pos += n;
        Ok(())
    }

    fn digits(&mut self, ok: impl Fn(u8) -> bool) -> usize {
        // repeat1(/[0-9]+_?/)-style runs: digits with single underscores between.
        let start = self.pos;
        while ok(self.peek(0)) || (self.peek(0) == b'_' && ok(self.peek(1))) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<(), Unsure> {
        let start = self.pos;
        let c1 = self.peek(1) | 0x20;
        if self.peek(0) == b'0' && matches!(c1, b'x' | b'o' | b'b') {
            self.pos += 2;
            let ok: fn(u8) -> bool = match c1 {
                b'x' => |b: u8| b.is_ascii_hexdigit(),
                b'o' => |b: u8| (b'0'..=b'7').contains(&b),
                _ => |b: u8| b == b'0' || b == b'1',
            };
            if self.peek(0) == b'_' {
                self.pos += 1;
            }
            if self.digits(ok) == 0 {
                return Err(unsure());
            }
            if matches!(self.peek(0), b'l' | b'L') {
                self.pos += 1;
            }
            return self.end_number(K::Int, start);
        }
        let int_digits = self.digits(|b| b.is_ascii_digit());
        let mut float = false;
        if self.peek(0) == b'_' {
            // A trailing underscore belongs to the digit run (`/[0-9]+_?/`).
            self.pos += 1;
        }
        if self.peek(0) == b'.' && self.peek(1) != b'.' {
            self.pos += 1;
            float = true;
            self.digits(|b| b.is_ascii_digit());
            if self.peek(0) == b'_' {
                self.pos += 1;
            }
        } else if int_digits == 0 {
            return Err(unsure());
        }
        if matches!(self.peek(0), b'e' | b'E')
            && (self.peek(1).is_ascii_digit() || (matches!(self.peek(1), b'+' | b'-') && self.peek(2).is_ascii_digit()))
        {
            self.pos += if self.peek(1).is_ascii_digit() { 1 } else { 2 };
            self.digits(|b| b.is_ascii_digit());
            float = true;
        }
        if matches!(self.peek(0), b'j' | b'J') || (!float && matches!(self.peek(0), b'l' | b'L')) {
            self.pos += 1;
        }
        self.end_number(if float { K::Float } else { K::Int }, start)
    }

    fn end_number(&mut self, k: K, start: usize) -> Result<(), Unsure> {
        // `1if x` and similar glue are legal but rare; let tree-sitter have them.
        if is_ident(self.peek(0)) || self.peek(0) == b'.' || self.peek(0) >= 0x80 {
            return Err(unsure());
        }
        self.push(k, 0, start, self.pos);
        Ok(())
    }

    /// A string literal from its prefix to its closing quote, f-string interpolations included.
    fn string(&mut self) -> Result<(), Unsure> {
        let start = self.pos;
        let (mut format, mut raw, mut bytes) = (false, false, false);
        while let c @ (b'f' | b'F' | b't' | b'T' | b'r' | b'R' | b'b' | b'B' | b'u' | b'U') = self.peek(0) {
            match c | 0x20 {
                b'f' | b't' => format = true,
                b'r' => raw = true,
                b'b' => bytes = true,
                _ => {}
            }
            self.pos += 1;
        }
        let q = self.peek(0);
        let triple = self.peek(1) == q && self.peek(2) == q;
        self.pos += if triple { 3 } else { 1 };
        self.push(K::StrStart, 0, start, self.pos);
        let mut run: Option<usize> = None;
        let mut kids: Vec<Tok> = Vec::new();
        let flush = |lx: &mut Self, run: &mut Option<usize>, kids: &mut Vec<Tok>| {
            if let Some(s) = run.take() {
                lx.push(K::StrContent, 0, s, lx.pos);
                lx.toks.append(kids);
            }
        };
        loop {
            let c = self.peek(0);
            if self.pos >= self.src.len() {
                return Err(unsure());
            }
            if c == q && (!triple || (self.peek(1) == q && self.peek(2) == q)) {
                flush(self, &mut run, &mut kids);
                let n = if triple { 3 } else { 1 };
                self.push(K::StrEnd, 0, self.pos, self.pos + n);
                self.pos += n;
                return Ok(());
            }
            match c {
                b'\n' if !triple => return Err(unsure()),
                b'\r' if !triple => return Err(unsure()),
                b'\\' if raw => {
                    run.get_or_insert(self.pos);
                    self.pos += 1;
                    if self.peek(0) == q || self.peek(0) == b'\\' {
                        self.pos += 1;
                    }
                    if self.peek(0) == b'\r' {
                        self.pos += 1;
                    }
                    if self.peek(0) == b'\n' {
                        self.pos += 1;
                    }
                }
                b'\\' => {
                    run.get_or_insert(self.pos);
                    let n = escape_len(&self.src[self.pos..]);
                    let next = self.peek(1);
                    if bytes && matches!(next, b'N' | b'u' | b'U') {
                        self.pos += 2;
                    } else if n > 0 {
                        kids.push(Tok { k: K::Escape, sym: 0, start: self.pos as u32, end: (self.pos + n) as u32 });
                        self.pos += n;
                    } else {
                        kids.push(Tok { k: K::Backslash, sym: 0, start: self.pos as u32, end: self.pos as u32 + 1 });
                        self.pos += 1;
                        if self.peek(0) == b'\r' && self.peek(1) != b'\n' {
                            return Err(unsure());
                        }
                    }
                }
                b'{' | b'}' if format => {
                    if self.peek(1) == c {
                        run.get_or_insert(self.pos);
                        kids.push(Tok { k: K::EscInterp, sym: 0, start: self.pos as u32, end: self.pos as u32 + 2 });
                        self.pos += 2;
                    } else if c == b'}' {
                        return Err(unsure());
                    } else {
                        flush(self, &mut run, &mut kids);
                        self.interpolation(triple)?;
                    }
                }
                _ => {
                    run.get_or_insert(self.pos);
                    self.pos += 1;
                }
            }
        }
    }

    /// From `{` to its `}`: the expression's tokens, `!x` conversion and format specifier.
    fn interpolation(&mut self, triple: bool) -> Result<(), Unsure> {
        if self.nested >= 32 {
            return Err(unsure());
        }
        self.nested += 1;
        let r = self.interpolation_inner(triple);
        self.nested -= 1;
        r
    }

    fn interpolation_inner(&mut self, triple: bool) -> Result<(), Unsure> {
        self.push(K::Op, self.syms.lbrace, self.pos, self.pos + 1);
        self.pos += 1;
        let outer = self.depth;
        self.depth = 0;
        loop {
            let c = self.peek(0);
            match c {
                0 if self.pos >= self.src.len() => return Err(unsure()),
                b' ' => self.pos += 1,
                b'\n' if triple || self.depth > 0 => self.pos += 1,
                b'\n' | b'\\' | b'#' | b'\t' | b'\r' => return Err(unsure()),
                b'}' if self.depth == 0 => {
                    self.push(K::Op, self.syms.rbrace, self.pos, self.pos + 1);
                    self.pos += 1;
                    break;
                }
                b'!' if self.depth == 0 && self.peek(1).is_ascii_lowercase() => {
                    self.push(K::TypeConv, 0, self.pos, self.pos + 2);
                    self.pos += 2;
                }
                b':' if self.depth == 0 && self.peek(1) != b'=' => {
                    self.push(K::Op, self.syms.colon, self.pos, self.pos + 1);
                    self.pos += 1;
                    let s = self.pos;
                    while !matches!(self.peek(0), b'{' | b'}' | b'\n' | 0) {
                        self.pos += 1;
                    }
                    if self.pos > s {
                        self.push(K::FmtText, 0, s, self.pos);
                    }
                    // Nested `{...}` in a specifier: rare; tree-sitter has it.
                    if self.peek(0) != b'}' {
                        return Err(unsure());
                    }
                }
                _ => self.token(1)?,
            }
        }
        self.depth = outer;
        Ok(())
    }
}

/// Length of the escape sequence at `s` (which starts with `\`), as the grammar's
/// `escape_sequence` token matches it; 0 when none does.
fn escape_len(s: &[u8]) -> usize {
    let hex = |from: usize, n: usize| s.len() >= from + n && s[from..from + n].iter().all(u8::is_ascii_hexdigit);
    match s.get(1).copied().unwrap_or(0) {
        b'u' if hex(2, 4) => 6,
        b'U' if hex(2, 8) => 10,
        b'x' if hex(2, 2) => 4,
        b'0'..=b'9' => 1 + s[1..].iter().take(3).take_while(|b| b.is_ascii_digit()).count(),
        b'\n' => 2,
        b'\r' if s.get(2) == Some(&b'\n') => 3,
        b'\r' => 0,
        b'\'' | b'"' | b'a' | b'b' | b'f' | b'r' | b'n' | b't' | b'v' | b'\\' => 2,
        b'N' if s.get(2) == Some(&b'{') => match s[3..].iter().position(|&b| b == b'}') {
            Some(p) if p > 0 => 4 + p,
            _ => 0,
        },
        _ => 0,
    }
}
