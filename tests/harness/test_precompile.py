"""The worker compiles an autotune list's configs side by side before the autotuner's first search
(child/precompile.py). The JIT function is replaced by a recorder: what is checked is which configs
reach `warmup`, with which arguments, and on which threads; real compiles need a GPU backend."""

from __future__ import annotations

import threading

import pytest
import triton
from xeforge_harness.child import precompile


class Recorder:
    """Stands in for `JITFunction`: records every `warmup` call."""

    def __init__(self, fail_on: int | None = None):
        def kernel(x, n, BLOCK, EVEN):  # noqa: N803  (Triton's spelling of constexpr names)
            pass

        self.fn = kernel
        self.arg_names = ["x", "n", "BLOCK", "EVEN"]
        self.fail_on = fail_on
        self.calls: list[tuple[str, dict]] = []
        self.lock = threading.Lock()

    def warmup(self, *args, **kwargs):
        with self.lock:
            self.calls.append((threading.current_thread().name, dict(kwargs)))
        if kwargs.get("BLOCK") == self.fail_on:
            raise RuntimeError("out of resources")


CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128, 256) for w in (2, 4)]


def tuner(recorder: Recorder, **options):
    heuristics = triton.heuristics({"EVEN": lambda a: a["n"] % a["BLOCK"] == 0})(recorder)
    return triton.autotune(configs=CONFIGS, key=["n"], **options)(heuristics)


def launch_kwargs() -> dict:
    return {"grid": (4,), "warmup": False}


def test_every_config_is_warmed_up_once_with_its_heuristics_and_no_launch_flag():
    rec = Recorder()
    assert precompile.precompile(tuner(rec), ("x", 1000), launch_kwargs(), Recorder) == len(CONFIGS) - 1
    seen = sorted((k["BLOCK"], k["num_warps"]) for _, k in rec.calls)
    assert seen == sorted((c.kwargs["BLOCK"], c.num_warps) for c in CONFIGS)
    for _, k in rec.calls:
        assert k["grid"] == (4,) and "warmup" not in k
        assert k["EVEN"] == (1000 % k["BLOCK"] == 0)


def test_all_but_the_first_compile_on_threads_when_the_machine_has_cpus_to_spare():
    rec = Recorder()
    precompile.precompile(tuner(rec), ("x", 1000), launch_kwargs(), Recorder)
    names = [name for name, _ in rec.calls]
    assert names[0] == threading.current_thread().name
    assert all(n.startswith("xeforge-compile") for n in names[1:])


def test_a_key_already_searched_compiles_nothing():
    rec = Recorder()
    t = tuner(rec)
    t.cache[precompile.search_key(t, ("x", 1000), launch_kwargs())] = CONFIGS[0]
    assert precompile.precompile(t, ("x", 1000), launch_kwargs(), Recorder) == 0
    assert rec.calls == []
    assert precompile.search_key(t, ("x", 1000), {}) != precompile.search_key(t, ("x", 999), {})


def test_only_the_configs_left_by_the_lists_own_pruning_are_compiled():
    rec = Recorder()

    def small_blocks(configs, named_args, **kwargs):
        assert named_args["n"] == 1000  # pruning hooks see the call's arguments, as in a search
        return [c for c in configs if c.kwargs["BLOCK"] <= 128]

    t = tuner(rec, prune_configs_by={"early_config_prune": small_blocks})
    assert precompile.precompile(t, ("x", 1000), launch_kwargs(), Recorder) == 3
    assert {k["BLOCK"] for _, k in rec.calls} == {64, 128}
    assert t.nargs is None  # left as the autotuner leaves it between calls


@pytest.mark.parametrize("failing", [64, 128])  # the first config (compiled alone), or later ones
def test_a_config_that_fails_to_compile_leaves_the_others_compiled(failing):
    rec = Recorder(fail_on=failing)
    assert precompile.precompile(tuner(rec), ("x", 1000), launch_kwargs(), Recorder) == len(CONFIGS) - 1
    assert len(rec.calls) == len(CONFIGS)


def test_installed_once_and_the_search_itself_still_runs(monkeypatch):
    from triton.runtime import autotuner

    searched = []
    monkeypatch.setattr(autotuner.Autotuner, "run", lambda self, *a, **k: searched.append(k) or "launched")
    precompile.install()
    wrapped = autotuner.Autotuner.run
    precompile.install()
    assert autotuner.Autotuner.run is wrapped
    rec = Recorder()
    # The real JIT class is not the recorder: the walk finds no JIT function and compiles nothing,
    # and the autotuner's own run follows whatever happened before it.
    assert tuner(rec).run("x", 1000, **launch_kwargs()) == "launched"
    assert searched == [launch_kwargs()]
    assert rec.calls == []


@pytest.mark.parametrize("cpus,expected", [(1, 1), (2, 2), (64, precompile.MAX_THREADS)])
def test_threads_follow_the_cpus_this_process_may_use(monkeypatch, cpus, expected):
    monkeypatch.setattr(precompile.os, "sched_getaffinity", lambda _pid: set(range(cpus)))
    assert precompile.threads() == expected


def test_a_warm_up_is_not_counted_as_a_launch(monkeypatch):
    """The guard counts Triton launches to tell a candidate that launches none; the compiles done
    ahead of a search (or a candidate's own `warmup` calls) launch nothing and must not count."""
    from triton.runtime import jit
    from xeforge_harness.child import guard

    ran = []
    monkeypatch.setattr(jit.JITFunction, "run", lambda self, *a, **k: ran.append(k.get("warmup")))
    guard.install_launch_hooks()
    before = guard.LAUNCHES.count
    fn = object.__new__(jit.JITFunction)
    jit.JITFunction.run(fn, grid=(1,), warmup=True)
    assert guard.LAUNCHES.count == before
    jit.JITFunction.run(fn, grid=(1,), warmup=False)
    assert guard.LAUNCHES.count == before + 1
    assert ran == [True, False]


def test_without_search_a_new_key_takes_the_first_config_and_nothing_is_compiled(monkeypatch):
    """A screen's checked calls (`search_timed`): the search that orders the sweep is the timed
    shape's, so the small shapes get the list's first config (the start config), no compiles ahead."""
    from triton.runtime import autotuner

    monkeypatch.setattr(autotuner.Autotuner, "run", lambda self, *a, **k: "launched")
    precompile.install()
    rec = Recorder()
    t = tuner(rec)
    with precompile.searching(False):
        assert t.run("x", 1000, **launch_kwargs()) == "launched"
    assert t.cache == {precompile.search_key(t, ("x", 1000), {}): CONFIGS[0]}
    assert rec.calls == []
    # A key already searched keeps its pick; after the block the switch is back on.
    t.cache[precompile.search_key(t, ("x", 999), {})] = CONFIGS[3]
    with precompile.searching(False):
        assert precompile.first_config(t, ("x", 999), {}) is False
    assert t.cache[precompile.search_key(t, ("x", 999), {})] == CONFIGS[3]
    assert precompile._searching.on is True


def test_the_switch_is_per_thread():
    seen = []
    with precompile.searching(False):
        worker = threading.Thread(target=lambda: seen.append(getattr(precompile._searching, "on", True)))
        worker.start()
        worker.join()
    assert seen == [True]


def test_timed_calls_go_straight_to_the_autotuner(monkeypatch):
    """A timed batch's calls: their keys were searched in the warm-up, so the wrapper does nothing,
    not even the search-key check, and the autotuner's own run follows at once."""
    from triton.runtime import autotuner

    monkeypatch.setattr(autotuner.Autotuner, "run", lambda self, *a, **k: "launched")
    precompile.install()
    keys = []
    monkeypatch.setattr(precompile, "search_key", lambda *a: keys.append(a) or ())
    rec = Recorder()
    t = tuner(rec)
    with precompile.timed():
        assert t.run("x", 1000, **launch_kwargs()) == "launched"
    assert keys == [] and rec.calls == []
    # Outside, the wrapper is back (a new key is compiled ahead of its search).
    assert t.run("x", 1000, **launch_kwargs()) == "launched"
    assert keys != []
    assert precompile._searching.timed is False
