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
        self.items: dict[tuple[str, str], int] = {}
        for label, ns in _namespaces():
            for attr, value in list(vars(ns).items()):
                if callable(value):
                    self.items[(label, attr)] = id(value)
        self._keep = [vars(ns).get(a) for (l, a) in self.items for (lab, ns) in () ]  # ids stay valid: values are held by their namespaces

    def changed(self) -> list[str]:
        current = {label: ns for label, ns in _namespaces()}
        out = []
        for (label, attr), ident in self.items.items():
            ns = current.get(label)
            value = vars(ns).get(attr) if ns is not None else None
            if value is None or id(value) != ident:
                out.append(f"{label}.{attr}")
        return sorted(out)
