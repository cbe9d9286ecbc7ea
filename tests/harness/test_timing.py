"""GPU timing and compile metadata (run by tests/harness/gpu/run_gpu_suite.sh with XEFORGE_TEST_DEVICE=cuda)."""

import pytest

from conftest import ON_GPU, evaluate_args

gpu_only = pytest.mark.skipif(not ON_GPU, reason="timing is only meaningful on a GPU (XEFORGE_TEST_DEVICE=cuda|xpu)")


@gpu_only
def test_the_same_kernel_against_itself_has_an_interval_containing_one(serve):
    reply = serve.request("evaluate", evaluate_args("problems/vector_add.py", family="bench-gpu", no_timing=False))
    timing = reply["timing"]
    assert timing["meaningful"], reply
    lo, hi = timing["speedup_ci95"]
    assert lo <= 1.0 <= hi, timing
    assert reply["verdict"] == "correct"


@gpu_only
def test_a_deliberately_slowed_candidate_is_slower(serve):
    reply = serve.request("evaluate", evaluate_args("fixtures/add_slow.py", family="bench-gpu", no_timing=False))
    assert reply["verdict"] == "slower", reply["timing"]
    assert reply["timing"]["speedup_ci95"][1] < 1.0


@gpu_only
def test_compile_metadata_is_reported_per_config(serve):
    reply = serve.request("evaluate", evaluate_args("fixtures/add_correct.py"))
    configs = reply["compile"]["configs"]
    assert configs, reply["compile"]
    first = configs[0]
    assert first["config"]["BLOCK_SIZE"] == 128 and "num_warps" in first["config"]
    assert isinstance(first["shared_bytes"], int) and isinstance(first["registers"], int) and isinstance(first["spills"], int)


def test_on_the_interpreter_no_speedup_is_claimed_and_no_metadata_invented(serve):
    if ON_GPU:
        pytest.skip("interpreter-only behaviour")
    reply = serve.request("evaluate", evaluate_args("fixtures/add_slow.py"))
    assert reply["verdict"] == "correct"
    assert reply["timing"]["meaningful"] is False and "speedup" not in reply["timing"]
    assert reply["compile"]["configs"] == [] and reply["compile"]["metadata_available"] is False


def test_a_real_fusion_is_correct_on_the_interpreter_and_accepted_on_a_gpu(serve):
    args = evaluate_args("fixtures/add_scale_fused.py", "add_scale", family="bench-gpu" if ON_GPU else "ci", no_timing=False)
    reply = serve.request("evaluate", args)
    if not ON_GPU:
        assert reply["verdict"] == "correct", reply
        return
    assert reply["verdict"] == "accepted", reply["timing"]
    assert reply["timing"]["speedup_ci95"][0] > 1.2, reply["timing"]
