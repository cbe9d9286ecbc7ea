//! `# xeforge: ignore[XF101]` / `# xeforge: ignore`: on the line where a diagnostic starts, or on a
//! decorator or `def` line of a kernel, which then covers the whole kernel (decorators included).

use crate::lint::Diagnostic;
use crate::model::{FileModel, Suppression};
use crate::text::{LineIndex, TextRange};
use std::collections::HashMap;

pub struct Suppressions<'a> {
    by_line: HashMap<usize, Vec<&'a Suppression>>,
    /// Kernel ranges with the suppressions written on their decorator/def lines.
    scoped: Vec<(TextRange, &'a Suppression)>,
}

impl<'a> Suppressions<'a> {
    pub fn new(model: &'a FileModel, lines: &LineIndex) -> Self {
        let mut by_line: HashMap<usize, Vec<&Suppression>> = HashMap::new();
        for s in &model.suppressions {
            by_line.entry(s.line).or_default().push(s);
        }
        let mut scoped = Vec::new();
        if !by_line.is_empty() {
            for k in &model.kernels {
                let mut header_lines = vec![lines.line_of(k.range.start), lines.line_of(k.jit_range.start)];
                header_lines.push(lines.line_of(k.def_range.start));
                // A multi-line signature: every line up to the one that holds the kernel's name and the `(`.
                header_lines.push(lines.line_of(k.name_range.start));
                if let Some(a) = &k.autotune {
                    header_lines.push(lines.line_of(a.range.start));
                }
                header_lines.extend(k.heuristics.iter().map(|h| lines.line_of(h.range.start)));
                header_lines.sort_unstable();
                header_lines.dedup();
                for l in header_lines {
                    for s in by_line.get(&l).into_iter().flatten() {
                        scoped.push((k.range, *s));
                    }
                }
            }
        }
        Self { by_line, scoped }
    }

    pub fn is_empty(&self) -> bool {
        self.by_line.is_empty()
    }

    pub fn suppresses(&self, d: &Diagnostic, lines: &LineIndex) -> bool {
        let line = lines.line_of(d.range.start);
        if self.by_line.get(&line).is_some_and(|v| v.iter().any(|s| covers(s, d.code))) {
            return true;
        }
        self.scoped.iter().any(|(range, s)| range.contains(d.range.start) && covers(s, d.code))
    }
}

/// Whether a suppression names this code: no codes = all; a code prefix (`XF1`) covers its family.
fn covers(s: &Suppression, code: &str) -> bool {
    s.codes.is_empty()
        || s.codes.iter().any(|c| {
            let c = c.trim();
            !c.is_empty() && code.len() >= c.len() && code[..c.len()].eq_ignore_ascii_case(c)
        })
}
