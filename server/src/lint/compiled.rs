//! Compiled findings beside the static ones. The harness's compile metadata (`cover::compiled`)
//! becomes findings of the same rules the static analysis estimates (XF201, XF202); this is the one
//! place that decides how the two lists meet, for `xeforge verify` and the language server alike.

use super::suppress::Suppressions;
use super::{Diagnostic, LintOptions, Origin, RuleId, Selection};
use crate::model::FileModel;
use crate::text::{LineIndex, TextRange};

fn overlaps(a: TextRange, b: TextRange) -> bool {
    // An empty range counts as its first byte.
    a.start < b.end.max(b.start + 1) && b.start < a.end.max(a.start + 1)
}

/// The static findings with the compiled ones: a compiled finding replaces a static finding of the
/// same rule and kernel about the same config or launch (the static finding sits on it, or names it
/// among its related places, as a `tl.dot` finding names the config that binds its tiles), and quotes it.
pub fn merge(static_findings: Vec<Diagnostic>, compiled: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut compiled = compiled;
    let mut out = Vec::new();
    for s in static_findings {
        let settled = compiled.iter_mut().find(|c| {
            c.code == s.code && c.kernel == s.kernel && (overlaps(c.range, s.range) || s.related.iter().any(|r| overlaps(c.range, r.range)))
        });
        match settled {
            Some(c) => c.message.push_str(&format!(" (the static estimate said: \"{}\"; the compiled fact wins)", s.message)),
            None => out.push(s),
        }
    }
    out.extend(compiled);
    out
}

/// [`merge`] after the rule selection and the `# xeforge: ignore` comments of `text` have had their
/// say over the compiled findings too (a line that ignores XF202 ignores it whatever measured it),
/// each marked [`Origin::Compiled`].
pub fn with_compiled(
    static_findings: Vec<Diagnostic>,
    compiled: Vec<Diagnostic>,
    model: &FileModel,
    text: &str,
    opts: &LintOptions,
) -> Vec<Diagnostic> {
    if compiled.is_empty() {
        return static_findings;
    }
    let selection = Selection::new(&opts.select, &opts.ignore);
    let lines = LineIndex::new(text);
    let sup = Suppressions::new(model, &lines);
    let admitted = compiled
        .into_iter()
        .filter(|d| selection.is_enabled(RuleId { code: d.code, name: d.name }) && !sup.suppresses(d, &lines))
        .map(|d| Diagnostic { origin: Origin::Compiled, ..d })
        .collect();
    merge(static_findings, admitted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::{Knowledge, Severity};
    use crate::lint::Related;

    fn d(code: &'static str, message: &str, range: TextRange) -> Diagnostic {
        Diagnostic {
            code,
            name: "n",
            severity: Severity::Warning,
            message: message.into(),
            range,
            kernel: None,
            device: String::new(),
            toolchain: String::new(),
            related: Vec::new(),
            fix: None,
            origin: Origin::Static,
        }
    }

    #[test]
    fn a_compiled_fact_replaces_the_static_estimate_of_the_same_rule_and_quotes_it() {
        let range = TextRange::new(10, 20);
        let merged = merge(
            vec![d("XF202", "accumulator needs 192 registers", range), d("XF101", "other", range)],
            vec![d("XF202", "compiled: 0 B spilled", range)],
        );
        assert_eq!(merged.len(), 2);
        assert!(merged.iter().any(|m| m.code == "XF101"));
        let c = merged.iter().find(|m| m.code == "XF202").unwrap();
        assert!(
            c.message.starts_with("compiled: 0 B spilled")
                && c.message.contains("accumulator needs 192 registers")
                && c.message.contains("compiled fact wins")
        );
        // A static finding on the `tl.dot` names the config among its related places: settled too.
        let mut on_dot = d("XF202", "estimated from the dot", TextRange::new(100, 110));
        on_dot.related = vec![Related { range, message: "set by config 1 of 2".into() }];
        let settled = merge(vec![on_dot.clone()], vec![d("XF202", "compiled: 0 B spilled", range)]);
        assert_eq!(settled.len(), 1);
        assert!(settled[0].message.contains("estimated from the dot"));
        // Another kernel's finding is not settled by it.
        on_dot.kernel = Some("other".into());
        assert_eq!(merge(vec![on_dot], vec![d("XF202", "compiled: 0 B spilled", range)]).len(), 2);
    }

    #[test]
    fn ignore_comments_and_the_rule_selection_hold_for_compiled_findings_too() {
        let text = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n\nk[(1,)](x)  # xeforge: ignore[XF202]\nk[(1,)](x)\n";
        let model = crate::analysis::analyze(text, Knowledge::embedded(), &Default::default()).unwrap().model;
        let line = |n: usize| {
            let start: usize = text.split_inclusive('\n').take(n - 1).map(str::len).sum();
            TextRange::new(start, start + 10)
        };
        let compiled = vec![d("XF202", "on the ignored line", line(7)), d("XF202", "on the next", line(8)), d("XF201", "slm", line(8))];
        let kept = with_compiled(Vec::new(), compiled.clone(), &model, text, &LintOptions::default());
        let messages: Vec<&str> = kept.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["on the next", "slm"]);
        assert!(kept.iter().all(|d| d.origin == Origin::Compiled));
        let opts = LintOptions { ignore: vec!["XF201".into()], ..Default::default() };
        let kept = with_compiled(Vec::new(), compiled, &model, text, &opts);
        assert_eq!(kept.iter().map(|d| d.code).collect::<Vec<_>>(), ["XF202"]);
    }
}
