//! The direct parser against tree-sitter over a corpus: agreement and speed
//! (run: `XF_BENCH_FILES=LIST cargo test --release --test direct_parse_bench`).
//!
//! For every file of `LIST` (paths, one per line; without it, the repository's fixtures) this
//! parses with tree-sitter (and copies the tree flat, as `check` does) and with
//! `syntax::direct`, and checks that wherever the direct parser answers, its tree is tree-sitter's
//! node for node. Prints how many files and bytes it answered, each side's time on one thread,
//! and every disagreement; exits non-zero on any.

use std::time::Instant;
use xeforge::syntax::{self, direct, flat::FlatTree};

fn files() -> Vec<String> {
    match std::env::var("XF_BENCH_FILES") {
        Ok(list) => std::fs::read_to_string(list).expect("readable file list").lines().map(|l| l.trim().to_string()).collect(),
        Err(_) => {
            let mut out = Vec::new();
            let mut dirs = vec![std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"))];
            while let Some(d) = dirs.pop() {
                for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        dirs.push(p);
                    } else if p.extension().is_some_and(|x| x == "py") {
                        out.push(p.display().to_string());
                    }
                }
            }
            out.sort();
            out
        }
    }
}

fn main() {
    if std::env::var_os("XF_DIRECT_ONLY").is_some() {
        // Profiling aid: only the direct parser, over the files, a few times.
        let texts: Vec<String> = files().iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
        let t = Instant::now();
        let mut answered = 0;
        for _ in 0..3 {
            answered += texts.iter().filter(|t| direct::parse(t).is_some()).count();
        }
        println!("direct only, 3 passes: {:.3} s, {answered} answers", t.elapsed().as_secs_f64());
        return;
    }
    let (mut n, mut answered, mut bytes, mut bytes_answered) = (0usize, 0usize, 0usize, 0usize);
    let (mut ts_s, mut direct_s, mut direct_all_s) = (0.0f64, 0.0f64, 0.0f64);
    let mut bad = Vec::new();
    let mut why: std::collections::BTreeMap<String, (usize, usize, String)> = Default::default();
    for path in files() {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        n += 1;
        bytes += text.len();
        let t = Instant::now();
        let ts = FlatTree::new(&syntax::parse(&text));
        let ts_time = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let d = direct::parse(&text);
        let d_time = t.elapsed().as_secs_f64();
        direct_all_s += d_time;
        if d.is_none() {
            let (site, at) = direct::last_unsure().unwrap_or_else(|| ("?".into(), 0));
            let line = text[..at.min(text.len())].matches('\n').count() + 1;
            let e = why.entry(site).or_insert((0, 0, format!("{path}:{line}")));
            e.0 += 1;
            e.1 += text.len();
        }
        if let Some(d) = d {
            answered += 1;
            bytes_answered += text.len();
            ts_s += ts_time;
            direct_s += d_time;
            if let Some(diff) = ts.first_difference(&d) {
                bad.push(format!("{path}: {diff}"));
            }
        }
    }
    let mb = |b: usize| b as f64 / 1e6;
    println!(
        "{n} files, {:.1} MB; direct parse answered {answered} files ({:.1}%), {:.1} MB ({:.1}%)",
        mb(bytes),
        100.0 * answered as f64 / n.max(1) as f64,
        mb(bytes_answered),
        100.0 * bytes_answered as f64 / bytes.max(1) as f64
    );
    println!(
        "on the answered files: tree-sitter parse + flat copy {ts_s:.3} s ({:.1} MB/s), direct {direct_s:.3} s ({:.1} MB/s), {:.1}x; direct tries on all files {direct_all_s:.3} s",
        mb(bytes_answered) / ts_s.max(1e-9),
        mb(bytes_answered) / direct_s.max(1e-9),
        ts_s / direct_s.max(1e-9)
    );
    let mut why: Vec<_> = why.into_iter().collect();
    why.sort_by_key(|(_, (_, b, _))| std::cmp::Reverse(*b));
    for (at, (files, b, example)) in why.iter().take(25) {
        println!("declined at {at}: {files} files, {:.2} MB (e.g. {example})", mb(*b));
    }
    for b in &bad {
        println!("DIFFERS {b}");
    }
    assert!(bad.is_empty(), "{} files where the direct parse differs from tree-sitter", bad.len());
}
