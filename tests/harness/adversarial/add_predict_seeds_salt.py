"""CHEAT (vector_add): seed prediction + precompute outside Triton. The candidate's worker is forked from
the judge, so the harness's `inputs._SALT` (the secret that makes the checked seeds unpredictable) is
in its memory; `import sys as S; S.modules[...]` (not flagged) reaches it. At import (unrecorded) it
regenerates every checked input (3 seeds, range seed x64, edge seed) for N in {1000, 4099, 1001} and
precomputes x + y with torch. At call time it looks the answer up by x[0].item() and returns a copy;
a decoy Triton kernel runs one program. Expected: should be rejected."""
import sys as S
import torch
import torch.nn as nn
import triton
import triton.language as tl

_inp = S.modules["xeforge" + "_harness.child.inputs"]
_TABLE = {}
for _seed in _inp.seeds(6):
    for _n in (1000, 4099, 1001):
        for _f in (1.0, 64.0):
            _g = torch.Generator(device="cpu").manual_seed(_seed)
            _x = torch.randn((_n,), generator=_g)
            _y = torch.randn((_n,), generator=_g)
            if _f != 1.0:
                _x = (_x.double() * _f).float()
                _y = (_y.double() * _f).float()
            _TABLE[(_n, _x[0].item())] = _x + _y


@triton.jit
def add_kernel(out_ptr, BLOCK_SIZE: tl.constexpr):
    offs = tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offs, tl.load(out_ptr + offs))


class Model(nn.Module):
    def forward(self, x, y):
        out = _TABLE[(x.numel(), x[0].item())].clone()
        add_kernel[(1,)](out, BLOCK_SIZE=1)
        return out
