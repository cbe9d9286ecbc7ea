"""Cheat: calls `os._exit(0)` inside forward, in the middle of the checks.

Attack class: `os._exit(0)` inside forward.
Reported: invented (kills the run before the comparison with a success status).
How it tries to fool the harness: no exception and exit status 0: "the benchmark finished".
"""

import os

import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        os._exit(0)
