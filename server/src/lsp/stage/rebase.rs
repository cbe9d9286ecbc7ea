//! Turning a stage's whole-file result into edits of the document *as it is now*.
//!
//! A stage runs for minutes on the text of one version; meanwhile the user keeps typing. The result is
//! split into hunks (line diff of start → result, each narrowed to its minimal byte replacement) and
//! every hunk, plus the kernel the stage verified, is located in the current text through a line diff
//! of start → current. A region maps only when it lies inside one unchanged run of lines, so a mapped
//! region is byte-for-byte what the stage saw; anything else is a conflict and the result is not
//! applied silently.

use std::time::Duration;

use similar::{DiffTag, TextDiff};

use crate::lsp::edit::minimal_replacement;
use crate::text::TextRange;

/// One replacement, in the coordinates of the text it applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replace {
    pub range: TextRange,
    pub text: String,
}

/// Why a result cannot be moved onto the current text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conflict {
    /// The kernel the stage verified was edited.
    KernelEdited,
    /// A region the stage changed outside the kernel (a launch site) was edited.
    RegionEdited,
    /// "Apply anyway": the kernel is no longer in the document.
    KernelGone,
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Conflict::KernelEdited => "the kernel was edited while the stage ran",
            Conflict::RegionEdited => "code the stage changed outside the kernel was edited while it ran",
            Conflict::KernelGone => "the kernel is no longer in the document",
        })
    }
}

/// Line diffs of long files stop at this deadline; a cut-short diff is coarser, never wrong (its
/// unchanged runs are still equal), so the worst case is a conflict instead of a rebase.
const DIFF_DEADLINE: Duration = Duration::from_millis(200);

/// The stage's change as non-overlapping minimal replacements in `old`, in order.
pub fn hunks(old: &str, new: &str) -> Vec<Replace> {
    let diff = TextDiff::configure().timeout(DIFF_DEADLINE).diff_lines(old, new);
    let old_starts = line_starts(diff.old_slices());
    let new_starts = line_starts(diff.new_slices());
    let mut out = Vec::new();
    let mut pending: Option<(usize, usize, usize, usize)> = None; // old lines a..b, new lines c..d
    let flush = |p: (usize, usize, usize, usize), out: &mut Vec<Replace>| {
        let (o0, o1) = (old_starts[p.0], old_starts[p.1]);
        let (n0, n1) = (new_starts[p.2], new_starts[p.3]);
        if let Some((a, b, text)) = minimal_replacement(&old[o0..o1], &new[n0..n1]) {
            out.push(Replace { range: TextRange::new(o0 + a, o0 + b), text: text.to_string() });
        }
    };
    for op in diff.ops() {
        let (tag, o, n) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            if let Some(p) = pending.take() {
                flush(p, &mut out);
            }
            continue;
        }
        pending = Some(match pending {
            Some((a, _, c, _)) => (a, o.end, c, n.end),
            None => (o.start, o.end, n.start, n.end),
        });
    }
    if let Some(p) = pending {
        flush(p, &mut out);
    }
    out
}

/// Byte offset of each line start, plus the end of the text.
fn line_starts(lines: &[&str]) -> Vec<usize> {
    let mut v = Vec::with_capacity(lines.len() + 1);
    let mut at = 0;
    v.push(0);
    for l in lines {
        at += l.len();
        v.push(at);
    }
    v
}

/// Where regions of `old` are in `current`.
pub struct Mapper {
    /// (old line range, new line range) of each unchanged run.
    equal: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    old_starts: Vec<usize>,
    new_starts: Vec<usize>,
    old_len: usize,
    new_len: usize,
}

impl Mapper {
    pub fn new(old: &str, current: &str) -> Mapper {
        let diff = TextDiff::configure().timeout(DIFF_DEADLINE).diff_lines(old, current);
        let equal = diff
            .ops()
            .iter()
            .filter_map(|op| {
                let (tag, o, n) = op.as_tag_tuple();
                (tag == DiffTag::Equal).then_some((o, n))
            })
            .collect();
        Mapper {
            equal,
            old_starts: line_starts(diff.old_slices()),
            new_starts: line_starts(diff.new_slices()),
            old_len: old.len(),
            new_len: current.len(),
        }
    }

    fn line_of(&self, byte: usize) -> usize {
        // Index of the last line start <= byte.
        self.old_starts.partition_point(|&s| s <= byte).saturating_sub(1)
    }

    /// The range in `current` holding exactly the bytes of `r` in `old`, if no edit touched its lines.
    pub fn map(&self, r: TextRange) -> Option<TextRange> {
        if r.start == self.old_len && r.end == self.old_len {
            // An insertion at the very end: the end of the current text if the last line is unchanged.
            let last = self.old_starts.len().saturating_sub(2);
            let tail_equal = self.equal.iter().any(|(o, n)| o.end == last + 1 && self.new_starts[n.end] == self.new_len);
            return (tail_equal || self.old_len == 0).then(|| TextRange::empty(self.new_len));
        }
        let first = self.line_of(r.start);
        let last = self.line_of(r.end.max(r.start + 1) - 1);
        let (o, n) = self.equal.iter().find(|(o, _)| o.start <= first && last < o.end)?;
        let delta = self.new_starts[n.start] as isize - self.old_starts[o.start] as isize;
        let shift = |x: usize| (x as isize + delta) as usize;
        Some(TextRange::new(shift(r.start), shift(r.end)))
    }
}

/// Move the stage's hunks onto `current`. The kernel (when known) must be intact too: the harness
/// verified the result with *that* kernel text around the hunks.
pub fn rebase(old: &str, current: &str, kernel: Option<TextRange>, hunks: &[Replace]) -> Result<Vec<Replace>, Conflict> {
    if old == current {
        return Ok(hunks.to_vec());
    }
    let m = Mapper::new(old, current);
    if let Some(k) = kernel
        && m.map(k).is_none()
    {
        return Err(Conflict::KernelEdited);
    }
    hunks
        .iter()
        .map(|h| {
            let range = m.map(h.range).ok_or_else(|| {
                if kernel.is_some_and(|k| k.contains_range(h.range)) { Conflict::KernelEdited } else { Conflict::RegionEdited }
            })?;
            Ok(Replace { range, text: h.text.clone() })
        })
        .collect()
}

/// "Apply anyway" after a kernel conflict: the kernel as the user has it now (`current_kernel`) is
/// replaced by the verified one; hunks outside the kernel must still map.
pub fn force(
    old: &str,
    new: &str,
    current: &str,
    kernel_before: TextRange,
    kernel_after: TextRange,
    current_kernel: TextRange,
    hunks: &[Replace],
) -> Result<Vec<Replace>, Conflict> {
    let m = Mapper::new(old, current);
    let mut out = Vec::new();
    for h in hunks {
        if kernel_before.contains_range(h.range) {
            continue;
        }
        if h.range.intersects(kernel_before) {
            return Err(Conflict::RegionEdited);
        }
        let range = m.map(h.range).ok_or(Conflict::RegionEdited)?;
        if range.intersects(current_kernel) {
            return Err(Conflict::RegionEdited);
        }
        out.push(Replace { range, text: h.text.clone() });
    }
    let (Some(now), Some(verified)) =
        (current.get(current_kernel.start..current_kernel.end), new.get(kernel_after.start..kernel_after.end))
    else {
        return Err(Conflict::KernelGone);
    };
    if let Some((a, b, text)) = minimal_replacement(now, verified) {
        out.push(Replace { range: TextRange::new(current_kernel.start + a, current_kernel.start + b), text: text.to_string() });
    }
    out.sort_by_key(|r| r.range.start);
    Ok(out)
}

/// Apply replacements (non-overlapping, any order) to a text; for tests and sanity checks.
pub fn apply(text: &str, edits: &[Replace]) -> String {
    let mut sorted: Vec<&Replace> = edits.iter().collect();
    sorted.sort_by_key(|r| r.range.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for e in sorted {
        out.push_str(&text[at..e.range.start]);
        out.push_str(&e.text);
        at = e.range.end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "import triton\n\n@triton.jit\ndef k(x):\n    a = 1\n    b = 2\n\n\ndef run(x):\n    k[(1,)](x, BLOCK=256)\n";

    fn kernel() -> TextRange {
        let s = OLD.find("@triton.jit").unwrap();
        let e = OLD.find("    b = 2\n").unwrap() + "    b = 2\n".len();
        TextRange::new(s, e)
    }

    fn result() -> String {
        OLD.replace("    a = 1\n", "    a = 10\n").replace("BLOCK=256)", ")")
    }

    #[test]
    fn hunks_are_minimal_and_reproduce_the_result() {
        let new = result();
        let h = hunks(OLD, &new);
        assert_eq!(h.len(), 2, "{h:?}");
        assert_eq!(h[0].text, "0");
        assert_eq!(apply(OLD, &h), new);
    }

    #[test]
    fn edits_above_and_below_the_kernel_shift_the_hunks() {
        let new = result();
        let current = format!("# header\n{}", OLD).replace("def run(x):\n", "def run(x):\n    print(x)\n") + "# tail\n";
        let edits = rebase(OLD, &current, Some(kernel()), &hunks(OLD, &new)).unwrap();
        let expected = format!("# header\n{}", new).replace("def run(x):\n", "def run(x):\n    print(x)\n") + "# tail\n";
        assert_eq!(apply(&current, &edits), expected);
    }

    #[test]
    fn an_edit_inside_the_kernel_is_a_conflict_even_away_from_the_hunks() {
        let current = OLD.replace("    b = 2\n", "    b = 3\n");
        assert_eq!(rebase(OLD, &current, Some(kernel()), &hunks(OLD, &result())), Err(Conflict::KernelEdited));
    }

    #[test]
    fn an_edit_on_a_changed_launch_line_is_a_conflict() {
        let current = OLD.replace("k[(1,)](x, BLOCK=256)", "k[(2,)](x, BLOCK=256)");
        assert_eq!(rebase(OLD, &current, Some(kernel()), &hunks(OLD, &result())), Err(Conflict::RegionEdited));
    }

    #[test]
    fn force_replaces_the_edited_kernel_and_keeps_the_rest() {
        let new = result();
        let current = format!("# header\n{}", OLD.replace("    b = 2\n", "    b = 3\n"));
        let ck = TextRange::new(kernel().start + 9, kernel().end + 9);
        let ka = TextRange::new(kernel().start, kernel().end + 1);
        let edits = force(OLD, &new, &current, kernel(), ka, ck, &hunks(OLD, &new)).unwrap();
        assert_eq!(apply(&current, &edits), format!("# header\n{new}"));
    }

    #[test]
    fn insertion_at_the_end_maps_to_the_end() {
        let m = Mapper::new("a\nb\n", "x\na\nb\n");
        assert_eq!(m.map(TextRange::empty(4)), Some(TextRange::empty(6)));
        assert_eq!(m.map(TextRange::new(2, 4)), Some(TextRange::new(4, 6)));
    }
}
