//! `--fix` on a notebook: the fixes found on the concatenated cells applied to each cell's own
//! text, then the whole notebook checked again, as `fix::apply_until_stable` does for a file.
//! A fix with an edit outside one cell's text, or over IPython syntax `magics` replaced, is left out:
//! a cell's text changes only where the analysed text said the same thing.

use super::Concat;
use crate::fix::{self, FixResult, MAX_PASSES};
use crate::lint::{Diagnostic, Edit, Fix};
use crate::text::TextRange;

/// What the fixes made of the cells: each (cell index, text) in the order given, and the count
/// applied; `skipped` and `unsafe_hidden` as in the last pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedCells {
    pub cells: Vec<(usize, String)>,
    pub applied: usize,
    pub skipped: usize,
    pub unsafe_hidden: usize,
}

/// Apply, re-check, repeat until nothing more applies. `check` returns the diagnostics of a
/// concatenated text (`Concat::text`).
pub fn apply_until_stable(cells: Vec<(usize, String)>, unsafe_fixes: bool, mut check: impl FnMut(&str) -> Vec<Diagnostic>) -> FixedCells {
    let mut current = cells;
    let mut seen = vec![current.clone()];
    let mut out = FixedCells { cells: Vec::new(), applied: 0, skipped: 0, unsafe_hidden: 0 };
    for _ in 0..MAX_PASSES {
        let concat = Concat::build(current.iter().map(|(i, s)| (*i, s.as_str())));
        let diags = check(&concat.text);
        let (next, pass) = one_pass(&concat, &current, &diags, unsafe_fixes);
        out.skipped = pass.skipped;
        out.unsafe_hidden = pass.unsafe_hidden;
        if pass.applied == 0 || next == current {
            break;
        }
        out.applied += pass.applied;
        current = next;
        if seen.contains(&current) {
            break;
        }
        seen.push(current.clone());
    }
    out.cells = current;
    out
}

/// One pass over every cell: its own fixes, moved to its own offsets.
fn one_pass(concat: &Concat, cells: &[(usize, String)], diags: &[Diagnostic], unsafe_fixes: bool) -> (Vec<(usize, String)>, FixResult) {
    let mut total = FixResult { text: String::new(), applied: 0, skipped: 0, unsafe_hidden: 0 };
    let mut placed = vec![Vec::new(); concat.parts.len()];
    for d in diags {
        let Some(f) = &d.fix else { continue };
        let span = f.edits.iter().map(|e| e.range).reduce(|a, b| a.cover(b));
        let part = span.and_then(|s| concat.part_at(s.start)).filter(|&k| f.edits.iter().all(|e| concat.parts[k].holds(e.range)));
        let Some(k) = part else {
            total.skipped += 1;
            continue;
        };
        let start = concat.parts[k].start;
        let edits =
            f.edits.iter().map(|e| Edit { range: TextRange::new(e.range.start - start, e.range.end - start), content: e.content.clone() });
        let mut local = d.clone();
        local.fix = Some(Fix { edits: edits.collect(), ..f.clone() });
        placed[k].push(local);
    }
    let mut next = Vec::with_capacity(cells.len());
    for (k, (cell, text)) in cells.iter().enumerate() {
        let mine = placed.get(k).map(Vec::as_slice).unwrap_or_default();
        if mine.is_empty() {
            next.push((*cell, text.clone()));
            continue;
        }
        let r = fix::apply(text, mine, unsafe_fixes);
        total.applied += r.applied;
        total.skipped += r.skipped;
        total.unsafe_hidden += r.unsafe_hidden;
        next.push((*cell, r.text));
    }
    (next, total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::Knowledge;
    use crate::lint::LintOptions;

    #[test]
    fn a_launch_in_one_cell_is_fixed_there_for_a_kernel_defined_in_another() {
        let kernel = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x):\n    pass\n";
        let launch = "%time\nk[(1,)](x, grf_mode='large')\n";
        let cells = vec![(0, kernel.to_string()), (2, launch.to_string())];
        let opts = LintOptions { toolchain: "xpu-3.7".into(), ..LintOptions::default() };
        let kb = Knowledge::embedded();
        let r = apply_until_stable(cells, false, |t| crate::analysis::analyze(t, kb, &opts).map(|a| a.diagnostics).unwrap_or_default());
        assert_eq!(r.applied, 1, "{r:?}");
        assert_eq!(r.cells[0].1, kernel);
        assert_eq!(r.cells[1].1, "%time\nk[(1,)](x, grf_mode='256')\n");
    }
}
