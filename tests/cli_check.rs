//! `xeforge check` end to end: the real binary on fixtures and generated trees.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

#[path = "common/cli.rs"]
mod cli;
use cli::{check, code, stderr, stdout};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check")
}

fn json(o: &Output) -> Vec<serde_json::Value> {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(o)))
}

fn codes(o: &Output) -> Vec<String> {
    json(o).iter().map(|d| d["code"].as_str().unwrap().to_string()).collect()
}

/// A temp dir holding copies of the named fixtures.
fn sandbox(files: &[&str]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for f in files {
        fs::copy(fixtures().join(f), t.path().join(f)).unwrap();
    }
    t
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

const BAD_WARPS: &str =
    "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x):\n    pass\n\ndef go(x):\n    k[(1,)](x, num_warps=6)\n";

// ---------------------------------------------------------------- output formats

#[test]
fn text_output_draws_code_frames_and_a_summary() {
    let o = check(&fixtures(), &["multi.py"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    insta::assert_snapshot!("text", stdout(&o));
}

#[test]
fn json_output_follows_rules_md() {
    let o = check(&fixtures(), &["multi.py", "--format", "json"]);
    assert_eq!(code(&o), 1);
    let diags = json(&o);
    for d in &diags {
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected =
            vec!["code", "device", "end_location", "filename", "fix", "kernel", "location", "message", "name", "severity", "toolchain"];
        expected.sort();
        assert_eq!(keys, expected);
        if let Some(fix) = d["fix"].as_object() {
            assert!(matches!(fix["applicability"].as_str(), Some("safe" | "unsafe")));
        }
    }
    insta::assert_snapshot!("json", stdout(&o));
}

#[test]
fn json_columns_count_chars_and_ends_are_exclusive() {
    let t = tempfile::tempdir().unwrap();
    // Two-byte and four-byte characters before the flagged literal on the same line.
    write(t.path(), "k.py", &BAD_WARPS.replace("k[(1,)](x, num_warps=6)", "k[(1,)](\"é😀\", num_warps=6)"));
    let o = check(t.path(), &["k.py", "--format", "json"]);
    let d = json(&o).into_iter().find(|d| d["code"] == "XF101").expect("XF101 reported");
    let line = "    k[(1,)](\"é😀\", num_warps=6)";
    let col = line.chars().position(|c| c == '6').unwrap() + 1;
    assert_eq!(d["location"], serde_json::json!({"row": 9, "column": col}));
    assert_eq!(d["end_location"], serde_json::json!({"row": 9, "column": col + 1}));
    assert_eq!(d["filename"], "k.py");
}

#[test]
fn sarif_output_is_valid_sarif_2_1_0() {
    let o = check(&fixtures(), &["multi.py", "--format", "sarif"]);
    assert_eq!(code(&o), 1);
    let log: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();

    let schema: serde_json::Value = serde_json::from_str(&fs::read_to_string(fixtures().join("sarif-schema-2.1.0.json")).unwrap()).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let loc = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
    compiler.add_resource(loc, schema).unwrap();
    let idx = compiler.compile(loc, &mut schemas).unwrap();
    if let Err(e) = schemas.validate(&log, idx) {
        panic!("SARIF does not validate:\n{e:#}");
    }

    // What GitHub code scanning reads beyond the schema's minimum.
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    for r in rules {
        for field in ["id", "name", "shortDescription", "fullDescription", "helpUri", "help", "defaultConfiguration"] {
            assert!(!r[field].is_null(), "rule {} lacks {field}", r["id"]);
        }
    }
    for res in run["results"].as_array().unwrap() {
        let i = res["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], res["ruleId"]);
        let loc = &res["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "multi.py");
        assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    }

    // Snapshot the results; the rule table is the knowledge base's and is summarised to ids.
    let mut shown = log.clone();
    let ids: Vec<serde_json::Value> = rules.iter().map(|r| r["id"].clone()).collect();
    shown["runs"][0]["tool"]["driver"]["rules"] = serde_json::Value::Array(ids);
    shown["runs"][0]["tool"]["driver"]["version"] = "[version]".into();
    insta::assert_snapshot!("sarif", serde_json::to_string_pretty(&shown).unwrap());
}

#[test]
fn github_output_is_workflow_commands() {
    let o = check(&fixtures(), &["multi.py", "--format", "github"]);
    assert_eq!(code(&o), 1);
    for line in stdout(&o).lines() {
        assert!(line.starts_with("::error file=") || line.starts_with("::warning file=") || line.starts_with("::notice file="), "{line}");
    }
    insta::assert_snapshot!("github", stdout(&o));
}

#[test]
fn statistics_count_per_rule() {
    let o = check(&fixtures(), &["multi.py", "--statistics", "--format", "json"]);
    let rows = json(&o);
    let xf401 = rows.iter().find(|r| r["code"] == "XF401").expect("XF401 row");
    assert_eq!(xf401["count"], 2);
    let total: u64 = rows.iter().map(|r| r["count"].as_u64().unwrap()).sum();
    assert_eq!(total as usize, codes(&check(&fixtures(), &["multi.py", "--format", "json"])).len());
    let text = stdout(&check(&fixtures(), &["multi.py", "--statistics"]));
    assert!(text.lines().any(|l| l.starts_with("2\tXF401\t")), "{text}");
}

// ---------------------------------------------------------------- exit status

#[test]
fn exit_status_is_0_clean_1_errors_2_io() {
    assert_eq!(code(&check(&fixtures(), &["clean.py"])), 0);
    let clean = check(&fixtures(), &["clean.py"]);
    assert_eq!(stdout(&clean).trim(), "All checks passed!");
    assert_eq!(code(&check(&fixtures(), &["multi.py"])), 1);
    assert_eq!(code(&check(&fixtures(), &["multi.py", "--exit-zero"])), 0);
    // An I/O error wins over findings, and --exit-zero does not hide it.
    assert_eq!(code(&check(&fixtures(), &["multi.py", "missing.py"])), 2);
    assert_eq!(code(&check(&fixtures(), &["multi.py", "missing.py", "--exit-zero"])), 2);
}

#[test]
fn only_warnings_exit_0() {
    let o = check(&fixtures(), &["multi.py", "--select", "XF404"]);
    assert_eq!(stdout(&o).matches("XF404 [warning]").count(), 1);
    assert_eq!(code(&o), 0);
}

#[test]
fn usage_errors_exit_2() {
    let o = check(&fixtures(), &["clean.py", "--format", "xml"]);
    assert_eq!(code(&o), 2);
    let o = check(&fixtures(), &["clean.py", "--select", "XF999"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("XF999"), "{}", stderr(&o));
    let o = check(&fixtures(), &["multi.py", "--device", "arc-pro-b7"]);
    assert_eq!(code(&o), 2);
    assert_eq!(stderr(&o).matches("unknown device").count(), 1, "reported once: {}", stderr(&o));
}

// ---------------------------------------------------------------- fixes

#[test]
fn fix_writes_safe_fixes_only() {
    let t = sandbox(&["multi.py"]);
    let o = check(t.path(), &["multi.py", "--fix"]);
    let fixed = fs::read_to_string(t.path().join("multi.py")).unwrap();
    assert!(fixed.contains(r#""grf_mode": "256""#), "XF104's safe fix applied");
    assert!(fixed.contains("boundary_check=(0, 1))\n    b ="), "XF403's safe fix applied");
    assert!(fixed.contains("num_warps=6"), "XF101's unsafe fix not applied");
    assert!(fixed.contains("acc += tl.dot(a, b)"), "XF404's unsafe fix not applied");
    let out = stdout(&o);
    assert!(out.contains("Fixed 2 problems."), "{out}");
    assert!(out.contains("remaining"), "{out}");
    assert!(!codes(&check(t.path(), &["multi.py", "--format", "json"])).contains(&"XF104".to_string()));
    assert_eq!(code(&o), 1, "XF101 is still an error");
}

#[test]
fn unsafe_fixes_apply_more() {
    let t = sandbox(&["multi.py"]);
    check(t.path(), &["multi.py", "--fix", "--unsafe-fixes"]);
    let fixed = fs::read_to_string(t.path().join("multi.py")).unwrap();
    assert!(fixed.contains("num_warps=8, num_stages=2"), "{fixed}");
    assert!(fixed.contains("acc = tl.dot(a, b, acc)"), "{fixed}");
    let left = codes(&check(t.path(), &["multi.py", "--format", "json"]));
    assert!(!left.iter().any(|c| c == "XF101" || c == "XF104" || c == "XF403" || c == "XF404"), "{left:?}");
}

#[test]
fn diff_shows_fixes_without_writing() {
    let t = sandbox(&["multi.py"]);
    let before = fs::read_to_string(t.path().join("multi.py")).unwrap();
    let o = check(t.path(), &["multi.py", "--diff"]);
    let out = stdout(&o);
    assert!(out.starts_with("--- a/multi.py\n+++ b/multi.py\n"), "{out}");
    assert!(out.contains(r#"+        triton.Config({"BLOCK": 128, "grf_mode": "256"}"#), "{out}");
    assert!(!out.contains("num_warps=8"), "unsafe fix only with --unsafe-fixes");
    assert_eq!(fs::read_to_string(t.path().join("multi.py")).unwrap(), before);
    assert_eq!(code(&o), 1, "ruff's convention: fixes pending");
    assert!(stderr(&o).contains("Would fix 2 problems."), "{}", stderr(&o));
}

// ---------------------------------------------------------------- selection and configuration

#[test]
fn select_and_ignore_flags() {
    let sel = codes(&check(&fixtures(), &["multi.py", "--format", "json", "--select", "XF4"]));
    assert!(!sel.is_empty() && sel.iter().all(|c| c.starts_with("XF4")), "{sel:?}");
    let ign = codes(&check(&fixtures(), &["multi.py", "--format", "json", "--ignore", "XF401,XF101"]));
    assert!(!ign.iter().any(|c| c == "XF401" || c == "XF101"), "{ign:?}");
    assert!(ign.iter().any(|c| c == "XF104"));
}

#[test]
fn config_discovery_nearest_wins_xeforge_toml_beats_pyproject() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    write(r, "pyproject.toml", "[tool.xeforge]\nignore = [\"XF101\"]\n");
    write(r, "top.py", BAD_WARPS);
    // A nested pyproject without the table does not stop the search.
    write(r, "a/pyproject.toml", "[project]\nname = \"a\"\n");
    write(r, "a/k.py", BAD_WARPS);
    // In one directory, xeforge.toml is used and pyproject.toml is not.
    write(r, "b/pyproject.toml", "[tool.xeforge]\nignore = [\"XF101\"]\n");
    write(r, "b/xeforge.toml", "select = [\"XF1\"]\n");
    write(r, "b/k.py", BAD_WARPS);

    let o = check(r, &[".", "--format", "json"]);
    let by_file: Vec<(String, String)> =
        json(&o).iter().map(|d| (d["filename"].as_str().unwrap().into(), d["code"].as_str().unwrap().into())).collect();
    assert!(!by_file.iter().any(|(f, c)| f == "top.py" && c == "XF101"), "{by_file:?}");
    assert!(!by_file.iter().any(|(f, c)| f == "a/k.py" && c == "XF101"), "{by_file:?}");
    assert!(by_file.iter().any(|(f, c)| f == "b/k.py" && c == "XF101"), "{by_file:?}");
    assert!(by_file.iter().all(|(f, c)| f != "b/k.py" || c.starts_with("XF1")), "{by_file:?}");
}

#[test]
fn cli_flags_override_the_config_file() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "xeforge.toml", "ignore = [\"XF101\"]\ndevice = \"arc-a770\"\n");
    write(t.path(), "k.py", BAD_WARPS);
    let d = json(&check(t.path(), &["k.py", "--format", "json", "--ignore", "XF501"]));
    assert!(d.iter().any(|d| d["code"] == "XF101"), "CLI --ignore replaced the file's list");
    assert!(d.iter().all(|d| d["device"] == "arc-a770"));
    let d = json(&check(t.path(), &["k.py", "--format", "json", "--device", "max-1550"]));
    assert!(d.iter().all(|d| d["device"] == "max-1550"));
}

#[test]
fn per_file_ignores_and_exclude() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "pyproject.toml",
        "[tool.xeforge]\nexclude = [\"vendored\"]\n[tool.xeforge.per-file-ignores]\n\"tests/**\" = [\"XF101\"]\n",
    );
    write(t.path(), "src/k.py", BAD_WARPS);
    write(t.path(), "tests/unit/k.py", BAD_WARPS);
    write(t.path(), "vendored/k.py", BAD_WARPS);
    let d = json(&check(t.path(), &[".", "--format", "json", "--select", "XF101"]));
    let files: Vec<&str> = d.iter().map(|d| d["filename"].as_str().unwrap()).collect();
    assert_eq!(files, ["src/k.py"]);
    // A file named on the command line is checked even when excluded.
    let d = json(&check(t.path(), &["vendored/k.py", "--format", "json", "--select", "XF101"]));
    assert_eq!(d.len(), 1);
}

#[test]
fn config_errors_name_file_line_and_key() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "xeforge.toml", "device = \"arc-b580\"\nnum-warps = 4\n");
    write(t.path(), "k.py", BAD_WARPS);
    let o = check(t.path(), &["k.py"]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(err.contains("xeforge.toml:2:1: unknown key `num-warps`"), "{err}");

    let o = check(t.path(), &["k.py", "--config", "nope.toml"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("nope.toml"), "{}", stderr(&o));
}

#[test]
fn explicit_config_file_replaces_discovery() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "xeforge.toml", "ignore = [\"XF101\"]\n");
    write(t.path(), "ci.toml", "select = [\"XF101\"]\n");
    write(t.path(), "k.py", BAD_WARPS);
    assert_eq!(codes(&check(t.path(), &["k.py", "--format", "json", "--config", "ci.toml"])), ["XF101"]);
}

#[test]
fn suppression_comments() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "line.py", &BAD_WARPS.replace("num_warps=6)", "num_warps=6)  # xeforge: ignore[XF101]"));
    write(t.path(), "other.py", &BAD_WARPS.replace("num_warps=6)", "num_warps=6)  # xeforge: ignore[XF102]"));
    write(t.path(), "all.py", &BAD_WARPS.replace("num_warps=6)", "num_warps=6)  # xeforge: ignore"));
    let d = json(&check(t.path(), &[".", "--format", "json", "--select", "XF101"]));
    let files: Vec<&str> = d.iter().map(|d| d["filename"].as_str().unwrap()).collect();
    assert_eq!(files, ["other.py"]);
}

// ---------------------------------------------------------------- awkward inputs

#[test]
fn io_errors_are_reported_and_the_rest_is_checked() {
    let t = sandbox(&["multi.py"]);
    #[cfg(unix)]
    std::os::unix::fs::symlink(t.path().join("gone.py"), t.path().join("dangling.py")).unwrap();
    let o = check(t.path(), &["missing.py", "multi.py", "missing_dir/"]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(err.contains("error: missing.py: no such file or directory"), "{err}");
    assert!(err.contains("error: missing_dir/: no such file or directory"), "{err}");
    assert!(stdout(&o).contains("multi.py:8:48: XF101"), "the good file was still checked");
    #[cfg(unix)]
    {
        let o = check(t.path(), &["dangling.py", "multi.py", "--format", "json"]);
        assert_eq!(code(&o), 2);
        assert!(stderr(&o).contains("error: dangling.py:"), "{}", stderr(&o));
        assert!(!json(&o).is_empty());
    }
}

#[test]
fn binary_non_utf8_and_empty_files() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("blob.py"), b"triton\0\x01\x02garbage").unwrap();
    fs::write(t.path().join("latin1.py"), b"import triton\n# caf\xe9\n").unwrap();
    fs::write(t.path().join("empty.py"), b"").unwrap();
    write(t.path(), "k.py", BAD_WARPS);
    let o = check(t.path(), &[".", "--format", "json"]);
    let err = stderr(&o);
    assert!(err.contains("note: blob.py: binary file skipped"), "{err}");
    assert!(err.contains("error: latin1.py: not valid UTF-8"), "{err}");
    assert!(!err.contains("empty.py"), "{err}");
    assert_eq!(code(&o), 2, "a file that cannot be decoded is an I/O error");
    assert!(json(&o).iter().any(|d| d["filename"] == "k.py" && d["code"] == "XF101"));
    // Binary alone is only a note.
    assert_eq!(code(&check(t.path(), &["blob.py", "empty.py"])), 0);
}

#[test]
fn a_50k_line_file_is_checked_with_exact_positions() {
    let t = tempfile::tempdir().unwrap();
    let mut text = String::from("import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x):\n    pass\n\n");
    for i in 0..12_500 {
        text.push_str(&format!("def helper_{i}(a, b):\n    c = a + b * {i}\n    return c\n\n"));
    }
    text.push_str("def go(x):\n    k[(1,)](x, num_warps=6)\n");
    let rows = text.lines().count();
    assert!(rows > 50_000);
    write(t.path(), "big.py", &text);
    let d = json(&check(t.path(), &["big.py", "--format", "json", "--select", "XF101"]));
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["location"]["row"].as_u64().unwrap() as usize, rows);
}

#[test]
fn a_tree_without_triton_is_clean() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..400 {
        write(t.path(), &format!("pkg{}/mod_{i}.py", i % 20), &format!("def f{i}(x):\n    return x * {i}\n"));
    }
    write(t.path(), "notes.txt", "triton num_warps=6\n");
    let o = check(t.path(), &["."]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "All checks passed!");
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn gitignored_and_hidden_files_are_skipped_when_walking() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), ".gitignore", "build/\n");
    write(t.path(), "build/k.py", BAD_WARPS);
    write(t.path(), ".venv/k.py", BAD_WARPS);
    write(t.path(), "src/k.pyi", BAD_WARPS);
    let d = json(&check(t.path(), &[".", "--format", "json", "--select", "XF101"]));
    let files: Vec<&str> = d.iter().map(|d| d["filename"].as_str().unwrap()).collect();
    assert_eq!(files, ["src/k.pyi"]);
}

#[test]
fn output_order_is_path_then_position() {
    let t = tempfile::tempdir().unwrap();
    let two = BAD_WARPS.to_string() + "    k[(1,)](x, num_warps=3)\n";
    for name in ["z.py", "a.py", "m/b.py"] {
        write(t.path(), name, &two);
    }
    let d = json(&check(t.path(), &[".", "--format", "json", "--select", "XF101"]));
    let seen: Vec<(String, u64)> =
        d.iter().map(|d| (d["filename"].as_str().unwrap().into(), d["location"]["row"].as_u64().unwrap())).collect();
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!(seen, sorted);
    assert_eq!(seen.len(), 6);
}

// ---------------------------------------------------------------- helpers imported from other files

/// `crossfile/`: a package whose kernels call `@triton.jit` helpers of other modules (README.md).
fn crossfile() -> PathBuf {
    fixtures().join("crossfile")
}

/// (file relative to `root`, line, code) → count, from the `# expect: XF...` comments of every
/// `.py` file under `root` (or of `only`).
fn expected_under(root: &Path, only: Option<&str>) -> std::collections::BTreeMap<(String, u64, String), usize> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            if p.extension().is_none_or(|x| x != "py") || only.is_some_and(|o| o != rel) {
                continue;
            }
            for (i, line) in fs::read_to_string(&p).unwrap().lines().enumerate() {
                let Some(at) = line.find("# expect:") else { continue };
                for code in line[at + "# expect:".len()..].split(',').map(str::trim).filter(|c| !c.is_empty()) {
                    *out.entry((rel.clone(), i as u64 + 1, code.to_string())).or_insert(0) += 1;
                }
            }
        }
    }
    out
}

fn found(o: &Output) -> std::collections::BTreeMap<(String, u64, String), usize> {
    let mut out = std::collections::BTreeMap::new();
    for d in json(o) {
        let key =
            (d["filename"].as_str().unwrap().to_string(), d["location"]["row"].as_u64().unwrap(), d["code"].as_str().unwrap().to_string());
        *out.entry(key).or_insert(0) += 1;
    }
    out
}

#[test]
fn tl_dot_is_seen_through_helpers_imported_from_other_files() {
    let root = crossfile();
    let o = check(&root, &["--format", "json"]);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    assert_eq!(found(&o), expected_under(&root, None));
    // One file named alone still reads the helpers it imports.
    let o = check(&root, &["gemm/kernels.py", "--format", "json"]);
    assert_eq!(found(&o), expected_under(&root, Some("gemm/kernels.py")));
}

#[test]
fn without_the_helpers_module_the_kernels_read_as_before() {
    // The same kernels where `gemm.helpers` cannot be found: every 32-warp launch under
    // grf_mode='256' is XF102 (the default sub-group), and XF502 is silent (no tl.dot known).
    let t = tempfile::tempdir().unwrap();
    for f in ["xeforge.toml", "gemm/__init__.py", "gemm/kernels.py"] {
        write(t.path(), f, &fs::read_to_string(crossfile().join(f)).unwrap());
    }
    let d = json(&check(t.path(), &["--format", "json"]));
    let lines: Vec<(u64, &str)> = d.iter().map(|d| (d["location"]["row"].as_u64().unwrap(), d["code"].as_str().unwrap())).collect();
    assert_eq!(lines, [(62, "XF102"), (63, "XF102"), (65, "XF102"), (67, "XF102")]);
}
