//! Micro benchmark of parse + model build (run: `cargo test --release --test model_bench`).
//!
//! Prints the median of repeated builds for a realistic kernel file and for files scaled 10× and
//! 100×, so a non-linear regression shows up as a growing per-line cost. Under plain
//! `cargo test` it runs each size once (a smoke run); set XF_BENCH_ITERS for more samples.
//!
//! `XF_BENCH_FILES=LIST` (a file of paths, one per line, e.g. the corpus files with `@triton.jit`)
//! instead times parse and build over those files on one thread: the floor under `xeforge check`.

use std::time::Instant;
use xeforge::{model, syntax};

fn kernel_file() -> String {
    let path = format!("{}/tests/fixtures/model/matmul_basic.py", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("fixture")
}

/// Parse and build time over every file named in `list`, one thread, one pass.
fn over_files(list: &str) {
    let names = std::fs::read_to_string(list).expect("readable file list");
    let texts: Vec<String> = names.lines().filter_map(|p| std::fs::read_to_string(p.trim()).ok()).collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let (mut parse, mut build) = (0.0, 0.0);
    for text in &texts {
        let t = Instant::now();
        let tree = syntax::parse(text);
        parse += t.elapsed().as_secs_f64();
        let t = Instant::now();
        std::hint::black_box(model::build(text, &tree));
        build += t.elapsed().as_secs_f64();
    }
    println!(
        "{} files, {:.1} MB: parse {parse:.3} s ({:.1} MB/s), build {build:.3} s",
        texts.len(),
        bytes as f64 / 1e6,
        bytes as f64 / parse / 1e6
    );
}

fn main() {
    if let Ok(list) = std::env::var("XF_BENCH_FILES") {
        return over_files(&list);
    }
    let iters: usize = std::env::var("XF_BENCH_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let unit = kernel_file();
    for copies in [1usize, 10, 100] {
        let mut text = String::new();
        for i in 0..copies {
            // Distinct kernel names so launches resolve one to one.
            text.push_str(&unit.replace("matmul_kernel", &format!("matmul_kernel_{i}")));
        }
        let lines = text.lines().count();
        let mut parse = Vec::with_capacity(iters);
        let mut build = Vec::with_capacity(iters);
        let mut kernels = 0;
        for _ in 0..iters {
            let t = Instant::now();
            let tree = syntax::parse(&text);
            parse.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let m = model::build(&text, &tree);
            build.push(t.elapsed().as_secs_f64() * 1e3);
            kernels = m.kernels.len();
        }
        parse.sort_by(f64::total_cmp);
        build.sort_by(f64::total_cmp);
        let (p, b) = (parse[iters / 2], build[iters / 2]);
        println!(
            "{lines:>6} lines, {kernels:>4} kernels: parse {p:8.3} ms, build {b:8.3} ms, {:6.2} µs/line total",
            (p + b) * 1e3 / lines as f64
        );
        assert_eq!(kernels, copies);
    }
}
