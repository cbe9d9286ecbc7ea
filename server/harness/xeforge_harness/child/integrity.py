"""Which functions the verification relies on did the candidate rebind in its own process?

Correctness and timing are decided elsewhere, so a rebinding cannot fake them; it is still a
rejection, because nothing honest needs it and it is how recorders, timers and launch paths inside
the candidate's process are blinded (`torch.cuda.Event.record = ...`, `torch.Tensor.__add__ = ...`,
`time.perf_counter = ...`). A snapshot (by identity) is taken before the candidate is imported.
"""

from __future__ import annotations

import builtins
import sys
import time

import torch


def _namespaces() -> list[tuple[str, object]]:
    spaces: list[tuple[str, object]] = [
        ("torch", torch),
        ("torch.Tensor", torch.Tensor),
        ("torch.linalg", torch.linalg),
        ("torch.nn.functional", torch.nn.functional),
        ("torch.testing", torch.testing),
        ("time", time),
        ("builtins", builtins),
    ]
    for kind in ("cuda", "xpu"):
        api = getattr(torch, kind, None)
        if api is not None:
            spaces.append((f"torch.{kind}", api))
            for cls in ("Event", "Stream"):
                if hasattr(api, cls):
                    spaces.append((f"torch.{kind}.{cls}", getattr(api, cls)))
    try:
        from triton.runtime import autotuner, jit

        spaces += [("triton.runtime.jit.JITFunction", jit.JITFunction), ("triton.runtime.autotuner.Autotuner", autotuner.Autotuner)]
    except ImportError:
        pass
    try:  # the interpreter's builder and executor carry the device model (TF32, concurrency, bounds)
        from triton.runtime import interpreter

        spaces += [
            ("triton.runtime.interpreter.InterpreterBuilder", interpreter.InterpreterBuilder),
            ("triton.runtime.interpreter.GridExecutor", interpreter.GridExecutor),
        ]
    except (ImportError, AttributeError):
        pass
    spaces += [(name, mod) for name, mod in list(sys.modules.items()) if name.startswith("xeforge_harness") and mod is not None]
    return spaces


class Snapshot:
    def __init__(self) -> None:
        # Holding the objects themselves (not their ids) keeps a replaced original alive, so an
        # identity test cannot be fooled by a recycled id.
        self.items: dict[tuple[str, str], object] = {}
        for label, ns in _namespaces():
            for attr, value in list(vars(ns).items()):
                if callable(value) or isinstance(value, (staticmethod, classmethod, property)):
                    self.items[(label, attr)] = value

    def changed(self) -> list[str]:
        current = dict(_namespaces())
        out = []
        for (label, attr), value in self.items.items():
            ns = current.get(label)
            if ns is None or vars(ns).get(attr) is not value:
                out.append(f"{label}.{attr}")
        return sorted(out)
