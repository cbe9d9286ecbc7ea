//! `knowledge/api` against the Triton installed in the test venv (XEFORGE_PYTHON, else .venv): every
//! name and parameter the data marks present in the installed release's column must be there. A
//! venv without Triton skips the check, and fails it under CI=true. The data is regenerated with
//! `python3 knowledge/tools/api/generate.py` (knowledge/tools/api/).

use serde_json::Value;
use std::path::Path;
use std::process::Command;
use xeforge::knowledge::{Api, Knowledge};

fn python() -> String {
    std::env::var("XEFORGE_PYTHON").unwrap_or_else(|_| format!("{}/.venv/bin/python", env!("CARGO_MANIFEST_DIR")))
}

/// What the installed Triton exports (knowledge/tools/api/introspect.py), or why it cannot be read.
fn installed() -> Result<Value, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("knowledge/tools/api/introspect.py");
    let out = Command::new(python()).arg(script).output().map_err(|e| format!("{}: {e}", python()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("").to_string());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

/// `module.name` (and `module.name(param)`) the data marks present in `release` but `found` lacks.
fn missing(api: &Api, release: &str, found: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in &api.modules {
        let symbols = &found["modules"][&m.module]["symbols"];
        for (name, sym) in &m.symbols {
            if !sym.releases.iter().any(|r| r == release) {
                continue;
            }
            let Some(have) = symbols.get(name) else {
                out.push(format!("{}.{name}", m.module));
                continue;
            };
            let params: Vec<&str> = have["params"].as_array().into_iter().flatten().filter_map(|p| p["name"].as_str()).collect();
            for p in &sym.params {
                let here = p.releases.as_ref().is_none_or(|rs| rs.iter().any(|r| r == release));
                if here && have.get("params").is_some() && !params.contains(&p.name.as_str()) {
                    out.push(format!("{}.{name}({})", m.module, p.name));
                }
            }
        }
    }
    out
}

#[test]
fn installed_triton_has_everything_the_data_marks_present() {
    let found = match installed() {
        Ok(v) => v,
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("skipped: no importable Triton in {} ({e})", python());
            return;
        }
        Err(e) => panic!("CI needs an importable Triton in {}: {e}", python()),
    };
    let version = found["version"].as_str().unwrap_or("?");
    let api = &Knowledge::embedded().api;
    let release = api.releases.iter().find(|r| r.installed && r.version == version).unwrap_or_else(|| {
        panic!(
            "the installed Triton {version} has no column in knowledge/api: add it to knowledge/tools/api/releases.toml and run generate.py"
        )
    });
    let gone = missing(api, &release.id, &found);
    assert!(gone.is_empty(), "marked present in {} but missing from the installed Triton {version}: {gone:?}", release.id);
}

#[test]
fn a_symbol_missing_from_the_installed_release_is_reported() {
    // The comparison itself, on a release whose introspection lacks tl.load's `mask` and tl.dot.
    let api = &Knowledge::embedded().api;
    let found = serde_json::json!({"version": "x", "modules": {"triton.language": {"symbols": {
        "load": {"kind": "function", "params": [{"name": "pointer"}]}
    }}}});
    let gone = missing(api, "triton-3.9.0", &found);
    assert!(gone.contains(&"triton.language.dot".to_string()), "{gone:?}");
    assert!(gone.contains(&"triton.language.load(mask)".to_string()), "{gone:?}");
    assert!(gone.contains(&"triton.cdiv".to_string()), "{gone:?}");
}
