//! Grid readings and autotune keys of every kernel of the generalisation suite
//! (`tests/bench/stages/general`): which tuned name drives which grid factor, and why.

use std::path::Path;
use xeforge::cover::autotune::{self, space::TuneBackend};
use xeforge::cover::outline::Outline;

fn plan(name: &str) -> (String, autotune::Plan) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bench/stages/general").join(format!("{name}.py"));
    let text = std::fs::read_to_string(&path).unwrap();
    let o = Outline::build(&text);
    let k = autotune::pick_kernel(&o, None).unwrap();
    let p = autotune::plan(&text, &o, k, TuneBackend::Cuda).unwrap();
    (text, p)
}

/// (kernel, the name each grid factor reads, in grid order; how many are settled by the kernel's code
/// rather than by a unique value; the autotune key).
const EXPECTED: &[(&str, &[&str], usize, &[&str])] = &[
    ("attention_fwd", &["BLOCK_M"], 1, &["N_CTX"]),
    ("bias_gelu_chain", &["BLOCK", "BLOCK"], 0, &["n", "n_cols"]),
    ("bmm_fp16", &["BLOCK_M", "BLOCK_N"], 2, &["M", "N", "K"]),
    ("conv2d_implicit_gemm", &["BLOCK_M", "BLOCK_N"], 1, &["BATCH", "H", "W", "C", "K_OUT"]),
    ("cross_entropy", &[], 0, &["V"]),
    ("gemm_bf16_2d", &["BM", "BN"], 1, &["M", "N", "K"]),
    ("gemm_fp32_floordiv", &["BLOCK_M", "BLOCK_N"], 2, &["M", "N", "K"]),
    ("gemm_fp32_ieee", &["BLOCK_M", "BLOCK_N"], 2, &["M", "N", "K"]),
    ("gemm_grouped_fp16", &["BLOCK_SIZE_M", "BLOCK_SIZE_N"], 2, &["M", "N", "K"]),
    ("gemm_nt_helper", &["BLOCK_M", "BLOCK_N"], 2, &["M", "N", "K"]),
    ("gemm_splitk", &["BLOCK_M", "BLOCK_N", "SPLIT_K"], 2, &["M", "N", "K"]),
    ("gemm_unmasked_fp16", &["BLOCK_M", "BLOCK_N"], 1, &["N", "K"]),
    ("layernorm_affine", &[], 0, &["N"]),
    ("linear_bias_relu", &["BLOCK_M", "BLOCK_N"], 2, &["M", "N", "K"]),
    ("rmsnorm_bf16", &[], 0, &["n_cols"]),
    ("rotary", &["BLOCK_H"], 0, &["n_heads"]),
    ("row_sum", &["BLOCK_M"], 1, &["M", "N"]),
    ("softmax_looped", &[], 0, &["N"]),
    ("softmax_rows", &[], 0, &["n_cols"]),
    ("swiglu", &["BLOCK_SIZE"], 0, &["hidden"]),
    ("total_sum", &["BLOCK"], 0, &["n"]),
    ("transpose", &["BLOCK_M", "BLOCK_N"], 2, &["M", "N"]),
    ("vector_add", &["BLOCK_SIZE"], 0, &["n_elements"]),
];

#[test]
fn every_kernel_of_the_suite_has_its_grid_read_and_a_shape_only_key() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bench/stages/general");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".py") && n != "torch_equivalents.py")
        .map(|n| n.trim_end_matches(".py").to_string())
        .collect();
    on_disk.sort();
    let listed: Vec<String> = EXPECTED.iter().map(|e| e.0.to_string()).collect();
    assert_eq!(on_disk, listed, "every kernel of the suite is listed here");
    for (name, reading, by_code, key) in EXPECTED {
        let (text, p) = plan(name);
        assert_eq!(
            p.readings.first().map(|r| r.as_slice()).unwrap_or(&[]),
            reading.iter().map(|s| s.to_string()).collect::<Vec<_>>().as_slice(),
            "{name}: {:?}",
            p.grid
        );
        assert_eq!(p.readings.len(), 1, "{name}: the kernel settles every factor");
        let settled =
            p.grid.factors.iter().filter(|f| matches!(f.basis, autotune::grid::Basis::Dim(_) | autotune::grid::Basis::Axis(_))).count();
        assert_eq!(settled, *by_code, "{name}: {:?}", p.grid.factors);
        assert_eq!(p.key, key.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "{name}");
        // Naive launches with literal tiles and warps: the start config is the original, never timed again.
        assert!(p.start_is_original, "{name}");
        // GEMM-shaped kernels get the GEMM space whatever their tiles are called (BM, BLOCK_SIZE_M, ...).
        if name.contains("gemm") || name.contains("bmm") || name.contains("linear") {
            assert_eq!(p.input.kind, autotune::space::KernelKind::Gemm, "{name}");
        }
        // The rewrite leaves no tuned literal in any grid, and it still parses.
        let out = p.render(&text, std::slice::from_ref(&p.input.start)).unwrap();
        let o = Outline::build(&out);
        assert!(o.syntax_errors.is_empty(), "{name}:\n{out}");
        for f in &p.grid.factors {
            let src = &p.grid.sources[f.source];
            assert!(
                out.contains(&format!("['{}']", reading[p.grid.factors.iter().position(|g| g == f).unwrap()])),
                "{name}: {src:?}\n{out}"
            );
        }
    }
}

#[test]
fn grids_in_helpers_and_local_functions_read_meta() {
    let (text, p) = plan("gemm_nt_helper");
    let out = p.render(&text, std::slice::from_ref(&p.input.start)).unwrap();
    assert!(out.contains("linear_kernel[lambda META: (triton.cdiv(M, META['BLOCK_M']), triton.cdiv(N, META['BLOCK_N']))]"), "{out}");
    let (text, p) = plan("transpose");
    let out = p.render(&text, std::slice::from_ref(&p.input.start)).unwrap();
    assert!(out.contains("return (triton.cdiv(M, meta['BLOCK_M']), triton.cdiv(N, meta['BLOCK_N']))"), "{out}");
    let (text, p) = plan("bias_gelu_chain");
    let out = p.render(&text, std::slice::from_ref(&p.input.start)).unwrap();
    assert_eq!(out.matches("bias_gelu_kernel[lambda META: ((n + (META['BLOCK'] - 1)) // META['BLOCK'],)]").count(), 2, "{out}");
}

#[test]
fn an_open_factor_is_enumerated_most_plausible_first() {
    // Neither masks nor cdiv in the kernel name M, and both tiles lie along axis 0: two readings.
    let src = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(a_ptr, c_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):\n    pid = tl.program_id(0)\n    pid_m = pid // 7\n    pid_n = pid % 7\n    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n    tl.store(c_ptr + offs_m[:, None] * 7 + offs_n[None, :], tl.load(a_ptr + offs_m[:, None]))\n\ndef run(a, c, P):\n    k[(triton.cdiv(P, 32),)](a, c, P, P, BLOCK_M=32, BLOCK_N=32)\n";
    let o = Outline::build(src);
    let p = autotune::plan(src, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
    assert!(p.grid.is_open());
    assert_eq!(p.readings, vec![vec!["BLOCK_M".to_string()], vec!["BLOCK_N".to_string()]]);
    assert_eq!(p.grid.open_names(), vec!["BLOCK_M".to_string(), "BLOCK_N".to_string()]);
}
