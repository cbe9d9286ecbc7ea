//! `select` / `ignore` by code, code prefix or rule name, with ruff's precedence: the most specific
//! selector wins (`--select XF1 --ignore XF101` drops only XF101; `--select XF101 --ignore XF1`
//! keeps XF101), and at equal specificity `ignore` wins.

use super::registry::{RULES, RuleId};

/// A parsed selection. Selectors are matched case-insensitively; `ALL` matches every rule.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    select: Vec<String>,
    ignore: Vec<String>,
}

impl Selection {
    pub fn new(select: &[String], ignore: &[String]) -> Self {
        let norm = |v: &[String]| v.iter().map(|s| s.trim().to_ascii_uppercase()).filter(|s| !s.is_empty()).collect();
        Self { select: norm(select), ignore: norm(ignore) }
    }

    pub fn is_enabled(&self, id: RuleId) -> bool {
        // An empty select list means every rule, as if `ALL` (specificity 0) were given.
        let selected = if self.select.is_empty() { Some(0) } else { best_match(&self.select, id) };
        let Some(selected) = selected else { return false };
        match best_match(&self.ignore, id) {
            Some(ignored) => selected > ignored,
            None => true,
        }
    }
}

/// Specificity of the most specific selector matching `id`: its length, `ALL` = 0, a rule name = exact.
fn best_match(selectors: &[String], id: RuleId) -> Option<usize> {
    selectors
        .iter()
        .filter_map(|s| {
            if s == "ALL" {
                Some(0)
            } else if id.code.starts_with(s.as_str()) {
                Some(s.len())
            } else if s.eq_ignore_ascii_case(id.name) {
                Some(id.code.len())
            } else {
                None
            }
        })
        .max()
}

/// Selectors that match no rule (typos in configs and flags), for the caller to report.
pub fn unknown_selectors(selectors: &[String]) -> Vec<String> {
    selectors
        .iter()
        .filter(|s| {
            let s = s.trim().to_ascii_uppercase();
            !(s == "ALL" || RULES.iter().any(|r| r.id.code.starts_with(s.as_str()) || s.eq_ignore_ascii_case(r.id.name)))
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::registry::{XF101, XF102, XF203};

    fn sel(select: &[&str], ignore: &[&str]) -> Selection {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Selection::new(&v(select), &v(ignore))
    }

    #[test]
    fn empty_selection_enables_everything() {
        assert!(sel(&[], &[]).is_enabled(XF101));
    }

    #[test]
    fn prefix_select_and_specific_ignore() {
        let s = sel(&["xf1"], &["XF101"]);
        assert!(!s.is_enabled(XF101));
        assert!(s.is_enabled(XF102));
        assert!(!s.is_enabled(XF203));
    }

    #[test]
    fn more_specific_select_beats_prefix_ignore() {
        let s = sel(&["XF101"], &["XF1"]);
        assert!(s.is_enabled(XF101));
        assert!(!s.is_enabled(XF102));
    }

    #[test]
    fn names_select_exactly() {
        let s = sel(&["ALL"], &["work-group-too-large"]);
        assert!(s.is_enabled(XF101));
        assert!(!s.is_enabled(XF102));
    }

    #[test]
    fn unknown_selectors_are_reported() {
        let v: Vec<String> = ["XF1", "XF999", "grf-pressure", "E501"].iter().map(|s| s.to_string()).collect();
        assert_eq!(unknown_selectors(&v), vec!["XF999".to_string(), "E501".to_string()]);
    }
}
