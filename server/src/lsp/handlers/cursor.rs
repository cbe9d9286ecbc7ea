//! Where the cursor is in the text, for completion and signature help: after `tl.`, in the argument
//! list of a call (which argument, which keyword), in a dict (key or value), inside a string.
//! Read from the text of the statement around the cursor, not the tree: while typing, the call is
//! usually unfinished and the tree holds an ERROR node there.

/// The context at a byte offset.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Cursor<'a> {
    /// `tl.lo|`: the dotted object (`tl`) and the partial member (`lo`).
    pub member: Option<(&'a str, &'a str)>,
    /// The innermost open call.
    pub call: Option<Call<'a>>,
    /// The innermost open bracket is a `{` directly inside that call's arguments.
    pub dict: Option<Dict<'a>>,
    /// Inside a string literal: its quote character and the text typed so far.
    pub string: Option<(char, &'a str)>,
    /// The partial identifier before the cursor (for keyword names).
    pub word: &'a str,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Call<'a> {
    /// Dotted name before `(` (`tl.load`, `triton.Config`), or the kernel of a launch `k[grid](`.
    pub callee: &'a str,
    /// `k[grid](`: a launch (callee is `k`).
    pub launch: bool,
    /// Byte offset of the `(`.
    pub open: usize,
    /// Arguments complete before the cursor: positional count, keyword names.
    pub positional: usize,
    pub keywords: Vec<&'a str>,
    /// `name=` of the argument under the cursor, when it is a keyword argument.
    pub keyword: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Dict<'a> {
    /// Keys already written (unquoted).
    pub keys: Vec<&'a str>,
    /// The key whose value is under the cursor (`"grf_mode": |`).
    pub value_of: Option<&'a str>,
    /// The dict is the call's first argument.
    pub first_arg: bool,
}

/// How far back the statement around the cursor is looked for.
const MAX_LINES_BACK: usize = 400;

pub fn at(text: &str, at: usize) -> Cursor<'_> {
    let at = floor_char(text, at.min(text.len()));
    let start = statement_start(text, at);
    let b = text.as_bytes();
    // Forward scan: open brackets, strings, comments.
    let mut stack: Vec<(u8, usize)> = Vec::new();
    let mut i = start;
    let mut string: Option<(char, usize)> = None;
    while i < at {
        let c = b[i];
        match c {
            b'#' => match text[i..at].find('\n') {
                Some(n) => i += n,
                None => return Cursor::default(), // in a comment
            },
            b'\'' | b'"' => {
                let triple = text[i..].starts_with(if c == b'"' { "\"\"\"" } else { "'''" });
                let q = if triple { &text[i..i + 3] } else { &text[i..i + 1] };
                let body = i + q.len();
                let mut j = body;
                let mut closed = None;
                while j < at {
                    if b[j] == b'\\' {
                        j += 2;
                        continue;
                    }
                    if text[j..].starts_with(q) {
                        closed = Some(j + q.len());
                        break;
                    }
                    if !triple && b[j] == b'\n' {
                        closed = Some(j);
                        break;
                    }
                    j += 1;
                }
                match closed {
                    Some(end) => i = end.max(i + 1) - 1,
                    None => {
                        string = Some((c as char, body.min(at)));
                        break;
                    }
                }
            }
            b'(' | b'[' | b'{' => stack.push((c, i)),
            b')' | b']' | b'}' => {
                stack.pop();
            }
            _ => {}
        }
        i += 1;
    }
    let mut cur = Cursor { string: string.map(|(q, s)| (q, &text[s..at])), ..Cursor::default() };
    let before = match string {
        Some((_, s)) => s - 1, // the opening quote
        None => at,
    };
    if string.is_none() {
        let w = ident_start(text, at, true);
        let chain = &text[w..at];
        cur.word = &chain[chain.rfind('.').map_or(0, |d| d + 1)..];
        if let Some(d) = chain.rfind('.') {
            cur.member = Some((&chain[..d], &chain[d + 1..]));
        }
    }
    let Some(&(open_c, open)) = stack.last() else { return cur };
    let (call_open, dict_open) = match open_c {
        b'(' => (Some(open), None),
        b'{' => match stack.len().checked_sub(2).map(|k| stack[k]) {
            Some((b'(', p)) => (Some(p), Some(open)),
            _ => (None, None),
        },
        _ => (None, None),
    };
    if let Some(p) = call_open {
        cur.call = call_at(text, start, p, dict_open.unwrap_or(before), dict_open.is_some());
    }
    if let Some(d) = dict_open {
        let first_arg = text[call_open.unwrap_or(d) + 1..d].trim().is_empty();
        cur.dict = Some(dict_at(text, d, before, first_arg));
    }
    cur
}

fn call_at(text: &str, start: usize, open: usize, end: usize, in_dict: bool) -> Option<Call<'_>> {
    let b = text.as_bytes();
    let mut j = open;
    while j > start && b[j - 1].is_ascii_whitespace() {
        j -= 1;
    }
    let mut launch = false;
    if j > start && b[j - 1] == b']' {
        // `k[grid](`: step back over the subscript.
        let mut depth = 0usize;
        let mut k = j;
        while k > start {
            k -= 1;
            match b[k] {
                b']' | b')' | b'}' => depth += 1,
                b'[' | b'(' | b'{' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        if b[k] != b'[' {
            return None;
        }
        j = k;
        launch = true;
    }
    let s = ident_start(text, j, true);
    let callee = &text[s..j];
    if callee.is_empty() || callee.starts_with('.') {
        return None;
    }
    let args = split_top(&text[open + 1..end]);
    let (done, current) = args.split_at(args.len().saturating_sub(1));
    let mut positional = 0;
    let mut keywords = Vec::new();
    for a in done {
        match keyword_of(a) {
            Some(k) => keywords.push(k),
            None if !a.trim().is_empty() => positional += 1,
            None => {}
        }
    }
    let keyword = if in_dict { None } else { current.first().and_then(|a| keyword_of(a)) };
    Some(Call { callee, launch, open, positional, keywords, keyword })
}

fn dict_at(text: &str, open: usize, end: usize, first_arg: bool) -> Dict<'_> {
    let items = split_top(&text[open + 1..end]);
    let (done, current) = items.split_at(items.len().saturating_sub(1));
    let keys = done.iter().filter_map(|i| dict_key(i)).collect();
    let value_of = current.first().and_then(|i| dict_key(i));
    Dict { keys, value_of, first_arg }
}

/// `"key": value` → `key`.
fn dict_key(item: &str) -> Option<&str> {
    let (k, _) = item.split_once(':')?;
    Some(k.trim().trim_matches(['"', '\'']))
}

/// `name=...` → `name` (not `==`).
fn keyword_of(arg: &str) -> Option<&str> {
    let t = arg.trim_start();
    let n = t.bytes().take_while(|c| c.is_ascii_alphanumeric() || *c == b'_').count();
    let rest = t[n..].trim_start();
    (n > 0 && rest.starts_with('=') && !rest.starts_with("==")).then(|| &t[..n])
}

/// Split at top-level commas (brackets and strings respected).
fn split_top(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let (mut depth, mut from, mut i) = (0i32, 0, 0);
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == b'\\' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => {
                    out.push(&s[from..i]);
                    from = i + 1;
                }
                _ => {}
            },
        }
        i += 1;
    }
    out.push(&s[from..]);
    out
}

/// Start of the identifier (with `dotted`, the dotted chain) ending at `end`.
fn ident_start(text: &str, end: usize, dotted: bool) -> usize {
    let b = text.as_bytes();
    let mut i = end;
    while i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || (dotted && b[i - 1] == b'.')) {
        i -= 1;
    }
    i
}

/// The first line at or above the cursor's that starts at column 0 with code (a top-level statement,
/// decorator or `def`), at most [`MAX_LINES_BACK`] lines up.
fn statement_start(text: &str, at: usize) -> usize {
    let mut line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    for _ in 0..MAX_LINES_BACK {
        let first = text.as_bytes().get(line_start).copied().unwrap_or(b'\n');
        if !first.is_ascii_whitespace() && !matches!(first, b')' | b']' | b'}' | b'#' | b'"' | b'\'') {
            return line_start;
        }
        if line_start == 0 {
            return 0;
        }
        line_start = text[..line_start - 1].rfind('\n').map_or(0, |n| n + 1);
    }
    line_start
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cur(src: &str) -> Cursor<'static> {
        let at = src.find('|').unwrap();
        let text: &'static str = Box::leak(src.replacen('|', "", 1).into_boxed_str());
        super::at(text, at)
    }

    #[test]
    fn member_after_a_dot() {
        let c = cur("@triton.jit\ndef k(x):\n    y = tl.lo|");
        assert_eq!(c.member, Some(("tl", "lo")));
    }

    #[test]
    fn keyword_in_a_multi_line_call() {
        let c = cur("def k(x):\n    y = tl.load(x + offs,\n        mask=m, other=(0, 1),\n        evi|");
        let call = c.call.unwrap();
        assert_eq!((call.callee, call.positional, call.keywords.clone(), call.keyword), ("tl.load", 1, vec!["mask", "other"], None));
        assert_eq!(c.word, "evi");
    }

    #[test]
    fn launch_keyword_value_and_string() {
        let c = cur("k[(triton.cdiv(n, 64),)](x, y, n, grf_mode=\"2|");
        let call = c.call.unwrap();
        assert!(call.launch);
        assert_eq!((call.callee, call.keyword), ("k", Some("grf_mode")));
        assert_eq!(c.string, Some(('"', "2")));
    }

    #[test]
    fn config_dict_key_and_value() {
        let c = cur("configs = [triton.Config({'BLOCK_M': 64, 'grf_mode': '|");
        assert_eq!(c.call.as_ref().unwrap().callee, "triton.Config");
        let d = c.dict.unwrap();
        assert_eq!((d.keys, d.value_of, d.first_arg), (vec!["BLOCK_M"], Some("grf_mode"), true));
        let c = cur("configs = [triton.Config({'BLOCK_M': 64, 'BL|");
        assert_eq!(c.dict.unwrap().value_of, None);
        assert_eq!(c.string, Some(('\'', "BL")));
    }

    #[test]
    fn nothing_in_a_comment_or_after_a_closed_call() {
        assert_eq!(cur("x = tl.load(p)  # tl.lo|"), Cursor::default());
        assert!(cur("x = tl.load(p) + |").call.is_none());
    }
}
