//! Where one editor keystroke's time goes inside the language server, without the pipe: the
//! stages `xeforge lsp` runs for a didChange (incremental parse, model build reusing the previous
//! version, rules, publishDiagnostics JSON), timed apart on the latency benchmark's file and edits.
//!
//! Run: `cargo test --release --test edit_pipeline_bench -- [LINES]` (XF_BENCH_ITERS edits per
//! kind, default 2 under plain `cargo test` as a smoke run). Prints medians in microseconds.
//!
//! `XF_WEIGH=1` also times, on each edit's model, the rules run afresh against the rules with the
//! previous version's findings (`lint::memo`), and the model built afresh against the model built
//! reusing the previous version (kernels and launches, `model::reuse`): whether each cache pays.
//!
//! `XF_SCOPE_FILES=LIST` checks the rule author's obligation over real code: on every file, for the
//! default Intel target and for the H200 with the CUDA toolchain, the findings of the rules run one
//! kernel at a time (what `xeforge check` does) equal every rule run over all kernels at once
//! (`lint::check_all_at_once`); it fails naming each file where they differ.
//!
//! `XF_REUSE_FILES=LIST` (a file of paths, one per line, e.g. the corpus files with `@triton.jit`)
//! instead replays eight chained edits on each file the way the server does, and fails unless
//! every reused model and finding list equals a fresh analysis of the same text.

use std::time::Instant;
use tower_lsp::lsp_types::Url;
use tree_sitter::{InputEdit, Point, Tree};
use xeforge::knowledge::Knowledge;
use xeforge::lint::LintOptions;
use xeforge::lsp::encoding::Encoding;
use xeforge::{analysis, lint, lsp::wire, model, syntax};

/// The latency benchmark's kernel block (`@I@` = the copy's number), so both time the same module.
const KERNEL: &str = include_str!("lsp/kernel_block.py.tmpl");

fn make_file(lines: usize) -> String {
    let block = KERNEL.matches('\n').count();
    let mut s = String::from("import triton\nimport triton.language as tl\n");
    for i in 0..(lines / block).max(1) {
        s.push_str(&KERNEL.replace("@I@", &i.to_string()));
    }
    s
}

fn point(text: &str, byte: usize) -> Point {
    let before = &text[..byte];
    let row = before.matches('\n').count();
    Point::new(row, byte - before.rfind('\n').map_or(0, |n| n + 1))
}

/// `text` with `insert` at `at` (or `len` bytes removed there), and the tree edit that says so.
fn edit(text: &str, at: usize, insert: &str, len: usize) -> (String, InputEdit) {
    let mut next = text.to_string();
    next.replace_range(at..at + len, insert);
    let e = InputEdit {
        start_byte: at,
        old_end_byte: at + len,
        new_end_byte: at + insert.len(),
        start_position: point(text, at),
        old_end_position: point(text, at + len),
        new_end_position: point(&next, at + insert.len()),
    };
    (next, e)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Chained edits over real files: typing, breaking, a line added above, a bracket removed.
fn reuse_over_files(list: &str) {
    let kb = Knowledge::embedded();
    let opts = LintOptions::default();
    let (mut files, mut edits, mut carried) = (0, 0, 0);
    for path in std::fs::read_to_string(list).expect("readable file list").lines() {
        let Ok(mut text) = std::fs::read_to_string(path.trim()) else { continue };
        files += 1;
        let (_, mut prev) = analysis::analyze_reusing(&text, &syntax::parse(&text), None, None, kb, &opts).unwrap();
        for i in 0..8usize {
            let cut = text.len() * (i * 3 % 8 + 1) / 9;
            let Some(cut) = (cut..text.len()).find(|c| text.is_char_boundary(*c)) else { continue };
            let mut next = text.clone();
            match i % 4 {
                0 => next.insert(cut, 'x'),
                1 => next.insert(cut, '('),
                2 => next.insert(text[..cut].rfind('\n').map_or(0, |n| n + 1), '\n'),
                _ => next = next.replacen("(", "", 1),
            }
            let tree = syntax::parse(&next);
            let (a, r) = analysis::analyze_reusing(&next, &tree, prev.as_ref().map(|p| (p, text.as_str())), None, kb, &opts).unwrap();
            let fresh = analysis::analyze(&next, kb, &opts).unwrap();
            assert_eq!(a.model, fresh.model, "{path}: model after edit {i}");
            assert_eq!(a.diagnostics, fresh.diagnostics, "{path}: findings after edit {i}");
            carried += r.as_ref().map_or(0, |r| r.findings_reused());
            edits += 1;
            prev = r;
            text = next;
        }
    }
    println!("{files} files, {edits} chained edits: every reused result equals a fresh analysis; {carried} kernels' findings carried over");
}

/// One kernel at a time equals all at once, on every file of the list, for two targets.
fn scope_over_files(list: &str) {
    let kb = Knowledge::embedded();
    let targets = [LintOptions::default(), LintOptions { device: "h200".into(), toolchain: "cuda".into(), ..Default::default() }];
    let (mut files, mut kernels, mut findings, mut differ) = (0, 0, 0, Vec::new());
    for path in std::fs::read_to_string(list).expect("readable file list").lines() {
        let Ok(text) = std::fs::read_to_string(path.trim()) else { continue };
        files += 1;
        for opts in &targets {
            let a = analysis::analyze(&text, kb, opts).unwrap();
            let target = analysis::resolve_target(kb, opts).unwrap();
            let all = lint::check_all_at_once(&a.model, &text, target, kb, opts);
            if a.diagnostics != all {
                let codes = |d: &[lint::Diagnostic]| d.iter().map(|d| format!("{}@{}", d.code, d.range.start)).collect::<Vec<_>>();
                let (one, every) = (codes(&a.diagnostics), codes(&all));
                let only_one: Vec<_> = one.iter().filter(|c| !every.contains(c)).collect();
                let only_all: Vec<_> = every.iter().filter(|c| !one.contains(c)).collect();
                differ.push(format!("{path} ({}): one at a time only {only_one:?}, all at once only {only_all:?}", target.device.id));
            }
            kernels += a.model.kernels.len();
            findings += a.diagnostics.len();
        }
    }
    println!("{files} files, {kernels} kernels and {findings} findings over 2 targets; {} differ", differ.len());
    assert!(differ.is_empty(), "kernel-scoped rules that read outside their kernel:\n{}", differ.join("\n"));
}

fn main() {
    if let Ok(list) = std::env::var("XF_SCOPE_FILES") {
        return scope_over_files(&list);
    }
    if let Ok(list) = std::env::var("XF_REUSE_FILES") {
        return reuse_over_files(&list);
    }
    let lines: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(2000);
    let iters: usize = std::env::var("XF_BENCH_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    let kb = Knowledge::embedded();
    let opts = LintOptions::default();
    let uri = Url::parse("file:///tmp/kern.py").unwrap();
    let weigh = std::env::var_os("XF_WEIGH").is_some();
    let target = analysis::resolve_target(kb, &opts).unwrap();
    let base = make_file(lines);
    let mid = base[base.len() / 2..].find("acc = acc * 2.0").unwrap() + base.len() / 2 + "acc = acc".len();
    for (kind, ch) in [("typing", "x"), ("breaking", "(")] {
        let mut text = base.clone();
        let mut tree: Tree = syntax::parse(&text);
        let (_, mut reuse) = analysis::analyze_reusing(&text, &tree, None, None, kb, &opts).unwrap();
        let (mut parse, mut build, mut publish, mut total) = (vec![], vec![], vec![], vec![]);
        let (mut diags, mut carried) = (0, 0);
        let (mut rules_fresh, mut rules_memo, mut model_fresh, mut model_reusing) = (vec![], vec![], vec![], vec![]);
        for v in 0..iters * 2 {
            let (next, e) = if v % 2 == 0 { edit(&text, mid, ch, 0) } else { edit(&text, mid, "", 1) };
            let t0 = Instant::now();
            tree.edit(&e);
            let new_tree = syntax::parse_incremental(&next, &tree);
            let t1 = Instant::now();
            let (a, r) = analysis::analyze_reusing(&next, &new_tree, reuse.as_ref().map(|r| (r, text.as_str())), None, kb, &opts).unwrap();
            let t2 = Instant::now();
            let json = wire::publish_diagnostics(&uri, &a.diagnostics, &next, Encoding::Utf16, v as i32, true);
            let t3 = Instant::now();
            std::hint::black_box(&json);
            // The edit that changes the kernel is the one timed for breaking edits, as in the LSP bench.
            if kind == "typing" || v % 2 == 0 {
                parse.push((t1 - t0).as_secs_f64() * 1e6);
                build.push((t2 - t1).as_secs_f64() * 1e6);
                publish.push((t3 - t2).as_secs_f64() * 1e6);
                total.push((t3 - t0).as_secs_f64() * 1e6);
                diags = a.diagnostics.len();
                carried = r.as_ref().map_or(0, |r| r.findings_reused());
            }
            if weigh && (kind == "typing" || v % 2 == 0) {
                let prev = reuse.as_ref().expect("a reusable analysis");
                let now = r.as_ref().expect("a reusable analysis");
                let t = Instant::now();
                std::hint::black_box(lint::check(&a.model, &next, target, kb, &opts));
                rules_fresh.push(t.elapsed().as_secs_f64() * 1e6);
                let moved_from = |k: &std::sync::Arc<xeforge::model::Kernel>| now.model.moved_from(k).cloned();
                let reusing = lint::Reusing {
                    prev: prev.lint.as_ref().map(|memo| lint::Previous { memo, text: text.as_str() }),
                    tops: now.model.flat.top_ranges(),
                    moved_from: &moved_from,
                };
                let t = Instant::now();
                std::hint::black_box(lint::check_reusing(&a.model, &next, target, kb, &opts, Some(reusing)));
                rules_memo.push(t.elapsed().as_secs_f64() * 1e6);
                let t = Instant::now();
                std::hint::black_box(model::build(&next, &new_tree));
                model_fresh.push(t.elapsed().as_secs_f64() * 1e6);
                let t = Instant::now();
                std::hint::black_box(model::build_reusing(&next, &new_tree, Some((&prev.model, text.as_str()))));
                model_reusing.push(t.elapsed().as_secs_f64() * 1e6);
            }
            let t4 = Instant::now();
            drop(a);
            let dropped = t4.elapsed().as_secs_f64() * 1e6;
            std::hint::black_box(dropped);
            text = next;
            tree = new_tree;
            reuse = r;
        }
        println!(
            "{lines} lines, {kind:>8}: parse {:7.1} µs, analyze {:7.1} µs, publish JSON {:7.1} µs, total {:7.1} µs ({diags} diagnostics, {carried} kernels' findings carried over)",
            median(&mut parse),
            median(&mut build),
            median(&mut publish),
            median(&mut total)
        );
        if weigh {
            println!(
                "{lines} lines, {kind:>8}: rules afresh {:7.1} µs, with the memo {:7.1} µs; model afresh {:7.1} µs, reusing {:7.1} µs",
                median(&mut rules_fresh),
                median(&mut rules_memo),
                median(&mut model_fresh),
                median(&mut model_reusing)
            );
        }
    }
}
