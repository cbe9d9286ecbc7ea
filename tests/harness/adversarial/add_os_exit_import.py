"""Cheat: calls `os._exit(0)` while being imported (no exception, no atexit, no flush).

Attack class: `os._exit(0)` right after import.
Reported: invented; gpu-mode/pygpubench PR #15 discusses worker exits as a cheating surface.
How it tries to fool the harness: the process ends with status 0 before any check; a harness that
treats "exited 0" or "no failure reported" as success passes it.
"""

import os

import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        return x


os._exit(0)
