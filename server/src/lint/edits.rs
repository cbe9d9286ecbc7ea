//! Small text surgeries the fixes are built from. Each works on byte ranges of the checked text and
//! returns `None` rather than an edit it cannot make exactly (a range outside the text, a token
//! that is not where the model says it is).

use crate::lint::{Applicability, Edit, Fix};
use crate::text::TextRange;

pub fn fix(applicability: Applicability, message: impl Into<String>, mut edits: Vec<Edit>) -> Fix {
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    Fix { applicability, message: message.into(), edits }
}

/// Source text of `range`, if it is a valid slice of `text`.
pub fn slice(text: &str, range: TextRange) -> Option<&str> {
    text.get(range.start..range.end)
}

/// True when `range` holds exactly a decimal integer literal (`8`, `1_024`), not an expression.
pub fn is_int_literal(text: &str, range: TextRange) -> bool {
    slice(text, range)
        .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'_') && s.as_bytes()[0].is_ascii_digit())
}

/// Replace `old` (a whole identifier inside `range`, possibly quoted) by `new`.
pub fn rename_token(text: &str, range: TextRange, old: &str, new: &str) -> Option<Edit> {
    let s = slice(text, range)?;
    let at = find_token(s, old)?;
    let start = range.start + at;
    Some(Edit { range: TextRange::new(start, start + old.len()), content: new.to_string() })
}

fn find_token(hay: &str, token: &str) -> Option<usize> {
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let b = hay.as_bytes();
    let mut from = 0;
    while let Some(pos) = hay.get(from..)?.find(token) {
        let at = from + pos;
        let end = at + token.len();
        let before_ok = at == 0 || !is_ident(b[at - 1]);
        let after_ok = end >= b.len() || !is_ident(b[end]);
        if before_ok && after_ok {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Delete one item of a comma-separated list (a call keyword or a dict entry) together with its
/// separator, keeping the surrounding layout: a whole line when the item sits alone on it.
pub fn remove_list_item(text: &str, item: TextRange) -> Option<Edit> {
    slice(text, item)?;
    let b = text.as_bytes();
    let skip_inline_ws = |mut i: usize| {
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        i
    };
    let after = skip_inline_ws(item.end);
    if after < b.len() && b[after] == b',' {
        let after_comma = skip_inline_ws(after + 1);
        let line_start = text[..item.start].rfind('\n').map_or(0, |i| i + 1);
        let alone_before = text[line_start..item.start].trim().is_empty();
        let ends_line = after_comma >= b.len() || b[after_comma] == b'\n' || b[after_comma] == b'\r';
        if alone_before && ends_line {
            let mut end = after_comma;
            if end < b.len() && b[end] == b'\r' {
                end += 1;
            }
            if end < b.len() && b[end] == b'\n' {
                end += 1;
            }
            return Some(Edit { range: TextRange::new(line_start, end), content: String::new() });
        }
        return Some(Edit { range: TextRange::new(item.start, after_comma), content: String::new() });
    }
    // Last item: take the separator before it instead (and any trailing comma stays balanced).
    let before = text[..item.start].trim_end();
    if before.ends_with(',') {
        let comma = before.len() - 1;
        return Some(Edit { range: TextRange::new(comma, item.end), content: String::new() });
    }
    Some(Edit { range: item, content: String::new() })
}

/// Top-level comma-separated pieces of `args` (the text between a call's parentheses), with their
/// byte offsets relative to `args`. Brackets and string literals are respected.
pub fn split_args(args: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    let mut start = 0;
    let b = args.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = quote {
            if c == b'\\' {
                i += 1;
            } else if c == q {
                quote = None;
            }
        } else {
            match c {
                b'\'' | b'"' => quote = Some(c),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => {
                    out.push((start, &args[start..i]));
                    start = i + 1;
                }
                _ => {}
            }
        }
        i += 1;
    }
    if !args[start..].trim().is_empty() {
        out.push((start, &args[start..]));
    }
    out
}

/// True for an argument of the form `name=value` (not `a == b`).
pub fn is_keyword_arg(arg: &str) -> bool {
    let t = arg.trim_start();
    let ident_len = t.bytes().take_while(|c| c.is_ascii_alphanumeric() || *c == b'_').count();
    ident_len > 0 && {
        let rest = t[ident_len..].trim_start();
        rest.starts_with('=') && !rest.starts_with("==")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(text: &str, e: &Edit) -> String {
        format!("{}{}{}", &text[..e.range.start], e.content, &text[e.range.end..])
    }

    #[test]
    fn removes_a_middle_keyword() {
        let t = "k[g](x, maxnreg=128, num_warps=4)";
        let at = t.find("maxnreg=128").unwrap();
        let e = remove_list_item(t, TextRange::new(at, at + 11)).unwrap();
        assert_eq!(apply(t, &e), "k[g](x, num_warps=4)");
    }

    #[test]
    fn removes_the_last_keyword_with_its_comma() {
        let t = "k[g](x, maxnreg=128)";
        let at = t.find("maxnreg=128").unwrap();
        let e = remove_list_item(t, TextRange::new(at, at + 11)).unwrap();
        assert_eq!(apply(t, &e), "k[g](x)");
    }

    #[test]
    fn removes_a_whole_line() {
        let t = "k[g](\n    x,\n    maxnreg=128,\n    num_warps=4,\n)";
        let at = t.find("maxnreg=128").unwrap();
        let e = remove_list_item(t, TextRange::new(at, at + 11)).unwrap();
        assert_eq!(apply(t, &e), "k[g](\n    x,\n    num_warps=4,\n)");
    }

    #[test]
    fn renames_only_whole_tokens() {
        let t = "{'threads_per_warp_x': 1, 'threads_per_warp': 16}";
        let e = rename_token(t, TextRange::new(0, t.len()), "threads_per_warp", "warp_size").unwrap();
        assert_eq!(apply(t, &e), "{'threads_per_warp_x': 1, 'warp_size': 16}");
    }

    #[test]
    fn splits_arguments_at_top_level() {
        let parts: Vec<&str> = split_args("a, b[1, 2], f(x, y), s=',', t=(1,)").into_iter().map(|p| p.1.trim()).collect();
        assert_eq!(parts, ["a", "b[1, 2]", "f(x, y)", "s=','", "t=(1,)"]);
        assert!(is_keyword_arg(" acc=acc"));
        assert!(!is_keyword_arg("a == b"));
    }

    #[test]
    fn int_literals_only() {
        assert!(is_int_literal("x = 64", TextRange::new(4, 6)));
        assert!(!is_int_literal("x = 2*3", TextRange::new(4, 7)));
        assert!(!is_int_literal("x", TextRange::new(4, 7)));
    }
}
