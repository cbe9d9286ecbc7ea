//! Kernels made by a call rather than a decorator (`add_kernel = triton.jit(_add_impl)`, as Unsloth
//! writes them; `tests/fixtures/launch_forms/jit_by_call*.py`): the autotune stage takes them, writes its
//! list into the assignment and leaves the `def` undecorated; on the CPU interpreter, through the real
//! harness, the written file is correct and still imports and runs.

#[path = "common/pyenv.rs"]
mod pyenv;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use xeforge::cover::autotune::{self, space::TuneBackend};
use xeforge::cover::outline::Outline;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/launch_forms").join(name)
}

/// The fixture's text with its start config written as an autotune list, as the stage writes it on
/// the interpreter.
fn as_list(file: &str) -> (String, String) {
    let text = std::fs::read_to_string(fixture(file)).unwrap();
    let o = Outline::build(&text);
    let p =
        autotune::plan(&text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap_or_else(|e| panic!("{file}: {e}"));
    let out = p.render(&text, std::slice::from_ref(&p.input.start)).unwrap();
    (text, out)
}

/// The `def` of `name` in `text` as written, with the line above it.
fn def_with_line_above<'a>(text: &'a str, name: &str) -> &'a str {
    let at = text.find(&format!("\ndef {name}(")).unwrap_or_else(|| panic!("no def {name} in\n{text}"));
    let above = text[..at].rfind('\n').map_or(0, |i| i + 1);
    &text[above..]
}

#[test]
fn the_list_goes_into_the_assignment_and_the_def_stays_undecorated() {
    let cases = [
        (
            "jit_by_call.py",
            "_add_impl",
            "add_kernel = triton.autotune(\n    configs=[\n        triton.Config({'BLOCK': 128}, num_warps=4, num_stages=3),\n    ],\n    \
             key=['n'],\n)(triton.jit(_add_impl))\n",
            "    add_kernel[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, out, n)\n",
        ),
        (
            "jit_by_call_imported.py",
            "_mul_impl",
            "mul_kernel = triton.autotune(\n    configs=[\n        triton.Config({'BLOCK': 256}, num_warps=4, num_stages=3),\n    ],\n    \
             key=['n'],\n)(jit(_mul_impl))\n",
            "    mul_kernel[lambda META: ((n + (META['BLOCK'] - 1)) // META['BLOCK'],)](x, out, n, alpha)\n",
        ),
        // Beneath the autotuner, the heuristics it calls: as `@triton.autotune` over `@triton.heuristics`.
        (
            "jit_by_call_rebound.py",
            "_clamp",
            "_clamp = triton.autotune(\n    configs=[\n        triton.Config({'BLOCK': 512}, num_warps=4, num_stages=3),\n    ],\n    \
             key=['n'],\n)(triton.heuristics({\"EVEN\": lambda args: args[\"n\"] % args[\"BLOCK\"] == 0})(triton.jit(_clamp)))\n",
            "    _clamp[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, out, n, lo, hi)\n",
        ),
        // Its own list applied by a call: the configs are replaced in place (here by its first).
        (
            "jit_by_call_autotuned.py",
            "_neg_impl",
            "neg_kernel = triton.autotune(\n    configs=[\n        triton.Config({'BLOCK': 256}, num_warps=4, num_stages=3),\n    ],\n    \
             key=[\"n\"],\n)(triton.jit(_neg_impl))\n",
            "    neg_kernel[lambda META: (triton.cdiv(n, META[\"BLOCK\"]),)](x, out, n)\n",
        ),
    ];
    for (file, def, assignment, launch) in cases {
        let (text, out) = as_list(file);
        assert!(out.contains(assignment), "{file}: no {assignment:?} in\n{out}");
        assert!(out.contains(launch), "{file}: no {launch:?} in\n{out}");
        // The `def` is as it was, and nothing decorates it.
        let before = def_with_line_above(&text, def);
        let after = def_with_line_above(&out, def);
        assert!(before.starts_with('\n') && after.starts_with('\n'), "{file}: {after}");
        let body = |t: &str| t[1..].split("\n\n\n").next().unwrap().to_string();
        assert_eq!(body(before), body(after), "{file}");
        assert!(!out.lines().any(|l| l.trim_start().starts_with('@')), "{file}: {out}");
    }
}

/// `from triton import jit` alone binds no `triton`: the list brings `import triton` after the imports.
#[test]
fn a_file_that_binds_no_triton_gets_the_import_its_list_needs() {
    let (text, out) = as_list("jit_by_call_imported.py");
    assert!(!text.contains("import triton\n"));
    assert!(out.contains("import triton.language as tl\nfrom triton import jit\nimport triton\n"), "{out}");
    // A file that has it gets no second one.
    let (_, out) = as_list("jit_by_call.py");
    assert_eq!(out.matches("import triton\n").count(), 1, "{out}");
}

/// `--kernel` takes the name the launches use, and the `def`'s too.
#[test]
fn the_kernel_is_named_as_launched_or_by_its_def() {
    let text = std::fs::read_to_string(fixture("jit_by_call.py")).unwrap();
    let o = Outline::build(&text);
    for name in ["add_kernel", "_add_impl"] {
        let k = autotune::pick_kernel(&o, Some(name)).unwrap();
        assert_eq!((k.name.as_str(), k.triton_name()), ("add_kernel", "_add_impl"), "{name}");
    }
}

/// The stage takes the file: without a Python it gets as far as the harness, not a refusal of the kernel.
#[test]
fn the_stage_no_longer_refuses_a_kernel_made_by_a_call() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    for file in ["jit_by_call.py", "jit_by_call_imported.py", "jit_by_call_rebound.py", "jit_by_call_autotuned.py"] {
        let path = dir.path().join(file);
        std::fs::copy(fixture(file), &path).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_xeforge"))
            .args(["stage", "autotune"])
            .arg(&path)
            .args(["--device", "cpu", "--format", "json"])
            .env("XEFORGE_PYTHON", dir.path().join("no-python"))
            .current_dir(dir.path())
            .output()
            .unwrap();
        let v: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{file}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let summary = v["summary"].as_str().unwrap_or_default();
        assert!(!summary.contains("Triton kernel"), "{file}: {v}");
        assert_ne!(v["error"], "no-kernel", "{file}: {v}");
    }
}

/// On the interpreter, through the real harness: the stage's outcome, the file `--apply` writes (the
/// start config as a list of one in the assignment; a kernel's own list kept whole, no edit), and that
/// file imported and run.
#[test]
fn on_the_interpreter_the_applied_file_is_correct_and_runs() {
    let Some(py) = pyenv::with("torch, triton, yaml") else {
        eprintln!("skipped: no Python with torch, triton and PyYAML ($XEFORGE_PYTHON or .venv/bin/python)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    // (file, what the written assignment starts and ends with, a call of the wrapper and what it computes)
    let cases = [
        ("jit_by_call.py", "add_kernel = triton.autotune(\n", ")(triton.jit(_add_impl))\n", "add(x, y)", "x + y"),
        ("jit_by_call_imported.py", "mul_kernel = triton.autotune(\n", ")(jit(_mul_impl))\n", "mul(x, 3.0)", "x * 3.0"),
        ("jit_by_call_rebound.py", "_clamp = triton.autotune(\n", ")(triton.heuristics(", "clamp(x, -0.5, 0.5)", "x.clamp(-0.5, 0.5)"),
        // Its own list is kept whole on the interpreter (nothing timed to drop a config for): no edit.
        ("jit_by_call_autotuned.py", "neg_kernel = triton.autotune(\n", ")(triton.jit(_neg_impl))\n", "neg(x)", "-x"),
    ];
    for (file, head, tail, call, expected) in cases {
        let path = dir.path().join(file);
        std::fs::copy(fixture(file), &path).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_xeforge"))
            .args(["stage", "autotune"])
            .arg(&path)
            .args(["--device", "cpu", "--format", "json", "--apply"])
            .env("XEFORGE_PYTHON", &py)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{file}: {stderr}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{file}: {e}: {stderr}"));
        let changed = file != "jit_by_call_autotuned.py";
        assert_eq!((v["status"].as_str(), v["changed"].as_bool()), (Some("correct-only"), Some(changed)), "{file}: {v}");
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(after.contains(head) && after.contains(tail), "{file}: {after}");
        assert!(!after.lines().any(|l| l.trim_start().starts_with('@')), "{file}: {after}");
        if !changed {
            assert_eq!(after, std::fs::read_to_string(fixture(file)).unwrap(), "{file}");
            continue;
        }
        // The written file imports and runs on the interpreter (a list of one config searches nothing,
        // so Triton's autotuner asks no driver for a benchmarker) and computes what the kernel does.
        let module = file.trim_end_matches(".py");
        let script = format!(
            "import torch\nfrom {module} import *\nx = torch.randn(3000)\ny = torch.randn(3000)\n\
             torch.testing.assert_close({call}, {expected})\nprint('ran')\n"
        );
        let run = Command::new(&py).args(["-c", &script]).env("TRITON_INTERPRET", "1").current_dir(dir.path()).output().unwrap();
        assert!(
            run.status.success() && String::from_utf8_lossy(&run.stdout).contains("ran"),
            "{file}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
}
