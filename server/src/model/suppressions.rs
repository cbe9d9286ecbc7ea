//! `# xeforge: ignore` / `# xeforge: ignore[XF101, XF2]` comments.

use super::types::Suppression;
use crate::text::{LineIndex, TextRange};

/// Parses one comment; None when it is not a suppression.
pub fn parse(comment: &str, range: TextRange, lines: &LineIndex) -> Option<Suppression> {
    let body = comment.trim_start_matches('#').trim_start();
    let at = body.find("xeforge")?;
    let rest = body[at + "xeforge".len()..].trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix("ignore")?;
    // `ignoreX` is not the directive.
    if rest.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let rest = rest.trim_start();
    let codes = match rest.strip_prefix('[') {
        Some(list) => {
            let inner = list.split(']').next().unwrap_or("");
            inner.split(',').map(|c| c.trim().to_ascii_uppercase()).filter(|c| !c.is_empty()).collect()
        }
        None => Vec::new(),
    };
    Some(Suppression { line: lines.line_of(range.start), codes, range })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_codes_and_bare_form() {
        let text = "x = 1  # xeforge: ignore[XF101, xf2 ]\n";
        let li = LineIndex::new(text);
        let s = parse("# xeforge: ignore[XF101, xf2 ]", TextRange::new(7, 37), &li).unwrap();
        assert_eq!(s.codes, vec!["XF101", "XF2"]);
        assert_eq!(s.line, 0);
        let bare = parse("# xeforge:ignore", TextRange::new(0, 16), &li).unwrap();
        assert!(bare.codes.is_empty());
        assert!(parse("# xeforge: ignored", TextRange::new(0, 18), &li).is_none());
        assert!(parse("# noqa", TextRange::new(0, 6), &li).is_none());
    }
}
