"""Pure parts: order statistics, environment sanitising, request arguments."""

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
    ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY",
     "AWS_ACCESS_KEY_ID", "DB_PASSWORD", "https_proxy", "HTTP_PROXY", "ALL_PROXY", "no_proxy",
     "TRITON_CACHE_DIR", "TRITON_INTERPRET"],
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

    args = P.EvaluateArgs.from_mapping({"kernel": "k.py", "candidate": "c.py", "stop_below": 1.25, "runs": 30,
                                        "timing_family": "bench", "family": "ci"})
    checked = {"kernel": "/abs/k.py", "reference": None, "spec": None, "device": "cpu"}
    job = service._job_args(args, checked)
    assert set(job) == set(P.EvaluateArgs.__dataclass_fields__) - {"candidate"}
    assert (job["stop_below"], job["runs"], job["timing_family"], job["kernel"]) == (1.25, 30, "bench", "/abs/k.py")
    assert P.EvaluateArgs.from_mapping({**job, "candidate": "c.py"}).stop_below == 1.25
