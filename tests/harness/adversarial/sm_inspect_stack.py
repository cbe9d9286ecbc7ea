"""Cheat: calls `torch.softmax`, then uses `inspect.stack()` to doctor the harness's recorder.

Attack class: frame walking (`inspect.stack`) into the harness's local variables.
Reported: invented (in-process guards are "evidence, not proof", as this harness's own guard.py
says; the class is the one of pygpubench issue #23: the checker's state is reachable from the
kernel's process).
How it tries to fool the harness: the operator recorder around `forward` is a local of a caller
frame (`rec` or anything with a `report` method); replacing that object's `report` with one that
returns a clean record (no PyTorch operators, one Triton launch) hides the fallback. The values
are PyTorch's, so they compare equal.
"""

import inspect

import torch
import torch.nn as nn

CLEAN = {"ops": [], "kernels": [], "launches": 1, "tampered": []}


def _doctor_recorders():
    for info in inspect.stack(context=0)[1:]:
        for value in list(info.frame.f_locals.values()):
            if hasattr(value, "report") and hasattr(value, "launches") and hasattr(value, "ops"):
                value.report = lambda: dict(CLEAN)


class Model(nn.Module):
    def forward(self, x):
        _doctor_recorders()
        return torch.softmax(x, dim=-1)
