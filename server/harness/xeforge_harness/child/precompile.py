"""Compile a `triton.autotune` list's configs side by side before the autotuner searches them.

Triton's autotuner compiles each config when its search first benchmarks it, one after the other:
for the autotune stage's screen (a whole pruned space in one list) that was 10-60 s of a stage on
an H200, most of it compiling. Triton's compiler releases the GIL in its native passes and runs
`ptxas` as a subprocess, so threads compile configs in parallel (`tests/bench/compile_threads.py`:
8 GEMM configs for sm_90 on a 2-core machine, median of 3: 3.80 s in turn, 1.87 s on two threads,
Triton 3.9.0). The compiled kernels land in the JIT
function's in-memory cache (and the process's own on-disk cache), where the search then finds them.

Warm-up only: this runs on the first call of a key the autotuner has not searched, which the harness
makes before anything is timed, in the process that already runs that code. Best effort: whatever
fails here is left for the autotuner to compile (and report) as it always does.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

MAX_THREADS = 8

# Off while a screen's checked calls run (`search_timed`): there the autotuner takes the list's first
# config without searching, since the search that orders the sweep is the timed shape's, and a search
# of each small checked shape (compiling every config for it, then ~0.13 s of benchmarking each) bought
# nothing. The first config is the start config, which the stage has already seen pass on these shapes.
_searching = threading.local()


@contextlib.contextmanager
def _switched(name: str, value: bool, default: bool):
    """This thread's switch `name` set to `value` within, then back to what it was."""
    before = getattr(_searching, name, default)
    setattr(_searching, name, value)
    try:
        yield
    finally:
        setattr(_searching, name, before)


def searching(on: bool):
    """Within: the autotuner searches a key it has not seen (`on`), or takes the list's first config."""
    return _switched("on", on, True)


def timed():
    """Within: the wrapper steps aside (the autotuner's own `run` at once). Timed calls come after the
    warm-up that searched their keys, so there is nothing to compile ahead, and the check that says so
    (building the call's search key) would be launch time the candidate's own code does not spend: on
    an H100 a list of configs took 51 µs a call to issue against 31 µs for one config, whose launch
    goes through no autotuner (tests/bench/results/autotune_launch_cost_h100.md)."""
    return _switched("timed", True, False)


def threads() -> int:
    """Compile threads: the CPUs this process may use, at most MAX_THREADS."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(MAX_THREADS, n))


def install() -> None:
    """Wrap `Autotuner.run` in this process (before any user module is imported)."""
    try:
        from triton.runtime import autotuner, jit
    except ImportError:
        return
    original = autotuner.Autotuner.run
    if getattr(original, "_xeforge_precompile", False):
        return

    def run(self, *args, **kwargs):
        if getattr(_searching, "timed", False):
            return original(self, *args, **kwargs)
        if len(getattr(self, "configs", ())) > 1:
            try:
                if getattr(_searching, "on", True):
                    precompile(self, args, kwargs, jit.JITFunction)
                else:
                    first_config(self, args, kwargs)
            except Exception:  # noqa: BLE001  (best effort: the autotuner compiles what is left)
                pass
        return original(self, *args, **kwargs)

    run._xeforge_precompile = True  # type: ignore[attr-defined]
    run.__wrapped__ = original  # type: ignore[attr-defined]
    autotuner.Autotuner.run = run


def will_search(tuner, args: tuple, kwargs: dict) -> bool:
    """Whether this call makes the autotuner search: several configs, a key it has no pick for, searches
    on (see `searching`) and not a timed call."""
    if getattr(_searching, "timed", False) or not getattr(_searching, "on", True):
        return False
    if len(getattr(tuner, "configs", ())) < 2:
        return False
    return search_key(tuner, args, kwargs) not in tuner.cache


def search_key(tuner, args: tuple, kwargs: dict) -> tuple:
    """The key the autotuner caches its pick under (`Autotuner.run`): its key arguments, then the
    dtype of every argument that has one."""
    named = {**dict(zip(tuner.arg_names, args)), **kwargs}
    named = {k: v for k, v in named.items() if k in tuner.arg_names}
    key = [named[k] for k in tuner.keys if k in named]
    key += [str(v.dtype) for v in named.values() if hasattr(v, "dtype")]
    return tuple(key)


def first_config(tuner, args: tuple, kwargs: dict) -> bool:
    """Make the list's first config the autotuner's pick for this call's key, unless the key has one;
    returns whether it did. An unhashable key is left to the autotuner, which will say so itself."""
    try:
        key = search_key(tuner, args, kwargs)
        if key in tuner.cache:
            return False
    except TypeError:
        return False
    tuner.cache[key] = tuner.configs[0]
    return True


def precompile(tuner, args: tuple, kwargs: dict, jit_function: type) -> int:
    """Compile every config the autotuner would search for this call; returns how many were handed
    to threads (0 when its pick is cached or there is nothing to do side by side)."""
    try:
        if search_key(tuner, args, kwargs) in tuner.cache:
            return 0
    except TypeError:  # an unhashable key: the autotuner will say so itself
        return 0
    saved = getattr(tuner, "nargs", None)
    tuner.nargs = dict(zip(tuner.arg_names, args))  # what pruning hooks and perf models read
    try:
        configs = tuner.prune_configs(kwargs)
    finally:
        tuner.nargs = saved
    call = {k: v for k, v in kwargs.items() if k != "warmup"}  # `warmup` passes its own
    jobs = [job for job in (_warm_up(tuner.fn, args, {**call, **c.all_kwargs()}, jit_function) for c in configs) if job]
    if len(jobs) < 2:
        return 0
    device = _current_device()
    try:
        jobs[0]()  # alone: the JIT function makes its per-device caches on first use
    except Exception:  # noqa: BLE001  (that config fails again, and is reported, in the search)
        pass
    with ThreadPoolExecutor(max_workers=min(threads(), len(jobs) - 1), thread_name_prefix="xeforge-compile") as pool:
        futures = [pool.submit(_on_device, device, job) for job in jobs[1:]]
        for f in futures:
            f.exception()  # wait; a config that fails to compile fails again, and is reported, in the search
    return len(jobs) - 1


def _warm_up(fn: Any, args: tuple, kwargs: dict, jit_function: type) -> Callable[[], Any] | None:
    """`JITFunction.warmup` for one config, through any `triton.heuristics` between the autotuner and
    the JIT function (their values computed as `Heuristics.run` computes them)."""
    kwargs = dict(kwargs)
    while not isinstance(fn, jit_function):
        values = getattr(fn, "values", None)
        if isinstance(values, dict):
            for name, heuristic in values.items():
                kwargs[name] = heuristic({**dict(zip(fn.arg_names, args)), **kwargs})
        inner = getattr(fn, "fn", None)
        if inner is None:
            return None
        fn = inner
    jit: Any = fn
    return lambda: jit.warmup(*args, **kwargs)


def _current_device():
    try:
        from triton.runtime.driver import driver

        return driver.active.get_current_device()
    except Exception:  # noqa: BLE001
        return None


def _on_device(device, job: Callable[[], Any]) -> Any:
    """Run `job` with the caller's current device (a new thread starts on device 0)."""
    if device is not None:
        try:
            from triton.runtime.driver import driver

            driver.active.set_current_device(device)
        except Exception:  # noqa: BLE001
            pass
    return job()
