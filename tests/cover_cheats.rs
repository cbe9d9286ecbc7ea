//! `xeforge stage fusion FILE --apply`, driven by a scripted model that proposes every cheating
//! vector_add candidate of `tests/harness/adversarial/` in turn, against the REAL harness on the CPU
//! interpreter: the file must stay byte-identical, and every round must say which layer stopped it
//! (the static guard, or the harness with a verdict that is not a success).
//! Skipped, with the reason printed, when no Python with torch and triton is found.

#[path = "common/openai_stub.rs"]
mod openai_stub;

#[path = "common/pyenv.rs"]
mod pyenv;
use openai_stub::{Reply, Stub};
use std::path::Path;
use std::process::Command;

/// The vector_add cheats (`add_*.py`); legitimate rewrites are `legit_*`, GPU-only ones `gpu_*`.
fn cheats(root: &Path) -> Vec<(String, String)> {
    let dir = root.join("tests/harness/adversarial");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("tests/harness/adversarial")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("add_") && n.ends_with(".py"))
        .map(|n| {
            let text = std::fs::read_to_string(dir.join(&n)).unwrap();
            (n, text)
        })
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_cheat_proposed_by_a_model_reaches_the_users_file() {
    let Some(py) = pyenv::harness() else {
        eprintln!("skipped: no Python with torch and triton ($XEFORGE_PYTHON or .venv/bin/python); run tests/harness/install_deps.sh");
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cheats = cheats(root);
    assert!(cheats.len() >= 10, "expected the adversarial vector_add candidates, found {}", cheats.len());

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    let problems = root.join("tests/harness/problems");
    std::fs::copy(problems.join("vector_add.py"), dir.path().join("kernel.py")).unwrap();
    std::fs::copy(problems.join("vector_add.yaml"), dir.path().join("kernel.yaml")).unwrap();
    let before = std::fs::read(dir.path().join("kernel.py")).unwrap();

    let script = cheats.iter().map(|(_, code)| Reply::Chat(format!("```python\n{code}```"))).collect();
    let stub = Stub::start(script).await;
    let bin = env!("CARGO_BIN_EXE_xeforge");
    let file = dir.path().join("kernel.py");
    let rounds = cheats.len().to_string();
    let args: Vec<String> = [
        "stage",
        "fusion",
        file.to_str().unwrap(),
        "--apply",
        "--device",
        "cpu",
        "--format",
        "json",
        "--timeout",
        "20",
        "--rounds",
        &rounds,
        "--llm-url",
        &stub.url,
        "--llm-model",
        "stub",
        "--python",
        py.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let cwd = dir.path().to_path_buf();
    let out =
        tokio::task::spawn_blocking(move || Command::new(bin).args(&args).current_dir(cwd).output().expect("run xeforge")).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);

    assert_eq!(std::fs::read(&file).unwrap(), before, "a cheat was written into the file\n{stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    assert_eq!(report["changed"], false, "{stdout}");
    let rounds = report["rounds"].as_array().expect("rounds");
    assert_eq!(rounds.len(), cheats.len(), "one round per proposed cheat: {stdout}\n{stderr}");
    for (r, (name, _)) in rounds.iter().zip(&cheats) {
        let by_guard = !r["rejected"].is_null();
        let verdict = r["verdict"].as_str().unwrap_or("");
        assert!(by_guard || !verdict.is_empty(), "{name}: the round names no layer that stopped it: {r}");
        assert!(!["correct", "accepted", "slower"].contains(&verdict), "{name}: the harness passed a cheat ({verdict}): {r}");
        if !by_guard {
            assert!(r["message"].as_str().is_some_and(|m| !m.is_empty()), "{name}: a harness verdict without its reason: {r}");
        }
    }
    let layers: Vec<String> = rounds
        .iter()
        .zip(&cheats)
        .map(|(r, (n, _))| {
            if r["rejected"].is_null() {
                format!("{n}: harness {}", r["verdict"].as_str().unwrap_or("?"))
            } else {
                format!("{n}: static guard {}", r["rejected"]["rule"].as_str().unwrap_or("?"))
            }
        })
        .collect();
    eprintln!("{}", layers.join("\n"));
}
