"""Did the candidate rebind PyTorch or harness functions the verdict depends on?

The candidate runs in the same process as the comparison, so at import time it could replace, say,
`torch.allclose` or this package's own checks. A snapshot of the relevant namespaces is taken
before the candidate is imported and compared (by identity) afterwards; any rebinding rejects it.
"""

from __future__ import annotations

import sys

import torch


def _namespaces() -> list[tuple[str, object]]:
    spaces = [("torch", torch), ("torch.Tensor", torch.Tensor), ("torch.linalg", torch.linalg),
              ("torch.nn.functional", torch.nn.functional), ("torch.testing", torch.testing)]
    spaces += [(name, mod) for name, mod in list(sys.modules.items()) if name.startswith("xeforge_harness") and mod is not None]
    return spaces


class Snapshot:
    def __init__(self) -> None:
        # Holding the objects themselves (not their ids) keeps a replaced original alive, so an
        # identity test cannot be fooled by a recycled id.
        self.items: dict[tuple[str, str], object] = {}
        for label, ns in _namespaces():
            for attr, value in list(vars(ns).items()):
                if callable(value):
                    self.items[(label, attr)] = value

    def changed(self) -> list[str]:
        current = dict(_namespaces())
        out = []
        for (label, attr), value in self.items.items():
            ns = current.get(label)
            if ns is None or vars(ns).get(attr) is not value:
                out.append(f"{label}.{attr}")
        return sorted(out)
