//! `xeforge report`: a stage run's evidence record (`.xeforge/runs/*.json`) as one self-contained HTML
//! page: verdict, diff, per-variant correctness, the timed runs, every measured config's speedup and
//! a roofline against the device's peaks (knowledge). A directory of records gives an index of all
//! runs over time, each run below it.
//!
//! Records are read as JSON values, not as `cover::evidence::Record`: a report must open records
//! written by older versions, which lack fields added since; a missing field leaves its section out
//! with a sentence saying why.

pub mod html;
pub mod svg;

use crate::knowledge::Knowledge;
use serde_json::Value;
use std::fmt::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error("{path}: not an xeforge evidence record ({reason})")]
    NotARecord { path: PathBuf, reason: String },
    #[error("{0}: no evidence records (*.json) in this directory")]
    Empty(PathBuf),
}

/// One evidence record and where it was read from.
pub struct Run {
    pub path: PathBuf,
    pub record: Value,
}

impl Run {
    fn str(&self, key: &str) -> &str {
        self.record.get(key).and_then(Value::as_str).unwrap_or("")
    }

    fn started(&self) -> u64 {
        self.record.get("started_unix").and_then(Value::as_u64).unwrap_or(0)
    }

    fn timing(&self) -> Option<&Value> {
        self.record.pointer("/evaluation/timing").filter(|t| t.is_object())
    }
}

/// Reads a record file, or every record in a directory (oldest first).
pub fn load(path: &Path) -> Result<Vec<Run>, ReportError> {
    let io = |e: std::io::Error| ReportError::Io { path: path.to_path_buf(), message: e.to_string() };
    if path.is_dir() {
        let mut runs = Vec::new();
        for entry in std::fs::read_dir(path).map_err(io)? {
            let p = entry.map_err(io)?.path();
            if p.extension().is_some_and(|e| e == "json") {
                // A directory may hold other JSON (an index, a spec): only records are reported.
                if let Ok(run) = load_one(&p) {
                    runs.push(run);
                }
            }
        }
        if runs.is_empty() {
            return Err(ReportError::Empty(path.to_path_buf()));
        }
        runs.sort_by(|a, b| a.started().cmp(&b.started()).then_with(|| a.path.cmp(&b.path)));
        return Ok(runs);
    }
    Ok(vec![load_one(path)?])
}

fn load_one(path: &Path) -> Result<Run, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|e| ReportError::Io { path: path.to_path_buf(), message: e.to_string() })?;
    let record: Value =
        serde_json::from_str(&text).map_err(|e| ReportError::NotARecord { path: path.to_path_buf(), reason: e.to_string() })?;
    for key in ["stage", "kernel", "outcome", "rounds"] {
        if record.get(key).is_none() {
            return Err(ReportError::NotARecord { path: path.to_path_buf(), reason: format!("no `{key}`") });
        }
    }
    Ok(Run { path: path.to_path_buf(), record })
}

/// The page for these runs: one run's report, or an index over time followed by every run.
pub fn render(runs: &[Run], kb: &Knowledge) -> String {
    if let [run] = runs {
        let title = format!("xeforge {} · {}", run.str("stage"), run.str("kernel"));
        return html::page(&title, &run_section(run, kb, 0));
    }
    let mut body = format!("<h1>xeforge: {} stage runs</h1>", runs.len());
    body.push_str(&index(runs));
    for (i, run) in runs.iter().enumerate() {
        body.push_str(&run_section(run, kb, i + 1));
    }
    html::page("xeforge stage runs", &body)
}

fn index(runs: &[Run]) -> String {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let t = r.timing();
            vec![
                format!("<a href=\"#run-{}\">{}</a>", i + 1, crate::cover::evidence::timestamp(r.started())),
                html::escape(r.str("stage")),
                html::escape(r.str("kernel")),
                // The file's name keeps the index narrow; its run's section below gives the path.
                file_name(r.str("file")),
                badge(r.str("outcome")),
                speedup_text(t),
            ]
        })
        .collect();
    let mut out = html::table(&["started (UTC)", "stage", "kernel", "file", "outcome", "speedup [95%]"], &rows);
    let timed: Vec<(String, f64, Option<[f64; 2]>)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let t = r.timing()?;
            let sp = t.get("speedup")?.as_f64()?;
            Some((format!("#{} {} {}", i + 1, r.str("stage"), r.str("kernel")), sp, interval(t)))
        })
        .collect();
    if !timed.is_empty() {
        out.push_str("<h2>Speedup of each timed run</h2>");
        out.push_str(&svg::config_bars(&timed));
    }
    out
}

fn file_name(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    format!("<span title=\"{}\">{}</span>", html::escape(path), html::escape(name))
}

fn badge(outcome: &str) -> String {
    format!("<span class=\"badge {0}\">{0}</span>", html::escape(outcome))
}

fn interval(t: &Value) -> Option<[f64; 2]> {
    let ci = t.get("speedup_ci95")?.as_array()?;
    Some([ci.first()?.as_f64()?, ci.get(1)?.as_f64()?])
}

fn speedup_text(t: Option<&Value>) -> String {
    match t.and_then(|t| Some((t.get("speedup")?.as_f64()?, interval(t)))) {
        Some((sp, Some([a, b]))) => format!("{sp:.3}× [{a:.3}, {b:.3}]"),
        Some((sp, None)) => format!("{sp:.3}×"),
        None => "—".into(),
    }
}

fn num(v: Option<&Value>) -> String {
    match v.and_then(Value::as_f64) {
        Some(x) if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e6) => format!("{x:.3e}"),
        Some(x) => format!("{x:.4}"),
        None => "—".into(),
    }
}

fn run_section(run: &Run, kb: &Knowledge, n: usize) -> String {
    let r = &run.record;
    let mut out = format!("<section class=\"run\" id=\"run-{n}\">");
    let _ = write!(
        out,
        "<h1>{} · <code>{}</code> {}</h1><p>{}</p>",
        html::escape(run.str("stage")),
        html::escape(run.str("kernel")),
        badge(run.str("outcome")),
        html::escape(run.str("summary"))
    );
    let device = r.get("device").cloned().unwrap_or(Value::Null);
    let dev_line = format!(
        "{} {} (torch {}, triton {})",
        device.get("kind").and_then(Value::as_str).unwrap_or("?"),
        device.get("name").and_then(Value::as_str).unwrap_or(""),
        device.get("torch").and_then(Value::as_str).unwrap_or("?"),
        device.get("triton").and_then(Value::as_str).unwrap_or("?")
    );
    let facts = [
        ("file", run.str("file").to_string()),
        ("verdict", r.pointer("/evaluation/verdict").and_then(Value::as_str).unwrap_or("none").to_string()),
        ("ran on", dev_line),
        ("harness", run.str("harness").to_string()),
        ("knowledge target", format!("{} · {}", run.str("target_device"), run.str("target_toolchain"))),
        (
            "spec · family · seeds",
            format!("{} · {} · {}", r["spec"].as_str().unwrap_or("inferred"), r["family"].as_str().unwrap_or("default"), r["seeds"]),
        ),
        (
            "started · finished (UTC)",
            format!(
                "{} · {}",
                crate::cover::evidence::timestamp(run.started()),
                crate::cover::evidence::timestamp(r["finished_unix"].as_u64().unwrap_or(0))
            ),
        ),
        ("record", run.path.display().to_string()),
        ("xeforge", run.str("xeforge").to_string()),
    ];
    let rows: Vec<Vec<String>> = facts.iter().map(|(k, v)| vec![html::escape(k), html::escape(v)]).collect();
    out.push_str(&html::table(&["", ""], &rows));

    out.push_str("<h2>Change</h2>");
    match r.get("diff").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => out.push_str(&html::diff(d)),
        _ if r.get("file_sha256_after").is_some_and(Value::is_null) => {
            out.push_str("<p class=\"note\">No change: nothing was verified better than the original.</p>")
        }
        _ => out.push_str("<p class=\"note\">This record carries no diff (written by an xeforge before 0.1.0's reports).</p>"),
    }

    out.push_str(&correctness(r));
    out.push_str(&timing(run));
    out.push_str(&configs(r));
    out.push_str(&roofline(run, kb));
    out.push_str(&rounds(r));
    out.push_str("</section>");
    out
}

fn correctness(r: &Value) -> String {
    let mut out = String::from("<h2>Correctness</h2>");
    let Some(variants) = r.pointer("/evaluation/correctness/variants").and_then(Value::as_array).filter(|v| !v.is_empty()) else {
        out.push_str("<p class=\"note\">No correctness result in this record.</p>");
        return out;
    };
    let rows: Vec<Vec<String>> = variants
        .iter()
        .map(|v| {
            vec![
                html::escape(v["name"].as_str().unwrap_or("?")),
                if v["ok"].as_bool() == Some(false) { "<b>failed</b>".into() } else { "ok".into() },
                v["seeds"].as_u64().map(|s| s.to_string()).unwrap_or_default(),
                num(v.get("max_abs")),
                num(v.get("rel_err")),
                num(v.get("rtol")),
                num(v.get("atol")),
                html::escape(v["reason"].as_str().or(v["error"].as_str()).unwrap_or("")),
            ]
        })
        .collect();
    out.push_str(&html::table(&["variant", "", "seeds", "max |out−ref|", "‖out−ref‖/‖ref‖", "rtol", "atol", "why"], &rows));
    out
}

fn samples(t: &Value, side: &str) -> Vec<f64> {
    t.pointer(&format!("/samples_us/{side}"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default()
}

fn timing(run: &Run) -> String {
    let mut out = String::from("<h2>Timing</h2>");
    let Some(t) = run.timing() else {
        out.push_str("<p class=\"note\">Not timed.</p>");
        return out;
    };
    if t.get("meaningful").and_then(Value::as_bool) != Some(true) {
        let why = t.get("reason").and_then(Value::as_str).unwrap_or("the harness did not say why");
        let _ = write!(out, "<p class=\"note\">No meaningful timing: {}. No speedup is claimed.</p>", html::escape(why));
        return out;
    }
    // Older records do not name the timed variant: the sentence then stops at the pairs.
    let variant = t["variant"].as_str().map(|v| format!(" on the variant <code>{}</code>", html::escape(v))).unwrap_or_default();
    let _ = write!(
        out,
        "<p>original {} µs, candidate {} µs per call, {} interleaved pairs{variant}.</p>",
        num(t.get("baseline_us")),
        num(t.get("candidate_us")),
        t["runs"],
    );
    let (base, cand) = (samples(t, "original"), samples(t, "candidate"));
    if base.is_empty() || cand.is_empty() {
        out.push_str("<p class=\"note\">This record has no per-pair times to plot (written before the harness reported them).</p>");
    } else {
        out.push_str(&svg::timing_strips(&base, &cand, t.get("speedup").and_then(Value::as_f64), interval(t)));
    }
    out
}

fn configs(r: &Value) -> String {
    let measured: Vec<(String, f64, Option<[f64; 2]>)> = r["rounds"]
        .as_array()
        .map(|rounds| {
            rounds
                .iter()
                .filter_map(|x| Some((x["detail"].as_str().unwrap_or("?").to_string(), x.get("speedup")?.as_f64()?, interval(x))))
                .collect()
        })
        .unwrap_or_default();
    if measured.is_empty() {
        return String::new();
    }
    format!("<h2>Every measured candidate</h2>{}", svg::config_bars(&measured))
}

fn roofline(run: &Run, kb: &Knowledge) -> String {
    let mut out = String::from("<h2>Roofline</h2>");
    let Some(t) = run.timing().filter(|t| t.get("meaningful").and_then(Value::as_bool) == Some(true)) else {
        out.push_str("<p class=\"note\">No roofline: the run has no meaningful timing.</p>");
        return out;
    };
    let (flop, bytes) = (t.get("flop").and_then(Value::as_f64), t.get("mem_bytes").and_then(Value::as_f64));
    let Some((flop, bytes)) = flop.zip(bytes).filter(|(f, b)| *f > 0.0 && *b > 0.0) else {
        out.push_str(
            "<p class=\"note\">No roofline: the spec gives no <code>flop</code> and <code>mem_bytes</code> for the timed variant.</p>",
        );
        return out;
    };
    let Some(device) = run.record.pointer("/device/name").and_then(Value::as_str).and_then(|n| kb.device_named(n)) else {
        out.push_str("<p class=\"note\">No roofline: the device that ran has no profile in the knowledge base.</p>");
        return out;
    };
    let (Some(tflops), Some(gbs)) = (device.peak_fp16_tflops.value, device.bandwidth_gbs.value) else {
        out.push_str("<p class=\"note\">No roofline: the device's profile has no peak FLOP/s or bandwidth.</p>");
        return out;
    };
    let intensity = flop / bytes;
    let points: Vec<(String, f64, f64)> = [("original", t.get("baseline_us")), ("candidate", t.get("candidate_us"))]
        .into_iter()
        .filter_map(|(label, us)| Some((label.to_string(), intensity, flop / (us?.as_f64()? * 1e-6))))
        .collect();
    out.push_str(&svg::roofline(tflops * 1e12, gbs * 1e9, &points));
    let _ = write!(
        out,
        "<p class=\"note\">{}: peak {} TFLOP/s ({}{}), bandwidth {} GB/s ({}{}). The compute roof is the fp16/bf16 matrix peak.</p>",
        html::escape(&device.name),
        tflops,
        html::escape(&device.peak_fp16_tflops.source),
        if device.peak_fp16_tflops.verified { "" } else { ", unverified" },
        gbs,
        html::escape(&device.bandwidth_gbs.source),
        if device.bandwidth_gbs.verified { "" } else { ", unverified" },
    );
    out
}

fn rounds(r: &Value) -> String {
    let Some(rounds) = r["rounds"].as_array().filter(|x| !x.is_empty()) else {
        return String::new();
    };
    let rows: Vec<Vec<String>> = rounds
        .iter()
        .map(|x| {
            let rejected = x["rejected"]["message"].as_str().map(|m| format!("{}: {m}", x["rejected"]["rule"].as_str().unwrap_or("guard")));
            let why = rejected.as_deref().or(x["message"].as_str()).or(x["generator_error"].as_str()).unwrap_or("");
            vec![
                x["round"].to_string(),
                html::escape(x["generator"].as_str().unwrap_or("")),
                html::escape(x["detail"].as_str().unwrap_or("")),
                html::escape(x["verdict"].as_str().unwrap_or(if x["rejected"].is_null() { "—" } else { "rejected" })),
                speedup_text(Some(x)),
                html::escape(why),
            ]
        })
        .collect();
    format!("<h2>Rounds</h2>{}", html::table(&["round", "generator", "candidate", "verdict", "speedup [95%]", "why"], &rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(record: Value) -> Run {
        Run { path: PathBuf::from("r.json"), record }
    }

    #[test]
    fn the_index_names_a_file_by_its_name_and_keeps_the_path_as_its_title() {
        assert_eq!(file_name("/tmp/x/work/gemm.py"), "<span title=\"/tmp/x/work/gemm.py\">gemm.py</span>");
        assert_eq!(file_name("gemm.py"), "<span title=\"gemm.py\">gemm.py</span>");
    }

    #[test]
    fn a_record_that_does_not_name_the_timed_variant_gets_no_placeholder_for_it() {
        let t = serde_json::json!({"meaningful": true, "baseline_us": 10.0, "candidate_us": 5.0, "runs": 100});
        let old = timing(&run(serde_json::json!({"evaluation": {"timing": t}})));
        assert!(old.contains("100 interleaved pairs.</p>"), "{old}");
        assert!(!old.contains('?'), "{old}");
        let mut named = t.clone();
        named["variant"] = "bench-gpu[0]".into();
        let new = timing(&run(serde_json::json!({"evaluation": {"timing": named}})));
        assert!(new.contains("100 interleaved pairs on the variant <code>bench-gpu[0]</code>.</p>"), "{new}");
    }
}
