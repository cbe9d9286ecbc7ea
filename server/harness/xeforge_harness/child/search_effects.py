"""Whether a `triton.autotune` search leaves the caller's tensors as one call of its pick would.

Triton's autotuner times every config on the caller's own arguments, many calls each. A kernel that
updates an argument in place (`y += a * x`, an atomic accumulation into a zeroed buffer) then returns
from its first call of each new shape with that update applied once per benchmark call, unless the
decorator names the argument in `restore_value` (or `reset_to_zero`). The comparison alone misses it
on a GPU: the harness's warm-up makes the search, and the checked calls of that shape find the pick
cached. A user's program meets it on every new shape.

So, in the candidate's process, the first call of each key the autotuner is about to search is made
twice from the same argument contents: once as it is (the search, then the pick), then once more
with the pick cached, which is what a single call does. Arguments the two leave different were
changed by the search; the judge reads that (`findings`) and the candidate is incorrect. The caller
keeps what the search left, as a user's program would; in the trusted worker, what one call computes
(the reference of an original whose own list lacks `restore_value` is what its kernel means). The cost is one more call of the kernel and
two copies of its tensor arguments per key searched; timed calls never search.

A candidate that hides its own finding gains nothing from it: the finding only ever fails a candidate.
"""

from __future__ import annotations

from typing import Any

import torch

from . import guard

_findings: list[dict] = []
# (kernel, argument names, contents after the search, contents after one call): kept until `settle`
# compares them, at the worker's next request.
_pending: list[tuple[str, list[str], list[torch.Tensor], list[torch.Tensor]]] = []


def findings() -> list[dict]:
    """Each search that changed arguments: `{"kernel", "args"}`."""
    settle()
    return list(_findings)


def settle() -> None:
    """Compare what each search since the last call left against one call's effect, and free the copies."""
    while _pending:
        kernel, names, searched, once = _pending.pop(0)
        changed = [n for n, s, o in zip(names, searched, once) if not _same(s, o)]
        if changed:
            _findings.append({"kernel": kernel, "args": changed})


def install(will_search, keep_once: bool = False) -> None:
    """Wrap `Autotuner.run`; `will_search(tuner, args, kwargs)` says whether this call searches.

    `keep_once`: the trusted worker's, where the original's own list may lack `restore_value`: its
    reference is then what one call computes, not what its search left (the finding becomes a note)."""
    try:
        from triton.runtime import autotuner
    except ImportError:
        return
    original = autotuner.Autotuner.run
    if getattr(original, "_xeforge_search_effects", False):
        return

    def run(self, *args, **kwargs):
        try:
            searches = will_search(self, args, kwargs)
        except Exception:  # noqa: BLE001  (an unhashable key: the autotuner says so itself)
            searches = False
        if not searches:
            return original(self, *args, **kwargs)
        named = _tensors(self, args, kwargs)
        before = [t.clone() for _, t in named]
        # Inside a checked call (a key the warm-up did not meet) the search benchmarks briefly: every
        # launch of it is a profiled event (`guard.light_search`).
        with guard.light_search(self):
            out = original(self, *args, **kwargs)
        searched = [t.clone() for _, t in named]
        for (_, t), b in zip(named, before):
            t.copy_(b)
        del before  # two copies at most at any time: device memory is the caller's too
        original(self, *args, **kwargs)  # the pick is cached now: one call's worth of effect
        once = [t.clone() for _, t in named]
        if not keep_once:
            for (_, t), s in zip(named, searched):
                t.copy_(s)
        # Compared later (`settle`), outside the call's recording: a comparison here would be operators
        # the candidate seems to run. Copies are not compute, and they are all that happens within.
        _pending.append((_kernel_name(self), [n for n, _ in named], searched, once))
        return out

    run._xeforge_search_effects = True  # type: ignore[attr-defined]
    run.__wrapped__ = original  # type: ignore[attr-defined]
    autotuner.Autotuner.run = run


def message(finding: dict) -> str:
    """Why a finding makes the candidate incorrect, and the one-line fix."""
    args = ", ".join(f"`{a}`" for a in finding["args"])
    names = ", ".join(repr(a.split(" ")[0]) for a in finding["args"])
    return (
        f"the autotuner's search of `{finding['kernel']}` changed {args} in place: Triton times each config on "
        "the caller's tensors, so the first call of every new shape returns them updated once per benchmark "
        f"call; name them in the decorator, `restore_value=[{names}]` (or `reset_to_zero=` for a buffer the "
        "kernel accumulates into from zero)"
    )


def _tensors(tuner, args: tuple, kwargs: dict) -> list[tuple[str, torch.Tensor]]:
    """Each tensor argument once, named by its first parameter; one passed as several parameters
    (`k[grid](x, x, n)`) is named `x_ptr (also out_ptr)`: a fix may name any of them."""
    names = list(getattr(tuner, "arg_names", []) or [])
    named: dict[str, Any] = {**dict(zip(names, args)), **{k: v for k, v in kwargs.items() if k in names}}
    by_id: dict[int, tuple[list[str], torch.Tensor]] = {}
    for name, v in named.items():
        if isinstance(v, torch.Tensor):
            by_id.setdefault(id(v), ([], v))[0].append(name)
    return [(ns[0] + (f" (also {', '.join(ns[1:])})" if len(ns) > 1 else ""), t) for ns, t in by_id.values()]


# The contract's tolerances by dtype: a kernel whose float atomics sum in another order on each call
# is not flagged for that alone.
_TOL = {torch.float16: 1e-2, torch.bfloat16: 1e-2}


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if not (a.is_floating_point() or a.is_complex()):
        return bool(torch.equal(a, b))
    tol = _TOL.get(a.dtype, 1e-4)
    return bool(torch.allclose(a, b, rtol=tol, atol=tol, equal_nan=True))


def _kernel_name(tuner) -> str:
    fn = getattr(tuner, "base_fn", None) or getattr(tuner, "fn", None)
    while fn is not None and not hasattr(fn, "__name__") and hasattr(fn, "fn"):
        fn = fn.fn
    return str(getattr(fn, "__name__", "kernel"))
