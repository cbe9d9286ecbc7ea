//! `xeforge stage autotune` on wrapper-style kernel files (no `class Model`, no spec), through the REAL
//! harness on the CPU interpreter: the problem inferred from the code (entry, inputs, variants, dtypes
//! and where each came from) is what the file says, and the stage reaches a verdict. Skipped, with
//! the reason printed, when no Python with torch and triton is found ($XEFORGE_PYTHON or .venv).

#[path = "common/pyenv.rs"]
mod pyenv;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Runs the stage on a copy of `fixture` (plus `extra` appended lines) and returns its JSON output.
fn stage(fixture: &str, edit: impl Fn(String) -> String) -> Option<(Value, tempfile::TempDir)> {
    stage_with(fixture, edit, &[])
}

fn stage_with(fixture: &str, edit: impl Fn(String) -> String, extra: &[&str]) -> Option<(Value, tempfile::TempDir)> {
    let (out, v, dir) = stage_output(fixture, edit, extra)?;
    assert!(out.status.success(), "exit {:?}\nstdout:\n{v}\nstderr:\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    Some((v, dir))
}

/// [`stage_with`] whatever the exit status: the process's output and its JSON.
fn stage_output(
    fixture: &str,
    edit: impl Fn(String) -> String,
    extra: &[&str],
) -> Option<(std::process::Output, Value, tempfile::TempDir)> {
    let Some(py) = pyenv::harness() else {
        eprintln!("skipped: no Python with torch and triton ($XEFORGE_PYTHON or .venv/bin/python); run tests/harness/install_deps.sh");
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/entries").join(fixture);
    let file = dir.path().join(fixture);
    std::fs::write(&file, edit(std::fs::read_to_string(src).unwrap())).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xeforge"))
        .args(["stage", "autotune"])
        .arg(&file)
        .args(["--device", "cpu", "--format", "json", "--timeout", "300"])
        .args(extra)
        .env("XEFORGE_PYTHON", &py)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: exit {:?}\nstdout:\n{stdout}\nstderr:\n{}", out.status, String::from_utf8_lossy(&out.stderr)));
    Some((out, v, dir))
}

/// The inputs as `name: [dims] dtype` or `name: scalar`.
fn inputs(v: &Value) -> Vec<String> {
    v["problem"]["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| match i["kind"].as_str().unwrap() {
            "tensor" => format!(
                "{}: [{}]",
                i["name"].as_str().unwrap(),
                i["shape"].as_array().unwrap().iter().map(|d| d.as_str().unwrap()).collect::<Vec<_>>().join(", ")
            ),
            "sizes" => format!(
                "{}: sizes [{}]",
                i["name"].as_str().unwrap(),
                i["dims"].as_array().unwrap().iter().map(|d| d.as_str().unwrap()).collect::<Vec<_>>().join(", ")
            ),
            _ => format!("{}: {} scalar", i["name"].as_str().unwrap(), i["py"].as_str().unwrap()),
        })
        .collect()
}

/// The variants as `family dtype NAME=size ...` (sorted names).
fn variants(v: &Value) -> Vec<String> {
    v["problem"]["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let dims =
                x["dims"].as_object().unwrap().iter().map(|(k, n)| format!("{k}={}", n.as_f64().unwrap())).collect::<Vec<_>>().join(" ");
            format!("{} {} {dims}", x["family"].as_str().unwrap(), x["dtype"].as_str().unwrap())
        })
        .collect()
}

fn provenance<'a>(v: &'a Value, key: &str) -> &'a str {
    v["problem"]["provenance"][key].as_str().unwrap_or_else(|| panic!("no provenance `{key}` in {}", v["problem"]["provenance"]))
}

/// The stage reached a harness verdict (on the interpreter: `correct`, applied as correct-only).
fn assert_verdict(v: &Value) {
    let last = v["rounds"].as_array().and_then(|r| r.last()).unwrap_or_else(|| panic!("no round: {v}"));
    assert_eq!(last["verdict"], "correct", "{v}");
    assert_eq!(v["status"], "correct-only", "{v}");
}

#[test]
fn tutorial_add_with_a_main_block() {
    let Some((v, _d)) = stage("add_main.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "add");
    assert_eq!(inputs(&v), ["x: [size]", "y: [size]"]);
    // 98432 from __main__ is a smoke test's size: the interpreter checks a halved copy, and a GPU times
    // it scaled up to 2^24 elements (a call of 98432 is launch-bound there)
    assert_eq!(variants(&v), ["ci float32 size=49216", "bench-gpu float32 size=16777216"]);
    assert!(provenance(&v, "input x").contains("add_main.py:34"), "{}", provenance(&v, "input x"));
    assert_verdict(&v);
}

#[test]
fn softmax_wrapper_with_a_pytest_test() {
    let Some((v, _d)) = stage("softmax_test.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "softmax");
    assert_eq!(inputs(&v), ["x: [n_rows, n_cols]"]);
    assert_eq!(variants(&v), ["ci float16 n_cols=200 n_rows=37", "bench-gpu float16 n_cols=256 n_rows=1762"]);
    assert!(provenance(&v, "dim n_cols").contains("softmax_test.py:20"));
    assert_verdict(&v);
}

#[test]
fn autograd_function_aliased_and_parametrized() {
    let Some((v, _d)) = stage("matmul_autograd.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "_matmul.apply");
    assert_eq!(v["problem"]["entry"]["kind"], "apply");
    assert_eq!(inputs(&v), ["a: [M, K]", "b: [K, N]"]);
    assert_eq!(variants(&v), ["ci float32 K=40 M=16 N=24", "ci float32 K=48 M=64 N=32", "bench-gpu float32 K=512 M=512 N=512"]);
    assert!(provenance(&v, "dim K").contains("matmul_autograd.py:"));
    assert_verdict(&v);
}

/// `Fn.apply` is never written in the file: the line that gives sizes goes above `Fn.forward`, and
/// is read there.
#[test]
fn an_autograd_function_without_call_sites_is_given_sizes_above_its_forward() {
    let untested = |t: String| t[..t.find("matmul = _matmul.apply").unwrap()].to_string() + "matmul = _matmul.apply\n";
    let Some((v, _d)) = stage("matmul_autograd.py", untested) else {
        return;
    };
    let said = v.to_string();
    assert!(said.contains("above `def forward` of `_matmul` in matmul_autograd.py"), "{said}");
    let dims = "    # xeforge: dims M=64 N=32 K=48\n    @staticmethod\n    def forward";
    let Some((v, _d)) = stage("matmul_autograd.py", |t| untested(t).replace("    @staticmethod\n    def forward", dims)) else {
        return;
    };
    assert_eq!(variants(&v)[0], "ci float32 K=48 M=64 N=32", "{v}");
    assert_verdict(&v);
}

/// Sizes from a test function called under `__main__` (once with sizes, then in a loop), its inputs
/// built from its parameters (`-2.3 + 0.5 * torch.randn(shape)`), its `eps` default a float that the
/// spec must write so that YAML reads a number back.
#[test]
fn a_test_function_called_with_sizes_under_main() {
    let Some((v, _d)) = stage("rmsnorm_called_test.py", |t| t) else {
        return;
    };
    assert_eq!(inputs(&v), ["x: [M, N]", "weight: [N]", "eps: float scalar"]);
    assert_eq!(
        variants(&v),
        ["ci float16 M=64 N=512 eps=0.00001", "ci float16 M=64 N=1000 eps=0.00001", "bench-gpu float16 M=1151 N=8192 eps=0.00001"]
    );
    assert_verdict(&v);
}

#[test]
fn layer_norm_with_two_parametrize_decorators() {
    let Some((v, _d)) = stage("layernorm_param.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "layer_norm");
    // eps has a default: it is left to it
    assert_eq!(inputs(&v), ["x: [M, N]", "weight: [N]", "bias: [N]"]);
    assert_eq!(variants(&v), ["ci float16 M=8 N=100", "ci float32 M=8 N=100", "ci float16 M=33 N=128", "bench-gpu float32 M=2080 N=8067"]);
    assert!(provenance(&v, "dim N").contains("layernorm_param.py:24"));
    assert!(v["problem"]["provenance"].get("dtype").is_none(), "the dtypes come from the call sites, not a default");
    assert_verdict(&v);
}

#[test]
fn a_tuple_of_sizes_is_an_input_that_keeps_the_tensors_last_dimension() {
    // `layer_norm(x, w_shape, ...)` with `w_shape = (shape[-1],)`: the tuple is passed as a tuple, and
    // its size is `x`'s last dimension in every variant (scaled down with it for the interpreter).
    let Some((v, _d)) = stage("layernorm_shape_tuple.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "LayerNorm.apply");
    // `M, N = x2.shape` of the rows `x2 = x.reshape(-1, x.shape[-1])` names x's last dimension.
    assert_eq!(inputs(&v)[..2], ["x: [x_0, N]", "normalized_shape: sizes [N]"]);
    let last = variants(&v).last().unwrap().clone();
    assert!(last.starts_with("bench-gpu float16") && last.contains("N=8192 ") && last.contains("x_0=1151"), "{last}");
    assert_verdict(&v);
}

#[test]
fn gelu_sizes_from_a_benchmark_sweep() {
    let Some((v, _d)) = stage("gelu_bench.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "gelu");
    assert_eq!(inputs(&v), ["x: [n]"]);
    assert_eq!(variants(&v), ["ci float32 n=4096", "ci float32 n=32768", "bench-gpu float32 n=2097152"]);
    assert_verdict(&v);
}

#[test]
fn matmul_with_asserts_and_no_call_site() {
    let Some((v, _d)) = stage("matmul_asserts.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "matmul");
    // b's first size is a's second: from `assert a.shape[1] == b.shape[0]`
    assert_eq!(inputs(&v), ["a: [M, K]", "b: [K, N]"]);
    for x in v["problem"]["variants"].as_array().unwrap() {
        assert_eq!(x["dtype"], "float16", "from the dtype assert");
        assert_eq!(x["dims"]["K"].as_f64().unwrap() % 32.0, 0.0, "K % 32 == 0 is asserted: {x}");
    }
    assert!(provenance(&v, "dtype").contains("matmul_asserts.py:26"));
    assert!(provenance(&v, "divisible K").contains("matmul_asserts.py:30"));
    assert!(provenance(&v, "contiguous a").contains("matmul_asserts.py:25"));
    assert_verdict(&v);
}

#[test]
fn module_method_with_constructor_arguments() {
    let Some((v, _d)) = stage("rmsnorm_module.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "RMSNorm.forward");
    assert_eq!(v["problem"]["inits"], serde_json::json!(["hidden_size"]));
    assert_eq!(inputs(&v), ["x: [M, N]"]);
    assert_eq!(variants(&v)[0], "ci float32 M=6 N=200 hidden_size=200");
    assert_verdict(&v);
}

#[test]
fn library_layers_are_entered_through_the_module_that_is_used_with_sizes() {
    // `rms_norm_forward` launches the kernel, but only `RMSNorm(1536)(x)` under __main__ gives sizes:
    // the stage climbs function → autograd.Function → module and says so.
    let Some((v, _d)) = stage("rmsnorm_library_layers.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "RMSNorm.forward");
    assert_eq!(v["problem"]["inits"], serde_json::json!(["hidden_size"]));
    assert_eq!(inputs(&v), ["x: [x_0, x_1, x_2]"]);
    assert_eq!(variants(&v).last().unwrap(), "bench-gpu float32 hidden_size=6762 x_0=9 x_1=282 x_2=6762");
    let notes = v["problem"]["notes"].to_string();
    assert!(notes.contains("entered through `RMSNorm.forward`, which calls `RMSNormFunction.apply`"), "{notes}");
    assert_verdict(&v);
}

#[test]
fn plain_class_method() {
    let Some((v, _d)) = stage("attention_method.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "RowAttention.scores");
    assert_eq!(inputs(&v), ["q: [T, D]", "k: [T, D]"]);
    assert_eq!(variants(&v)[0], "ci float32 D=48 T=20 head_dim=48");
    assert_verdict(&v);
}

#[test]
fn scalar_argument_and_a_loop_over_sizes() {
    let Some((v, _d)) = stage("scale_scalar.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "axpy");
    assert_eq!(inputs(&v), ["alpha: float scalar", "x: [n]", "y: [n]"]);
    assert_eq!(variants(&v), ["ci float32 alpha=0.5 n=1000", "ci float32 alpha=0.5 n=4096", "bench-gpu float32 alpha=0.5 n=16777216"]);
    assert_verdict(&v);
}

/// A kernel launched only by an autograd.Function's `backward`: the entry is the forward (`Scale.apply`,
/// whose call site gives the sizes), and the spec says `backward: true`, so the harness compares the
/// inputs' gradients, which only the backward kernel computes (`dw` by atomic adds, restored after each
/// config a search times). A rewrite of it that breaks the
/// gradient is `incorrect` (`tests/harness/cases.py`, `scale_grad`).
#[test]
fn a_backward_kernel_is_verified_through_the_forward_with_gradients() {
    let Some((v, d)) = stage_with("autograd_backward.py", |t| t, &["--kernel", "_scale_bwd"]) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "Scale.apply");
    assert_eq!(v["problem"]["entry"]["backward"], true);
    assert_eq!(inputs(&v), ["x: [n_rows, n_cols]", "w: [w_0]"]);
    let spec = std::fs::read_to_string(d.path().join(".xeforge/problems/autograd_backward-Scale.apply.yaml")).unwrap();
    assert!(spec.contains("\nentry: Scale.apply\nbackward: true\n"), "{spec}");
    // The weight's gradient is summed with atomics: a search would add once per config timed.
    assert!(v["rounds"].to_string().contains("restore_value=['dw_ptr']"), "{v}");
    assert_verdict(&v);
    // The forward kernel of the same file is verified forward only.
    let Some((v, _d)) = stage_with("autograd_backward.py", |t| t, &["--kernel", "_scale_fwd"]) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "Scale.apply");
    assert!(v["problem"]["entry"].get("backward").is_none(), "{}", v["problem"]["entry"]);
    assert_verdict(&v);
}

/// Keyword arguments a call site passes other than their defaults (`0.2`, `inplace=True`) are inputs:
/// the harness calls the entry as the user's code does, so the in-place path is the one verified, and
/// a flag is written `true` (not a dimension of 1). One passed at its default (`block=1024`) is not.
#[test]
fn flags_and_numbers_a_call_site_passes_instead_of_the_defaults() {
    let Some((v, d)) = stage("leaky_relu_flags.py", |t| t) else {
        return;
    };
    assert_eq!(inputs(&v), ["x: [n]", "slope: float scalar", "inplace: bool scalar"]);
    assert_eq!(
        variants(&v),
        [
            "ci float32 inplace=1 n=1000 slope=0.2",
            "ci float32 inplace=1 n=3000 slope=0.2",
            "bench-gpu float32 inplace=1 n=16777216 slope=0.2"
        ]
    );
    let spec = std::fs::read_to_string(d.path().join(".xeforge/problems/leaky_relu_flags-leaky_relu.yaml")).unwrap();
    assert!(spec.contains("  inplace: {value: true}\n") && spec.contains("dims: {\"n\": 1000, slope: 0.2}"), "{spec}");
    assert!(v["rounds"].to_string().contains("restore_value=['out_ptr']"), "{v}");
    assert_verdict(&v);
}

/// A wrapper that picks a kernel by dtype (`if x.dtype == torch.float16: _relu_half[...]`): the stage
/// working on `_relu_half` draws float16 inputs, read off the branch around its launch. Told float32
/// instead, the harness says the original never reached the kernel rather than check the other one.
#[test]
fn a_kernel_the_wrapper_picks_by_dtype_is_checked_on_inputs_that_reach_it() {
    let Some((v, _d)) = stage_with("relu_by_dtype.py", |t| t, &["--kernel", "_relu_half"]) else {
        return;
    };
    assert!(provenance(&v, "dtype").starts_with("float16"), "{}", provenance(&v, "dtype"));
    assert_verdict(&v);
    // The float32 kernel sits in the `else` branch: the default dtype reaches it.
    let Some((v, _d)) = stage_with("relu_by_dtype.py", |t| t, &["--kernel", "_relu_fp32"]) else {
        return;
    };
    assert!(provenance(&v, "dtype").starts_with("float32"), "{}", provenance(&v, "dtype"));
    assert_verdict(&v);
    let forced = |t: String| t.replace("def relu(", "# xeforge: dims dtype=float32\ndef relu(");
    let Some((_, v, _d)) = stage_output("relu_by_dtype.py", forced, &["--kernel", "_relu_half"]) else {
        return;
    };
    assert_eq!(v["status"], "error", "{v}");
    let said = v["summary"].as_str().unwrap();
    assert!(said.contains("the original never launched `_relu_half`") && said.contains("ran `_relu_fp32` instead"), "{said}");
}

/// A library's rotary embedding with no caller (flash-attention's layout): one input's shape is
/// unpacked two ways (dense or packed, by an optional argument), `sin` is only asserted equal to
/// `cos`, and the asserts bound the sizes (`rotary_dim *= 2; assert rotary_dim <= headdim`). The
/// sizes drawn meet every assert, the notes say which moved, and the launch inside
/// `torch.cuda.device(x.device.index)` runs on the interpreter.
#[test]
fn a_library_rotary_with_no_caller_gets_sizes_its_asserts_allow() {
    let Some((v, _d)) = stage("rotary_varlen.py", |t| t) else {
        return;
    };
    assert_eq!(
        inputs(&v),
        ["x: [batch, seqlen, nheads, headdim]", "cos: [seqlen_ro, rotary_dim]", "sin: [seqlen_ro, rotary_dim]"],
        "the dense unpack is read, the packed one is another case"
    );
    for variant in v["problem"]["variants"].as_array().unwrap() {
        let d = |k: &str| variant["dims"][k].as_f64().unwrap();
        assert!(2.0 * d("rotary_dim") <= d("headdim") && d("headdim") <= 256.0 && d("seqlen_ro") >= d("seqlen"), "{variant}");
    }
    let notes = v["problem"]["notes"].to_string();
    assert!(notes.contains("to meet the code's asserts") && notes.contains("`rotary_dim <= headdim`"), "{notes}");
    assert_verdict(&v);
}

/// A kernel and its wrapper under a module-level `if`/`else` (the module imports without Triton), the
/// wrapper defined in both branches: the stage finds the launching one, and `libdevice.llrint` rounds
/// on the interpreter.
#[test]
fn a_kernel_under_a_module_level_guard() {
    let Some((v, _d)) = stage("guarded_quantize.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "quantize_rows");
    assert_eq!(inputs(&v), ["x: [rows, cols]"]);
    assert_verdict(&v);
}

/// A histogram no caller sizes: the wrapper flattens its input, so any shape does (one dimension is
/// taken); `assert not values.is_floating_point()` makes it integers; `bins` sizes an allocation, so a
/// variant chooses it as it chooses a dimension, instead of asking for it.
#[test]
fn a_flattened_integer_input_and_an_int_that_sizes_the_output() {
    let Some((v, _d)) = stage("bincount_flat.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "count_values");
    assert_eq!(inputs(&v), ["values: [values_0]", "bins: int scalar"]);
    assert_eq!(v["problem"]["inputs"][0]["dtype"], "int64");
    assert!(variants(&v)[0].contains("bins="), "{:?}", variants(&v));
    assert_verdict(&v);
}

/// A module's table is part of the problem's size: indices into a 32000 × 4096 table are checked
/// on a table shrunk with them (their range names the table's size, so it shrinks too), and timed at
/// the sizes the call gives, not scaled up as a smoke test's would be, in the dtype the constructor
/// call names.
#[test]
fn a_table_the_module_holds_counts_toward_the_sizes() {
    let Some((v, _d)) = stage("embedding_table.py", |t| t) else {
        return;
    };
    assert_eq!(inputs(&v), ["ids: [ids_0, ids_1]"]);
    assert_eq!(v["problem"]["inputs"][0]["range"], serde_json::json!(["0", "num_embeddings"]), "{}", v["problem"]["inputs"][0]);
    let dims = |i: usize, k: &str| v["problem"]["variants"][i]["dims"][k].as_f64().unwrap();
    assert!(dims(0, "num_embeddings") * dims(0, "embedding_dim") <= 65536.0, "{:?}", variants(&v));
    assert_eq!((dims(1, "num_embeddings"), dims(1, "ids_1")), (32000.0, 1024.0), "{:?}", variants(&v));
    // The constructor's `dtype=torch.float16` is the module's, so the variants'.
    assert!(variants(&v).iter().all(|x| x.contains(" float16 ")), "{:?}", variants(&v));
    assert_verdict(&v);
}

/// Inputs read only through `numel()` are one-dimensional, and one the kernel reads at the same
/// offsets takes that shape (`up` beside `gate`). The backward kernel's entry is the public function
/// over the `autograd.Function`, and it is still verified through the gradients.
#[test]
fn a_flat_autograd_op_entered_through_its_public_function() {
    for (kernel, backward) in [("_gated_silu_fwd", false), ("_gated_silu_bwd", true)] {
        let Some((v, _d)) = stage_with("gated_silu_autograd.py", |t| t, &["--kernel", kernel]) else {
            return;
        };
        assert_eq!(inputs(&v), ["gate: [total]", "up: [total]"], "{kernel}");
        assert_eq!(v["problem"]["entry"].get("backward").is_some_and(|b| b == true), backward, "{kernel}: {}", v["problem"]["entry"]);
        assert_verdict(&v);
    }
}

/// `torch.library.triton_op` over `wrap_triton(kernel)[grid]`, with postponed annotations: the
/// interpreter reads the string `tl.constexpr` as Triton's compiler does (it failed on `tl.arange`).
#[test]
fn a_custom_op_over_wrap_triton_with_string_annotations() {
    let Some((v, _d)) = stage("triton_op_wrap.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "mul_add");
    assert_eq!(inputs(&v), ["x: [x_0]", "y: [y_0]", "alpha: float scalar"]);
    assert_verdict(&v);
}

#[test]
fn public_op_over_a_private_launcher() {
    let Some((v, _d)) = stage("relu_private_launcher.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "relu");
    assert_eq!(inputs(&v), ["x: [x_0, x_1]"]);
    assert_eq!(variants(&v)[0], "ci float32 x_0=3 x_1=50");
    assert_verdict(&v);
}

#[test]
fn sizes_from_inline_dims_comments() {
    let Some((v, _d)) = stage("rowsum_dims_comment.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "row_sum");
    assert_eq!(variants(&v), ["ci float16 C=300 R=12", "bench-gpu float16 C=8192 R=4096"]);
    let origins: Vec<&str> = v["problem"]["variants"].as_array().unwrap().iter().map(|x| x["origin"].as_str().unwrap()).collect();
    assert!(origins[0].contains("rowsum_dims_comment.py:16") && origins[1].contains("rowsum_dims_comment.py:17"), "{origins:?}");
    assert_verdict(&v);
}

#[test]
fn a_launch_outside_any_function_says_what_to_add() {
    let Some((v, _d)) = stage("launch_at_module_level.py", |t| t) else {
        return;
    };
    assert_eq!(v["status"], "needs-input");
    assert!(v["summary"].as_str().unwrap().contains("no function of launch_at_module_level.py launches `fill_kernel`"), "{v}");
}

#[test]
fn a_kernel_launched_from_the_module_beside_it_is_told_where() {
    let Some((v, _d)) = stage("split_kernels.py", |t| t) else {
        return;
    };
    // Alone in its directory: no launch anywhere, the usual sentence.
    assert!(v["summary"].as_str().unwrap().contains("no function of split_kernels.py launches `swish_kernel`"), "{v}");
    let (v, _d) = stage_beside("split_kernels.py", "split_ops.py").unwrap();
    assert_eq!(v["status"], "needs-input");
    let said = v["summary"].as_str().unwrap();
    assert!(said.contains("`swish_kernel` is launched from split_ops.py, line 11, not from split_kernels.py"), "{said}");
    assert!(said.contains("a stage edits one file"), "{said}");
}

/// [`stage`] on `fixture` with `other` copied beside it.
fn stage_beside(fixture: &str, other: &str) -> Option<(Value, tempfile::TempDir)> {
    let py = pyenv::harness()?;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/entries");
    for f in [fixture, other] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_xeforge"))
        .args(["stage", "autotune"])
        .arg(dir.path().join(fixture))
        .args(["--device", "cpu", "--format", "json"])
        .env("XEFORGE_PYTHON", &py)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    Some((serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}")), dir))
}

#[test]
fn unknown_shapes_are_asked_once_then_read_from_the_line_added() {
    let Some((v, _d)) = stage("copy_unknown_shape.py", |t| t) else {
        return;
    };
    assert_eq!(v["status"], "needs-input");
    let said = v["summary"].as_str().unwrap();
    let line = said.lines().find(|l| l.trim_start().starts_with("# xeforge: dims")).unwrap_or_else(|| panic!("{said}")).trim().to_string();
    assert_eq!(line, "# xeforge: dims src=[src_0] src_0=1024 dst=[dst_0] dst_0=1024 blocks=<value>");
    // The user pastes the line with a value (and the shapes the kernel reads: blocks × 128 elements).
    let filled = "# xeforge: dims src=[n] dst=[n] n=1024 blocks=8";
    let Some((v, _d)) = stage("copy_unknown_shape.py", |t| t.replace("def copy_into", &format!("{filled}\ndef copy_into"))) else {
        return;
    };
    assert_eq!(inputs(&v), ["src: [n]", "dst: [n]", "blocks: int scalar"]);
    assert_eq!(variants(&v)[0], "ci float32 blocks=8 n=1024");
    assert_verdict(&v);
}

/// Runs the stage on a copy of an example from `examples/kernels` (text output, exit status, stderr).
fn example(name: &str) -> Option<(std::process::Output, tempfile::TempDir)> {
    let Some(py) = pyenv::harness() else {
        eprintln!("skipped: no Python with torch and triton");
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kernels").join(name);
    std::fs::copy(src, dir.path().join(name)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xeforge"))
        .args(["stage", "autotune"])
        .arg(dir.path().join(name))
        .args(["--device", "cpu"])
        .env("XEFORGE_PYTHON", &py)
        .output()
        .unwrap();
    Some((out, dir))
}

#[test]
fn readme_softmax_example_runs_with_no_spec_and_no_model() {
    let Some((out, _d)) = example("softmax_clean.py") else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("problem: entry `softmax`") && stdout.contains("input x: [n_rows, n_cols]"), "{stdout}");
    assert!(stdout.contains("autotune: correct on the CPU interpreter"), "{stdout}");
}

/// The README's GEMM (a wrapper, device-side tensor descriptors, no spec, no `Model`): its problem is
/// inferred from the wrapper and the stage reaches a verdict on the CPU interpreter.
#[test]
fn readme_matmul_example_is_inferred_and_the_stage_reaches_a_verdict() {
    let Some((out, d)) = example("matmul_xpu.py") else {
        return;
    };
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let spec = std::fs::read_to_string(d.path().join(".xeforge/problems/matmul_xpu-matmul.yaml")).unwrap();
    assert!(
        spec.contains("entry: matmul\n")
            && spec.contains("  a: {shape: [M, K], dtype: inherit}\n")
            && spec.contains("  b: {shape: [K, \"N\"], dtype: inherit}\n"),
        "{spec}"
    );
    assert!(spec.contains("    dtype: float16\n") && spec.contains("matmul_xpu.py:43"), "{spec}");
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("autotune: correct on the CPU interpreter"), "{stdout}");
}

#[test]
fn an_input_rebound_to_a_view_keeps_the_call_sites_shape() {
    let Some((v, _d)) = stage("rmsnorm_reshaped.py", |t| t) else {
        return;
    };
    // `rows, width = X.shape` reads the 2-D view, not the 3-D input: the call site's shape stands, its
    // last dimension named by `X.view(-1, hidden)`; the sizes the call site gave the same value
    // (hidden size in X and W) are scaled together.
    assert_eq!(inputs(&v), ["X: [X_0, X_1, hidden]", "W: [W_0]"]);
    assert_eq!(variants(&v), ["ci bfloat16 W_0=128 X_0=4 X_1=128 hidden=128", "bench-gpu bfloat16 W_0=1024 X_0=4 X_1=512 hidden=1024"]);
    assert_verdict(&v);
}

#[test]
fn a_module_constructed_and_moved_in_one_expression() {
    let Some((v, _d)) = stage("module_cuda_chain.py", |t| t) else {
        return;
    };
    // `m = BiasAdd(768).cuda()`: the constructor under `.cuda()` gives n_cols.
    assert_eq!(v["problem"]["entry"]["name"], "BiasAdd.forward");
    assert_eq!(inputs(&v), ["x: [x_0, x_1]"]);
    assert_eq!(variants(&v), ["ci float32 n_cols=768 x_0=64 x_1=768", "bench-gpu float32 n_cols=14189 x_0=1182 x_1=14189"]);
    assert_verdict(&v);
}

/// A kernel kept in a class (`@staticmethod @triton.jit`), launched through `cls.`, by a classmethod
/// called on the class: the entry is `LossOps.huber` (no instance, no `cls` input); the decorator goes
/// under `@staticmethod`. The kernel reads the two inputs at the same offsets: they share one size.
#[test]
fn kernels_and_entry_as_class_level_methods() {
    let Some((v, _d)) = stage("static_methods.py", |t| t) else {
        return;
    };
    assert_eq!(v["problem"]["entry"]["name"], "LossOps.huber");
    // `delta` keeps its default: no call site passes it.
    assert_eq!(inputs(&v), ["pred: [total]", "target: [total]"]);
    assert_verdict(&v);
    let record: Value = serde_json::from_slice(&std::fs::read(v["record"].as_str().unwrap()).unwrap()).unwrap();
    let diff = record["diff"].as_str().unwrap();
    assert!(diff.contains("     @staticmethod\n+    @triton.autotune("), "{diff}");
}

/// Class indices drawn with `randint(0, 5000)` beside 5000 logits per row: their range is the logits'
/// dimension, so the interpreter's smaller copy draws indices it can read. The logits are overwritten
/// with their gradient in place; the rewrite's list restores them for a search.
#[test]
fn class_indices_are_drawn_within_the_dimension_they_index() {
    let Some((v, _d)) = stage("cross_entropy_inplace.py", |t| t) else {
        return;
    };
    assert_eq!(inputs(&v), ["logits: [n_rows, n_cols]", "target: [target_0]"]);
    let target = &v["problem"]["inputs"][1];
    assert_eq!(target["range"], serde_json::json!(["0", "n_cols"]), "{target}");
    assert!(variants(&v)[0].contains("n_cols=625"), "the interpreter's copy is smaller: {:?}", variants(&v));
    let notes: Vec<&str> =
        v["rounds"].as_array().unwrap().iter().flat_map(|r| r["notes"].as_array().unwrap()).filter_map(|n| n.as_str()).collect();
    assert!(notes.iter().any(|n| n.contains("restore_value=['X_ptr']")), "{notes:?}");
    assert_verdict(&v);
}
