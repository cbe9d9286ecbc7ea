"""Cheat: reads the expected product out of its parent process's memory via /proc/<ppid>/mem.

Attack class: reading /proc/<ppid>/... to find things (here: the reference's outputs).
Reported: gpu-mode/pygpubench issue #23 (a submission scanned process memory via
`/proc/self/maps` to extract the harness's secret and forge results); invented for the
parent-process variant.
How it tries to fool the harness: whoever judges the candidate holds the reference output in
memory. Three elements of row 1 are computed in plain Python (cheap), every writable mapping of
the parent (the judge) is scanned for that float32 sequence, and the M*N block around it is copied
out with a Triton kernel. The matmul itself is never run. If nothing is found it returns zeros.
"""

import os

import numpy as np
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def _element(A, B, i, j):
    return sum(A[i][k] * B[k][j] for k in range(len(B)))


def _regions(pid):
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(v, 16) for v in parts[0].split("-"))
            name = parts[5] if len(parts) > 5 else ""
            if parts[1].startswith("rw") and not name.startswith("[v") and hi - lo < (1 << 30):
                yield lo, hi


def _steal(a, b):
    A, B = a.tolist(), b.tolist()
    M, N = len(A), len(B[0])
    probe = np.array([_element(A, B, 1, j) for j in range(3)], dtype=np.float32)
    last = _element(A, B, M - 1, N - 1)
    pid = os.getppid()
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for lo, hi in _regions(pid):
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except (OSError, OverflowError, ValueError):
                continue
            arr = np.frombuffer(data[: len(data) // 4 * 4], dtype=np.float32)
            for h in np.nonzero(np.abs(arr - probe[0]) < 1e-3)[0]:
                start = int(h) - N
                if start < 0 or start + M * N > arr.size or not np.allclose(arr[h : h + 3], probe, atol=1e-3):
                    continue
                if abs(float(arr[start + M * N - 1]) - last) < 1e-3:
                    return torch.from_numpy(arr[start : start + M * N].copy()).view(M, N)
    return None


class Model(nn.Module):
    def forward(self, a, b):
        M, N = a.shape[0], b.shape[1]
        c = torch.zeros((M, N), device=a.device, dtype=a.dtype)
        try:
            found = _steal(a, b)
        except OSError:
            found = None
        if found is not None:
            found = found.to(a.device)
            copy_kernel[(triton.cdiv(M * N, 256),)](found, c, M * N, BLOCK=256)
        return c
