"""The run-time operator guard, in-process on CPU tensors."""

import torch
from xeforge_harness.child.guard import NON_COMPUTE, OpRecorder, is_compute, new_compute_ops


def _reflected_conv2d(x, weight, bias):
    # the evasion pattern from docs/rules.md (XF901), verbatim apart from the wrapper
    _nn = __import__("torch").nn
    _fn = getattr(_nn, "".join(["fu", "nctional"]))
    conv2d = getattr(_fn, "".join(["con", "v2d"]))
    return conv2d(x, weight, bias=bias, stride=(1, 1), padding=(0, 0))


def test_conv2d_reached_by_reflection_is_recorded_as_aten_convolution():
    x, w, b = torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3), torch.randn(3)
    with torch.no_grad(), OpRecorder() as rec:
        _reflected_conv2d(x, w, b)
    assert "aten.convolution" in rec.compute_ops()
    assert new_compute_ops(rec.ops, original={"aten.empty"}) == ["aten.convolution"]


def test_allocation_views_and_copies_are_not_compute():
    x = torch.randn(4, 4)
    with OpRecorder() as rec:
        y = torch.empty_like(x)
        z = x.view(16).reshape(4, 4).t().contiguous()
        y.copy_(z)
        torch.zeros(3)
        x.to(torch.float16)
    assert rec.ops, "the recorder saw nothing"
    assert rec.compute_ops() == set()


def test_an_operator_the_original_also_ran_is_not_reported():
    assert new_compute_ops({"aten.add", "aten.mul"}, original={"aten.add"}) == ["aten.mul"]


def test_the_allow_list_is_explicit_about_what_is_not_compute():
    assert not is_compute("aten.empty_like")
    assert is_compute("aten.add")
    assert is_compute("aten.mm")
    assert is_compute("custom.my_op")
    assert {"mm", "addmm", "convolution", "add", "softmax", "_softmax"}.isdisjoint(NON_COMPUTE)


def test_a_search_inside_a_recorded_call_benchmarks_briefly_and_stays_recorded(monkeypatch):
    import torch
    from triton import testing
    from triton.runtime.autotuner import Autotuner
    from xeforge_harness.child import guard

    asked = []

    def do_bench(fn, warmup, rep, quantiles):  # the device benchmarker, which the CPU has not
        asked.append((warmup, rep))
        fn()
        return [1.0] * len(quantiles)

    monkeypatch.setattr(testing, "do_bench", do_bench)

    tuner = Autotuner.__new__(Autotuner)  # the attributes a search reads, no kernel behind them
    own = object()
    tuner.__dict__.update(_do_bench=own, num_warmups=None, num_reps=None)
    with guard.light_search(tuner):
        assert tuner._do_bench is own, "outside a recorded call the search is the candidate's own"
    x = torch.ones(8)
    with guard.Recording("cpu"), guard.light_search(tuner):
        assert tuner._do_bench is own, "the interpreter's search times nothing: left as it is"
    with guard.Recording("cuda") as rec:  # no GPU here: the recorders run all the same
        torch.add(x, 1)
        with guard.light_search(tuner):
            assert tuner._do_bench is not own
            timed = tuner._do_bench(lambda: torch.mul(x, 2), quantiles=(0.5, 0.2, 0.8))
        torch.sub(x, 3)
    assert tuner._do_bench is own and tuner.num_reps is None
    assert len(timed) == 3 and asked == [guard.LIGHT_BENCH_MS]
    report = rec.report()
    assert {"aten.add", "aten.mul", "aten.sub"} <= set(report["ops"]), report
    assert report["tampered"] == [], report
