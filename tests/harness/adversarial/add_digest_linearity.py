"""Cheat: in timed calls returns an unwritten tensor and forges its digest by linearity.

Attack class: invented, against a per-call output digest computed in the candidate's process.
Reported: invented.
How it tries to fool the harness: for a linear digest (a weighted sum of the output's elements,
as this harness used until it switched to a nonlinear one), digest(x + y) = digest(x) + digest(y). In calls
made without the operator recorder (the timed ones) `forward` only remembers its inputs; the
harness's `digest.batch` (module global of the worker's digest module, patched through sys.modules) computes the
digest from the remembered inputs, which saves the output write, and any later read of the output
(`detach`, `cpu`, `contiguous`: what serialising a sampled full output does) first runs the
pending kernel, so sampled full checks see right values.
"""

import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl


_SAID = set()


def _say(what):  # one line in the candidate's log, as evidence that the cheat path ran
    if what not in _SAID:
        _SAID.add(what)
        print("[cheat] " + what, flush=True)


_PENDING = {}  # data_ptr of an unwritten output -> (x, y, out)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def _add(x, y, out):
    add_kernel[(triton.cdiv(out.numel(), 256),)](x, y, out, out.numel(), BLOCK_SIZE=256)


def _complete(t):
    job = _PENDING.pop(t.data_ptr(), None) if type(t) is torch.Tensor and t.numel() else None
    if job is not None:
        _add(*job)


def _install():
    digest = sys.modules.get("xeforge_harness.child.digest")
    if digest is None or getattr(digest, "_linear", False):
        return
    real = digest.batch

    def batch(outputs_per_call, tables):
        pending = {
            k
            for k, outs in enumerate(outputs_per_call)
            if len(outs) == 1 and type(outs[0]) is torch.Tensor and outs[0].data_ptr() in _PENDING
        }
        if not pending:
            return real(outputs_per_call, tables)
        _say("forged a timed call's digest from its inputs")
        xs = [[_PENDING[outs[0].data_ptr()][0]] if k in pending else outs for k, outs in enumerate(outputs_per_call)]
        ys = [[_PENDING[outs[0].data_ptr()][1]] if k in pending else outs for k, outs in enumerate(outputs_per_call)]
        dx, dy = real(xs, tables), real(ys, tables)
        return [[a + b for a, b in zip(dx[k], dy[k])] if k in pending else dx[k] for k in range(len(outputs_per_call))]

    digest.batch, digest._linear = batch, True
    for name in ("detach", "cpu", "contiguous", "reshape", "numpy", "tolist"):
        method = getattr(torch.Tensor, name)

        def reading(self, *args, _method=method, **kwargs):
            _complete(self)
            return _method(self, *args, **kwargs)

        setattr(torch.Tensor, name, reading)


_install()


class Model(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        if torch._C._len_torch_dispatch_stack() == 0:
            _PENDING[out.data_ptr()] = (x, y, out)
        else:
            _add(x, y, out)
        return out
