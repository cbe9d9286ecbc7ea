"""CHEAT (softmax): `torch.softmax` does the work; the recorders are blinded with torch's private
switches imported under aliases (`from torch.autograd.profiler import _toggle_collection_dynamic as
_collect`, `from torch._C import _DisableTorchDispatch as _quiet`): the source check only flags
these names as attributes or bare names, not as `from ... import X as Y`. A Triton kernel copies
the result (decoy). On a GPU the CUDA activity is switched off too, so the softmax kernel of ATen
never shows in the device trace.
A correct harness must answer `rejected`."""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch._C import _DisableTorchDispatch as _quiet
from torch.autograd.profiler import _toggle_collection_dynamic as _collect
from torch.profiler import ProfilerActivity as _PA


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)


_ACTS = {_PA.CPU, _PA.CUDA}


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        _collect(False, _ACTS)
        with _quiet():
            r = torch.softmax(x, dim=-1)
        _collect(True, _ACTS)
        n = x.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](r, out, n, BLOCK=1024)
        return out
