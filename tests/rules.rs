//! Rules as data: every `tests/fixtures/rules/*.py` is a kernel file whose comments state the
//! diagnostics expected on their lines (`# expect: XF101, XF102`). A header comment
//! `# xeforge-test: device=arc-a770 toolchain=xpu-3.3 select=XF1 ignore=XF501` sets the target and
//! selection (defaults: the knowledge base's default target, every rule).
//!
//! The test fails on any missing or extra diagnostic (code + line), listing all of them at once.
//! Fixtures whose name contains `_fix` also snapshot the text after applying every fix.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use xeforge::analysis::{self, Analysis};
use xeforge::fix;
use xeforge::knowledge::Knowledge;
use xeforge::lint::{Diagnostic, LintOptions};
use xeforge::text::LineIndex;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules")
}

fn fixtures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("tests/fixtures/rules exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    v.sort();
    v
}

/// Target and selection from the `# xeforge-test:` header.
fn options(text: &str) -> LintOptions {
    let mut opts = LintOptions::default();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("# xeforge-test:") else { continue };
        for pair in rest.split_whitespace() {
            let Some((k, v)) = pair.split_once('=') else { panic!("bad header entry `{pair}`") };
            let list = || v.split(',').map(str::to_string).collect::<Vec<_>>();
            match k {
                "device" => opts.device = v.to_string(),
                "toolchain" => opts.toolchain = v.to_string(),
                "select" => opts.select = list(),
                "ignore" => opts.ignore = list(),
                other => panic!("unknown header key `{other}`"),
            }
        }
    }
    opts
}

/// (1-based line, code) → count, from `# expect:` comments.
fn expected(text: &str) -> BTreeMap<(usize, String), usize> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let Some(at) = line.find("# expect:") else { continue };
        for code in line[at + "# expect:".len()..].split(',') {
            let code = code.split_whitespace().next().unwrap_or("");
            if !code.is_empty() {
                *out.entry((i + 1, code.to_string())).or_insert(0) += 1;
            }
        }
    }
    out
}

fn actual(text: &str, diags: &[Diagnostic]) -> BTreeMap<(usize, String), usize> {
    let lines = LineIndex::new(text);
    let mut out = BTreeMap::new();
    for d in diags {
        *out.entry((lines.line_of(d.range.start) + 1, d.code.to_string())).or_insert(0) += 1;
    }
    out
}

fn analyze(text: &str, opts: &LintOptions) -> Analysis {
    analysis::analyze(text, Knowledge::embedded(), opts).unwrap_or_else(|e| panic!("target error: {e}"))
}

fn describe(text: &str, diags: &[Diagnostic], line: usize, code: &str) -> String {
    let lines = LineIndex::new(text);
    diags.iter().filter(|d| d.code == code && lines.line_of(d.range.start) + 1 == line).map(|d| format!("\n      {}", d.message)).collect()
}

#[test]
fn fixtures_produce_exactly_the_expected_diagnostics() {
    let mut failures = Vec::new();
    let files = fixtures();
    assert!(files.len() >= 40, "expected a positive and a negative fixture per rule, found {}", files.len());
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let a = analyze(&text, &options(&text));
        let want = expected(&text);
        let got = actual(&text, &a.diagnostics);
        for (key, n) in &want {
            let have = got.get(key).copied().unwrap_or(0);
            if have < *n {
                failures.push(format!("{name}:{}: missing {} × {}", key.0, key.1, n - have));
            }
        }
        for (key, n) in &got {
            let want_n = want.get(key).copied().unwrap_or(0);
            if *n > want_n {
                failures.push(format!(
                    "{name}:{}: unexpected {} × {}{}",
                    key.0,
                    key.1,
                    n - want_n,
                    describe(&text, &a.diagnostics, key.0, &key.1)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n  {}", failures.len(), failures.join("\n  "));
}

#[test]
fn every_diagnostic_names_its_target_and_has_a_valid_range() {
    for path in fixtures() {
        let text = std::fs::read_to_string(&path).unwrap();
        let opts = options(&text);
        let a = analyze(&text, &opts);
        for d in &a.diagnostics {
            assert_eq!(d.device, a.device, "{}", path.display());
            assert_eq!(d.toolchain, a.toolchain);
            assert!(d.range.end <= text.len() && d.range.start <= d.range.end, "{d:?}");
            assert!(text.is_char_boundary(d.range.start) && text.is_char_boundary(d.range.end));
            assert!(!d.message.is_empty());
            if let Some(f) = &d.fix {
                assert!(!f.edits.is_empty(), "{}: {} has an empty fix", path.display(), d.code);
            }
        }
    }
}

/// Apply every fix (unsafe included), re-check: no fixable finding may be left, and each fixed
/// code must have fewer findings than before.
#[test]
fn fixes_remove_what_they_fix() {
    let mut checked = 0;
    for path in fixtures() {
        let text = std::fs::read_to_string(&path).unwrap();
        let opts = options(&text);
        let before = analyze(&text, &opts).diagnostics;
        let fixable: Vec<&Diagnostic> = before.iter().filter(|d| d.fix.is_some()).collect();
        if fixable.is_empty() {
            continue;
        }
        checked += 1;
        let result = fix::apply_until_stable(&text, true, |t| analyze(t, &opts).diagnostics);
        assert!(result.applied >= 1, "{}: nothing applied", path.display());
        let after = analyze(&result.text, &opts).diagnostics;
        let left: Vec<_> = after.iter().filter(|d| d.fix.is_some()).map(|d| (d.code, d.message.clone())).collect();
        assert!(left.is_empty(), "{}: fixable findings left after fixing: {left:?}\n{}", path.display(), result.text);
        for code in fixable.iter().map(|d| d.code) {
            let n_before = before.iter().filter(|d| d.code == code).count();
            let n_after = after.iter().filter(|d| d.code == code).count();
            assert!(n_after < n_before, "{}: {code} not reduced by its fix ({n_before} → {n_after})", path.display());
        }
        // The fixed file still parses as well as before: a fix never introduces a syntax error.
        let m_before = analyze(&text, &opts).model.has_syntax_errors;
        assert!(!analyze(&result.text, &opts).model.has_syntax_errors || m_before, "{}: fix broke the syntax", path.display());
        if path.to_string_lossy().contains("_fix") {
            let snap = path.file_stem().unwrap().to_string_lossy().to_string();
            insta::with_settings!({ snapshot_path => fixtures_dir().join("snapshots"), prepend_module_to_snapshot => false }, {
                insta::assert_snapshot!(snap, result.text);
            });
        }
    }
    assert!(checked >= 8, "only {checked} fixtures exercise fixes");
}

#[test]
fn suppression_comments_and_selection_are_honoured() {
    let src = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x):\n    pass\n\n\
               k[(1,)](1, num_warps=6)  # xeforge: ignore[XF101]\nk[(1,)](1, num_warps=12)\n";
    let a = analyze(src, &LintOptions::default());
    let lines: Vec<usize> = {
        let li = LineIndex::new(src);
        a.diagnostics.iter().filter(|d| d.code == "XF101").map(|d| li.line_of(d.range.start) + 1).collect()
    };
    assert_eq!(lines, vec![9]);
    let only_tuning = LintOptions { select: vec!["XF5".into()], ..LintOptions::default() };
    assert!(analyze(src, &only_tuning).diagnostics.iter().all(|d| d.code.starts_with("XF5")));
}

#[test]
fn the_work_group_message_names_device_toolchain_and_limit() {
    let src = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n\nk[(1,)](1, num_warps=64)\n";
    let a = analyze(src, &LintOptions { device: "arc-pro-b70".into(), toolchain: "xpu-3.7".into(), ..Default::default() });
    let d = a.diagnostics.iter().find(|d| d.code == "XF102").expect("XF102 reported");
    assert!(
        d.message.starts_with(
            "num_warps=64 × sub-group 32 = 2048 work-items exceeds the 1024 maximum work-group size of Intel Arc Pro B70 (xpu-3.7)"
        ),
        "{}",
        d.message
    );
    assert_eq!(&src[d.range.start..d.range.end], "64");
    assert_eq!(d.kernel.as_deref(), Some("k"));
}

#[test]
fn unknown_targets_suggest_the_nearest_id() {
    let opts = LintOptions { device: "arc-pro-b7".into(), ..Default::default() };
    let err = analysis::analyze("import triton\n", Knowledge::embedded(), &opts).unwrap_err();
    assert!(err.to_string().contains("did you mean `arc-pro-b70`"), "{err}");
    let opts = LintOptions { toolchain: "xpu-3.9".into(), ..Default::default() };
    assert!(analysis::analyze("", Knowledge::embedded(), &opts).is_err());
}

#[test]
fn non_triton_text_has_no_findings() {
    let a = analyze("x = eval('1')\nprint(__import__('os'))\n", &LintOptions::default());
    assert!(a.diagnostics.is_empty());
    assert!(a.model.kernels.is_empty());
}

#[test]
fn every_rule_is_in_the_knowledge_base_with_the_same_name() {
    let kb = Knowledge::embedded();
    for r in xeforge::lint::RULES {
        let info = kb.rule(r.id.code).unwrap_or_else(|| panic!("{} missing from knowledge/rules", r.id.code));
        assert_eq!(info.name, r.id.name, "{}", r.id.code);
    }
    assert_eq!(kb.rules.len(), xeforge::lint::RULES.len(), "knowledge base and registry list different rules");
}

/// The registry matches the contract table (`docs/rules.md`).
#[test]
fn registry_matches_rules_md() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let md = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut table = Vec::new();
    for line in md.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() > 3 && cells[1].starts_with("XF") && cells[1].len() == 5 {
            table.push((cells[1].to_string(), cells[2].to_string()));
        }
    }
    let ours: Vec<(String, String)> = xeforge::lint::RULES.iter().map(|r| (r.id.code.to_string(), r.id.name.to_string())).collect();
    assert_eq!(ours, table);
}

#[test]
fn foreign_option_messages_name_the_backend_they_belong_to() {
    let src = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n\nk[(1,)](1, waves_per_eu=2, maxnreg=128)\n";
    let a = analyze(src, &LintOptions { device: "arc-pro-b70".into(), toolchain: "xpu-3.7".into(), ..Default::default() });
    let messages: Vec<&str> = a.diagnostics.iter().filter(|d| d.code == "XF107").map(|d| d.message.as_str()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].starts_with("`waves_per_eu` is an option of the AMD HIP backend only"), "{}", messages[0]);
    assert!(messages[1].starts_with("`maxnreg` is an option of the CUDA backend only"), "{}", messages[1]);
}
