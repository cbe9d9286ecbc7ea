//! Micro benchmark of parse + model build (run: `cargo test --release --test model_bench`).
//!
//! Prints the median of repeated builds for a realistic kernel file and for files scaled 10× and
//! 100×, so a non-linear regression shows up as a growing per-line cost. Under plain
//! `cargo test` it runs each size once (a smoke run); set XF_BENCH_ITERS for more samples.

use std::time::Instant;
use xeforge::{model, syntax};

fn kernel_file() -> String {
    let path = format!("{}/tests/fixtures/model/matmul_basic.py", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("fixture")
}

fn main() {
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
