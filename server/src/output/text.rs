//! `--format text`: one header line per diagnostic, then a code frame like rustc and ruff draw it:
//!
//! ```text
//! kernels/mm.py:12:40: XF101 [error] num_warps=6 is not a power of two
//!    |
//! 12 |     mm[grid](a, b, num_warps=6)
//!    |                              ^ XF101
//!    |
//!    = note: kernels/mm.py:4:5: the config that binds it
//!    = help: use num_warps=8 (unsafe fix)
//! ```

use super::{Counts, FileResult};
use crate::knowledge::Severity;
use crate::lint::{Applicability, Diagnostic};
use owo_colors::{OwoColorize, Style};
use unicode_width::UnicodeWidthChar;

/// Frames longer than this show their first and last lines only.
const MAX_FRAME_LINES: usize = 6;
const TAB: &str = "    ";

#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    pub color: bool,
}

impl TextOptions {
    /// Colour only for a terminal, and never when `NO_COLOR` is set (<https://no-color.org>).
    pub fn for_stdout() -> Self {
        use std::io::IsTerminal;
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        TextOptions { color: !no_color && std::io::stdout().is_terminal() }
    }

    fn style(&self, s: Style) -> Style {
        if self.color { s } else { Style::new() }
    }
}

pub fn render(files: &[FileResult], opts: TextOptions, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    for f in files {
        for d in &f.diagnostics {
            render_one(f, d, opts, out)?;
            writeln!(out)?;
        }
    }
    Ok(())
}

fn severity_style(s: Severity) -> Style {
    match s {
        Severity::Error => Style::new().red().bold(),
        Severity::Warning => Style::new().yellow().bold(),
        Severity::Info => Style::new().cyan().bold(),
    }
}

fn render_one(f: &FileResult, d: &Diagnostic, o: TextOptions, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let (start, end) = f.span(d.range);
    let shown = f.place(d.range.start);
    let sev = o.style(severity_style(d.severity));
    let bold = o.style(Style::new().bold());
    let blue = o.style(Style::new().blue().bold());
    writeln!(
        out,
        "{}:{}{}:{}: {} {} {}",
        f.display.style(bold),
        super::cell_label(shown.cell),
        shown.row,
        shown.column,
        d.code.style(sev),
        format!("[{}]", d.severity.as_str()).style(sev),
        d.message
    )?;

    let first = start.row - 1;
    // An end at column 1 of the next line ends the previous one (a range over whole lines).
    let last = if end.row > start.row && end.column == 1 { end.row - 2 } else { end.row - 1 };
    // In a notebook the frame stays in the cell and numbers its rows from the cell's first.
    let (row_base, last) = match f.cell_rows(d.range.start) {
        Some((_, cell_first, cell_last)) => (cell_first, last.min(cell_last).max(first)),
        None => (0, last),
    };
    let gutter = (last + 1 - row_base).to_string().len();
    let pad = " ".repeat(gutter);
    writeln!(out, "{pad} {}", "|".style(blue))?;
    let lines: Vec<usize> = (first..=last).collect();
    let shown: Vec<Option<usize>> = if lines.len() > MAX_FRAME_LINES {
        let head = MAX_FRAME_LINES / 2;
        lines[..head].iter().map(|l| Some(*l)).chain([None]).chain(lines[lines.len() - head..].iter().map(|l| Some(*l))).collect()
    } else {
        lines.iter().map(|l| Some(*l)).collect()
    };
    for line in shown {
        let Some(line) = line else {
            writeln!(out, "{} {}", ".".repeat(gutter).style(blue), "|".style(blue))?;
            continue;
        };
        let lr = f.index.line_range(&f.source, line);
        let text = &f.source[lr.start..lr.end];
        let (shown_text, _) = expand(text, text.len());
        writeln!(out, "{:>gutter$} {} {}", (line + 1 - row_base).style(blue), "|".style(blue), shown_text.trim_end())?;
        // Underline the part of the range on this line; an empty range gets one caret at its position.
        let from = d.range.start.clamp(lr.start, lr.end) - lr.start;
        let to = d.range.end.clamp(lr.start, lr.end) - lr.start;
        let (_, col_from) = expand(text, from);
        let (_, col_to) = expand(text, to);
        let width = col_to.saturating_sub(col_from).max(1);
        let label = if line == last { format!(" {}", d.code) } else { String::new() };
        writeln!(out, "{pad} {} {}{}", "|".style(blue), " ".repeat(col_from), format!("{}{label}", "^".repeat(width)).style(sev))?;
    }
    writeln!(out, "{pad} {}", "|".style(blue))?;
    for r in &d.related {
        writeln!(out, "{pad} {} {}: {}", "= note:".style(bold), f.at(r.range.start), r.message)?;
    }
    if let Some(fix) = &d.fix {
        let kind = match fix.applicability {
            Applicability::Safe => "safe fix, applied by --fix",
            Applicability::Unsafe => "unsafe fix, applied by --fix --unsafe-fixes",
        };
        writeln!(out, "{pad} {} {} ({kind})", "= help:".style(bold), fix.message)?;
    }
    Ok(())
}

/// The line with tabs expanded, and the display width of its first `upto` bytes.
fn expand(text: &str, upto: usize) -> (String, usize) {
    let mut shown = String::with_capacity(text.len());
    let mut width_upto = 0;
    let mut width = 0;
    for (i, ch) in text.char_indices() {
        if i == upto {
            width_upto = width;
        }
        if ch == '\t' {
            shown.push_str(TAB);
            width += TAB.len();
        } else {
            shown.push(ch);
            width += ch.width().unwrap_or(0);
        }
    }
    if upto >= text.len() {
        width_upto = width;
    }
    (shown, width_upto)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// "Found 2 errors, 1 warning (1 fixable with --fix)" or "All checks passed!".
pub fn summary(c: &Counts) -> String {
    if c.total() == 0 {
        return "All checks passed!".to_string();
    }
    let mut parts = vec![plural(c.errors, "error", "errors"), plural(c.warnings, "warning", "warnings")];
    if c.infos > 0 {
        parts.push(plural(c.infos, "info", "infos"));
    }
    let mut s = format!("Found {}", parts.join(", "));
    let mut fix = Vec::new();
    if c.fixable > 0 {
        fix.push(format!("{} fixable with --fix", c.fixable));
    }
    if c.unsafe_fixable > 0 {
        fix.push(format!("{} more with --unsafe-fixes", c.unsafe_fixable));
    }
    if !fix.is_empty() {
        s.push_str(&format!(" ({})", fix.join(", ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_and_wide_chars_move_the_underline() {
        assert_eq!(expand("\tx", 1), ("    x".to_string(), 4));
        assert_eq!(expand("日本x", "日本".len()).1, 4);
        assert_eq!(expand("ab", 2).1, 2);
    }

    #[test]
    fn summary_counts_and_fixability() {
        let c = Counts { errors: 2, warnings: 1, infos: 0, fixable: 1, unsafe_fixable: 1 };
        assert_eq!(summary(&c), "Found 2 errors, 1 warning (1 fixable with --fix, 1 more with --unsafe-fixes)");
        assert_eq!(summary(&Counts::default()), "All checks passed!");
    }
}
