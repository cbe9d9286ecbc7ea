//! `xeforge report`: the evidence of a run as one self-contained page, with one mark per measured
//! value. The GPU-shaped record in tests/fixtures/report is constructed input (not a measurement);
//! the CPU one is a real run's record of the interpreter path.

use std::path::Path;
use std::process::Command;

fn fixtures() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/report"))
}

fn report(input: &Path) -> String {
    let out = tempfile::NamedTempFile::new().unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_xeforge")).arg("report").arg(input).arg("-o").arg(out.path()).status().unwrap();
    assert!(status.success(), "xeforge report {} failed", input.display());
    std::fs::read_to_string(out.path()).unwrap()
}

fn count(html: &str, needle: &str) -> usize {
    html.matches(needle).count()
}

fn record(name: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join(name)).unwrap()).unwrap()
}

#[test]
fn a_timed_run_plots_every_pair_every_config_and_its_place_under_the_roof() {
    let html = report(&fixtures().join("gpu_autotune_constructed.json"));
    let rec = record("gpu_autotune_constructed.json");
    let pairs = rec["evaluation"]["timing"]["samples_us"]["original"].as_array().unwrap().len();
    assert_eq!(count(&html, r#"class="sample original""#), pairs);
    assert_eq!(count(&html, r#"class="sample candidate""#), pairs);
    let measured = rec["rounds"].as_array().unwrap().iter().filter(|r| r["speedup"].is_number()).count();
    assert_eq!(count(&html, r#"class="config""#), measured);
    assert_eq!(count(&html, r#"class="point""#), 2, "original and candidate under the H200's roof");
    assert!(html.contains("speedup 1.620× (95% interval 1.580–1.660)"));
    assert!(html.contains("<span class=\"add\">+@triton.autotune(</span>"), "the diff is shown");
    assert!(html.contains("XF102: num_warps=16"), "a guard rejection says which rule");
}

#[test]
fn the_page_fetches_nothing() {
    let html = report(&fixtures().join("gpu_autotune_constructed.json"));
    for needle in ["<script", "src=", "<link", "@import", "url(", "href=\"http"] {
        assert!(!html.contains(needle), "the report refers to something outside itself: {needle}");
    }
}

#[test]
fn an_interpreter_run_says_why_nothing_is_timed() {
    let html = report(&fixtures().join("cpu_autotune.json"));
    assert!(html.contains("No meaningful timing: the Triton interpreter on CPU"));
    assert!(html.contains("No roofline: the run has no meaningful timing."));
    assert_eq!(count(&html, "class=\"sample"), 0);
}

#[test]
fn a_directory_gives_an_index_over_time_then_each_run() {
    let html = report(fixtures());
    assert!(html.contains("xeforge: 2 stage runs"));
    assert_eq!(count(&html, "<section class=\"run\""), 2);
    assert!(html.contains("href=\"#run-1\"") && html.contains("href=\"#run-2\""));
}

#[test]
fn a_file_that_is_not_a_record_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.json");
    std::fs::write(&p, r#"{"hello": 1}"#).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xeforge")).arg("report").arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an xeforge evidence record (no `stage`)"));
    let empty = Command::new(env!("CARGO_BIN_EXE_xeforge")).arg("report").arg(dir.path()).output().unwrap();
    assert_eq!(empty.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&empty.stderr).contains("no evidence records"));
}
