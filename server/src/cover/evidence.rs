//! The evidence record of a stage run (`.xeforge/runs/*.json`) and its one-line summary.
//! Everything in it comes from the harness or the guard; nothing a generator claims is recorded as fact.

use super::guard::Rejection;
use crate::harness::{DeviceInfo, Evaluation, Verdict};
use crate::text::TextRange;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundRecord {
    pub round: u32,
    /// "llm", "autotune", "fixes".
    pub generator: String,
    /// For autotune: the config measured; for the LLM: its model.
    pub detail: String,
    pub candidate_sha256: Option<String>,
    pub rejected: Option<Rejection>,
    /// Typed generator failure (no code block, endpoint error) fed back as the next round's prompt.
    pub generator_error: Option<String>,
    pub verdict: Option<Verdict>,
    pub speedup: Option<f64>,
    pub speedup_ci95: Option<[f64; 2]>,
    pub runs: Option<u64>,
    pub baseline_us: Option<f64>,
    pub candidate_us: Option<f64>,
    /// Per-variant tolerance and error figures from the harness.
    pub variants: Vec<crate::harness::protocol::VariantResult>,
    pub message: Option<String>,
    /// What each `triton.autotune` in the candidate chose, per key (variant shape).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub autotune_picks: Vec<crate::harness::protocol::AutotunePick>,
    /// Why this round was run or how it was read (grid reading, derived variants, budget).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Wall-clock seconds of the harness evaluation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// Of those, seconds spent in the judge's requests to each worker (`trusted:reference`,
    /// `candidate:run`, ...), the longest first, those under 0.05 s left out: where a stage's time goes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub harness_s: Vec<(String, f64)>,
    /// Where this round's timed comparison ran (the device's name, `#index` on a host with several):
    /// with several GPUs, rounds are timed on different devices, each ratio on one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing_device: Option<String>,
    /// The original's launch issue per call (µs) where the harness found its calls bound by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_bound_us: Option<f64>,
}

impl RoundRecord {
    pub fn new(round: u32, generator: &str, detail: impl Into<String>) -> Self {
        Self {
            round,
            generator: generator.into(),
            detail: detail.into(),
            candidate_sha256: None,
            rejected: None,
            generator_error: None,
            verdict: None,
            speedup: None,
            speedup_ci95: None,
            runs: None,
            baseline_us: None,
            candidate_us: None,
            variants: Vec::new(),
            message: None,
            autotune_picks: Vec::new(),
            notes: Vec::new(),
            seconds: None,
            harness_s: Vec::new(),
            timing_device: None,
            launch_bound_us: None,
        }
    }

    pub fn record_evaluation(&mut self, e: &Evaluation) {
        self.verdict = Some(e.verdict);
        if let Some(t) = &e.timing {
            if t.meaningful {
                self.speedup = t.speedup;
                self.speedup_ci95 = t.speedup_ci95;
            }
            self.runs = t.runs;
            self.baseline_us = t.baseline_us;
            self.candidate_us = t.candidate_us;
            if t.meaningful {
                self.timing_device = Some(t.device.as_ref().unwrap_or(&e.device).label());
                self.launch_bound_us = t.issue_us.filter(|_| t.issue_bound == Some(true));
            }
        }
        self.autotune_picks = e.compile.as_ref().map(|c| c.autotune_picks.clone()).unwrap_or_default();
        // A sweep's result has its own share (candidate_s); an evaluation its whole wall time.
        self.seconds = e.elapsed.as_ref().and_then(|x| x.wall_s.or(x.candidate_s));
        if let Some(x) = &e.elapsed {
            let mut by: Vec<(String, f64)> = x.requests.iter().filter(|(_, t)| t.s >= 0.05).map(|(k, t)| (k.clone(), t.s)).collect();
            by.sort_by(|a, b| b.1.total_cmp(&a.1));
            self.harness_s = by;
        }
        self.variants = e.correctness.as_ref().map(|c| c.variants.clone()).unwrap_or_default();
        if !e.verdict.is_correct() {
            self.message = Some(e.failure_text(600));
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    pub xeforge: &'static str,
    pub stage: String,
    pub file: String,
    pub kernel: String,
    pub started_unix: u64,
    pub finished_unix: u64,
    pub kernel_sha256_before: String,
    pub kernel_sha256_after: Option<String>,
    pub file_sha256_before: String,
    pub file_sha256_after: Option<String>,
    /// Knowledge-base target the generator and guard used.
    pub target_device: String,
    pub target_toolchain: String,
    /// What the harness ran on (kind, name, torch and triton versions).
    pub device: DeviceInfo,
    pub harness: String,
    pub spec: Option<String>,
    pub family: Option<String>,
    pub seeds: u32,
    pub rounds: Vec<RoundRecord>,
    /// "accepted", "correct-only", "no-improvement", or "harness-error" when the harness could not judge.
    pub outcome: String,
    pub summary: String,
    /// The final candidate against the stage's input.
    pub evaluation: Option<Evaluation>,
    /// The final text against the pristine original (after several stages).
    pub reverification: Option<Evaluation>,
    pub llm_model: Option<String>,
    pub llm_tokens: Option<u64>,
    /// The problem inferred from the code (no spec): entry, inputs, variants and where each came from.
    pub problem: Option<super::problem::Problem>,
    /// The verified change as a unified diff of the file (none when nothing was verified better).
    pub diff: Option<String>,
}

/// The unified diff from `before` to `after`, headed with `name` (the one diff the CLI prints and the
/// evidence record keeps).
pub fn unified_diff(name: &str, before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after).unified_diff().header(name, name).to_string()
}

pub fn sha256(text: &str) -> String {
    let d = Sha256::digest(text.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn now_unix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// `20260521T101502Z` for a UNIX time (UTC; civil-from-days, no calendar crate needed).
pub fn timestamp(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!("{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z", secs / 3600, secs % 3600 / 60, secs % 60)
}

impl Record {
    /// Write under `<workspace>/.xeforge/runs/`; returns the path.
    pub fn write(&self, workspace: &Path) -> std::io::Result<PathBuf> {
        let dir = workspace.join(".xeforge").join("runs");
        std::fs::create_dir_all(&dir)?;
        let safe = |s: &str| s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect::<String>();
        let base = format!("{}-{}-{}", timestamp(self.started_unix), safe(&self.stage), safe(&self.kernel));
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        // Created, never overwritten: runs that finish together (files optimised at once) each get a name.
        let mut n = 1;
        let path = loop {
            let path = if n == 1 { dir.join(format!("{base}.json")) } else { dir.join(format!("{base}-{n}.json")) };
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    std::io::Write::write_all(&mut f, (json + "\n").as_bytes())?;
                    break path;
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => return Err(e),
            }
        };
        Ok(path)
    }
}

/// The one line shown on an edit's label and by the CLI.
pub fn summary_line(stage: &str, e: Option<&Evaluation>, outcome: &str, rounds: &[RoundRecord]) -> String {
    let Some(e) = e else {
        let n = rounds.len();
        let mut s = format!("{stage}: no verified improvement in {n} round{}; file unchanged", if n == 1 { "" } else { "s" });
        if let Some(why) = launch_bound(rounds) {
            s.push_str(&format!("; {why}"));
        }
        return s;
    };
    let dev = if e.device.name.is_empty() { e.device.kind.clone() } else { e.device.name.clone() };
    let checks = e.correctness.as_ref().map(|c| {
        let seeds = c.variants.iter().map(|v| v.seeds).max().unwrap_or(0);
        format!("{} variant{} × {seeds} seeds", c.variants.len(), if c.variants.len() == 1 { "" } else { "s" })
    });
    let checks = checks.map(|c| format!(", {c}")).unwrap_or_default();
    match (outcome, e.speedup(), e.speedup_interval()) {
        ("accepted", Some(s), Some([lo, hi])) => {
            let runs = e.timing.as_ref().and_then(|t| t.runs).map(|r| format!(" over {r} runs")).unwrap_or_default();
            format!("{stage}: verified {s:.2}× faster [{lo:.2}, {hi:.2}]{runs} on {dev}{checks}")
        }
        _ if e.device.is_cpu() => {
            format!("{stage}: correct on the CPU interpreter{checks}; timing is not meaningful there, no speedup claimed")
        }
        ("correct-only", _, _) => format!("{stage}: verified correct on {dev}{checks} (a correctness stage: no speedup needed)"),
        _ => format!("{stage}: {} on {dev}; file unchanged", e.verdict),
    }
}

/// Why a faster kernel may not show: the last timed round whose original the harness found bound by
/// its launch issue (a call's measured time is then its issue time, in a loop of that call).
pub fn launch_bound(rounds: &[RoundRecord]) -> Option<String> {
    let (issue, call) = rounds.iter().rev().find_map(|r| r.launch_bound_us.zip(r.baseline_us))?;
    // The issue is the original process's own clock and the call the judge's, net of the request's
    // cost: for a call of a few µs the second can come out below the first (an H100, 28 against 9).
    let share = if issue <= call {
        format!("{issue:.0} of its {call:.0} µs a call is launch issue")
    } else {
        format!("issuing a call takes {issue:.0} µs on the host; a call measures {call:.0} µs")
    };
    Some(format!(
        "the original's calls are launch-bound here ({share}): a device-time gain below that floor does not \
         show in a loop of this call (it would with CUDA graphs, or other work queued ahead of it)"
    ))
}

/// What the editor reads back from a record on disk (`lsp::inline`): the fields that say which kernel
/// text a run started from and what it verified. Lenient, as older records lack newer fields.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredRecord {
    pub stage: String,
    pub file: String,
    pub kernel: String,
    pub started_unix: u64,
    pub kernel_sha256_before: String,
    pub kernel_sha256_after: Option<String>,
    pub outcome: String,
    pub summary: String,
    pub diff: Option<String>,
}

impl StoredRecord {
    pub fn read(path: &Path) -> Option<StoredRecord> {
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    }
}

/// The hash a record keeps of a kernel's text (`kernel_sha256_before`/`_after`): the kernel's outline
/// range, decorators included, as [`super::run`] hashes it.
pub fn kernel_sha256(text: &str, kernel: &str) -> Option<String> {
    let outline = super::outline::Outline::build(text);
    let f = outline.kernel(kernel)?;
    Some(sha256(super::outline::slice(text, f.range)))
}

/// One hunk of a [`unified_diff`]: the old lines (context and removed) and the new ones (context and
/// added), with the old text's 1-based start line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk {
    old_line: usize,
    old: String,
    new: String,
}

fn parse_hunks(diff: &str) -> Option<Vec<Hunk>> {
    let mut hunks: Vec<Hunk> = Vec::new();
    // Which side the last line went to, for a `\ No newline at end of file` after it.
    let mut last: Option<char> = None;
    for line in diff.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        if let Some(h) = body.strip_prefix("@@ -") {
            let start = h.split([',', ' ']).next()?.parse::<usize>().ok()?;
            hunks.push(Hunk { old_line: start, old: String::new(), new: String::new() });
            last = None;
            continue;
        }
        let Some(h) = hunks.last_mut() else {
            // The `---`/`+++` header before the first hunk.
            continue;
        };
        let (tag, rest) = body.split_at(body.chars().next().map_or(0, char::len_utf8));
        match tag {
            " " | "-" | "+" => {
                let content = format!("{rest}\n");
                if tag != "+" {
                    h.old.push_str(&content);
                }
                if tag != "-" {
                    h.new.push_str(&content);
                }
                last = tag.chars().next();
            }
            "\\" => match last? {
                ' ' => {
                    h.old.pop();
                    h.new.pop();
                }
                '-' => {
                    h.old.pop();
                }
                _ => {
                    h.new.pop();
                }
            },
            _ => return None,
        }
    }
    Some(hunks)
}

/// The edits that make `text` what a record's `diff` made of the text it was computed for: each hunk's
/// old lines found in `text` — where the hunk says (moved by the hunks before it) or, when the text
/// was edited above, at their only place — replaced by its new lines. `None` when a hunk's old lines are
/// not there or not unambiguously there: the verified change does not fit this text.
pub fn apply_diff(text: &str, diff: &str) -> Option<Vec<crate::lint::Edit>> {
    let hunks = parse_hunks(diff)?;
    let line_starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let mut edits: Vec<crate::lint::Edit> = Vec::new();
    // Lines the text moved by against the record's text, as seen at the previous hunk.
    let mut drift: isize = 0;
    let mut end_of_last = 0;
    for h in hunks {
        if h.old.is_empty() {
            // An insertion into an empty file: only that file.
            if !text.is_empty() || !edits.is_empty() {
                return None;
            }
            edits.push(crate::lint::Edit { range: TextRange::empty(0), content: h.new });
            continue;
        }
        let expected = (h.old_line as isize - 1 + drift).max(0) as usize;
        let at_line = |line: usize| line_starts.get(line).copied().filter(|&s| text[s..].starts_with(&h.old));
        let start = match at_line(expected) {
            Some(s) => s,
            None => {
                let mut found = text.match_indices(h.old.as_str()).map(|(i, _)| i).filter(|&i| i == 0 || text.as_bytes()[i - 1] == b'\n');
                let first = found.next()?;
                if found.next().is_some() {
                    return None;
                }
                first
            }
        };
        if start < end_of_last {
            return None;
        }
        let line = line_starts.partition_point(|&s| s < start);
        drift = line as isize - (h.old_line as isize - 1);
        end_of_last = start + h.old.len();
        edits.push(crate::lint::Edit { range: TextRange::new(start, end_of_last), content: h.new });
    }
    Some(edits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_floor_above_the_measured_call_is_said_as_two_numbers() {
        let round = |issue: f64, call: f64| RoundRecord {
            launch_bound_us: Some(issue),
            baseline_us: Some(call),
            ..RoundRecord::new(1, "autotune", "")
        };
        assert!(launch_bound(&[round(45.0, 48.0)]).unwrap().contains("(45 of its 48 µs a call is launch issue)"));
        let said = launch_bound(&[round(28.0, 9.0)]).unwrap();
        assert!(said.contains("(issuing a call takes 28 µs on the host; a call measures 9 µs)"), "{said}");
    }

    fn apply(text: &str, edits: &[crate::lint::Edit]) -> String {
        let mut out = text.to_string();
        for e in edits.iter().rev() {
            out.replace_range(e.range.start..e.range.end, &e.content);
        }
        out
    }

    const BEFORE: &str =
        "import triton\n\n@triton.jit\ndef k(x, BLOCK: tl.constexpr):\n    pass\n\n\ndef run(x):\n    k[(1,)](x, BLOCK=64)\n";
    const AFTER: &str = "import triton\n\n@triton.autotune(configs=[\n    triton.Config({'BLOCK': 64}),\n], key=[])\n@triton.jit\ndef k(x, BLOCK: tl.constexpr):\n    pass\n\n\ndef run(x):\n    k[(1,)](x)\n";

    #[test]
    fn a_round_says_where_the_harness_spent_its_time_longest_first() {
        let e: Evaluation = serde_json::from_str(
            r#"{"verdict": "correct", "elapsed": {"wall_s": 21.3, "requests": {
                "trusted:reference": {"n": 3, "s": 6.2}, "candidate:run": {"n": 3, "s": 9.75},
                "candidate:describe": {"n": 1, "s": 0.01}}}}"#,
        )
        .unwrap();
        let mut rec = RoundRecord::new(1, "autotune", "screen");
        rec.record_evaluation(&e);
        assert_eq!(rec.seconds, Some(21.3));
        assert_eq!(rec.harness_s, [("candidate:run".to_string(), 9.75), ("trusted:reference".to_string(), 6.2)]);
        let json = serde_json::to_value(&rec).unwrap();
        assert_eq!(json["harness_s"][0], serde_json::json!(["candidate:run", 9.75]));
    }

    #[test]
    fn a_records_diff_rebuilds_the_verified_text_from_the_text_it_was_computed_for() {
        for (before, after) in [
            (BEFORE, AFTER),
            (AFTER, BEFORE),
            // No newline at the end, on either side or both; CRLF lines.
            (BEFORE.trim_end(), AFTER),
            (BEFORE, AFTER.trim_end()),
            (BEFORE.trim_end(), AFTER.trim_end()),
            (&*BEFORE.replace('\n', "\r\n"), &*AFTER.replace('\n', "\r\n")),
            ("", "x = 1\n"),
        ] {
            let diff = unified_diff("k.py", before, after);
            let edits = apply_diff(before, &diff).unwrap_or_else(|| panic!("{diff}"));
            assert_eq!(apply(before, &edits), after, "{diff}");
        }
    }

    #[test]
    fn the_diff_follows_edits_elsewhere_and_refuses_a_text_it_does_not_fit() {
        let diff = unified_diff("k.py", BEFORE, AFTER);
        // Lines added above the kernel and below the launch: the hunks are found where they moved.
        let moved = format!("# a comment\n# another\n{BEFORE}\nprint('done')\n");
        let edits = apply_diff(&moved, &diff).expect("the hunks are still there");
        assert_eq!(apply(&moved, &edits), format!("# a comment\n# another\n{AFTER}\nprint('done')\n"));
        // The launch the stage changed was edited: the verified change no longer fits.
        assert_eq!(apply_diff(&BEFORE.replace("BLOCK=64", "BLOCK=128"), &diff), None);
        // The hunk's lines twice, neither where the diff says: ambiguous, refused.
        let twice = format!("\n\n\n\n\n\n\n\n\n\n\n\n{BEFORE}\n{BEFORE}");
        assert_eq!(apply_diff(&twice, &diff), None);
        assert_eq!(apply_diff(BEFORE, "@@ -1 +1 @@\n?what\n"), None, "not a diff line");
    }

    #[test]
    fn kernel_hash_is_the_outline_range_of_the_named_kernel() {
        let h = kernel_sha256(BEFORE, "k").expect("k is a kernel");
        let start = BEFORE.find("@triton.jit").unwrap();
        let end = BEFORE.find("\n\n\ndef run").unwrap();
        assert_eq!(h, sha256(&BEFORE[start..end]));
        assert_eq!(kernel_sha256(BEFORE, "run"), None, "not a kernel");
    }

    #[test]
    fn a_round_records_the_device_its_timing_ran_on() {
        let e: Evaluation = serde_json::from_str(
            r#"{"verdict": "accepted", "device": {"kind": "cuda", "name": "NVIDIA H200", "index": "5"},
 "timing": {"meaningful": true, "speedup": 1.3, "speedup_ci95": [1.2, 1.4], "device": {"kind": "cuda", "name": "NVIDIA H200", "index": "5"}}}"#,
        )
        .unwrap();
        let mut round = RoundRecord::new(1, "autotune", "BLOCK=128");
        round.record_evaluation(&e);
        assert_eq!(round.timing_device.as_deref(), Some("NVIDIA H200 #5"));
        let untimed: Evaluation =
            serde_json::from_str(r#"{"verdict": "correct", "device": {"kind": "cpu"}, "timing": {"meaningful": false}}"#).unwrap();
        let mut round = RoundRecord::new(2, "autotune", "BLOCK=64");
        round.record_evaluation(&untimed);
        assert_eq!(round.timing_device, None, "nothing timed, no timing device");
    }

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(timestamp(0), "19700101T000000Z");
        assert_eq!(timestamp(1_779_358_502), "20260521T101502Z");
    }
}
