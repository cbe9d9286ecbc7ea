//! The binary, the harness package and the VS Code extension are released as one number: the wheel
//! carries the first two, the `.vsix` the third, and each checks the others at start.

use std::path::Path;

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn harness_version() -> String {
    let init = read("server/harness/xeforge_harness/__init__.py");
    let line = init.lines().find(|l| l.starts_with("__version__")).expect("__version__ in xeforge_harness/__init__.py");
    line.split('"').nth(1).expect("a quoted version").to_string()
}

fn extension_version() -> String {
    let package: serde_json::Value = serde_json::from_str(&read("editors/vscode/package.json")).expect("package.json is JSON");
    package["version"].as_str().expect("a version in package.json").to_string()
}

#[test]
fn binary_harness_and_extension_carry_one_version() {
    let binary = env!("CARGO_PKG_VERSION");
    assert_eq!(harness_version(), binary, "xeforge_harness.__version__ differs from Cargo.toml's version");
    assert_eq!(extension_version(), binary, "editors/vscode/package.json's version differs from Cargo.toml's");
}

#[test]
fn the_wheel_takes_its_version_from_cargo() {
    // maturin reads the version from the manifest when the project declares it dynamic.
    let pyproject: toml::Value = toml::from_str(&read("server/pyproject.toml")).expect("server/pyproject.toml is TOML");
    let dynamic = pyproject["project"]["dynamic"].as_array().expect("project.dynamic");
    assert!(dynamic.iter().any(|d| d.as_str() == Some("version")), "the wheel's version must come from Cargo.toml");
    assert_eq!(pyproject["tool"]["maturin"]["manifest-path"].as_str(), Some("../Cargo.toml"));
    assert_eq!(pyproject["tool"]["maturin"]["bindings"].as_str(), Some("bin"));
}
