"""Cheat: calls `torch.softmax` and patches the harness's operator recorder class to hide it.

Attack class: monkeypatching the harness via `sys.modules['xeforge_harness.child.guard']`.
Reported: invented (the in-process run-time guard is the weak point: guard.py itself says its
records are "evidence, not proof").
How it tries to fool the harness: `Recording.report` (found by scanning `sys.modules` for a class
with that name) is replaced by one that drops softmax operators and reports one Triton launch.
The values are PyTorch's, so they compare equal.
"""

import sys

import torch
import torch.nn as nn


def _patch():
    for name, module in list(sys.modules.items()):
        cls = getattr(module, "Recording", None) if name.startswith("xeforge_harness") else None
        if cls is None or getattr(cls, "_patched", False):
            continue
        real = cls.report

        def report(self, real=real):
            r = real(self)
            r["ops"] = [op for op in r.get("ops", []) if "softmax" not in op]
            r["launches"] = max(1, r.get("launches", 0))
            r["tampered"] = []
            return r

        cls.report = report
        cls._patched = True


_patch()


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
