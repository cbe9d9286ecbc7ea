"""Pure parts: order statistics, environment sanitising, request arguments."""

import os
import random

import pytest
from xeforge_harness import envsafe
from xeforge_harness import protocol as P
from xeforge_harness.stats import median, median_ci


def test_median_of_odd_and_even_counts():
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5


def test_order_statistic_interval_for_100_samples_uses_ranks_40_and_61():
    xs = [float(i) for i in range(1, 101)]
    random.Random(0).shuffle(xs)
    assert median_ci(xs) == (40.0, 61.0)


def test_interval_brackets_the_median_and_narrows_with_more_samples():
    rng = random.Random(1)
    small = [rng.gauss(1.0, 0.05) for _ in range(20)]
    large = [rng.gauss(1.0, 0.05) for _ in range(400)]
    lo_s, hi_s = median_ci(small)
    lo_l, hi_l = median_ci(large)
    assert lo_s <= median(small) <= hi_s
    assert lo_l <= median(large) <= hi_l
    assert hi_l - lo_l < hi_s - lo_s


def test_too_few_samples_for_an_interval_is_an_error():
    with pytest.raises(ValueError):
        median_ci([1.0, 2.0, 3.0])


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "HF_TOKEN",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_ACCESS_KEY_ID",
        "DB_PASSWORD",
        "https_proxy",
        "HTTP_PROXY",
        "ALL_PROXY",
        "no_proxy",
        "TRITON_CACHE_DIR",
        "TRITON_INTERPRET",
        "RAY_ADDRESS",
        "RAY_AUTH_TOKEN_PATH",
        "RAY_RAYLET_PID",
    ],
)
def test_credentials_proxies_and_harness_owned_variables_are_removed(name):
    assert envsafe.is_removed(name)


@pytest.mark.parametrize("name", ["PATH", "HOME", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "ZE_AFFINITY_MASK", "PYTHONPATH"])
def test_what_a_device_needs_is_kept(name):
    assert not envsafe.is_removed(name)


def test_evaluate_args_accept_cli_flag_spellings():
    args = P.EvaluateArgs.from_mapping({"kernel": "a.py", "candidate": "b.py", "no-timing": True, "seeds": 5})
    assert args.no_timing and args.seeds == 5 and args.device == "auto"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"candidate": "b.py"}, "kernel"),
        ({"kernel": "a.py", "candidate": "b.py", "seeds": 2}, "seeds"),
        ({"kernel": "a.py", "candidate": "b.py", "device": "tpu"}, "device"),
        ({"kernel": "a.py", "candidate": "b.py", "timeout": 0}, "timeout"),
        ({"kernel": "a.py", "candidate": "b.py", "colour": "red"}, "colour"),
        ({"kernel": "a.py", "candidate": "b.py", "no_timing": "yes"}, "no_timing"),
    ],
)
def test_bad_arguments_name_the_argument(raw, field):
    with pytest.raises(P.ArgsError) as info:
        P.EvaluateArgs.from_mapping(raw)
    assert info.value.field == field


def test_exit_status_is_two_only_for_error():
    assert P.exit_status({"verdict": "incorrect"}) == 0
    assert P.exit_status(P.error_result("x")) == 2


def test_every_evaluate_argument_reaches_the_job():
    # `stop_below` was once dropped between the request and the judge, so sequential stopping never ran.
    from xeforge_harness import protocol as P
    from xeforge_harness import service

    args = P.EvaluateArgs.from_mapping(
        {"kernel": "k.py", "candidate": "c.py", "stop_below": 1.25, "runs": 30, "timing_family": "bench", "family": "ci"}
    )
    checked = {"kernel": "/abs/k.py", "reference": None, "spec": None, "device": "cpu"}
    job = service._job_args(args, checked)
    assert set(job) == set(P.EvaluateArgs.__dataclass_fields__) - {"candidate"}
    assert (job["stop_below"], job["runs"], job["timing_family"], job["kernel"]) == (1.25, 30, "bench", "/abs/k.py")
    assert P.EvaluateArgs.from_mapping({**job, "candidate": "c.py"}).stop_below == 1.25


def test_the_digest_grid_fits_cudas_limits_for_outputs_of_any_size():
    # A 16384 x 16384 output is 65536 rows of 4096: once the second grid axis, past CUDA's 65535
    # ("invalid argument" on every timed call of a transpose that large).
    from xeforge_harness.child import digest

    rows = -(-16384 * 16384 // digest.PERIOD)
    grid = digest.launch_grid(256, rows)
    assert grid[0] == rows and all(axis <= digest.GRID_YZ_MAX for axis in grid[1:])
    with pytest.raises(ValueError):
        digest.launch_grid(digest.GRID_YZ_MAX + 1, 1)


def test_the_fused_digest_equals_the_plain_one_across_rows_and_outputs():
    # The Triton pass the GPU takes, run here by the interpreter: several rows, a ragged tail, two outputs.
    import subprocess
    import sys

    code = """
import torch
from xeforge_harness.child import digest as d
dev = torch.device('cpu')
xs = [torch.randn(3 * d.PERIOD + 17), torch.randn(5000)]
ws = [d.weights(7 + j, dev, x.numel()) for j, x in enumerate(xs)]
fused = d._fused_many([(j, x) for j, x in enumerate(xs)], d.Tables([ws], (), dev)).tolist()
plain = [float(d._plain(x, u, v, 1.0)) for x, (u, v) in zip(xs, ws)]
assert all(abs(a - b) <= 1e-4 * max(1.0, abs(b)) for a, b in zip(fused, plain)), (fused, plain)
"""
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.path.join(os.path.dirname(__file__), "..", "..", "server", "harness")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_a_server_of_another_version_is_named_with_both_versions():
    from xeforge_harness import __version__, compat

    assert compat.server_mismatch({}) is None
    assert compat.server_mismatch({"XEFORGE_SERVER_VERSION": __version__}) is None
    message = compat.server_mismatch({"XEFORGE_SERVER_VERSION": "9.9.9"})
    assert message and "xeforge 9.9.9" in message and f"xeforge_harness {__version__}" in message


def test_serve_answers_every_request_but_ping_with_the_mismatch(monkeypatch):
    from xeforge_harness import serve

    monkeypatch.setenv("XEFORGE_SERVER_VERSION", "9.9.9")
    response, stop = serve.handle({"id": 7, "command": "evaluate", "args": {"kernel": "/nonexistent.py"}}, workers=None)
    assert (response["id"], response["verdict"], response["field"], stop) == (7, "error", "version", False)
    assert "9.9.9" in response["error"]
    pong, _ = serve.handle({"id": 8, "command": "ping"}, workers=_NoWorkers())
    assert pong["ok"] is True and pong["pool"]["size"] == 1


class _NoWorkers:
    def info(self):
        return []

    def pool(self):
        from xeforge_harness.pool import pool_report

        return pool_report("local", None, {})


def test_the_pool_counts_lanes_per_kind_and_auto_s_kind_is_its_size():
    from xeforge_harness.pool import Workers, pool_report

    # Nothing started: the interpreter lanes are known from the option, `auto` not yet.
    workers = Workers(cpu_workers=3)
    assert workers.pool() == {"backend": "local", "kind": None, "size": 1, "kinds": {"cpu": 3}, "devices": {"cpu": 3}, "per_device": 1}
    assert pool_report("local", "cpu", {"cpu": 3})["size"] == 3
    assert pool_report("ray", "cuda", {"cpu": 1, "cuda": 8, "xpu": 8})["size"] == 8
    # A kind with no lanes at all (a cluster without GPUs asked for cuda) still runs one job at a time.
    assert pool_report("ray", "cuda", {"cpu": 1})["size"] == 1
    # Several jobs per device: `kinds` and `size` count jobs at once, `devices` the lanes.
    shared = Workers(cpu_workers=2, jobs_per_device=3).pool()
    assert shared["kinds"] == {"cpu": 6} and shared["devices"] == {"cpu": 2} and shared["per_device"] == 3, shared
    assert pool_report("local", "cuda", {"cpu": 1, "cuda": 4}, 2)["size"] == 8


def test_the_zygotes_stdin_gives_whole_lines_in_order():
    import os

    from xeforge_harness.zygote import Stdin

    read, write = os.pipe()
    os.write(write, b'{"id": 1, "job": {}}\ncancel 1\n{"id": 2, "job": {}}\npart')
    stdin = Stdin(read)
    stdin.fill()
    # Only whole lines: the unterminated rest waits for more bytes.
    assert stdin.lines() == ['{"id": 1, "job": {}}', "cancel 1", '{"id": 2, "job": {}}']
    os.write(write, b"ial")
    os.close(write)
    stdin.fill()
    assert stdin.lines() == []
    stdin.fill()
    assert stdin.eof and stdin.lines() == ["partial"]  # the last line, unterminated, at EOF
    os.close(read)


def _pairs(ratios: list[float]) -> tuple[list[float], list[float], list[float]]:
    """Batch times (one call a batch, no overhead, no charge) whose per-pair speedups are `ratios`."""
    return [100.0 * r for r in ratios], [100.0] * len(ratios), [0.0] * len(ratios)


class _Args:
    def __init__(self, runs: int, stop_below: float | None = None):
        self.runs, self.stop_below = runs, stop_below


def _planned(ratios, runs=20, stop_below=None, extend=4.0) -> int:
    from xeforge_harness.child import timing

    base, cand, charged = _pairs(ratios)
    return timing._planned_runs(base, cand, charged, 0.0, 1, _Args(runs, stop_below), extend)


def test_an_undecided_wide_interval_gets_more_pairs_decided_once():
    rng = random.Random(3)
    noisy_same = [rng.gauss(1.0, 0.1) for _ in range(20)]
    clear_gain = [rng.gauss(1.6, 0.1) for _ in range(20)]
    quiet_same = [rng.gauss(1.0, 0.001) for _ in range(20)]
    assert _planned(noisy_same) == 80  # straddles 1.02 and 1/1.02, wide: four times the pairs
    assert _planned(clear_gain) == 20  # decided: faster
    assert _planned(quiet_same) == 20  # narrow enough already


def test_no_extension_by_default_nor_in_a_sweep():
    from xeforge_harness.child import timing

    rng = random.Random(4)
    noisy = [rng.gauss(1.0, 0.1) for _ in range(20)]
    assert _planned(noisy, extend=timing.EXTEND) == 20  # off unless XEFORGE_HARNESS_EXTEND asks
    assert _planned(noisy, stop_below=1.5) == 20  # a sweep's own sequential stopping


def test_an_original_whose_calls_issue_in_about_their_time_is_launch_bound():
    from xeforge_harness.child.timing import ISSUE_BOUND, _issue

    # Batches of 10 calls measured at 10 µs a call: 9 µs of issue a call is bound, 3 µs is not.
    bound = _issue([90.0, 95.0, 88.0], 10, 10.0)
    assert bound == {"issue_us": 9.0, "issue_bound": True}
    assert _issue([30.0, 31.0], 10, 10.0)["issue_bound"] is False
    assert _issue([10.0 * ISSUE_BOUND * 10], 10, 10.0)["issue_bound"] is True  # the boundary counts as bound
    assert _issue([], 10, 10.0) == {} and _issue([90.0], 0, 10.0) == {}


@pytest.mark.parametrize(
    ("symbol", "x", "expected"),
    [
        ("__nv_tanhf", 0.5, 0.46211715726),
        ("__nv_fast_expf", 1.0, 2.71828182846),
        ("__nv_erff", 0.5, 0.52049987781),
        ("__nv_rsqrtf", 4.0, 0.5),
        ("__nv_roundf", -2.5, -3.0),
        ("__nv_isnanf", float("nan"), 1),
    ],
)
def test_libdevice_symbols_have_numpys_answer_on_the_interpreter(symbol, x, expected):
    import numpy as np
    from xeforge_harness.child.interpreter import libdevice_function

    out = libdevice_function(symbol)(np.array([x], dtype=np.float32))
    assert np.allclose(out, [expected], rtol=1e-6)


def test_an_unknown_libdevice_symbol_has_no_stand_in():
    from xeforge_harness.child.interpreter import libdevice_function

    assert libdevice_function("__nv_cyl_bessel_i0f") is None


def test_a_wrapper_that_asserts_is_cuda_or_synchronizes_runs_on_the_interpreter():
    # In a process of its own: `install` changes torch for the whole process, as in a worker.
    import subprocess
    import sys

    code = (
        "from xeforge_harness.child import interpreter; import torch\n"
        "before = torch.randn(2).is_cuda\n"
        "interpreter.install(); interpreter.install()\n"
        "x = torch.randn(2)\n"
        "assert x.is_cuda and x.device.type == 'cpu' and (x + 1).is_cuda\n"
        "torch.cuda.synchronize()\n"
        "print(before)\n"
    )
    harness = os.path.join(os.path.dirname(__file__), "..", "..", "server", "harness")
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join([harness, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


# --- where a hung worker was (link.stuck_at) ---------------------------------------------------


def test_a_hung_worker_is_placed_at_its_innermost_own_frame_else_its_innermost():
    from xeforge_harness.child.link import stuck_at

    own = """noise before
Timeout (0:00:12)!
Current thread 0x00007f2572311140 (most recent call first):
  File "/venv/lib/python3.12/site-packages/torch/autograd/profiler.py", line 729 in _parse_kineto_results
  File "/tmp/xeforge-candidate-1/files/my_kernel.py", line 31 in forward
  File "/repo/server/harness/xeforge_harness/child/worker.py", line 332 in op_run
  File "<frozen runpy>", line 88 in _run_code
"""
    assert stuck_at(own) == "my_kernel.py:31 in forward"
    library_only = own.replace("/tmp/xeforge-candidate-1/files/my_kernel.py", "/venv/lib/python3.12/site-packages/x.py")
    assert stuck_at(library_only) == "profiler.py:729 in _parse_kineto_results"
    assert stuck_at("a log without a dump\n") is None
