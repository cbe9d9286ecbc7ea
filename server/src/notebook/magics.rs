//! IPython syntax in a code cell, made into Python the parser takes without moving anything: every
//! replacement keeps the byte length and the line breaks, so an offset into the cell is the same
//! offset into what the analyser reads.
//!
//! - a line magic, shell escape or help line (`%timeit f()`, `!pip install x`, `files = !ls`,
//!   `tl.dot?`) that starts a logical line becomes an `...` statement and a comment, or a comment
//!   when shorter than four bytes; its `\` continuation lines become comments;
//! - a cell magic (`%%time` on the first line) keeps its body when IPython runs the body as Python
//!   (`%%time`, `%%timeit`, `%%capture`, ...); any other (`%%bash`, `%%writefile`) blanks the cell.
//!
//! `%` or `!` inside brackets or a string (`("%d"\n % x)`) continues Python and is left alone, as
//! IPython leaves it.

use std::ops::Range;

/// Cell magics whose body IPython runs as Python in the kernel's namespace.
const PYTHON_BODY: &[&str] = &["time", "timeit", "capture", "prun", "debug", "python", "python3", "pypy", "markdown_to_python"];

/// The cell's text as Python and the byte ranges that were replaced.
pub fn sanitize(cell: &str) -> (String, Vec<Range<usize>>) {
    let mut out = cell.as_bytes().to_vec();
    let mut changed = Vec::new();
    let lines = line_ranges(cell);
    let first = lines.first().map(|r| cell[r.clone()].trim_start()).unwrap_or("");
    let mut skip_first = false;
    if let Some(magic) = first.strip_prefix("%%") {
        let name = magic.split(|c: char| c.is_whitespace()).next().unwrap_or("");
        if !PYTHON_BODY.contains(&name) {
            for r in &lines {
                blank(&mut out, r.clone(), &mut changed);
            }
            return (into_string(out, cell), changed);
        }
        replace_statement(&mut out, cell, lines[0].clone(), &mut changed);
        skip_first = true;
    }
    let starts = logical_starts(cell, &lines);
    let mut continuing = false;
    for (n, r) in lines.iter().enumerate() {
        let text = &cell[r.clone()];
        if continuing {
            blank(&mut out, r.clone(), &mut changed);
            continuing = text.ends_with('\\');
            continue;
        }
        if (n == 0 && skip_first) || !starts[n] || !is_magic(text) {
            continue;
        }
        replace_statement(&mut out, cell, r.clone(), &mut changed);
        continuing = text.ends_with('\\');
    }
    (into_string(out, cell), changed)
}

fn into_string(bytes: Vec<u8>, fallback: &str) -> String {
    // Every replacement writes ASCII over whole characters; the fallback is never reached.
    String::from_utf8(bytes).unwrap_or_else(|_| fallback.to_string())
}

/// Each line's range, without its `\n` or `\r\n`.
fn line_ranges(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _) in text.match_indices('\n') {
        let end = if i > start && text.as_bytes()[i - 1] == b'\r' { i - 1 } else { i };
        out.push(start..end);
        start = i + 1;
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    out
}

/// Whether IPython reads the line (at the start of a logical line) as a magic, a shell escape or help.
fn is_magic(line: &str) -> bool {
    let t = line.trim();
    if t.starts_with('%') || t.starts_with('!') {
        return true;
    }
    let name = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    // `obj?`, `obj??`, `?obj`.
    if let Some(rest) = t.strip_suffix("??").or_else(|| t.strip_suffix('?'))
        && name(rest)
    {
        return true;
    }
    if let Some(rest) = t.strip_prefix("??").or_else(|| t.strip_prefix('?'))
        && name(rest)
    {
        return true;
    }
    // `files = !ls`, `t = %timeit -o f()`: targets, then `=` (not `==`), then the escape.
    if let Some(eq) = t.find('=') {
        let (lhs, rhs) = (&t[..eq], &t[eq + 1..]);
        let targets = !lhs.trim().is_empty() && lhs.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ',' | ' ' | '\t'));
        let rhs = rhs.trim_start();
        return targets && (rhs.starts_with('%') || rhs.starts_with('!')) && !rhs.starts_with("!=");
    }
    false
}

/// The line from its first non-blank byte: `...#` and the rest kept as a comment when that is four
/// ASCII bytes or more (an `...` statement keeps an indented block a block), else `#` and blanks.
fn replace_statement(out: &mut [u8], cell: &str, line: Range<usize>, changed: &mut Vec<Range<usize>>) {
    let text = &cell[line.clone()];
    let indent = text.len() - text.trim_start().len();
    let from = line.start + indent;
    if line.end >= from + 4 && cell.is_char_boundary(from + 4) && cell.as_bytes()[from..from + 4].is_ascii() {
        out[from..from + 4].copy_from_slice(b"...#");
        changed.push(from..from + 4);
    } else {
        blank(out, from..line.end, changed);
    }
}

/// `#` then spaces over the whole range (a line or its rest).
fn blank(out: &mut [u8], r: Range<usize>, changed: &mut Vec<Range<usize>>) {
    if r.is_empty() {
        return;
    }
    out[r.start] = b'#';
    for b in &mut out[r.start + 1..r.end] {
        *b = b' ';
    }
    changed.push(r);
}

/// For each line, whether it starts a logical line: not inside brackets or a string, not after a
/// backslash continuation. A small tokenizer: strings (single, triple, prefixed), comments, brackets.
fn logical_starts(text: &str, lines: &[Range<usize>]) -> Vec<bool> {
    let b = text.as_bytes();
    let mut starts = Vec::with_capacity(lines.len());
    let mut depth = 0usize;
    // Inside a string: its quote and whether it is triple-quoted.
    let mut string: Option<(u8, bool)> = None;
    let mut continued = false;
    for r in lines {
        starts.push(depth == 0 && string.is_none() && !continued);
        continued = false;
        let mut i = r.start;
        while i < r.end {
            let c = b[i];
            if let Some((q, triple)) = string {
                if c == b'\\' {
                    i += 2;
                    continue;
                }
                if c == q {
                    if !triple {
                        string = None;
                    } else if b.get(i + 1..i + 3) == Some(&[q, q]) {
                        string = None;
                        i += 3;
                        continue;
                    }
                }
                i += 1;
                continue;
            }
            match c {
                b'#' => break,
                b'"' | b'\'' => {
                    let triple = b.get(i + 1..i + 3) == Some(&[c, c]);
                    string = Some((c, triple));
                    i += if triple { 3 } else { 1 };
                    continue;
                }
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                b'\\' if i + 1 == r.end => continued = true,
                _ => {}
            }
            i += 1;
        }
        // A single-quoted string does not cross a line (unless escaped, which `\\` skipped over).
        if matches!(string, Some((_, false))) && !(r.end > r.start && b[r.end - 1] == b'\\') {
            string = None;
        }
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(cell: &str) -> String {
        let (s, _) = sanitize(cell);
        assert_eq!(s.len(), cell.len(), "lengths kept");
        assert_eq!(s.matches('\n').count(), cell.matches('\n').count(), "lines kept");
        s
    }

    #[test]
    fn line_magics_shell_and_help_become_statements_or_comments() {
        assert_eq!(clean("%timeit f(x)\nx = 1\n"), "...#eit f(x)\nx = 1\n");
        assert_eq!(clean("!ls\n"), "#  \n");
        assert_eq!(clean("for i in r:\n    !pip install triton\n"), "for i in r:\n    ...# install triton\n");
        assert_eq!(clean("files = !ls -la\n"), "...#s = !ls -la\n");
        assert_eq!(clean("tl.dot?\nx = a != b\ny = 1 == 2\n"), "...#ot?\nx = a != b\ny = 1 == 2\n");
        assert_eq!(clean("%load_ext \\\n  autoreload\nx = 1"), format!("...#d_ext \\\n#{}\nx = 1", " ".repeat(11)));
    }

    #[test]
    fn percent_inside_brackets_or_strings_is_python() {
        let cell = "s = (\"%d\"\n     % x)\nt = \"\"\"\n%not magic\n\"\"\"\n";
        assert_eq!(clean(cell), cell);
    }

    #[test]
    fn cell_magics_keep_a_python_body_or_blank_the_cell() {
        assert_eq!(clean("%%time\nx = f()\n"), "...#me\nx = f()\n");
        assert_eq!(clean("%%bash\necho é\n"), format!("#{}\n#{}\n", " ".repeat(5), " ".repeat(6)));
        let (_, changed) = sanitize("%%writefile k.py\nimport triton\n");
        assert_eq!(changed.len(), 2);
    }

    #[test]
    fn random_cells_keep_their_bytes_lines_and_python() {
        let alphabet = ['%', '!', '?', '=', '"', '\'', '#', '\\', '\n', '\r', '(', ')', ' ', 'x', 'é', '😀', '.'];
        let mut rng = fastrand::Rng::with_seed(18);
        for _ in 0..5000 {
            let n = rng.usize(0..40);
            let cell: String = (0..n).map(|_| alphabet[rng.usize(0..alphabet.len())]).collect();
            let (s, changed) = sanitize(&cell);
            assert_eq!(s.len(), cell.len(), "{cell:?}");
            let breaks = |t: &str| t.char_indices().filter(|(_, c)| *c == '\n').map(|(i, _)| i).collect::<Vec<_>>();
            assert_eq!(breaks(&s), breaks(&cell), "{cell:?}");
            // Outside the replaced ranges every byte is the cell's.
            for (i, (a, b)) in s.bytes().zip(cell.bytes()).enumerate() {
                assert!(a == b || changed.iter().any(|r| r.contains(&i)), "{cell:?} at {i}");
            }
        }
    }

    #[test]
    fn crlf_and_odd_input_keep_lengths() {
        assert_eq!(clean("%pwd\r\nx = 1\r\n"), "...#\r\nx = 1\r\n");
        for s in ["", "%", "!\n!", "\"unterminated\n%x\n", "é%\n%é\n", "'''\n", "x = \\\n%y"] {
            clean(s);
        }
    }
}
