//! `xeforge check` on Jupyter notebooks, end to end: the code cells read as one file (a kernel in
//! one cell, its launch in another), positions per cell in every output format, `--fix` written
//! into the fixed cell's `source` only, broken notebooks reported by name, discovery of `*.ipynb`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

#[path = "common/cli.rs"]
mod cli;
use cli::{check, code, stderr, stdout};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check/notebooks")
}

fn json_out(o: &Output) -> Vec<Value> {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", stdout(o), stderr(o)))
}

/// A temp dir with a copy of the fixture notebooks and their `xeforge.toml`.
fn sandbox() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for e in fs::read_dir(fixtures()).unwrap() {
        let p = e.unwrap().path();
        fs::copy(&p, t.path().join(p.file_name().unwrap())).unwrap();
    }
    t
}

/// Every `# expect: XF...` in the notebook's code cells, as (cell number from 1, row in the cell, code).
fn expected(nb: &Path) -> Vec<(u64, u64, String)> {
    let v: Value = serde_json::from_str(&fs::read_to_string(nb).unwrap()).unwrap();
    let mut out = Vec::new();
    for (i, cell) in v["cells"].as_array().unwrap().iter().enumerate() {
        let source = match &cell["source"] {
            Value::String(s) => s.clone(),
            Value::Array(items) => items.iter().map(|l| l.as_str().unwrap()).collect(),
            _ => unreachable!(),
        };
        for (row, line) in source.lines().enumerate() {
            if let Some((_, codes)) = line.split_once("# expect:") {
                out.extend(codes.split_whitespace().map(|c| (i as u64 + 1, row as u64 + 1, c.to_string())));
            }
        }
    }
    out.sort();
    out
}

fn found(o: &Output) -> Vec<(u64, u64, String)> {
    let mut out: Vec<_> = json_out(o)
        .iter()
        .map(|d| (d["cell"].as_u64().unwrap(), d["location"]["row"].as_u64().unwrap(), d["code"].as_str().unwrap().to_string()))
        .collect();
    out.sort();
    out
}

#[test]
fn a_kernel_of_one_cell_is_checked_at_its_launch_in_another() {
    let o = check(&fixtures(), &["vector_add.ipynb", "--format", "json"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let exp = expected(&fixtures().join("vector_add.ipynb"));
    assert!(!exp.is_empty());
    assert_eq!(found(&o), exp);
    let d = &json_out(&o)[0];
    assert_eq!(d["filename"], "vector_add.ipynb");
    assert_eq!(d["kernel"], "add_kernel");
    // Rows and columns within the cell; the fix's edits name their cell too.
    let launch = "    add_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256, num_warps=6, grf_mode='large')";
    let col = (launch.find("num_warps=6").unwrap() + "num_warps=".len()) as u64 + 1;
    assert_eq!(d["location"], json!({"row": 3, "column": col}));
    assert_eq!(d["fix"]["edits"][0]["cell"], 5);
    assert_eq!(d["fix"]["edits"][0]["location"], json!({"row": 3, "column": col}));
}

#[test]
fn text_output_names_the_cell_and_frames_the_cells_own_lines() {
    let o = check(&fixtures(), &["vector_add.ipynb"]);
    let out = stdout(&o);
    assert!(out.contains("vector_add.ipynb:cell 5:3:70: XF101 [error] num_warps=6"), "{out}");
    // The frame numbers the cell's rows and shows its text as written.
    assert!(out.contains("\n3 |     add_kernel[(triton.cdiv(n, 256),)]"), "{out}");
    assert!(out.contains("= note: vector_add.ipynb:cell 5:3:5: passed by this launch of add_kernel"), "{out}");
    assert!(out.contains("Found 2 errors"), "{out}");
}

#[test]
fn sarif_and_github_formats_carry_the_cell() {
    let o = check(&fixtures(), &["vector_add.ipynb", "--format", "sarif"]);
    let log: Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &log["runs"][0]["results"][0];
    assert_eq!(r["properties"]["cell"], 5);
    assert_eq!(r["locations"][0]["physicalLocation"]["region"]["startLine"], 3);
    let schema: Value =
        serde_json::from_str(&fs::read_to_string(fixtures().parent().unwrap().join("sarif-schema-2.1.0.json")).unwrap()).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.add_resource("sarif.json", schema).unwrap();
    let idx = compiler.compile("sarif.json", &mut schemas).unwrap();
    assert!(schemas.validate(&log, idx).is_ok());

    let o = check(&fixtures(), &["vector_add.ipynb", "--format", "github"]);
    let out = stdout(&o);
    assert!(out.contains("::error file=vector_add.ipynb,line=3,col=70,"), "{out}");
    assert!(out.contains("::vector_add.ipynb:cell 5:3:70: XF101"), "{out}");
}

#[test]
fn fix_changes_only_the_fixed_cells_source() {
    let t = sandbox();
    let nb = t.path().join("vector_add.ipynb");
    let before = fs::read_to_string(&nb).unwrap();
    let o = check(t.path(), &["vector_add.ipynb", "--fix"]);
    assert!(stdout(&o).contains("Fixed 1 problem."), "{}{}", stdout(&o), stderr(&o));
    let after = fs::read_to_string(&nb).unwrap();
    // Byte for byte the file as it was, but for the one string of the launch line.
    assert_eq!(after, before.replace("num_warps=6, grf_mode='large')  #", "num_warps=6, grf_mode='256')  #"));
    let (b, a): (Value, Value) = (serde_json::from_str(&before).unwrap(), serde_json::from_str(&after).unwrap());
    for (i, (cb, ca)) in b["cells"].as_array().unwrap().iter().zip(a["cells"].as_array().unwrap()).enumerate() {
        if i != 4 {
            assert_eq!(cb, ca, "cell {}", i + 1);
        } else {
            assert_eq!(cb["outputs"], ca["outputs"]);
            assert_eq!(cb["execution_count"], ca["execution_count"]);
            assert_eq!(cb["metadata"], ca["metadata"]);
            assert!(ca["source"].is_array(), "the list form is kept");
        }
    }
    // The unsafe one too, then nothing more to do: the file stays as it is.
    check(t.path(), &["vector_add.ipynb", "--fix", "--unsafe-fixes"]);
    let fixed = fs::read_to_string(&nb).unwrap();
    assert!(fixed.contains("num_warps=8, grf_mode='256'"));
    let o = check(t.path(), &["vector_add.ipynb", "--fix", "--unsafe-fixes"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(fs::read_to_string(&nb).unwrap(), fixed);
}

#[test]
fn a_notebook_with_nothing_to_fix_is_left_byte_for_byte() {
    let t = sandbox();
    let nb = t.path().join("vector_add.ipynb");
    let before = fs::read(&nb).unwrap();
    // Findings without fixes among the selected rules: the file is not written.
    let o = check(t.path(), &["vector_add.ipynb", "--fix", "--select", "XF501"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("XF501"), "{}", stdout(&o));
    assert_eq!(fs::read(&nb).unwrap(), before);
}

#[test]
fn a_source_written_as_one_string_stays_one_string() {
    let t = tempfile::tempdir().unwrap();
    let nb = json!({
        "cells": [
            {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [],
             "source": "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x):\n    pass\n"},
            {"cell_type": "code", "execution_count": 7, "metadata": {"collapsed": false}, "outputs": [{"output_type": "stream", "name": "stdout", "text": "ok\n"}],
             "source": "k[(1,)](x, grf_mode='large')"}
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 2
    });
    // Compact, two-space indented and in this key order: none of it may change.
    let text = serde_json::to_string_pretty(&nb).unwrap();
    fs::write(t.path().join("s.ipynb"), &text).unwrap();
    let o = check(t.path(), &["s.ipynb", "--fix"]);
    assert!(stdout(&o).contains("Fixed 1 problem."), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(fs::read_to_string(t.path().join("s.ipynb")).unwrap(), text.replace("grf_mode='large'", "grf_mode='256'"));
}

#[test]
fn diff_shows_each_fixed_cell() {
    let o = check(&fixtures(), &["vector_add.ipynb", "--diff"]);
    let out = stdout(&o);
    assert!(out.starts_with("--- a/vector_add.ipynb:cell 5\n+++ b/vector_add.ipynb:cell 5\n"), "{out}");
    assert!(out.contains("+    add_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256, num_warps=6, grf_mode='256')"), "{out}");
    assert_eq!(code(&o), 1);
}

#[test]
fn broken_notebooks_are_errors_naming_the_file_and_the_rest_is_checked() {
    let t = sandbox();
    let cases = [
        ("not_json.ipynb", "{\"cells\": [triton jit", "not_json.ipynb: not a valid notebook: not JSON"),
        (
            "v3.ipynb",
            "{\"nbformat\": 3, \"worksheets\": [], \"triton\": \"jit\"}",
            "v3.ipynb: not a valid notebook: nbformat 3 is not supported",
        ),
        (
            "no_cells.ipynb",
            "{\"nbformat\": 4, \"metadata\": {\"triton\": \"jit\"}}",
            "no_cells.ipynb: not a valid notebook: no `cells` list",
        ),
        (
            "bad_source.ipynb",
            "{\"cells\": [{\"cell_type\": \"code\", \"source\": {\"triton\": 1}}], \"jit\": 1}",
            "bad_source.ipynb: not a valid notebook: cell 1: `source` is neither a string nor a list of strings",
        ),
    ];
    for (name, text, _) in cases {
        fs::write(t.path().join(name), text).unwrap();
    }
    let o = check(t.path(), &[".", "--format", "json"]);
    assert_eq!(code(&o), 2, "an unreadable notebook is an I/O-class error");
    let err = stderr(&o);
    for (_, _, says) in cases {
        assert!(err.contains(&format!("error: {says}")), "{says}\n{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    // The good notebook was checked all the same.
    assert_eq!(found(&o), expected(&t.path().join("vector_add.ipynb")));
}

#[test]
fn directories_include_notebooks_unless_excluded() {
    let t = sandbox();
    fs::create_dir_all(t.path().join("sub")).unwrap();
    fs::rename(t.path().join("vector_add.ipynb"), t.path().join("sub/vector_add.ipynb")).unwrap();
    let o = check(t.path(), &["--format", "json"]);
    let files: Vec<Value> = json_out(&o).iter().map(|d| d["filename"].clone()).collect();
    assert!(!files.is_empty() && files.iter().all(|f| f == "sub/vector_add.ipynb"), "{files:?}");
    fs::write(t.path().join("xeforge.toml"), "select = [\"XF1\"]\nexclude = [\"*.ipynb\"]\n").unwrap();
    let o = check(t.path(), &["--format", "json"]);
    assert!(json_out(&o).is_empty(), "{}", stdout(&o));
    // Named on the command line, an excluded notebook is still checked (as a `.py` file is).
    let o = check(t.path(), &["sub/vector_add.ipynb", "--format", "json"]);
    assert_eq!(json_out(&o).len(), 2);
}

#[test]
fn ipython_syntax_and_other_languages_read_as_nothing() {
    let t = tempfile::tempdir().unwrap();
    let kernel = "import triton\nimport triton.language as tl\n@triton.jit\ndef k(x):\n    pass\n";
    let nb = json!({
        "cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["%%bash\n", "k[(1,)](x, num_warps=6)\n"]},
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": kernel},
            {"cell_type": "raw", "metadata": {}, "source": "k[(1,)](x, num_warps=6)\n"},
            {"cell_type": "markdown", "metadata": {}, "source": "k[(1,)](x, num_warps=6)\n"},
            {"cell_type": "code", "metadata": {"vscode": {"languageId": "sql"}}, "outputs": [], "source": "k[(1,)](x, num_warps=6)\n"},
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": "%%time\nfiles = !ls\nfor f in files:\n    !echo $f\n    k[(1,)](x, num_warps=6)\n"}
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    });
    fs::write(t.path().join("m.ipynb"), serde_json::to_string(&nb).unwrap()).unwrap();
    let o = check(t.path(), &["m.ipynb", "--format", "json", "--select", "XF101"]);
    assert_eq!(found(&o), [(6, 5, "XF101".to_string())], "{}", stderr(&o));
}

#[test]
fn commands_that_run_a_file_on_the_harness_refuse_a_notebook_and_say_what_to_do() {
    let t = sandbox();
    for command in [&["stage", "autotune"][..], &["verify"], &["spec"], &["optimize"]] {
        let o = Command::new(env!("CARGO_BIN_EXE_xeforge"))
            .args(command)
            .arg("vector_add.ipynb")
            .current_dir(t.path())
            .env("NO_COLOR", "1")
            .output()
            .expect("the xeforge binary runs");
        assert_eq!(code(&o), 2, "{command:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("vector_add.ipynb: a notebook cannot be run on the harness"), "{command:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("xeforge check"), "{}", stderr(&o));
    }
    // Nothing written beside it (`spec` used to draft a YAML for the notebook).
    let mut names: Vec<String> = fs::read_dir(t.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let mut fixture: Vec<String> =
        fs::read_dir(fixtures()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    fixture.sort();
    assert_eq!(names, fixture);
}
