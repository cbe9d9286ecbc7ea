//! `workspace/diagnostic` (LSP 3.17 pull) over the real `xeforge lsp` binary: a workspace of two
//! folders whose `pyproject.toml` target different devices, each file checked for its own folder's
//! device (the same findings `xeforge check` prints there); files that are not Triton, ignored by git
//! or excluded by the config left out; an open document outside the folders checked with the nearest
//! config upward, or the defaults; unchanged files reported unchanged, edited and deleted ones anew.

#[path = "common/lsp_client.rs"]
mod lsp_client;

use std::path::Path;
use std::process::Command;

use lsp_client::{Client, capabilities};
use serde_json::{Value, json};

fn fixture() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules/XF101_launch_and_config_fix.py")).unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Pull diagnostics shaped like VS Code's: document and workspace pull with refresh.
fn pull_capabilities() -> Value {
    let mut caps = capabilities(&["utf-16"]);
    caps["textDocument"]["diagnostic"] = json!({"dynamicRegistration": false, "relatedDocumentSupport": false});
    caps["workspace"]["diagnostics"] = json!({"refreshSupport": true});
    caps
}

fn start(folders: &[&Path], options: Value) -> (Client, Value) {
    let mut c = Client::spawn();
    let folders: Vec<Value> = folders.iter().map(|f| json!({"uri": uri(f), "name": f.file_name().unwrap().to_str().unwrap()})).collect();
    let init = c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": pull_capabilities(), "workspaceFolders": folders, "initializationOptions": options}),
    );
    c.notify("initialized", json!({}));
    (c, init)
}

/// The workspace report, by URI.
fn pull(c: &mut Client, previous: &[(String, String)]) -> std::collections::BTreeMap<String, Value> {
    let previous: Vec<Value> = previous.iter().map(|(u, v)| json!({"uri": u, "value": v})).collect();
    let r = c.request("workspace/diagnostic", json!({"identifier": "xeforge", "previousResultIds": previous}));
    r["items"].as_array().unwrap().iter().map(|i| (i["uri"].as_str().unwrap().to_string(), i.clone())).collect()
}

/// (code, 0-based line, message) of each diagnostic, sorted.
fn findings(report: &Value) -> Vec<(String, u64, String)> {
    let mut v: Vec<(String, u64, String)> = report["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap().into(), d["range"]["start"]["line"].as_u64().unwrap(), d["message"].as_str().unwrap().into()))
        .collect();
    v.sort();
    v
}

/// The XF501 message: it names the device the file was checked for.
fn xf501(report: &Value) -> String {
    report["items"].as_array().unwrap().iter().find(|d| d["code"] == "XF501").expect("XF501")["message"].as_str().unwrap().to_string()
}

/// What `xeforge check` reports for the file, run in its directory (its config found the same way).
fn check(file: &Path) -> Vec<(String, u64, String)> {
    let out = Command::new(env!("CARGO_BIN_EXE_xeforge"))
        .args(["check", "--format", "json", "--exit-zero", file.file_name().unwrap().to_str().unwrap()])
        .current_dir(file.parent().unwrap())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let mut found: Vec<(String, u64, String)> = v
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|d| (d["code"].as_str().unwrap().into(), d["location"]["row"].as_u64().unwrap() - 1, d["message"].as_str().unwrap().into()))
        .collect();
    found.sort();
    found
}

#[test]
fn two_folders_each_checked_for_their_own_device_and_files_outside_for_theirs() {
    let root = tempfile::tempdir().unwrap();
    let (a, b, out, bare) = (root.path().join("a"), root.path().join("b"), root.path().join("outside"), root.path().join("bare"));
    let text = fixture();
    write(
        &a.join("pyproject.toml"),
        "[tool.xeforge]\ndevice = \"arc-pro-b70\"\ntoolchain = \"xpu-3.7\"\nexclude = [\"vendor\"]\nper-file-ignores = { \"tests/*\" = [\"XF101\"] }\n",
    );
    write(&b.join("pyproject.toml"), "[tool.xeforge]\ndevice = \"max-1550\"\ntoolchain = \"xpu-3.7\"\n");
    write(&out.join("pyproject.toml"), "[tool.xeforge]\ndevice = \"h100\"\ntoolchain = \"xpu-3.7\"\n");
    write(&a.join("kern.py"), &text);
    write(&a.join("tests/kern.py"), &text);
    write(&b.join("sub/kern.py"), &text);
    write(&out.join("kern.py"), &text);
    write(&bare.join("kern.py"), &text);
    // Not reported: no kernel, ignored by git, excluded by the folder's config.
    write(&a.join("plain.py"), "import os\nprint(os.getcwd())\n");
    write(&a.join(".gitignore"), "build/\n");
    write(&a.join("build/kern.py"), &text);
    write(&a.join("vendor/kern.py"), &text);

    let (_, init) = start(&[&a, &b], json!({}));
    assert_eq!(init["capabilities"]["diagnosticProvider"]["workspaceDiagnostics"], false, "off unless asked for");
    let (mut c, init) = start(&[&a, &b], json!({"diagnostics": {"workspace": true}}));
    assert_eq!(init["capabilities"]["diagnosticProvider"]["workspaceDiagnostics"], true, "{init}");

    // Files outside the folders are part of it while open.
    c.open(&uri(&out.join("kern.py")), &text, 3);
    c.open(&uri(&bare.join("kern.py")), &text, 1);
    let report = pull(&mut c, &[]);
    let names: Vec<&String> = report.keys().collect();
    assert_eq!(report.len(), 5, "{names:?}");
    let rt = &report[&uri(&a.join("tests/kern.py"))];
    assert!(!findings(rt).is_empty() && findings(rt).iter().all(|f| f.0 != "XF101"), "per-file-ignores: {rt}");
    let (ra, rb) = (&report[&uri(&a.join("kern.py"))], &report[&uri(&b.join("sub/kern.py"))]);
    let (ro, rbare) = (&report[&uri(&out.join("kern.py"))], &report[&uri(&bare.join("kern.py"))]);
    assert!(xf501(ra).contains("Intel Arc Pro B70"), "{}", xf501(ra));
    assert!(xf501(rb).contains("Max 1550"), "{}", xf501(rb));
    assert!(xf501(ro).contains("H100"), "the nearest config upward: {}", xf501(ro));
    assert_eq!(ro["version"], 3, "an open document reports its version");
    assert!(ra["version"].is_null(), "a file on disk has none");
    // Each file has exactly what `xeforge check` finds in its place: its folder's config, or none.
    for (path, r) in [
        (a.join("kern.py"), ra),
        (a.join("tests/kern.py"), rt),
        (b.join("sub/kern.py"), rb),
        (out.join("kern.py"), ro),
        (bare.join("kern.py"), rbare),
    ] {
        assert_eq!(findings(r), check(&path), "{}", path.display());
    }

    // Pulled again with the ids it got: all unchanged.
    let ids: Vec<(String, String)> = report.iter().map(|(u, r)| (u.clone(), r["resultId"].as_str().unwrap().to_string())).collect();
    let again = pull(&mut c, &ids);
    assert!(again.values().all(|r| r["kind"] == "unchanged"), "{again:?}");

    // b's file edited on disk (its XF101 fixed), a's deleted: b anew, a cleared, the rest unchanged.
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(&b.join("sub/kern.py"), &text.replace("num_warps=6", "num_warps=16"));
    std::fs::remove_file(a.join("kern.py")).unwrap();
    let third = pull(&mut c, &ids);
    let rb = &third[&uri(&b.join("sub/kern.py"))];
    assert_eq!(rb["kind"], "full");
    assert_eq!(findings(rb), check(&b.join("sub/kern.py")));
    let ra = &third[&uri(&a.join("kern.py"))];
    assert_eq!((ra["kind"].as_str(), ra["items"].as_array().map(Vec::len)), (Some("full"), Some(0)), "{ra}");
    assert_eq!(third[&uri(&out.join("kern.py"))]["kind"], "unchanged");
    assert_eq!(c.shutdown_and_exit(), Some(0));
}
