//! Applying fixes to text, as ruff does: safe fixes always, unsafe ones only when asked; within
//! one pass a fix whose edits overlap (or touch) an earlier fix is skipped; [`apply_until_stable`]
//! re-checks the new text and repeats, up to [`MAX_PASSES`], so skipped fixes get another chance
//! against fresh ranges.

use crate::lint::{Applicability, Diagnostic, Edit, Fix};
use crate::text::TextRange;

/// Ruff's limit: enough for fixes that unlock other fixes, bounded against fix loops.
pub const MAX_PASSES: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixResult {
    pub text: String,
    /// Diagnostics whose fix was applied.
    pub applied: usize,
    /// Fixes left out because they overlapped another fix or had an invalid range.
    pub skipped: usize,
    /// Unsafe fixes not applied because `unsafe_fixes` was off (ruff's "hidden fixes").
    pub unsafe_hidden: usize,
}

/// One pass: apply every eligible, non-conflicting fix of `diagnostics` (computed for `text`).
pub fn apply(text: &str, diagnostics: &[Diagnostic], unsafe_fixes: bool) -> FixResult {
    let mut unsafe_hidden = 0;
    let mut fixes: Vec<&Fix> = Vec::new();
    for fix in diagnostics.iter().filter_map(|d| d.fix.as_ref()) {
        if fix.applicability == Applicability::Unsafe && !unsafe_fixes {
            unsafe_hidden += 1;
        } else {
            fixes.push(fix);
        }
    }
    // Source order, so the earlier of two conflicting fixes wins, as in ruff.
    fixes.sort_by_key(|f| span(f).map(|s| (s.start, s.end)).unwrap_or((usize::MAX, usize::MAX)));

    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    let mut applied_fixes: Vec<&Fix> = Vec::new();
    let (mut applied, mut skipped) = (0, 0);
    for fix in fixes {
        if applied_fixes.iter().any(|f| f.edits == fix.edits) {
            applied += 1; // the same fix reached through another diagnostic
            continue;
        }
        let Some(s) = span(fix) else {
            skipped += 1;
            continue;
        };
        // Touching counts as overlapping: two edits at one position have no defined order.
        let conflicts = !applied_fixes.is_empty() && s.start <= cursor;
        if conflicts || !edits_valid(text, &fix.edits) {
            skipped += 1;
            continue;
        }
        for e in &fix.edits {
            out.push_str(&text[cursor..e.range.start]);
            out.push_str(&e.content);
            cursor = e.range.end;
        }
        applied_fixes.push(fix);
        applied += 1;
    }
    out.push_str(&text[cursor.min(text.len())..]);
    FixResult { text: out, applied, skipped, unsafe_hidden }
}

/// Apply, re-check, repeat until nothing more applies (at most [`MAX_PASSES`] passes).
/// `check` returns the diagnostics of a text; the counts of the last pass describe what is left.
pub fn apply_until_stable(text: &str, unsafe_fixes: bool, mut check: impl FnMut(&str) -> Vec<Diagnostic>) -> FixResult {
    let mut current = text.to_string();
    let mut total = 0;
    let mut seen = vec![current.clone()];
    let mut last = FixResult { text: current.clone(), applied: 0, skipped: 0, unsafe_hidden: 0 };
    for _ in 0..MAX_PASSES {
        let diags = check(&current);
        last = apply(&current, &diags, unsafe_fixes);
        if last.applied == 0 || last.text == current {
            break;
        }
        total += last.applied;
        current = last.text.clone();
        // A fix that undoes another would cycle forever: stop at the first repeated text.
        if seen.contains(&current) {
            break;
        }
        seen.push(current.clone());
    }
    FixResult { text: current, applied: total, skipped: last.skipped, unsafe_hidden: last.unsafe_hidden }
}

/// The range a fix touches, from its first edit's start to its last edit's end.
fn span(fix: &Fix) -> Option<TextRange> {
    let start = fix.edits.iter().map(|e| e.range.start).min()?;
    let end = fix.edits.iter().map(|e| e.range.end).max()?;
    Some(TextRange { start, end })
}

/// In bounds, on char boundaries, sorted and pairwise disjoint.
fn edits_valid(text: &str, edits: &[Edit]) -> bool {
    let mut prev_end = 0;
    for (i, e) in edits.iter().enumerate() {
        let r = e.range;
        if r.start > r.end || r.end > text.len() || !text.is_char_boundary(r.start) || !text.is_char_boundary(r.end) {
            return false;
        }
        if i > 0 && r.start < prev_end {
            return false;
        }
        prev_end = r.end;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::Severity;

    fn diag(start: usize, end: usize, content: &str, applicability: Applicability) -> Diagnostic {
        Diagnostic {
            code: "XF101",
            name: "num-warps-power-of-two",
            severity: Severity::Error,
            message: String::new(),
            range: TextRange::new(start, end),
            kernel: None,
            device: String::new(),
            toolchain: String::new(),
            related: Vec::new(),
            fix: Some(Fix {
                applicability,
                message: String::new(),
                edits: vec![Edit { range: TextRange::new(start, end), content: content.to_string() }],
            }),
            origin: Default::default(),
        }
    }

    #[test]
    fn applies_disjoint_fixes_in_one_pass() {
        let r = apply("a=6 b=3", &[diag(6, 7, "4", Applicability::Safe), diag(2, 3, "8", Applicability::Safe)], false);
        assert_eq!(r.text, "a=8 b=4");
        assert_eq!((r.applied, r.skipped, r.unsafe_hidden), (2, 0, 0));
    }

    #[test]
    fn unsafe_fixes_need_the_flag() {
        let d = [diag(2, 3, "8", Applicability::Unsafe)];
        let r = apply("a=6", &d, false);
        assert_eq!((r.text.as_str(), r.applied, r.unsafe_hidden), ("a=6", 0, 1));
        assert_eq!(apply("a=6", &d, true).text, "a=8");
    }

    #[test]
    fn overlapping_fix_is_skipped() {
        let r = apply("abcdef", &[diag(1, 4, "X", Applicability::Safe), diag(3, 5, "Y", Applicability::Safe)], false);
        assert_eq!(r.text, "aXef");
        assert_eq!((r.applied, r.skipped), (1, 1));
    }

    #[test]
    fn duplicate_fixes_apply_once() {
        let r = apply("a=6", &[diag(2, 3, "8", Applicability::Safe), diag(2, 3, "8", Applicability::Safe)], false);
        assert_eq!(r.text, "a=8");
        assert_eq!(r.applied, 2);
    }

    #[test]
    fn ranges_inside_a_char_are_refused() {
        let r = apply("é=1", &[diag(1, 2, "x", Applicability::Safe)], false);
        assert_eq!(r.text, "é=1");
        assert_eq!(r.skipped, 1);
        let r = apply("ab", &[diag(1, 99, "x", Applicability::Safe)], false);
        assert_eq!(r.text, "ab");
    }

    #[test]
    fn repeated_passes_pick_up_skipped_fixes() {
        // A toy checker: every "aa" is a finding whose fix turns it into "a".
        let check = |t: &str| -> Vec<Diagnostic> { t.match_indices("aa").map(|(i, _)| diag(i, i + 2, "a", Applicability::Safe)).collect() };
        let r = apply_until_stable("aaaa", false, check);
        assert_eq!(r.text, "a");
        assert_eq!(r.skipped, 0);
    }

    #[test]
    fn a_fix_cycle_stops() {
        let check = |t: &str| -> Vec<Diagnostic> { vec![diag(0, 1, if t == "a" { "b" } else { "a" }, Applicability::Safe)] };
        let r = apply_until_stable("a", false, check);
        assert!(r.applied <= MAX_PASSES);
    }
}
