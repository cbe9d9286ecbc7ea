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


@gpu_only
def test_a_slower_candidate_stops_early_below_the_callers_best(serve):
    args = evaluate_args("fixtures/add_slow.py", family="bench-gpu", no_timing=False)
    reply = serve.request("evaluate", {**args, "stop_below": 1.0})
    timing = reply["timing"]
    assert reply["verdict"] == "slower" and timing["stopped_early"], timing
    assert 10 <= timing["runs"] < 100 and timing["runs"] % 5 == 0, timing


def test_the_stopping_rule_reads_the_interval_every_fifth_pair_from_ten_on():
    from xeforge_harness.child.timing import _decided_slower

    slow = ([100.0] * 20, [150.0] * 20, [0.0] * 20)  # the candidate takes 1.5x the original's time
    assert not _decided_slower(*[x[:9] for x in slow], 0.0, 1, 1.0)  # too few pairs to read
    assert not _decided_slower(*[x[:11] for x in slow], 0.0, 1, 1.0)  # not a look
    assert _decided_slower(*[x[:10] for x in slow], 0.0, 1, 1.0)
    assert not _decided_slower(*[x[:10] for x in slow], 0.0, 1, 0.6)  # 0.67 is not below 0.6
    assert not _decided_slower(*[x[:10] for x in slow], 0.0, 1, None)  # no caller's best: never
    same = ([100.0] * 10, [100.0] * 10, [0.0] * 10)
    assert not _decided_slower(*same, 0.0, 1, 1.0)


def test_stop_below_must_be_a_positive_ratio():
    from xeforge_harness.protocol import ArgsError, EvaluateArgs

    base = {"kernel": "k.py", "candidate": "c.py"}
    assert EvaluateArgs.from_mapping({**base, "stop_below": 1.2}).stop_below == 1.2
    for bad in (0, -1.0, True, "1.2"):
        with pytest.raises(ArgsError):
            EvaluateArgs.from_mapping({**base, "stop_below": bad})
