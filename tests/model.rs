//! Model builder tests: one fixture per edge case found in real Triton code (`e01`–`e17`: forms
//! seen in open-source kernel libraries) and one per supported form. Each test states the model facts that matter for the rules; the larger
//! models are also pinned by a compact snapshot (`tests/fixtures/model/snapshots`).

use serde_json::{Value as Json, json};
use xeforge::model::{self, FileModel, Kernel, Launch, TlOpKind, Value, shape_string};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/model/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn build(name: &str) -> FileModel {
    model::build_text(&fixture(name))
}

fn kernel<'a>(m: &'a FileModel, name: &str) -> &'a Kernel {
    m.kernels.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("no kernel {name}: {:?}", names(m)))
}

fn names(m: &FileModel) -> Vec<&str> {
    m.kernels.iter().map(|k| k.qualified_name.as_str()).collect()
}

fn constexprs(k: &Kernel) -> Vec<&str> {
    k.params.iter().filter(|p| p.is_constexpr).map(|p| p.name.as_str()).collect()
}

fn launches_of<'a>(m: &'a FileModel, name: &str) -> Vec<&'a Launch> {
    m.launches.iter().filter(|l| m.kernels[l.kernel].name == name).collect()
}

/// `BLOCK_M=128 grf_mode='256' | num_warps=32 num_stages=3`
fn config_line(c: &model::Config) -> String {
    let kw: Vec<String> = c.kwargs.iter().map(|b| format!("{}={}", b.name, b.value)).collect();
    let opts: Vec<String> = c.options.iter().map(|b| format!("{}={}", b.name, b.value)).collect();
    let mut s = format!("{} | {}", kw.join(" "), opts.join(" "));
    if c.opaque {
        s.push_str(" (opaque)");
    }
    s
}

fn config_lines(k: &Kernel) -> Vec<String> {
    k.autotune.as_ref().map(|a| a.configs.iter().map(config_line).collect()).unwrap_or_default()
}

fn op_line(op: &model::TlOp) -> String {
    let shape = |s: &Option<Vec<model::Expr>>| s.as_ref().map_or("?".to_string(), |s| shape_string(s));
    match &op.kind {
        TlOpKind::Dot { a_shape, b_shape, a_dtype, b_dtype, input_precision, has_acc_arg, inplace_accumulate, acc_dtype, .. } => {
            format!(
                "tl.dot a={} b={} a_dtype={} b_dtype={} precision={} acc_arg={} inplace={} acc_dtype={}",
                shape(a_shape),
                shape(b_shape),
                a_dtype.as_deref().unwrap_or("?"),
                b_dtype.as_deref().unwrap_or("?"),
                input_precision.as_ref().map_or("-".to_string(), |b| b.value.to_string()),
                has_acc_arg,
                inplace_accumulate.is_some(),
                acc_dtype.as_deref().unwrap_or("?"),
            )
        }
        TlOpKind::Arange { start, end } => format!("tl.arange({start}, {end})"),
        TlOpKind::Zeros { shape, dtype } => format!("{} {} {}", op.callee, shape_string(shape), dtype.as_deref().unwrap_or("?")),
        TlOpKind::BoundaryCheck { value } => format!("boundary_check={} on {}", value.value, op.callee),
        TlOpKind::Int32Offset { stride } => format!("int32 offset * {stride}"),
        TlOpKind::Reduce { func, shape: s, .. } => format!("{func} of {}", shape(s)),
        TlOpKind::ProgramId { axis, num_programs } => {
            format!("{}({})", if *num_programs { "tl.num_programs" } else { "tl.program_id" }, axis.map_or("?".into(), |a| a.to_string()))
        }
        TlOpKind::MakeTensorDescriptor { experimental } => format!("{} experimental={experimental}", op.callee),
        _ => op.callee.clone(),
    }
}

fn launch_line(m: &FileModel, l: &Launch) -> String {
    let grid = l.grid.as_ref().map_or("?".to_string(), |g| shape_string(g));
    let pos: Vec<String> = l.positional_args.iter().map(|b| format!("{}={}", b.name, b.value)).collect();
    let kw: Vec<String> = l.kwargs.iter().map(|b| format!("{}={}", b.name, b.value)).collect();
    let mut s =
        format!("{} grid={} pos={} [{}] kw=[{}]", m.kernels[l.kernel].qualified_name, grid, l.positional, pos.join(", "), kw.join(", "));
    if l.opaque_kwargs {
        s.push_str(" **opaque");
    }
    if l.grid_uses_device_count {
        s.push_str(" device-count-grid");
    }
    s
}

/// A compact, reviewable view of the whole model.
fn summary(m: &FileModel) -> Json {
    let kernels: Vec<Json> = m
        .kernels
        .iter()
        .map(|k| {
            let params: Vec<String> = k
                .params
                .iter()
                .map(|p| {
                    let mut s = p.name.clone();
                    if let Some(a) = &p.annotation {
                        s.push_str(&format!(": {a}"));
                    }
                    if let Some(d) = &p.default {
                        s.push_str(&format!(" = {}", d.value));
                    }
                    s
                })
                .collect();
            json!({
                "name": k.qualified_name,
                "params": params,
                "jit_options": k.jit_options.iter().map(|b| format!("{}={}", b.name, b.value)).collect::<Vec<_>>(),
                "autotune": k.autotune.as_ref().map(|a| json!({
                    "configs": a.configs.iter().map(config_line).collect::<Vec<_>>(),
                    "complete": a.configs_complete,
                    "key": a.key,
                    "prune_configs_by": a.has_prune_configs_by,
                    "other_kwargs": a.other_kwargs,
                    "opaque_kwargs": a.opaque_kwargs,
                    "functional": a.functional,
                })),
                "heuristics": k.heuristics.iter().flat_map(|h| h.names.clone()).collect::<Vec<_>>(),
                "ops": k.ops.iter().map(op_line).collect::<Vec<_>>(),
                "persistent": k.is_persistent,
                "syntax_errors": k.has_syntax_errors,
            })
        })
        .collect();
    json!({
        "kernels": kernels,
        "launches": m.launches.iter().map(|l| launch_line(m, l)).collect::<Vec<_>>(),
        "constants": m.constants.iter().map(|b| format!("{}={}", b.name, b.value)).collect::<Vec<_>>(),
        "has_syntax_errors": m.has_syntax_errors,
    })
}

macro_rules! snapshot {
    ($name:expr, $model:expr) => {
        insta::with_settings!({snapshot_path => "fixtures/model/snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_json_snapshot!($name, summary(&$model));
        });
    };
}

#[test]
fn matmul_basic_reads_configs_shapes_and_launch() {
    let m = build("matmul_basic.py");
    let k = kernel(&m, "matmul_kernel");
    assert_eq!(constexprs(k), ["BLOCK_M", "BLOCK_N", "BLOCK_K"]);
    assert_eq!(
        config_lines(k),
        ["BLOCK_M=128 BLOCK_N=256 BLOCK_K=32 grf_mode='256' | num_warps=32 num_stages=3", "BLOCK_M=64 BLOCK_N=64 BLOCK_K=32 | num_warps=8",]
    );
    assert_eq!(k.autotune.as_ref().map(|a| a.key.clone()), Some(vec!["M".into(), "N".into(), "K".into()]));
    let dot = k.ops.iter().find(|o| o.callee == "tl.dot").map(op_line);
    assert_eq!(
        dot.as_deref(),
        Some(
            "tl.dot a=[BLOCK_M, BLOCK_K] b=[BLOCK_K, BLOCK_N] a_dtype=? b_dtype=? precision=- acc_arg=false inplace=true acc_dtype=float32"
        )
    );
    assert_eq!(m.launches.len(), 1);
    assert_eq!(launches_of(&m, "matmul_kernel")[0].positional, 8);
    let constants: Vec<String> = m.constants.iter().map(|b| format!("{}={}", b.name, b.value)).collect();
    assert_eq!(constants, ["BLOCK=64", "GROUP=8"]);
    snapshot!("matmul_basic", m);
}

#[test]
fn e01_heuristics_over_comprehension_over_jit_options() {
    let m = build("e01_stacked_heuristics_comprehension.py");
    let k = kernel(&m, "chunk_fwd_kernel_h");
    let at = k.autotune.as_ref().expect("autotune");
    // BKV_LIST comes from a call at import: nothing is guessed.
    assert!(!at.configs_complete);
    assert!(at.configs.is_empty());
    assert!(at.opaque_kwargs);
    assert_eq!(at.key, ["H", "K", "V"]);
    assert_eq!(k.heuristics[0].names, ["USE_INITIAL_STATE", "STORE_FINAL_STATE"]);
    assert_eq!(k.jit_options[0].name, "do_not_specialize");
    assert_eq!(k.jit_options[0].value, Value::List(vec![Value::Str("T".into())]));

    let lit = kernel(&m, "chunk_literal_sizes");
    let at = lit.autotune.as_ref().expect("autotune");
    assert!(at.configs_complete);
    assert_eq!(at.configs.len(), 2 * 2 * 4 * 3);
    assert_eq!(config_line(&at.configs[0]), "BK=32 BV=32 | num_warps=1 num_stages=2");
    assert_eq!(config_line(&at.configs[47]), "BK=64 BV=64 | num_warps=8 num_stages=4");
    // Each comprehension binding points at the list element that produced it.
    let text = fixture("e01_stacked_heuristics_comprehension.py");
    let nw = at.configs[5].get("num_warps").expect("num_warps");
    assert_eq!(&text[nw.range.start..nw.range.end], "2");
    assert_eq!(&text[nw.site.start..nw.site.end], "num_warps=num_warps");
    let bk = at.configs[47].get("BK").expect("BK");
    assert_eq!(&text[bk.range.start..bk.range.end], "64");

    let l = launches_of(&m, "chunk_fwd_kernel_h");
    assert_eq!(l.len(), 1);
    assert_eq!(l[0].positional, 0);
    assert_eq!(l[0].kwargs.len(), 9);
    assert_eq!(l[0].grid.as_ref().map(Vec::len), Some(3), "grid from a one-line def");
}

#[test]
fn e02_bare_imports_and_helper_configs() {
    let m = build("e02_bare_imports_helper_configs.py");
    let k = kernel(&m, "matmul_kernel");
    let at = k.autotune.as_ref().expect("autotune via bare `autotune`");
    // `tuning_configs` is chosen by an env-var `if`: not enumerable.
    assert!(!at.configs_complete);
    assert!(at.has_prune_configs_by);
    assert_eq!(k.heuristics[0].names, ["EVEN_K"]);

    let io = kernel(&m, "io_kernel");
    assert_eq!(
        config_lines(io),
        [
            "BLOCK_M=64 BLOCK_N=64 | num_warps=4 num_stages=3",
            "BLOCK_M=16 BLOCK_N=32 | num_warps=2 num_stages=5",
            "BLOCK_M=32 BLOCK_N=32 | num_warps=4 num_stages=4",
        ]
    );
    assert!(io.autotune.as_ref().is_some_and(|a| a.configs_complete));
}

#[test]
fn e03_foreign_tuner_is_not_triton_autotune() {
    let m = build("e03_non_triton_tuner.py");
    let k = kernel(&m, "mm_kernel");
    assert!(k.autotune.is_none());
    assert_eq!(k.range.start, fixture("e03_non_triton_tuner.py").find("@libentry").unwrap());
    // `tle.program_id` is flag-gems' extension, not `tl`.
    assert!(!k.ops.iter().any(|o| o.callee == "tl.program_id"));
    assert!(k.ops.iter().any(|o| o.callee == "tl.arange"));
}

#[test]
fn e04_helper_settings_and_kwargs_splat() {
    let m = build("e04_helper_num_warps_kwargs.py");
    let l = launches_of(&m, "_rms_norm_forward_kernel");
    assert_eq!(l.len(), 1);
    assert!(l[0].opaque_kwargs);
    assert_eq!(l[0].get("num_warps").map(|b| &b.value), Some(&Value::Unknown));
    assert_eq!(l[0].get("BLOCK_SIZE").map(|b| &b.value), Some(&Value::Unknown));
    assert_eq!(l[0].positional, 5);
}

#[test]
fn e05_json_configs_are_opaque() {
    let m = build("e05_json_launch_kwargs.py");
    let l = launches_of(&m, "fused_moe_kernel");
    assert_eq!(l.len(), 1);
    assert!(l[0].opaque_kwargs);
    assert_eq!(l[0].get("MUL_ROUTED_WEIGHT").map(|b| &b.value), Some(&Value::Bool(false)));
}

#[test]
fn e06_functional_autotune_through_tuner_variable() {
    let m = build("e06_functional_autotune_backslash.py");
    let k = kernel(&m, "_attn_fwd");
    let at = k.autotune.as_ref().expect("tuner(_attn_fwd) attaches the autotune");
    assert!(at.functional);
    assert!(at.configs_complete);
    // BM*BN <= 8192 keeps (128,32),(128,64),(256,32); × 2 stages × 3 warps.
    assert_eq!(at.configs.len(), 3 * 2 * 3);
    assert_eq!(config_line(&at.configs[0]), "BLOCK_M=128 BLOCK_N=32 grf_mode='256' | num_stages=3 num_warps=8");
    assert_eq!(at.key, ["N_CTX", "BLOCK_DMODEL"]);
    let l = launches_of(&m, "_attn_fwd");
    assert_eq!(l.len(), 1, "launch through the attribute the tuned kernel was stored in");
    assert_eq!(l[0].get("BLOCK_DMODEL").map(|b| &b.value), Some(&Value::Int(64)));
    let dot = k.ops.iter().find(|o| o.callee == "tl.dot").map(op_line).unwrap_or_default();
    assert!(dot.starts_with("tl.dot a=[BLOCK_M, BLOCK_DMODEL] b=[BLOCK_DMODEL, BLOCK_N]"), "{dot}");
}

#[test]
fn e07_kernels_nested_in_functions_and_classes() {
    let m = build("e07_nested_kernels.py");
    assert_eq!(names(&m), ["_variance_update.kernel", "Operator.softmax_kernel"]);
    let local = kernel(&m, "kernel");
    assert_eq!(constexprs(local), ["BLOCK"], "function-local `import triton.language as tl`");
    let l = launches_of(&m, "kernel");
    assert_eq!(l.len(), 1, "launched through the global it was stored in");
    assert_eq!(l[0].get("BLOCK").map(|b| &b.value), Some(&Value::Int(1024)));
    let cls = kernel(&m, "softmax_kernel");
    assert_eq!(constexprs(cls), ["BLOCK_SIZE"]);
    assert!(cls.ops.iter().any(|o| o.callee == "tl.arange"));
    let l = launches_of(&m, "softmax_kernel");
    assert_eq!(l.len(), 1);
    // num_warps comes from an if-chain: unknown, not the first assignment.
    assert_eq!(l[0].get("num_warps").map(|b| &b.value), Some(&Value::Unknown));
}

#[test]
fn e08_conditional_duplicate_definitions() {
    let m = build("e08_conditional_defs_libdevice.py");
    assert_eq!(names(&m), ["exp", "exp", "unflatten_program_id"]);
    assert!(m.kernels[0].ops.iter().any(|o| o.callee == "libdevice.fast_expf"));
    assert!(m.kernels[1].ops.iter().any(|o| o.callee == "tl.exp"));
    let u = kernel(&m, "unflatten_program_id");
    assert_eq!(u.param("Y").and_then(|p| p.default.as_ref()).map(|d| &d.value), Some(&Value::None));
    assert!(m.imports.libdevice.contains(&"tldevice".to_string()));
}

#[test]
fn e09_libdevice_spellings() {
    let m = build("e09_libdevice_module_var.py");
    assert_eq!(names(&m), ["triton_cast", "gelu_kernel"]);
    let callees: Vec<&str> = kernel(&m, "gelu_kernel").ops.iter().map(|o| o.callee.as_str()).collect();
    assert!(callees.contains(&"libdevice.tanh"), "{callees:?}");
    assert!(callees.contains(&"libdevice.erf"), "{callees:?}");
    assert!(callees.contains(&"tl.math.exp"), "{callees:?}");
}

#[test]
fn e10_launch_targets_resolve_only_to_kernels() {
    let m = build("e10_launch_targets.py");
    let lines: Vec<String> = m.launches.iter().map(|l| launch_line(&m, l)).collect();
    assert_eq!(
        lines,
        [
            "_qk_norm_kernel grid=[4, 2] pos=2 [x_ptr=?, n=?] kw=[BLOCK_H=128, enable_fp_fusion=True]",
            "_tuned_kernel grid=[1] pos=2 [x_ptr=?, n=?] kw=[]",
            "_qk_norm_kernel grid=[1] pos=3 [x_ptr=?, n=16, BLOCK_H=64] kw=[]",
        ]
    );
}

#[test]
fn e11_jit_autotune_and_config_keyword_forms() {
    let m = build("e11_jit_and_autotune_options.py");
    let k = kernel(&m, "scale_kernel");
    let opts: Vec<String> = k.jit_options.iter().map(|b| format!("{}={}", b.name, b.value)).collect();
    assert_eq!(opts, ["do_not_specialize=['n']", "debug=True", "noinline=False"]);
    let at = k.autotune.as_ref().expect("autotune");
    assert_eq!(at.other_kwargs, ["restore_value", "reset_to_zero"]);
    let lines = config_lines(k);
    assert_eq!(lines[0], "BLOCK=128 | num_warps=4 num_stages=2 num_ctas=1 maxnreg=128");
    assert_eq!(lines[1], "BLOCK=256 | num_warps=8 num_stages=3 pre_hook=?");
    assert!(at.configs[1].has_option("pre_hook"));
}

#[test]
fn e12_library_helpers_are_kernels_and_strings_are_not() {
    let m = build("e12_runtime_codegen.py");
    assert_eq!(names(&m), ["add_func"]);
    assert!(m.launches.is_empty());
}

#[test]
fn e13_module_constexpr_globals_and_defaults() {
    let m = build("e13_module_constexpr_globals.py");
    let constants: Vec<String> = m.constants.iter().map(|b| format!("{}={}", b.name, b.value)).collect();
    assert_eq!(constants, ["_GROUP=2", "_SCALE=1.5", "_NAME='grpo'", "_FLAGS=(True, False)"]);
    let k = kernel(&m, "grpo_loss_kernel");
    assert_eq!(k.param("BLOCK_N").and_then(|p| p.default.as_ref()).map(|d| &d.value), Some(&Value::Int(4096)));
    assert_eq!(k.param("MODE").and_then(|p| p.default.as_ref()).map(|d| &d.value), Some(&Value::Int(2)));
    let sets = model::binding_sets(&m, 0);
    assert_eq!(sets.len(), 1);
    assert_eq!(sets[0].value("BLOCK_N"), Value::Int(4096));
    assert_eq!(sets[0].value("_SCALE"), Value::Float(1.5));
}

#[test]
fn e14_params_named_like_options_bind_like_params() {
    let m = build("e14_params_named_like_options.py");
    let k = kernel(&m, "flash_kernel");
    assert_eq!(constexprs(k), ["BLOCK", "num_warps", "num_stages"]);
    let sets = model::binding_sets(&m, 0);
    assert_eq!(sets[0].value("num_warps"), Value::Int(4));
}

#[test]
fn e15_triton_source_in_strings_is_not_code() {
    let m = build("e15_source_in_strings.py");
    assert!(m.kernels.is_empty());
    assert!(!m.has_syntax_errors);
}

#[test]
fn e16_invalid_llm_output_keeps_parseable_kernels() {
    let m = build("e16_invalid_llm_output.py");
    assert!(m.has_syntax_errors);
    assert!(!m.syntax_errors.is_empty());
    let good = kernel(&m, "good_kernel");
    assert!(!good.has_syntax_errors);
    assert!(m.kernels.iter().any(|k| k.name == "softmax_kernel"));
    let l = launches_of(&m, "good_kernel");
    assert!(!l.is_empty());
    // `num_warps = 6` is a simple local assignment: its literal is the binding.
    assert_eq!(l[0].get("num_warps").map(|b| &b.value), Some(&Value::Int(6)));
}

#[test]
fn e17_other_dsls_are_not_triton() {
    let m = build("e17_other_dsl_jit.py");
    assert_eq!(names(&m), ["real_kernel"]);
}

#[test]
fn bare_jit_alias_is_triton_only_when_imported_from_triton() {
    let m = build("bare_jit_import.py");
    let k = kernel(&m, "k");
    assert_eq!(config_lines(k), ["BLOCK=32 | num_warps=2"]);
}

#[test]
fn persistent_kernels_descriptors_and_block_pointers() {
    let m = build("persistent_descriptors.py");
    let pm = kernel(&m, "persistent_matmul");
    assert!(pm.is_persistent);
    let lines: Vec<String> = pm.ops.iter().map(op_line).collect();
    assert!(lines.contains(&"tl.make_tensor_descriptor experimental=false".to_string()), "{lines:?}");
    assert!(lines.contains(&"tl._experimental_make_tensor_descriptor experimental=true".to_string()), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.starts_with("tl.dot a=[BLOCK_M, BLOCK_K] b=[BLOCK_K, BLOCK_N]") && l.contains("acc_arg=true")),
        "{lines:?}"
    );
    let bp = kernel(&m, "block_ptr_kernel");
    assert!(bp.is_persistent);
    let lines: Vec<String> = bp.ops.iter().map(op_line).collect();
    assert!(lines.contains(&"boundary_check=(True, False) on tl.load".to_string()), "{lines:?}");
    assert!(lines.contains(&"boundary_check=(0, 1) on tl.load".to_string()), "{lines:?}");
    assert!(lines.contains(&"tl.make_block_ptr".to_string()));
    assert!(lines.contains(&"tl.advance".to_string()));
    assert!(lines.contains(&"tl.sum of [BLOCK_M, BLOCK_K]".to_string()), "{lines:?}");
    let launches: Vec<&Launch> = m.launches.iter().collect();
    assert!(launches.iter().all(|l| l.grid_uses_device_count), "NUM_SMS from the device and a literal 132");
}

#[test]
fn dot_precision_fp64_and_int32_offsets() {
    let m = build("dot_precision_fp64.py");
    let k = kernel(&m, "precision_kernel");
    let dots: Vec<String> = k.ops.iter().filter(|o| o.callee == "tl.dot").map(op_line).collect();
    assert_eq!(
        dots,
        [
            "tl.dot a=[BLOCK, BLOCK] b=[BLOCK, BLOCK] a_dtype=float32 b_dtype=float32 precision='ieee' acc_arg=false inplace=false acc_dtype=?",
            "tl.dot a=[BLOCK, BLOCK] b=[BLOCK, BLOCK] a_dtype=? b_dtype=float16 precision='ieee' acc_arg=false inplace=false acc_dtype=float32",
        ]
    );
    assert_eq!(k.ops.iter().filter(|o| matches!(o.kind, TlOpKind::Float64)).count(), 1);

    let text = fixture("dot_precision_fp64.py");
    let o = kernel(&m, "offsets_kernel");
    let flagged: Vec<&str> =
        o.ops.iter().filter(|op| matches!(op.kind, TlOpKind::Int32Offset { .. })).map(|op| &text[op.range.start..op.range.end]).collect();
    assert_eq!(flagged, ["row * stride_row", "tl.program_id(1) * stride_row"]);
}

#[test]
fn comprehension_helper_range_and_concatenation() {
    let m = build("comprehension_forms.py");
    let k = kernel(&m, "tiled");
    let at = k.autotune.as_ref().expect("autotune");
    assert!(at.configs_complete);
    assert_eq!(
        config_lines(k),
        [
            "BLOCK_M=64 BLOCK_N=32 | num_warps=4 num_stages=3",
            "BLOCK_M=64 BLOCK_N=32 | num_warps=8 num_stages=3",
            "BLOCK_M=128 BLOCK_N=64 | num_warps=4 num_stages=3",
            "BLOCK_M=128 BLOCK_N=64 | num_warps=8 num_stages=3",
            "BLOCK_M=64 BLOCK_N=32 | num_warps=2",
            "BLOCK_M=16 BLOCK_N=16 | num_warps=4",
            "BLOCK_M=64 BLOCK_N=16 | num_warps=4",
        ]
    );
    // Tuple unpacking points each name at its own element.
    let text = fixture("comprehension_forms.py");
    let bn = at.configs[2].get("BLOCK_N").expect("BLOCK_N");
    assert_eq!(&text[bn.range.start..bn.range.end], "64");
    assert_eq!(&text[bn.range.start - 6..bn.range.end], "(128, 64");
    // The helper's parameter is bound from the call site's literal.
    let stages = at.configs[0].get("num_stages").expect("num_stages");
    assert_eq!(&text[stages.range.start..stages.range.end], "3");

    let opaque = kernel(&m, "opaque_configs");
    let at = opaque.autotune.as_ref().expect("autotune");
    assert!(!at.configs_complete);
    assert!(at.configs.is_empty(), "configs appended in a loop are not guessed");
}

#[test]
fn launch_values_resolve_constants_and_locals() {
    let m = build("launch_values.py");
    let text = fixture("launch_values.py");
    let l = launches_of(&m, "add_kernel");
    assert_eq!(l.len(), 3);
    let bs = l[0].get("BLOCK_SIZE").expect("BLOCK_SIZE");
    assert_eq!(bs.value, Value::Int(256));
    assert_eq!(&text[bs.range.start..bs.range.end], "256", "points at the module constant's literal");
    let nw = l[0].get("num_warps").expect("num_warps");
    assert_eq!(nw.value, Value::Int(8));
    assert_eq!(&text[nw.range.start..nw.range.end], "8", "points at the local assignment's literal");
    assert_eq!(l[1].positional_args.last().map(|b| (b.name.as_str(), b.value.clone())), Some(("BLOCK_SIZE", Value::Int(512))));
    assert_eq!(l[1].get("num_stages").map(|b| &b.value), Some(&Value::Unknown));
    assert!(l[2].opaque_kwargs);
    assert_eq!(l[2].grid, Some(vec![model::Expr::Const(Value::Int(4))]));

    let sets = model::binding_sets(&m, 0);
    assert_eq!(sets.len(), 3);
    assert_eq!(sets.iter().map(|s| s.value("BLOCK_SIZE")).collect::<Vec<_>>(), [Value::Int(256), Value::Int(512), Value::Int(1024)]);
    assert_eq!(sets[0].value("EVEN"), Value::Bool(false), "constexpr default");
    assert_eq!(sets[0].launch, Some(0));
    assert_eq!(sets[0].config, None);
}

#[test]
fn binding_sets_cross_configs_with_launches_and_hide_heuristics() {
    let m = build("matmul_basic.py");
    let sets = model::binding_sets(&m, 0);
    assert_eq!(sets.len(), 2, "2 configs × 1 launch");
    assert_eq!(sets[0].config, Some(0));
    assert_eq!(sets[1].value("BLOCK_M"), Value::Int(64));
    let arange_end = kernel(&m, "matmul_kernel")
        .ops
        .iter()
        .find_map(|o| match &o.kind {
            TlOpKind::Arange { end, .. } => Some(end.clone()),
            _ => None,
        })
        .expect("arange");
    assert_eq!(sets[0].eval(&arange_end), Value::Int(128));
    assert!(model::binding_sets(&m, 99).is_empty());

    let m = build("e01_stacked_heuristics_comprehension.py");
    let sets = model::binding_sets(&m, 0);
    assert!(sets.iter().all(|s| s.get("USE_INITIAL_STATE").is_none()));
    let lit = m.kernels.iter().position(|k| k.name == "chunk_literal_sizes").unwrap();
    assert_eq!(model::binding_sets(&m, lit).len(), 48, "48 configs, never launched");
}

#[test]
fn a_launch_through_fn_skips_the_outermost_autotuner() {
    let text = "import triton\nimport triton.language as tl\n\n\
                @triton.autotune(configs=[triton.Config({'BLOCK': 64}), triton.Config({'BLOCK': 128})], key=['n'])\n\
                @triton.jit\ndef k(x, n, BLOCK: tl.constexpr):\n    pass\n\n\
                def run(x, n):\n    k[(1,)](x, n)\n    k.fn[(1,)](x, n, BLOCK=256)\n";
    let m = model::build_text(text);
    let via_fn: Vec<bool> = m.launches.iter().map(|l| l.via_fn).collect();
    assert_eq!(via_fn, [false, true]);
    let k = kernel(&m, "k");
    assert!(k.autotunes(&m.launches[0]) && !k.autotunes(&m.launches[1]));
    // Both configs pair with the plain launch; the `.fn` launch runs alone with its own BLOCK.
    let pairs: Vec<(Option<usize>, Option<usize>, Value)> =
        model::binding_sets(&m, 0).iter().map(|s| (s.config, s.launch, s.value("BLOCK"))).collect();
    assert_eq!(pairs, [(Some(0), Some(0), Value::Int(64)), (Some(1), Some(0), Value::Int(128)), (None, Some(1), Value::Int(256))]);
}

/// A module-level `def` made a kernel by an assignment, as Unsloth writes them: a kernel named as the
/// assignment binds it (what its launches use), the `def`'s own name kept as Triton's; autotune and
/// heuristics applied by calls around the JIT are its own.
#[test]
fn a_def_made_a_kernel_by_an_assignment_is_the_kernel_it_binds() {
    let head = "import triton\nimport triton.language as tl\nfrom triton import jit\n\n";
    let body = ":\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, 1.0, mask=offs < n)\n\n";
    for (def, stmt, name) in [
        ("_add_impl", "add_kernel = triton.jit(_add_impl)", "add_kernel"),
        ("_add_impl", "add_kernel = jit(_add_impl)", "add_kernel"),
        ("_k", "_k = triton.jit(_k)", "_k"),
    ] {
        let text =
            format!("{head}def {def}(x_ptr, n, BLOCK: tl.constexpr){body}{stmt}\n\ndef run(x, n):\n    {name}[(1,)](x, n, BLOCK=64)\n");
        let m = model::build_text(&text);
        assert_eq!(names(&m), [name], "{stmt}");
        let k = kernel(&m, name);
        assert_eq!(constexprs(k), ["BLOCK"], "{stmt}");
        assert!(k.ops.iter().any(|o| o.callee == "tl.arange"), "{stmt}");
        let made = k.made_by.as_ref().unwrap();
        assert_eq!((made.def_name.as_str(), &text[made.statement.start..made.statement.end]), (def, stmt), "{stmt}");
        assert_eq!(&text[k.name_range.start..k.name_range.end], def, "{stmt}");
        // The kernel's text: its `def` through the statement that makes it, as decorators and `def` are.
        let whole = &text[k.range.start..k.range.end];
        assert!(whole.starts_with(&format!("def {def}(")) && whole.ends_with(stmt), "{stmt}: {whole}");
        let l = launches_of(&m, name);
        assert_eq!(l.len(), 1, "{stmt}");
        assert_eq!(l[0].get("BLOCK").map(|b| &b.value), Some(&Value::Int(64)), "{stmt}");
    }

    let text = format!(
        "{head}def _impl(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr){body}\
         k = triton.autotune(configs=[triton.Config({{'BLOCK': 64}}), triton.Config({{'BLOCK': 128}})], key=['n'])(\
         triton.heuristics({{'EVEN': lambda a: a['n'] % a['BLOCK'] == 0}})(triton.jit(_impl)))\n\n\
         def run(x, n):\n    k[lambda m: (triton.cdiv(n, m['BLOCK']),)](x, n)\n"
    );
    let m = model::build_text(&text);
    let k = kernel(&m, "k");
    let at = k.autotune.as_ref().expect("the autotune applied around the JIT is the kernel's");
    assert!(at.functional);
    assert_eq!(config_lines(k), ["BLOCK=64 | ", "BLOCK=128 | "]);
    assert_eq!(k.heuristics.iter().flat_map(|h| h.names.clone()).collect::<Vec<_>>(), ["EVEN"]);
    let l = launches_of(&m, "k");
    assert!(l.len() == 1 && l[0].via_tuner && k.autotunes(l[0]), "{l:?}");

    // Not at module level, or of a `def` decorated otherwise: no kernel.
    for text in [
        format!("{head}def _impl(x_ptr, n, BLOCK: tl.constexpr){body}def make():\n    k = triton.jit(_impl)\n    return k\n"),
        format!("{head}@other\ndef _impl(x_ptr, n, BLOCK: tl.constexpr){body}k = triton.jit(_impl)\n"),
        format!("{head}k = triton.jit(_impl)\n\ndef _impl(x_ptr, n, BLOCK: tl.constexpr){body}"),
    ] {
        assert!(model::build_text(&text).kernels.is_empty(), "{text}");
    }
}

#[test]
fn suppressions_and_obfuscated_calls() {
    let m = build("suppressions_obfuscation.py");
    let sup: Vec<(usize, Vec<String>)> = m.suppressions.iter().map(|s| (s.line, s.codes.clone())).collect();
    assert_eq!(sup, [(12, vec!["XF101".to_string(), "XF2".to_string()]), (13, vec![])]);
    // Reflection whose result is never called reaches no compute op (XF901 in a user's file).
    assert!(m.obfuscated_calls.is_empty(), "{:?}", m.obfuscated_calls);
    // Called, the whole chain to `__import__('torch')` is reported; the literal `getattr(_fn, "relu")`
    // is ordinary code, and `eval("1 + 1")` names no torch.
    let called =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/model/suppressions_obfuscation.py"))
            .unwrap()
            + "\ny = conv2d(1)\nz = relu(1)\n";
    let m = model::build_text(&called);
    let funcs: Vec<&str> = m.obfuscated_calls.iter().map(|c| c.func.as_str()).collect();
    assert_eq!(funcs, ["__import__", "getattr", "getattr"]);
}

#[test]
fn non_triton_files_are_empty_models() {
    let m = build("not_triton.py");
    assert_eq!(m, FileModel::default());
    assert_eq!(model::build_text(""), FileModel::default());
}

#[test]
fn snapshots_of_edge_cases() {
    for name in [
        "e01_stacked_heuristics_comprehension.py",
        "e06_functional_autotune_backslash.py",
        "e07_nested_kernels.py",
        "e16_invalid_llm_output.py",
        "persistent_descriptors.py",
    ] {
        let m = build(name);
        snapshot!(name.trim_end_matches(".py"), m);
    }
}

#[test]
fn syntax_error_keeps_the_kernels_before_and_after() {
    let text = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef a(x, B: tl.constexpr):\n    tl.arange(0, B)\n\ndef broken(:\n    pass\n\n@triton.jit\ndef b(x, B: tl.constexpr):\n    tl.arange(0, B)\n";
    let m = model::build_text(text);
    assert!(m.has_syntax_errors);
    assert_eq!(names(&m), ["a", "b"]);
}

#[test]
fn bad_input_never_panics() {
    // Binary-ish bytes, lossy-decoded as an editor or the CLI would.
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    text.push_str("\ntriton\n@triton.jit\ndef k(\x00");
    let _ = model::build_text(&text);
    for s in [
        "triton",
        "@triton.jit",
        "@triton.jit\ndef",
        "k[",
        "triton.Config(",
        "@triton.autotune(configs=[x for x in",
        "\u{feff}triton\r\r\n",
    ] {
        let _ = model::build_text(s);
    }
}

#[test]
fn random_truncations_of_fixtures_never_panic() {
    let mut rng = fastrand::Rng::with_seed(7);
    for name in [
        "matmul_basic.py",
        "e01_stacked_heuristics_comprehension.py",
        "persistent_descriptors.py",
        "comprehension_forms.py",
        "dot_precision_fp64.py",
    ] {
        let text = fixture(name);
        for _ in 0..60 {
            let mut cut = rng.usize(0..=text.len());
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let start = rng.usize(0..=cut / 4);
            let start = (0..=start).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
            let piece = format!("import triton\n{}", &text[start..cut]);
            let m = model::build_text(&piece);
            for k in 0..m.kernels.len() {
                let _ = model::binding_sets(&m, k);
            }
        }
    }
}

#[test]
fn large_files_build() {
    // 50k lines: many small kernels and launches. Linear-time behaviour is measured by the bench;
    // here the point is that it completes and finds everything.
    let unit = "@triton.jit\ndef k{i}(x_ptr, B: tl.constexpr):\n    o = tl.arange(0, B)\n    tl.store(x_ptr + o, tl.load(x_ptr + o))\n\n\ndef run{i}(x):\n    k{i}[(1,)](x, B=64)\n\n\n";
    let mut text = String::from("import triton\nimport triton.language as tl\n\n");
    let n = 5000;
    for i in 0..n {
        text.push_str(&unit.replace("{i}", &i.to_string()));
    }
    assert!(text.lines().count() >= 50_000);
    let m = model::build_text(&text);
    assert_eq!(m.kernels.len(), n);
    assert_eq!(m.launches.len(), n);
    assert!(m.launches.iter().enumerate().all(|(i, l)| l.kernel == i));
}
