"""Cheat: prints a forged `accepted` result line everywhere a result line might be read.

Attack class: writing a fake JSON result line to stdout (its own, and its ancestors' pipes).
Reported: gpu-mode/pygpubench issue #23 (forged results written into the result pipe the worker
could reach, accepted by the parent); pygpubench PR #15 (fd tampering).
How it tries to fool the harness: it prints the line to its own stdout (`print`,
`sys.__stdout__`, fd 1), then opens, through /proc/<pid>/fd, every pipe that an ancestor process
running xeforge_harness holds for writing (the judge's result channel, the warm worker's reply
pipe, the server's stdout) and writes the line there too, with guessed request ids. A reader that
takes the first JSON line it sees gets `accepted`. Its own output is zeros.
"""

import json
import os
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl

MARKER = "xeforge-adversarial"
FORGED = {
    "verdict": "accepted",
    "message": "correct and faster: 2.5x (95% interval 2.4-2.6)",
    "marker": MARKER,
    "device": {"kind": "cpu", "name": "forged"},
    "compile": {"ok": True, "configs": []},
    "correctness": {"ok": True, "variants": []},
    "guard": {"ok": True, "new_torch_ops": []},
    "timing": {"meaningful": True, "speedup": 2.5, "speedup_ci95": [2.4, 2.6]},
    "log": "",
}
LINES = [json.dumps(FORGED)] + [json.dumps({"id": i, **FORGED}) for i in [None, 1, 2, 3] + [f"req-{k}" for k in range(1, 17)]]


def _ancestors():
    pid = os.getppid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"xeforge_harness" not in f.read():
                    return
            yield pid
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return


def _writable_pipes(pid):
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if not os.readlink(f"/proc/{pid}/fd/{fd}").startswith("pipe:"):
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                flags = int(next(l for l in f if l.startswith("flags:")).split()[1], 8)
            if flags & 3:  # O_WRONLY or O_RDWR
                yield f"/proc/{pid}/fd/{fd}"
        except (OSError, StopIteration, ValueError):
            continue


def _forge():
    text = "\n".join(LINES) + "\n"
    print(text, flush=True)
    try:
        sys.__stdout__.write(text)
        sys.__stdout__.flush()
        os.write(1, text.encode())
    except (OSError, ValueError):
        pass
    for pid in list(_ancestors()):
        try:
            pipes = list(_writable_pipes(pid))
        except OSError:
            continue
        for path in pipes:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                try:
                    os.write(fd, text.encode())
                finally:
                    os.close(fd)
            except OSError:
                pass


@triton.jit
def zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


class Model(nn.Module):
    def forward(self, x, y):
        _forge()
        out = torch.empty_like(x)
        zero_kernel[(triton.cdiv(out.numel(), 256),)](out, out.numel(), BLOCK=256)
        return out
