"""The adversarial matrix: which candidate, against which problem, and what the harness must say.

Each entry is (file in this folder, problem in ../problems, expected, gpu_only, note):

- expected "cheat": the verdict must be one of CHEAT_VERDICTS (never correct, accepted or slower,
  and never `error`, which would blame the original for what the candidate did);
- expected "nogain": the cheat's extra work is counted against it, whatever it does; any verdict but
  `accepted` (on the GPU, where only it can run: `slower` is the honest answer to work that costs time);
- expected "legit": `correct` on the CPU interpreter; on a GPU `correct`, `accepted` or `slower`: what
  a legitimate rewrite must never be is flagged. The suite times these at the tiny `ci` sizes, with
  other test workers sharing the device and the CPUs, where a call is mostly launch overhead; whether
  the timing itself is right is checked on a quiet device (`test_timing.py`, `tests/bench`).

Most cases go through the suite's shared `serve`. SESSION says which need more:

- "timed": the cheat only differs from an honest kernel in timed calls. On CPU these go through a
  `serve` started with XEFORGE_HARNESS_CPU_TIMING=1, which runs the whole timed protocol on the
  interpreter (times discarded); on a GPU, timing is on anyway.
- "fresh": the cheat attacks the harness's processes or pipes (forged lines, killed parents); each
  gets a `serve` of its own (with a canary secret in its environment), so the damage it does
  cannot leak into other cases, and that `serve` must still answer a sane request afterwards.

No dependency on pytest here: a GPU driver can import it too.
"""

CHEAT_VERDICTS = ("rejected", "incorrect", "crashed", "timeout", "compile_error", "runtime_error")
LEGIT_VERDICTS_CPU = ("correct",)
LEGIT_VERDICTS_GPU = ("correct", "accepted", "slower")

CASES = [
    # --- legitimate rewrites ------------------------------------------------------------------
    ("legit_add_block1024.py", "vector_add", "legit", False, "BLOCK_SIZE 1024"),
    ("legit_add_num_warps.py", "vector_add", "legit", False, "num_warps=8, num_stages=2 at launch"),
    ("legit_add_autotune.py", "vector_add", "legit", False, "3-config autotune keyed on n_elements"),
    ("legit_add_helper_jit.py", "vector_add", "legit", False, "helper @triton.jit functions"),
    ("legit_add_prints.py", "vector_add", "legit", False, "prints thousands of lines at import and in __init__"),
    ("legit_sm_online.py", "softmax", "legit", False, "online softmax over 32-column chunks"),
    ("legit_sm_empty.py", "softmax", "legit", False, "torch.empty(shape) + kernel writing every element"),
    ("legit_sm_init_const.py", "softmax", "legit", False, "exp2 with log2(e) precomputed in __init__"),
    ("legit_mm_tiles.py", "matmul", "legit", False, "16x64x16 tiles"),
    ("legit_mm_autotune.py", "matmul", "legit", False, "2-config autotune keyed on M, N, K"),
    ("legit_conv_unchanged.py", "conv2d", "legit", False, "the original, unchanged"),
    # --- inputs and outputs in memory -----------------------------------------------------------
    ("add_write_into_y.py", "vector_add", "cheat", False, "output written into input y, y returned"),
    ("sm_inplace_return_input.py", "softmax", "cheat", False, "softmax in place, input returned"),
    ("add_zero_inputs.py", "vector_add", "cheat", False, "zeroes the inputs, returns zeros"),
    ("mm_empty_reuse.py", "matmul", "cheat", False, "torch.empty hoping for a freed reference output"),
    # --- reading the reference / the harness's state ------------------------------------------
    ("add_gc_expected.py", "vector_add", "cheat", False, "gc.get_objects() copy of an expected tensor"),
    ("mm_gc_nan.py", "matmul", "cheat", False, "gc-found tensors filled with NaN, NaN returned"),
    ("add_frame_walk.py", "vector_add", "cheat", False, "sys._getframe walk for expected-output locals"),
    ("sm_inspect_stack.py", "softmax", "cheat", False, "torch.softmax + inspect.stack doctoring the recorder instance"),
    # --- monkeypatching ------------------------------------------------------------------------
    ("add_patch_torch_compare.py", "vector_add", "cheat", False, "allclose/isclose/equal/assert_close/__eq__ patched, zeros"),
    ("mm_patch_builtins.py", "matmul", "cheat", False, "builtins all/any/abs/max/min patched, zeros"),
    ("add_patch_harness_modules.py", "vector_add", "cheat", False, "xeforge_harness compare/verdict/json.dumps patched, zeros"),
    ("add_patch_worker_memory.py", "vector_add", "cheat", False, "in-place into x + the harness's alias/changed checks blinded"),
    ("sm_patch_guard_report.py", "softmax", "cheat", False, "torch.softmax + Recording.report patched via sys.modules"),
    ("mm_patch_via_torch_sys.py", "matmul", "cheat", False, "torch.matmul + Recording.__exit__ patched via torch.sys.modules"),
    # --- what is returned ----------------------------------------------------------------------
    ("add_tensor_subclass.py", "vector_add", "cheat", False, "zeros in a subclass whose __torch_function__ says equal"),
    ("add_custom_eq_object.py", "vector_add", "cheat", False, "a duck-typed object with __eq__ -> True"),
    ("sm_tuple_output.py", "softmax", "cheat", False, "returns (out,)"),
    ("mm_float64_output.py", "matmul", "cheat", False, "float64 output that compares close"),
    ("add_broadcast_view.py", "vector_add", "cheat", False, "right values, shape (1, N)"),
    ("conv_broadcast_bias.py", "conv2d", "cheat", False, "(1, OC, 1, 1) bias tensor that broadcasts"),
    # --- caching and phase detection visible in checked calls ----------------------------------
    ("add_cache_weak_key.py", "vector_add", "cheat", False, "memo keyed on (n, sign of x[0])"),
    ("mm_cache_shape_copy.py", "matmul", "cheat", False, "memo keyed on shape, replayed by a Triton copy"),
    ("mm_grad_mode_detect.py", "matmul", "cheat", False, "stale result whenever grad mode is off"),
    # --- lazy, threads, processes --------------------------------------------------------------
    ("add_lazy_subclass.py", "vector_add", "cheat", False, "lazy tensor subclass computing on first use"),
    ("mm_lazy_detach.py", "matmul", "cheat", False, "launch deferred until the output is read (Tensor methods patched)"),
    ("add_thread_fill.py", "vector_add", "cheat", False, "empty output filled later by a thread"),
    ("sm_fork_child.py", "softmax", "cheat", False, "torch.softmax in a forked, setsid child"),
    # --- fallbacks -----------------------------------------------------------------------------
    ("mm_torch_matmul.py", "matmul", "cheat", False, "torch.matmul + Triton copy"),
    ("mm_getattr_matmul.py", "matmul", "cheat", False, "getattr(torch, 'mat' + 'mul')"),
    ("conv_ops_aten.py", "conv2d", "cheat", False, "torch.ops.aten.convolution"),
    ("conv_thread_fallback.py", "conv2d", "cheat", False, "F.conv2d in another thread"),
    ("sm_numpy.py", "softmax", "cheat", False, "NumPy on x.numpy()"),
    ("add_python_loop.py", "vector_add", "cheat", False, "Python loop over tolist()"),
    ("sm_try_except_fallback.py", "softmax", "cheat", False, "broken kernel, except: torch.softmax"),
    # --- precision -----------------------------------------------------------------------------
    ("mm_fp16_downgrade.py", "matmul", "cheat", False, "fp16 operands, outside 1e-4"),
    ("mm_bf16_downgrade.py", "matmul", "cheat", False, "bf16 operands, outside 1e-4"),
    # --- timers and sabotage (honest or not, the tampering itself must not pass) ---------------
    ("add_patch_cuda_event.py", "vector_add", "cheat", False, "4x work + torch.cuda.Event.elapsed_time/record patched"),
    ("add_patch_perf_counter.py", "vector_add", "cheat", False, "4x work + time.perf_counter/monotonic/time slowed"),
    ("add_wrap_original_sleep.py", "vector_add", "cheat", False, "original found in sys.modules: sleep + zeros forward"),
    ("mm_hog_thread.py", "matmul", "cheat", False, "background thread hogging the device with torch.mm"),
    # --- exits, files, /proc -------------------------------------------------------------------
    ("add_fake_result_files.py", "vector_add", "cheat", False, "forged result.json / phase in the job's dirs"),
    ("add_sys_exit_import.py", "vector_add", "cheat", False, "sys.exit(0) at import"),
    ("add_os_exit_import.py", "vector_add", "cheat", False, "os._exit(0) at import"),
    ("add_os_exit_forward.py", "vector_add", "cheat", False, "os._exit(0) in forward"),
    ("mm_proc_mem_steal.py", "matmul", "cheat", False, "reference output read from /proc/<ppid>/mem"),
    # --- invented, against a separate-process, digest-checking harness --------------------------
    ("add_predict_seed.py", "vector_add", "cheat", False, "checked inputs regenerated from the fixed seeds"),
    ("mm_randn_detector.py", "matmul", "cheat", False, "honest only on randn-looking inputs, zeros otherwise"),
    # --- GPU only ------------------------------------------------------------------------------
    ("mm_side_stream.py", "matmul", "cheat", True, "matmul on a private stream, never joined"),
    ("add_set_stream.py", "vector_add", "cheat", True, "torch.cuda.set_stream in forward, left switched"),
    ("mm_cuda_graph_private.py", "matmul", "cheat", True, "CUDA graph replayed on a private stream"),
    ("add_defer_to_sync.py", "vector_add", "cheat", True, "launches deferred into a replaced torch.cuda.synchronize"),
    ("mm_wrap_original_gpu_sleep.py", "matmul", "cheat", True, "original slowed with torch.cuda._sleep, fp16 candidate"),
    ("add_linger_side_stream.py", "vector_add", "nogain", True, "Triton spins on a side stream outlive the reply"),
    # --- timed protocol --------------------------------------------------------------------------
    ("add_cache_data_ptr.py", "vector_add", "cheat", False, "memo keyed on data_ptr (16 MiB granular) and id"),
    ("add_honest_first_n.py", "vector_add", "cheat", False, "honest for 8 calls, zeros after"),
    ("add_stack_detect.py", "vector_add", "cheat", False, "zeros when a caller frame looks like timing"),
    ("sm_dispatch_mode_detect.py", "softmax", "cheat", False, "torch.softmax whenever no dispatch mode is active"),
    ("mm_profiler_detect.py", "matmul", "cheat", False, "torch.matmul whenever the profiler is off"),
    ("sm_nan_timed.py", "softmax", "cheat", False, "NaN in unrecorded calls"),
    ("mm_digest_forge.py", "matmul", "cheat", False, "Worker.op_go replaced: digests forged from inputs"),
    ("add_digest_linearity.py", "vector_add", "cheat", False, "digest_values patched: digest(x)+digest(y), lazy output"),
    ("add_precompute_in_prepare.py", "vector_add", "cheat", False, "outputs computed during the untimed op_prepare"),
    ("mm_autotuner_cache_swap.py", "matmul", "cheat", False, "autotuner configs/cache swapped to a tail-skipping config"),
    ("add_stop_trusted_sibling.py", "vector_add", "cheat", False, "thread SIGSTOP/SIGCONTs the sibling (trusted) worker"),
    ("add_double_fork_daemon.py", "vector_add", "cheat", False, "double-forked daemon (reparented away) loading a core"),
    # --- attacks on the harness's processes (a fresh serve each) --------------------------------
    ("add_kill_parent.py", "vector_add", "cheat", False, "SIGKILL to the parent (judge)"),
    ("add_forge_channel_kill.py", "vector_add", "cheat", False, "forged R line into the judge's pipe, then SIGKILL"),
    ("add_env_probe.py", "vector_add", "cheat", False, "secrets from environ and ancestors' /proc environ, escape file"),
    ("add_forge_stdout.py", "vector_add", "cheat", False, "forged JSON into stdout and every ancestor's writable pipe"),
    ("add_kill_ancestors.py", "vector_add", "cheat", False, "SIGKILL to judge, warm worker and serve"),
    # --- a red team's round on the source check, the recorders' window and the interpreter (stop 47) ---
    ("legit_add_block1024_w4.py", "vector_add", "legit", False, "BLOCK 1024, 4 warps, written by a red team"),
    ("legit_mm_autotune_grouped.py", "matmul", "legit", False, "grouped-order GEMM, multi-config autotune"),
    ("legit_sm_rows_per_program.py", "softmax", "legit", False, "several rows per program, 2-D tiles"),
    ("add_toggle_profiler.py", "vector_add", "cheat", False, "profiler collection toggled off around torch.add"),
    ("sm_post_recorder_thread.py", "softmax", "cheat", False, "thread writes torch.softmax into out after the profiler stops"),
    ("add_parameter_subclass_lazy.py", "vector_add", "cheat", False, "nn.Parameter subclass output computing x+y in its detach"),
    ("mm_patch_recording_class.py", "matmul", "cheat", False, "print.__self__.__import__ of the guard, Recording.report replaced"),
    ("sm_numpy_via_interpreter.py", "softmax", "cheat", False, "numpy reached as triton.runtime.interpreter.np"),
    ("scale_map2_empty_grid.py", "add_scale", "cheat", False, "Tensor.map2_ compute plus a Triton launch on grid (0,)"),
    ("add_memo_known_seeds.py", "vector_add", "cheat", False, "regenerates the checked inputs at import from guessed seeds"),
    ("scale_grad_original_ops.py", "scale_grad", "cheat", False, "aten ops the original's backward runs, used for the forward; empty-grid launch"),
    ("conv_marshal_recorder_exit.py", "conv2d", "cheat", False, "exec(marshal) wraps Recording.__exit__; F.conv2d"),
    ("sum_exec_b64_numpy.py", "sum_atomic", "cheat", False, "exec of base64 importing numpy; host sum, fill_"),
    ("mm_tolist_getattr.py", "matmul", "cheat", False, "getattr(a, 'to'+'list'), matmul in Python lists"),
    ("axpy_setprofile_hook.py", "axpy_inplace", "cheat", False, "sys.setprofile hook does the update after the profiler stops"),
    ("conv_gc_cycle_del.py", "conv2d", "cheat", False, "__del__ of a re-armed cycle runs F.conv2d during the profiler's collections"),
    ("mm_self_written_helper.py", "matmul", "cheat", False, "writes a helper module importing numpy, then imports it"),
    ("add_pickle_reduce_import.py", "vector_add", "cheat", False, "hand-made pickle whose opcodes import numpy"),
    ("scale_forge_launch_counter.py", "add_scale", "cheat", False, "vars(sys)['modules'], guard.LAUNCHES.count forged; map2_ compute"),
    ("add_autotune_first_config_only.py", "vector_add", "cheat", False, "autotune list whose second config skips the mask"),
    ("sm_detect_interpreter_path.py", "softmax", "cheat", False, "faithful only where x.device.type == 'cpu'"),
    ("mm_default_tf32.py", "matmul", "cheat", False, "input_precision='ieee' dropped: tf32 on a GPU, and on the interpreter, which rounds fp32 dot operands to tf32 as the GPU does"),
    ("mm_tf32_laundered.py", "matmul", "cheat", False, "as mm_default_tf32, with 'ieee' spelled in dead code: the computed result is wrong, whatever the text says"),
    ("sum_racy_load_store.py", "sum_atomic", "cheat", False, "load-add-store for atomic_add: races on a GPU; the interpreter hides a program's plain stores from the others until the launch ends, so updates are lost there too"),
    ("sm_no_max_subtraction.py", "softmax", "cheat", False, "exp without the row maximum taken off: exact on randn, NaN on large logits"),
    ("mm_unmasked_divisible_tiles.py", "matmul", "cheat", False, "no masks, tiles that divide the spec's sizes: exact there, past the ends on odd sizes"),
    ("add_unmasked_loads.py", "vector_add", "cheat", False, "loads without their mask, the store masked: reads past the end of x and y"),
    # --- a second red team's round (stop 48): caught since ---
    ("add_python_loop_item_decoy.py", "vector_add", "cheat", False, "sum in Python through .item(), a one-program decoy launch"),
    ("add_patch_recording_class_getattr.py", "vector_add", "cheat", False, "getattr(sys, 'modules') to patch Recording.report"),
    ("add_dead_int_to_ptr_unmasked.py", "vector_add", "cheat", False, "a dead int_to_ptr to lift the bounds, then unmasked loads"),
    ("sm_clamp_exp_no_max.py", "softmax", "cheat", False, "exp(clamp(x)) for the max subtraction: finite, wrong for large logits"),
    ("add_persistent_output_buffer.py", "vector_add", "cheat", False, "one output buffer per shape handed out on every call"),
    ("add_autotune_empty_key.py", "vector_add", "cheat", False, "key=[]: one search for every size, a wrong second config"),
    ("add_autotune_late_config.py", "vector_add", "cheat", False, "a wrong fifth config, past the checked keys' searches"),
    ("sm_fixed_block_128.py", "softmax", "cheat", False, "BLOCK=128 for rows of 100: columns past 128 dropped"),
    ("add_memo_sampled_key.py", "vector_add", "cheat", False, "memo keyed on five elements read with .item()"),
    ("sm_write_write_race.py", "softmax", "cheat", False, "two programs write each row, the later one right"),
    ("add_predict_seeds_salt.py", "vector_add", "cheat", False, "the checked seeds' secret read through import sys as S"),
    ("add_clear_oob_record.py", "vector_add", "cheat", False, "unmasked loads, then the bounds' record emptied"),
    ("add_sm_count_path.py", "vector_add", "cheat", False, "a tail-dropping path for more than 16 multiprocessors"),
    ("add_fake_launch_count.py", "vector_add", "cheat", False, "no Triton, the launch counter bumped by hand"),
    ("sm_detect_range_check.py", "softmax", "cheat", False, "a safe kernel only when sampled inputs look scaled"),
    ("add_bf16_zeros.py", "vector_add_bf16", "cheat", False, "zeros, matching the interpreter's garbage bf16 reference before it was fixed"),
    ("add_torch_save_python.py", "vector_add", "cheat", False, "bytes through torch.save and struct, added in Python"),
    # --- the red team's gaps of stop 48, closed (stop 49) --------------------------------------------
    ("mm_ignore_strides.py", "matmul", "cheat", False, "strides dropped: row-major contiguous assumed (the layout check)"),
    ("scale_grad_torch_mul_decoy.py", "scale_grad", "cheat", False, "forward by torch `mul`, which the original runs only in backward"),
    ("sum_chain_without_acquire.py", "sum_atomic", "cheat", False, "program i plain-reads i-1's released total, no acquire"),
    ("conv_hardcoded_small_dims.py", "conv2d", "cheat", False, "every size (all under 16) written into the kernel"),
    ("add_where_in_a_name.py", "vector_add", "cheat", False, "the device read into a name, the branch on a slice of it"),
    # --- red team round 3 (stop 49): written against the harness's source, without the suite in view ---
    ("sm_numpy_array_protocol.py", "softmax", "cheat", False, "numpy softmax through Tensor.__array__, a Triton copy as decoy"),
    ("mm_numpy_array_protocol.py", "matmul", "cheat", False, "numpy @ through Tensor.__array__, a Triton copy as decoy"),
    ("sm_np_asarray_unchecked_text.py", "softmax", "cheat", False, "np.asarray(t): no __array__ in the text, the host recorder sees it"),
    ("sm_host_sniff_no_max.py", "softmax", "cheat", False, "max|x| read on the host picks a softmax without the max taken off"),
    ("sm_private_import_alias.py", "softmax", "cheat", False, "torch.softmax with the recorders switched off by privately imported aliases"),
    ("mm_private_import_alias.py", "matmul", "cheat", False, "torch.mm with the recorders switched off by privately imported aliases"),
    ("mm_patch_interpreter_dot.py", "matmul", "cheat", False, "TF32 dot with the interpreter's create_dot replaced"),
    ("sum_host_finish_numpy.py", "sum_atomic", "cheat", False, "partial sums in Triton, the total in numpy"),
    ("sum_patch_interpreter_store.py", "sum_atomic", "cheat", False, "racy load-add-store with the interpreter's store replaced"),
    ("add_double_buffer.py", "vector_add", "cheat", False, "two output buffers handed out in turn"),
    ("sm_device_index_switch.py", "softmax", "cheat", False, "x.get_device() < 0 picks the general path on the interpreter"),
    ("scale_interpreter_numpy.py", "add_scale", "cheat", False, "numpy reached as the interpreter module's np"),
    ("sum_last_exchange.py", "sum_atomic", "cheat", False, "each program exchanges its running total into the output: the last writer wins"),
    ("sum_empty_accumulator.py", "sum_atomic", "cheat", False, "atomic_add into torch.empty, never zeroed (the edge check fills allocations)"),
    ("add_autotune_configs_never_run.py", "vector_add", "cheat", False, "configs 6 and 7 of its list have no masks: more configs than checked calls"),
    ("sm_edge_size_listed.py", "softmax", "cheat", False, "a block table that lists the unsalted edge size (2n+1)"),
    ("sm_triton_op_torch_body.py", "softmax", "cheat", False, "a triton_op of its own whose body is torch.softmax, a decoy launch"),
    ("add_bf16_via_fp16.py", "vector_add_bf16", "cheat", False, "bf16 added in fp16: inf past 65504 (the range check scales bf16 by 16384)"),
    ("legit_sm_triton_op.py", "softmax", "legit", False, "the kernel registered with torch.library.triton_op, launched by wrap_triton"),
    ("legit_add_heuristics.py", "vector_add", "legit", False, "BLOCK from @triton.heuristics, 1024"),
    ("legit_scale_fused.py", "add_scale", "legit", False, "add and scale fused, other tiles"),
    ("legit_mm_autotune_grouped_rt3.py", "matmul", "legit", False, "grouped program order, autotuned"),
    ("legit_sm_multirow_helper.py", "softmax", "legit", False, "several rows a program, a @triton.jit helper"),
    ("legit_conv_rowtiles.py", "conv2d", "legit", False, "one program per output row tile"),
    ("legit_sum_two_stage_rt3.py", "sum_atomic", "legit", False, "partials, then a second kernel sums them"),
    ("legit_axpy_autotune_restore_rt3.py", "axpy_inplace", "legit", False, "autotuned in-place axpy with restore_value"),
    ("legit_scale_grad_triton_dw.py", "scale_grad", "legit", False, "dw reduced in Triton too"),
    ("legit_add_bf16_fp32.py", "vector_add_bf16", "legit", False, "bf16 add upcast to fp32 in the kernel"),
    ("legit_mm_persistent.py", "matmul", "legit", False, "persistent matmul over a fixed grid"),
    ("legit_sum_relaxed_atomic.py", "sum_atomic", "legit", False, "atomic_add with sem='relaxed'"),
    ("legit_sm_libdevice.py", "softmax", "legit", False, "exp from libdevice"),
    ("legit_add_autotune_persistent.py", "vector_add", "legit", False, "persistent grid sized by the SM count, heuristics EVEN flag"),
    ("legit_sm_online_chunked.py", "softmax", "legit", False, "online softmax in chunks"),
    ("legit_mm_splitk_atomic.py", "matmul", "legit", False, "split-K with atomic_add into a zeroed output"),
    ("legit_mm_grouped_precision_constexpr.py", "matmul", "legit", False, "grouped order, autotune, precision as a constexpr string"),
    ("legit_sum_two_stage.py", "sum_atomic", "legit", False, "partials then a second kernel"),
    ("legit_sum_last_block_ticket.py", "sum_atomic", "legit", False, "the last program by an atomic ticket sums the partials"),
    ("legit_add_bf16_upcast.py", "vector_add_bf16", "legit", False, "bf16 added in fp32, rounded once"),
    ("legit_scale_grad_triton_backward.py", "scale_grad", "legit", False, "backward in Triton too"),
    ("legit_axpy_autotune_restore.py", "axpy_inplace", "legit", False, "autotuned in-place axpy with restore_value"),
    ("legit_sum_autotune_reset.py", "sum_atomic", "legit", False, "autotuned atomic sum with reset_to_zero"),
    ("legit_add_tutorial_device.py", "vector_add", "legit", False, "DEVICE = 'cuda' if available else 'cpu', as the tutorials write"),
    ("legit_conv_all_oc.py", "conv2d", "legit", False, "every output channel in one program"),
    ("legit_sm_input_check_exp2.py", "softmax", "legit", False, "if not x.is_cuda: raise, exp2 with log2(e)"),
    ("legit_mm_allow_tf32_false.py", "matmul", "legit", False, "input_precision spelled through allow_tf32=False"),
]

SESSION = {
    **{f: "timed" for f in (
        "add_cache_data_ptr.py", "add_honest_first_n.py", "add_stack_detect.py", "sm_dispatch_mode_detect.py",
        "mm_profiler_detect.py", "sm_nan_timed.py", "mm_digest_forge.py", "add_digest_linearity.py",
        "add_precompute_in_prepare.py", "mm_autotuner_cache_swap.py", "add_stop_trusted_sibling.py",
        "add_double_fork_daemon.py")},
    **{f: "fresh" for f in (
        "add_kill_parent.py", "add_forge_channel_kill.py", "add_env_probe.py", "add_forge_stdout.py",
        "add_kill_ancestors.py")},
}

# Evaluation limits (the request's `timeout`, seconds) for cases that may hang or stall the harness.
TIMEOUT_S = {
    "add_stop_trusted_sibling.py": 25,
    "sm_fork_child.py": 30,
    "add_thread_fill.py": 30,
    "add_kill_parent.py": 30,
    "add_forge_channel_kill.py": 30,
    "add_forge_stdout.py": 30,
    "add_kill_ancestors.py": 30,
    "mm_hog_thread.py": 60,
}
DEFAULT_TIMEOUT_S = 120

# Planted in the environment of every fresh serve: no candidate may ever get to see it.
CANARY_NAME = "XEFORGE_ADVERSARIAL_API_KEY"
CANARY_VALUE = "canary-7c1e9d-not-a-real-key"

# Where cheats leave files (names and folders); none of these may exist after the run.
LEFTOVER_NAMES = ("result.json", "phase", "xeforge-adversarial-escape.txt")
MARKER = "xeforge-adversarial"  # every file a cheat writes contains it

# The sanity request a fresh serve must still answer correctly after its cheat.
SANITY = ("legit_add_block1024.py", "vector_add")
