//! The autotune stage on launches written the way people write them (`tests/fixtures/launch_forms`):
//! what each plan tunes, how every launch reads the tuned values after the rewrite, and, on the CPU
//! interpreter through the real harness, that the rewritten file is correct on the inferred problem.

#[path = "common/pyenv.rs"]
mod pyenv;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use xeforge::cover::autotune::{self, space::ConfigValue, space::TuneBackend};
use xeforge::cover::outline::Outline;
use xeforge::cover::{OutcomeStatus, StageRequest, StageRunner};
use xeforge::harness::{DeviceKind, EvaluateArgs, Harness, HarnessSettings, Verdict};
use xeforge::knowledge::Knowledge;

/// Each candidate of `original` (named `fixture`) judged by the real harness on the CPU interpreter
/// against `spec`; `None` (the test skipped) without a Python that has torch, triton and PyYAML.
async fn judge_on_the_interpreter(
    fixture: &str,
    original: &str,
    spec: &str,
    candidates: &[&str],
) -> Option<Vec<xeforge::harness::Evaluation>> {
    let Some(py) = pyenv::with("torch, triton, yaml") else {
        eprintln!("skipped: no Python with torch, triton and PyYAML ($XEFORGE_PYTHON or .venv/bin/python)");
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let h = Harness::new(&HarnessSettings { python: Some(py), ..Default::default() }, dir.path()).unwrap();
    let path = dir.path().join(fixture);
    std::fs::write(&path, original).unwrap();
    let spec_path = dir.path().join("spec.yaml");
    std::fs::write(&spec_path, spec).unwrap();
    let mut verdicts = Vec::new();
    for (i, cand) in candidates.iter().enumerate() {
        let cand_path = dir.path().join(format!("candidate_{i}.py"));
        std::fs::write(&cand_path, cand).unwrap();
        let mut args = EvaluateArgs::new(path.clone(), cand_path);
        args.spec = Some(spec_path.clone());
        args.family = Some("ci".into());
        args.device = DeviceKind::Cpu;
        args.timeout = 300;
        verdicts.push(h.evaluate(&args).await.unwrap());
    }
    Some(verdicts)
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/launch_forms").join(name)
}

/// (file, the start config's tuned names and values, num_warps, lines the file has once every tile is
/// doubled).
const EXPECTED: &[(&str, &[(&str, i64)], u32, &[&str])] = &[
    (
        "two_sites.py",
        &[("BLOCK", 256)],
        4,
        &[
            "        relu_kernel[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, n)\n    else:",
            "    else:\n        relu_kernel[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, n)\n",
        ],
    ),
    ("positional.py", &[("BLOCK", 512)], 4, &["    sq_kernel[lambda META: ((n + META['BLOCK'] - 1) // META['BLOCK'],)](x, y, n)\n"]),
    // A grid written as a tuple without parentheses: the lambda returns the whole tuple.
    (
        "bare_tuple.py",
        &[("BLOCK_M", 16), ("BLOCK_N", 64)],
        4,
        &["add_rows_kernel[lambda META: (triton.cdiv(M, META['BLOCK_M']), triton.cdiv(N, META['BLOCK_N']))](x, b, y, M, N)\n"],
    ),
    (
        "scale_3d.py",
        &[("BLOCK_S", 32)],
        4,
        &[
            "    grid = lambda META: (B, H, (S + META['BLOCK_S'] - 1) // META['BLOCK_S'])\n",
            "scale_kernel[grid](q, o, S, q.stride(0), q.stride(1), q.stride(2), scale, HEAD_DIM=D)\n",
        ],
    ),
    // Computed tiles stay; the warps the wrapper computes give way to the configs'.
    // (The warps a conditional chooses among literals start at the first, 16, and give way too.)
    ("softmax_computed.py", &[], 16, &["    row_softmax[(rows,)](x, out, x.stride(0), out.stride(0), width, TILE=tile)\n"]),
    // A helper picks the tile and the warps by width: the tile stays, the warps give way (and are named).
    ("settings_helper.py", &[], 4, &["    _row_scale[(rows,)](out, x, w, x.stride(0), width, BLOCK=BLOCK)\n"]),
    // `num_blocks` sizes the buffer of partial sums: the tile is the host's, not the configs'.
    ("partial_sum.py", &[], 4, &["    partial_sum_kernel[(num_blocks,)](x, partial, n, BLOCK=BLOCK)\n"]),
    (
        "heur_mm.py",
        &[("BLOCK_M", 64), ("BLOCK_N", 64), ("BLOCK_K", 32), ("GROUP_M", 8)],
        4,
        &[
            "\n@triton.autotune(",
            ")\n@triton.heuristics(",
            "    grid = lambda META: (cdiv(M, META['BLOCK_M']) * cdiv(N, META['BLOCK_N']),)\n",
            "c.stride(0), c.stride(1))\n",
        ],
    ),
    (
        "mm_helper_grid.py",
        &[("BM", 64), ("BN", 64), ("BK", 64)],
        4,
        &["mm_kernel[lambda META: (triton.cdiv(M, META['BM']), triton.cdiv(N, META['BN']))](a, b, c, M, N, K,"],
    ),
    // Configs a helper builds: the knobs the launch leaves to the autotuner, from a guessed start; the
    // list replaces the helper's call.
    (
        "configs_by_code.py",
        &[("BLOCK", 64)],
        4,
        &["@triton.autotune(configs=[\n        triton.Config({'BLOCK': 128}, num_warps=8, num_stages=3),\n    ], key=[\"n\"])\n"],
    ),
    // The tutorial's `lambda meta:` grid, from the problem-inference fixtures.
    ("../entries/add_main.py", &[("BLOCK_SIZE", 1024)], 4, &["    add_kernel[grid](x, y, output, n_elements)\n"]),
    ("default_block.py", &[("BLOCK", 1024)], 4, &["    gelu_kernel[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, n)\n"]),
    ("tutorial_device.py", &[("BLOCK_SIZE", 1024)], 4, &["        scale_kernel[grid](x, y, n, alpha)\n"]),
    (
        "ctas_at_launch.py",
        &[("BLOCK", 256)],
        4,
        &["    axpy_kernel[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, out, a, n)\n", "num_warps=8, num_stages=3),\n"],
    ),
    (
        "tests_beside_kernel.py",
        &[("BLOCK", 512)],
        4,
        &["    leaky_relu_kernel[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, n, slope)\n"],
    ),
    (
        "module_attr.py",
        &[("BLOCK", 512)],
        4,
        &["bias_add_kernel[lambda META: (triton.cdiv(total, META['BLOCK']),)](x, self.bias, y, x.shape[-1], total)\n"],
    ),
    // Launched through `wrap_triton(k)`: the tile passed by position leaves the launch.
    ("triton_op_wrapped.py", &[("BLOCK", 256)], 4, &["    wrap_triton(clamp_scale_kernel)[grid](x, out, n, lo, hi, scale)\n"]),
    // Under a library's launch wrapper: the autotuner goes beneath it, right above `@triton.jit`.
    (
        "libentry_wrapped.py",
        &[("BLOCK", 2048)],
        4,
        &["@libentry()\n@triton.autotune(\n", "    silu_kernel[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, n)\n"],
    ),
    // A persistent grid, `min(NUM_SMS, cdiv(M, 64) * cdiv(N, 64))`, NUM_SMS asked of torch at import.
    (
        "persistent_sms.py",
        &[("BLOCK_M", 64), ("BLOCK_N", 64), ("BLOCK_K", 32)],
        4,
        &["    grid = lambda META: (min(NUM_SMS, triton.cdiv(M, META['BLOCK_M']) * triton.cdiv(N, META['BLOCK_N'])),)\n"],
    ),
    // `libdevice.tanh` in the kernel: on the interpreter the harness computes libdevice with numpy.
    ("libdevice_gelu.py", &[("BLOCK", 512)], 4, &["    gelu_tanh_kernel[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, n)\n"]),
    // Parameters and momentum updated in place: the list restores both after each config it times.
    (
        "inplace_sgd.py",
        &[("BLOCK", 1024)],
        4,
        &[
            "    key=['n'],\n    restore_value=['p_ptr', 'buf_ptr'],\n)\n",
            "[lambda META: (triton.cdiv(n, META['BLOCK']),)](param, grad, buf, lr, momentum, n)\n",
        ],
    ),
    // Host tensor descriptors built with the tiles' values: a config's `pre_hook` sets their blocks.
    (
        "host_descriptors.py",
        &[("BLOCK_M", 64), ("BLOCK_N", 32)],
        4,
        &[
            "def _scale2d_kernel_descriptor_blocks(nargs):\n",
            "    nargs[\"in_desc\"].block_shape = [nargs[\"BLOCK_M\"], nargs[\"BLOCK_N\"]]\n    nargs[\"out_desc\"].block_shape = [nargs[\"BLOCK_M\"], nargs[\"BLOCK_N\"]]\n\n\n@triton.autotune(\n",
            "num_warps=8, num_stages=3, pre_hook=_scale2d_kernel_descriptor_blocks),\n",
            "    scale2d_kernel[lambda META: (triton.cdiv(M, META['BLOCK_M']), triton.cdiv(N, META['BLOCK_N']))](in_desc, out_desc, alpha)\n",
        ],
    ),
    // The output is the input itself when `inplace` is set: only the launch shows it; the list
    // restores the pointer written.
    (
        "inplace_alias.py",
        &[("BLOCK_SIZE", 256)],
        4,
        &[
            "    key=['n_elements'],\n    restore_value=['out_ptr'],\n)\n",
            "[lambda META: (triton.cdiv(n, META['BLOCK_SIZE']),)](x, out, n, slope)\n",
        ],
    ),
    // Kernels made by a call, `add_kernel = triton.jit(_add_impl)` (Unsloth's way): the list goes into
    // the assignment, around the JIT and any heuristics over it; the `def` stays as it is.
    (
        "jit_by_call.py",
        &[("BLOCK", 128)],
        4,
        &[
            "\n\nadd_kernel = triton.autotune(\n    configs=[\n        triton.Config({'BLOCK': 256}, num_warps=8, num_stages=3),\n    ],\n    key=['n'],\n)(triton.jit(_add_impl))\n",
            "\n\ndef _add_impl(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n",
            "    add_kernel[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, out, n)\n",
        ],
    ),
    // `from triton import jit` alone: the list brings `import triton`.
    ("jit_by_call_imported.py", &[("BLOCK", 256)], 4, &["from triton import jit\nimport triton\n", "    key=['n'],\n)(jit(_mul_impl))\n"]),
    (
        "jit_by_call_rebound.py",
        &[("BLOCK", 512)],
        4,
        &[
            "\n\n_clamp = triton.autotune(\n",
            ")(triton.heuristics({\"EVEN\": lambda args: args[\"n\"] % args[\"BLOCK\"] == 0})(triton.jit(_clamp)))\n",
            "    _clamp[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, out, n, lo, hi)\n",
        ],
    ),
    // Its own list, applied by a call: replaced where it stands.
    (
        "jit_by_call_autotuned.py",
        &[("BLOCK", 256)],
        4,
        &[
            "neg_kernel = triton.autotune(\n    configs=[\n        triton.Config({'BLOCK': 512}, num_warps=8, num_stages=3),\n    ],\n    key=[\"n\"],\n)(triton.jit(_neg_impl))\n",
        ],
    ),
];

#[test]
fn every_launch_form_has_its_tiles_and_grids_read() {
    let mut on_disk: Vec<String> = std::fs::read_dir(fixture(""))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".py"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = EXPECTED.iter().map(|e| e.0.to_string()).filter(|f| !f.contains('/')).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "every fixture is listed here");
    for (file, tiles, warps, lines) in EXPECTED {
        let text = std::fs::read_to_string(fixture(file)).unwrap();
        let o = Outline::build(&text);
        let p = autotune::plan(&text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let start: Vec<(&str, i64)> = p.input.start.kwargs.iter().filter_map(|(k, v)| v.as_int().map(|i| (k.as_str(), i))).collect();
        assert_eq!(&start, tiles, "{file}");
        // Only a kernel that updates an argument in place has anything for a search to restore.
        assert_eq!(p.restore.is_empty(), !file.starts_with("inplace_"), "{file}: {:?}", p.restore);
        assert_eq!(p.input.start.num_warps, *warps, "{file}");
        assert_eq!(!p.descriptors.is_empty(), *file == "host_descriptors.py", "{file}: {:?}", p.descriptors);
        let mut doubled = p.input.start.clone();
        for (_, v) in &mut doubled.kwargs {
            if let Some(i) = v.as_int() {
                *v = ConfigValue::Int(i * 2);
            }
        }
        doubled.num_warps *= 2;
        let out = p.render(&text, &[doubled]).unwrap();
        for line in *lines {
            assert!(out.contains(line), "{file}: no {line:?} in\n{out}");
        }
        assert!(!out.contains("num_warps=num_warps"), "{file}: {out}");
    }
}

/// One config as the stage measures it and writes it: its values in every launch and in every grid
/// written in a launch, no `@triton.autotune` (file, lines the file has once every tile and the warps
/// are doubled).
const PINNED: &[(&str, &[&str])] = &[
    (
        "two_sites.py",
        &[
            "        relu_kernel[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512, num_warps=8, num_stages=3)\n    else:",
            "    else:\n        relu_kernel[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512, num_warps=8, num_stages=3)\n",
        ],
    ),
    // The tile passed by position stays there, with the new value.
    ("positional.py", &["    sq_kernel[((n + 1024 - 1) // 1024,)](x, y, n, 1024, num_warps=8, num_stages=3)\n"]),
    (
        "bare_tuple.py",
        &[
            "add_rows_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 128))](x, b, y, M, N, BLOCK_M=32, BLOCK_N=128, num_warps=8, num_stages=3)\n",
        ],
    ),
    (
        "scale_3d.py",
        &[
            // A grid defined apart from the launch may serve others: it reads the launch's keywords.
            "    grid = lambda META: (B, H, (S + META['BLOCK_S'] - 1) // META['BLOCK_S'])\n",
            "scale_kernel[grid](q, o, S, q.stride(0), q.stride(1), q.stride(2), scale, BLOCK_S=64, HEAD_DIM=D, num_warps=8, num_stages=3)\n",
        ],
    ),
    // The computed tile stays; the computed warps give way to the config's.
    (
        "softmax_computed.py",
        &["    row_softmax[(rows,)](x, out, x.stride(0), out.stride(0), width, TILE=tile, num_warps=32, num_stages=3)\n"],
    ),
    ("partial_sum.py", &["    partial_sum_kernel[(num_blocks,)](x, partial, n, BLOCK=BLOCK, num_warps=8, num_stages=3)\n"]),
    (
        "heur_mm.py",
        &[
            "    grid = lambda META: (cdiv(M, META['BLOCK_M']) * cdiv(N, META['BLOCK_N']),)\n",
            "BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=16, num_warps=8, num_stages=3)",
        ],
    ),
    (
        "mm_helper_grid.py",
        &["mm_kernel[(triton.cdiv(M, 128), triton.cdiv(N, 128))](a, b, c, M, N, K,", "BM=128, BN=128, BK=128, num_warps=8, num_stages=3)"],
    ),
    // A `lambda meta:` grid keeps reading the launch's keywords.
    ("../entries/add_main.py", &["    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=2048, num_warps=8, num_stages=3)\n"]),
    // A tile left to the kernel's default is passed.
    ("default_block.py", &["    gelu_kernel[(triton.cdiv(n, 2048),)](x, y, n, BLOCK=2048, num_warps=8, num_stages=3)\n"]),
    ("tutorial_device.py", &["        scale_kernel[grid](x, y, n, alpha, BLOCK_SIZE=2048, num_warps=8, num_stages=3)\n"]),
    // Written into the launch, one config keeps the launch's `num_ctas`.
    (
        "ctas_at_launch.py",
        &["    axpy_kernel[(triton.cdiv(n, 512),)](x, y, out, a, n, BLOCK=512, num_warps=8, num_ctas=1, num_stages=3)\n"],
    ),
    (
        "tests_beside_kernel.py",
        &["    leaky_relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, slope, BLOCK=1024, num_warps=8, num_stages=3)\n"],
    ),
    (
        "module_attr.py",
        &["bias_add_kernel[(triton.cdiv(total, 1024),)](x, self.bias, y, x.shape[-1], total, BLOCK=1024, num_warps=8, num_stages=3)\n"],
    ),
    ("triton_op_wrapped.py", &["    wrap_triton(clamp_scale_kernel)[grid](x, out, n, lo, hi, scale, 512, num_warps=8, num_stages=3)\n"]),
    // A kernel made by a call: its assignment stays as it is.
    (
        "jit_by_call.py",
        &[
            "\n\nadd_kernel = triton.jit(_add_impl)\n",
            "    add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256, num_warps=8, num_stages=3)\n",
        ],
    ),
    ("jit_by_call_rebound.py", &["    _clamp[(triton.cdiv(n, 1024),)](x, out, n, lo, hi, BLOCK=1024, num_warps=8, num_stages=3)\n"]),
];

/// A local the launch read its tile through (`BLOCK_S = 32` ... `BLOCK_S=BLOCK_S`) is gone once the
/// rewrite leaves it unread, as a list or as one config: no stale number beside the one that runs.
#[test]
fn a_local_the_rewrite_leaves_unread_is_dropped() {
    let text = std::fs::read_to_string(fixture("scale_3d.py")).unwrap();
    assert!(text.contains("    BLOCK_S = 32\n"));
    let o = Outline::build(&text);
    let p = autotune::plan(&text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
    let cfg = autotune::space::TuneConfig { kwargs: vec![("BLOCK_S".into(), ConfigValue::Int(64))], ..p.input.start.clone() };
    let one = p.candidate(&text, std::slice::from_ref(&cfg), &p.readings[0]).unwrap();
    let list = p.candidate(&text, &[cfg.clone(), p.input.start.clone()], &p.readings[0]).unwrap();
    for out in [&one, &list] {
        assert!(!out.contains("BLOCK_S = 32"), "{out}");
        assert_eq!(out.lines().count(), text.lines().count() - 1 + if out == &list { 7 } else { 0 }, "{out}");
    }
    // `partial_sum.py`'s tile also sizes a buffer: read there, it stays.
    let text = std::fs::read_to_string(fixture("partial_sum.py")).unwrap();
    let o = Outline::build(&text);
    let p = autotune::plan(&text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
    let out = p.candidate(&text, std::slice::from_ref(&p.input.start), &[]).unwrap();
    assert_eq!(out.lines().count(), text.lines().count(), "{out}");
}

#[test]
fn one_config_is_written_into_every_launch() {
    for (file, lines) in PINNED {
        let text = std::fs::read_to_string(fixture(file)).unwrap();
        let o = Outline::build(&text);
        let p = autotune::plan(&text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
        let mut doubled = p.input.start.clone();
        for (_, v) in &mut doubled.kwargs {
            if let Some(i) = v.as_int() {
                *v = ConfigValue::Int(i * 2);
            }
        }
        doubled.num_warps *= 2;
        let reading = p.readings.first().cloned().unwrap_or_default();
        let out = p.candidate(&text, std::slice::from_ref(&doubled), &reading).unwrap();
        assert!(!out.contains("triton.autotune"), "{file}: {out}");
        for line in *lines {
            assert!(out.contains(line), "{file}: no {line:?} in\n{out}");
        }
        // Every launch of the kernel says every value once.
        for l in Outline::build(&out).launches.iter().filter(|l| l.kernel == p.kernel) {
            let args: Vec<_> = l.args.iter().filter_map(|a| a.name.clone()).collect();
            for name in ["num_warps", "num_stages"] {
                assert_eq!(args.iter().filter(|a| *a == name).count(), 1, "{file}: {name} in {args:?}");
            }
        }
    }
}

#[test]
fn a_launchs_num_ctas_goes_into_every_config_of_the_list() {
    let text = std::fs::read_to_string(fixture("ctas_at_launch.py")).unwrap().replace("num_ctas=1", "num_ctas=2");
    let o = Outline::build(&text);
    let p = autotune::plan(&text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
    let out = p.render(&text, std::slice::from_ref(&p.input.start)).unwrap();
    assert!(out.contains("triton.Config({'BLOCK': 256}, num_warps=4, num_stages=3, num_ctas=2),\n"), "{out}");
    assert!(out.contains("    axpy_kernel[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, out, a, n)\n"), "{out}");
}

#[tokio::test]
async fn the_stage_is_correct_on_each_launch_form_on_the_interpreter() {
    let Some(py) = pyenv::with("torch, triton, yaml") else {
        eprintln!("skipped: no Python with torch, triton and PyYAML ($XEFORGE_PYTHON or .venv/bin/python)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"t\"\n").unwrap();
    let h = Harness::new(&HarnessSettings { python: Some(py), ..Default::default() }, dir.path()).unwrap();
    let runner = StageRunner { kb: Arc::new(Knowledge::embedded().clone()), harness: Arc::new(h), llm: None };
    // The forms a wrong rewrite breaks: a second call site, a positional tile, a grid without its
    // parentheses, a named tile in a 3-D grid, a tile left at the launch, a module attribute, an
    // autotune list built by a helper (kept whole here: the interpreter times nothing), a file that asks
    // Triton's driver for its device at import and launches inside `torch.cuda.device`, a file that
    // imports pytest for the tests beside its kernel (a sandboxed candidate must still find pytest), a
    // `torch.library.triton_op` whose kernel is launched through `wrap_triton`.
    for file in [
        "two_sites.py",
        "positional.py",
        "bare_tuple.py",
        "scale_3d.py",
        "partial_sum.py",
        "module_attr.py",
        "configs_by_code.py",
        "tutorial_device.py",
        "tests_beside_kernel.py",
        "ctas_at_launch.py",
        "triton_op_wrapped.py",
        "settings_helper.py",
        "inplace_sgd.py",
        "libentry_wrapped.py",
        "persistent_sms.py",
        "libdevice_gelu.py",
        "host_descriptors.py",
    ] {
        let path = dir.path().join(file);
        std::fs::copy(fixture(file), &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut req = StageRequest::new("autotune", path, text);
        req.workspace = dir.path().to_path_buf();
        req.device = DeviceKind::Cpu;
        req.timeout = 300;
        let out = runner.run(req, |_| {}, CancellationToken::new()).await.unwrap();
        assert_eq!(out.status, OutcomeStatus::CorrectOnly, "{file}: {}", out.summary);
        // Rounds on derived variants the original itself fails (a size the code ties to another
        // without saying so) are the variants' fault and dropped; the rewrite is judged after them.
        let last = out.rounds.last().unwrap_or_else(|| panic!("{file}: no round"));
        assert!(last.verdict.as_ref().is_some_and(|v| v.is_correct()), "{file}: {:?}", out.rounds);
    }
}

/// A tile the launch computes is not tuned, and the stage says which and why: the user reads that
/// only warps and stages were tried, not that the tile was judged fine.
#[test]
fn tiles_the_launch_computes_are_named_with_why_they_stay() {
    let note = |file: &str, text: &str| {
        let o = Outline::build(text);
        let p = autotune::plan(text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
        (p.kept.clone(), p.kept_note().unwrap_or_else(|| panic!("{file}: no note")))
    };
    let text = std::fs::read_to_string(fixture("softmax_computed.py")).unwrap();
    let (kept, n) = note("softmax_computed.py", &text);
    assert_eq!(kept, [("TILE".to_string(), "tile".to_string())]);
    assert!(n.contains("TILE=`tile`") && n.contains("num_warps and num_stages"), "{n}");
    let (_, n) = note("computed", &text.replace("TILE=tile", "TILE=triton.next_power_of_2(width)"));
    assert!(n.contains("TILE=`triton.next_power_of_2(width)` (computed at the launch)"), "{n}");
    let text = std::fs::read_to_string(fixture("partial_sum.py")).unwrap();
    let (kept, n) = note("partial_sum.py", &text);
    assert_eq!(kept, [("BLOCK".to_string(), "BLOCK".to_string())]);
    // The note points at the line that ties the tile to host code (the buffer of partial sums).
    assert!(n.contains("the wrapper also reads `BLOCK` at line 17: `num_blocks = triton.cdiv(n, BLOCK)`"), "{n}");
    // Tiles read off a settings object, one literal beside them: the literal is tuned, the others named.
    let text = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x, y, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, \
                GROUP: tl.constexpr):\n    pass\n\ndef f(x, y, n, cfg):\n    k[(n,)](x, y, n, cfg.block_m, BLOCK_N=cfg.block_n, GROUP=8, num_warps=cfg.warps)\n";
    let (kept, n) = note("inline", text);
    assert_eq!(kept, [("BLOCK_M".to_string(), "cfg.block_m".to_string()), ("BLOCK_N".to_string(), "cfg.block_n".to_string())]);
    assert!(n.contains("BLOCK_M=`cfg.block_m` (read off an object at run time)") && n.contains("the other tiles, num_warps"), "{n}");
    // Every tile a literal: nothing to say.
    let text = std::fs::read_to_string(fixture("bare_tuple.py")).unwrap();
    let o = Outline::build(&text);
    let p = autotune::plan(&text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
    assert_eq!(p.kept_note(), None);
    assert_eq!(p.replaced_note(), None);
}

/// Warps a helper picks by size are replaced by one tuned value, and the stage says so: the user
/// reads that the helper's per-size choice is gone and which sizes were timed.
#[test]
fn warps_the_launch_computes_are_replaced_and_the_stage_says_so() {
    let text = std::fs::read_to_string(fixture("settings_helper.py")).unwrap();
    let o = Outline::build(&text);
    let p = autotune::plan(&text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
    assert_eq!(p.kept, [("BLOCK".to_string(), "BLOCK".to_string())]);
    assert_eq!(p.replaced, [("num_warps".to_string(), "num_warps".to_string())]);
    assert!(!p.start_is_original, "the start's warps are a guess, timed like any other config");
    let n = p.replaced_note().unwrap();
    assert!(n.starts_with(autotune::REPLACED_NOTE) && n.contains("num_warps=`num_warps`"), "{n}");
    assert!(n.contains("other sizes are checked for correctness only"), "{n}");
    let cfg = autotune::space::TuneConfig { num_warps: 8, ..p.input.start.clone() };
    let out = p.render_one(&text, &cfg, &p.readings[0]).unwrap();
    assert!(out.contains("(out, x, w, x.stride(0), width, BLOCK=BLOCK, num_warps=8"), "{out}");
    // Warps read off an object are replaced the same way; literal warps are tuned, not replaced.
    let inline = |launch: &str| {
        let text = format!(
            "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x, n, BLOCK: tl.constexpr):\n    pass\n\ndef f(x, n, cfg):\n    {launch}\n"
        );
        let o = Outline::build(&text);
        autotune::plan(&text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap().replaced
    };
    assert_eq!(inline("k[(n,)](x, n, BLOCK=64, num_warps=cfg.warps, num_stages=cfg.stages)").len(), 2);
    assert_eq!(inline("k[(n,)](x, n, BLOCK=64, num_warps=4)"), []);
}

/// A list of configs on a kernel that updates its arguments in place: Triton's search would apply the
/// update once per timed run on the caller's tensors. The list the stage writes restores them, and
/// the harness (whose interpreter still calls the first config once, as a GPU's search calls every
/// one) finds it correct; the same list without `restore_value` is incorrect, and says what to add.
#[tokio::test]
async fn a_list_restores_what_the_kernel_updates_in_place() {
    let text = std::fs::read_to_string(fixture("inplace_sgd.py")).unwrap();
    let o = Outline::build(&text);
    let p = autotune::plan(&text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
    assert_eq!(p.restore, ["p_ptr", "buf_ptr"]);
    assert!(p.restore_note().unwrap().contains("restore_value=['p_ptr', 'buf_ptr']"));
    let mut wide = p.input.start.clone();
    wide.kwargs = vec![("BLOCK".into(), ConfigValue::Int(256))];
    let list = p.candidate(&text, &[wide, p.input.start.clone()], &p.readings[0]).unwrap();
    let bare = list.replace("    restore_value=['p_ptr', 'buf_ptr'],\n", "");
    assert_ne!(list, bare);

    let Some(verdicts) = judge_on_the_interpreter("inplace_sgd.py", &text, "entry: sgd_momentum_\ninputs:\n  param: {shape: [N], dtype: float32}\n  grad: {shape: [N], dtype: float32}\n  buf: {shape: [N], dtype: float32}\ninits: []\nci:\n  - params: [param, grad, buf]\n    dtype: float32\n    dims: {N: 3001}\n", &[&list, &bare]).await else {
        return;
    };
    assert!(verdicts[0].verdict.is_correct(), "{}", verdicts[0].failure_text(600));
    assert_eq!(verdicts[1].verdict, Verdict::Incorrect, "{}", verdicts[1].failure_text(600));
    assert!(verdicts[1].failure_text(600).contains("restore_value=['p_ptr', 'buf_ptr']"), "{}", verdicts[1].failure_text(600));
}

/// One tensor passed as both the input and the output (`out = x if inplace else ...`): the kernel's
/// body reads one pointer and writes another, and only the launch shows they are the same tensor.
/// The list names the written one, which restores it; without that line the harness fails the list.
#[tokio::test]
async fn a_list_restores_a_tensor_the_launch_passes_as_input_and_output() {
    let text = std::fs::read_to_string(fixture("inplace_alias.py")).unwrap();
    let o = Outline::build(&text);
    let p = autotune::plan(&text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
    assert_eq!(p.restore, ["out_ptr"]);
    let mut wide = p.input.start.clone();
    wide.kwargs = vec![("BLOCK_SIZE".into(), ConfigValue::Int(512))];
    let list = p.candidate(&text, &[wide, p.input.start.clone()], &p.readings[0]).unwrap();
    let bare = list.replace("    restore_value=['out_ptr'],\n", "");
    assert_ne!(list, bare);

    let Some(verdicts) = judge_on_the_interpreter("inplace_alias.py", &text, "entry: leaky_relu\ninputs:\n  x: {shape: [N], dtype: float32}\n  slope: {value: 0.01}\n  inplace: {value: true}\ninits: []\nci:\n  - params: [x, slope, inplace]\n    dtype: float32\n    dims: {N: 3001}\n", &[&list, &bare]).await else {
        return;
    };
    assert!(verdicts[0].verdict.is_correct(), "{}", verdicts[0].failure_text(600));
    assert_eq!(verdicts[1].verdict, Verdict::Incorrect, "{}", verdicts[1].failure_text(600));
    // The harness names the tensor by its first parameter, and says it is also the other.
    assert!(verdicts[1].failure_text(600).contains("changed `x_ptr (also out_ptr)` in place"), "{}", verdicts[1].failure_text(600));
    assert!(verdicts[1].failure_text(600).contains("restore_value=['x_ptr']"), "{}", verdicts[1].failure_text(600));
}

/// Host tensor descriptors built with the launch's tiles: every config of the list sets their blocks
/// from its own tiles in a `pre_hook`. Without it, a config whose tiles differ leaves the descriptors'
/// blocks as the host built them and covers the wrong part of the matrix: the harness fails it.
#[tokio::test]
async fn a_list_keeps_host_descriptor_blocks_in_step_with_its_tiles() {
    let text = std::fs::read_to_string(fixture("host_descriptors.py")).unwrap();
    let o = Outline::build(&text);
    let p = autotune::plan(&text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
    assert_eq!(
        p.descriptors,
        [
            ("in_desc".to_string(), vec![Some("BLOCK_M".into()), Some("BLOCK_N".into())]),
            ("out_desc".to_string(), vec![Some("BLOCK_M".into()), Some("BLOCK_N".into())])
        ]
    );
    let mut wide = p.input.start.clone();
    wide.kwargs = vec![("BLOCK_M".into(), ConfigValue::Int(128)), ("BLOCK_N".into(), ConfigValue::Int(64))];
    let list = p.candidate(&text, &[wide.clone(), p.input.start.clone()], &p.readings[0]).unwrap();
    let bare = list.replace(", pre_hook=_scale2d_kernel_descriptor_blocks", "");
    assert_ne!(list, bare);
    // One config alone is not written into the launch (the descriptors would keep the host's blocks):
    // it is a list of one, with the hook.
    let one = p.candidate(&text, &[wide], &p.readings[0]).unwrap();
    assert!(one.contains("pre_hook=_scale2d_kernel_descriptor_blocks"), "{one}");

    let Some(verdicts) = judge_on_the_interpreter("host_descriptors.py", &text, "entry: scale2d\ninputs:\n  x: {shape: [M, N], dtype: float32}\n  alpha: {value: 0.5}\ninits: []\nci:\n  - params: [x, alpha]\n    dtype: float32\n    dims: {M: 300, N: 200}\n", &[&list, &bare, &one]).await else {
        return;
    };
    assert!(verdicts[0].verdict.is_correct(), "{}", verdicts[0].failure_text(600));
    assert_eq!(verdicts[1].verdict, Verdict::Incorrect, "{}", verdicts[1].failure_text(600));
    assert!(verdicts[2].verdict.is_correct(), "{}", verdicts[2].failure_text(600));
}

/// A launch written one argument a line with a trailing comma (as black and ruff format it) gets the
/// config's warps and stages one a line too, at the arguments' indentation.
#[test]
fn a_launch_one_argument_a_line_gets_the_configs_options_one_a_line() {
    let text = "import triton\nimport triton.language as tl\n\nBLOCK_SIZE = 1024\n\n@triton.jit\ndef k(x, n, BLOCK_SIZE: tl.constexpr):\n    pass\n\n\
                def f(x):\n    n = x.numel()\n    k[lambda meta: (triton.cdiv(n, meta[\"BLOCK_SIZE\"]),)](\n        x,\n        n,\n        \
                BLOCK_SIZE=BLOCK_SIZE,\n    )\n";
    let o = Outline::build(text);
    let p = autotune::plan(text, &o, autotune::pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
    let mut cfg = p.input.start.clone();
    cfg.num_warps = 8;
    let out = p.render_one(text, &cfg, &p.readings[0]).unwrap();
    assert!(out.contains("        n,\n        BLOCK_SIZE=1024,\n        num_warps=8,\n        num_stages="), "{out}");
    assert!(out.contains(",\n    )\n"), "the closing parenthesis keeps its line: {out}");
}
