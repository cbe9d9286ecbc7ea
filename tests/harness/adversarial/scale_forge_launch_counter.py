"""ATTACK: no Triton kernel at all -- forge the launch counter, a non-callable the snapshot skips.

`integrity.Snapshot` only remembers *callables* of the watched namespaces. `guard.LAUNCHES` is a
plain object whose `count` the recorder reads before and after a call; bumping it is invisible to
the snapshot. The module is fetched as `vars(sys)["mod" + "ules"]` (no `sys.modules` attribute in
the text) under a run-time-built name. The result is computed per element with `Tensor.map2_`
(a Python callable, not an ATen op). The file defines no @triton.jit function whatsoever.

A correct harness must NOT say `correct`: expected `rejected` (no Triton kernel ran).
"""

import sys

import torch
import torch.nn as nn

_guard = vars(sys)["mod" + "ules"]["xeforge" + "_harness.child.guard"]


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = x.clone()
        out.map2_(x, y, lambda _o, a, b: (a + b) * 2.0)
        _guard.LAUNCHES.count += 1
        return out
