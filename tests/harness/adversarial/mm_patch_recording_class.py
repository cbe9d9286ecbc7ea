"""ATTACK: rewrite the recorder's *class* (not a module attribute), reached without flagged text.

`integrity.Snapshot` compares, by identity, the callables in the namespaces of `torch`, `time`,
`builtins`, the Triton runtime classes and every `xeforge_harness` module. It holds the class
`guard.Recording` itself, so replacing one of its *methods* (`Recording.report`) changes nothing it
compares. The module is found through `print.__self__` (= builtins) -> `__import__`, with the
module name assembled at run time, so neither `sys.modules`, `__import__` as a name, nor a string
starting with `xeforge_harness` appears in the text. The patched `report` says: no ops, one
Triton launch, nothing tampered. `forward` then simply returns `torch.mm(a, b)`.

A correct harness must NOT say `correct`: expected `rejected` (tampering / library compute).
"""

import torch
import torch.nn as nn
import triton  # noqa: F401
import triton.language as tl  # noqa: F401

_load = print.__self__.__import__
_guard = _load("xeforge" + "_harness.child.guard", fromlist=["Recording"])


def _clean_report(self):
    return {"ops": [], "kernels": [], "launches": 1, "launched": ["matmul_kernel"], "tampered": []}


_guard.Recording.report = _clean_report


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.mm(a, b)
