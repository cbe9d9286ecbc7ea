//! The page around the report's sections: one self-contained HTML file (inline style, inline SVG,
//! no script, nothing fetched when it is viewed).

use std::fmt::Write;

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:980px;color:#222;padding:0 1em}\
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.8em;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}\
th{background:#f4f4f4}.num{text-align:right;font-variant-numeric:tabular-nums}\
.badge{display:inline-block;padding:2px 8px;border-radius:4px;color:#fff;font-weight:bold}\
.accepted{background:#2f7d3e}.correct-only{background:#3a6ea5}.no-improvement{background:#777}.harness-error{background:#b33}\
pre.diff{background:#fafafa;border:1px solid #ddd;padding:8px;overflow-x:auto;font-size:12px}\
.add{color:#17622a;background:#e8f6ec}.del{color:#8f1f1f;background:#fbeaea}.hunk{color:#555}\
.note{color:#555}.run{margin-bottom:3em}";

/// A whole page around `body`.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n",
        escape(title)
    )
}

/// A unified diff with added and removed lines marked.
pub fn diff(text: &str) -> String {
    let mut out = String::from("<pre class=\"diff\">");
    for line in text.lines() {
        let class = match line.as_bytes().first() {
            Some(b'+') if !line.starts_with("+++") => "add",
            Some(b'-') if !line.starts_with("---") => "del",
            Some(b'@') => "hunk",
            _ => "",
        };
        if class.is_empty() {
            let _ = writeln!(out, "{}", escape(line));
        } else {
            let _ = writeln!(out, "<span class=\"{class}\">{}</span>", escape(line));
        }
    }
    out.push_str("</pre>");
    out
}

/// A table from a header row and rows of already-escaped cells; cells that start with a digit or
/// sign are right-aligned.
pub fn table(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::from("<table><tr>");
    for h in head {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let numeric = cell.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+');
            let _ = write!(out, "<td{}>{cell}</td>", if numeric { " class=\"num\"" } else { "" });
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}
