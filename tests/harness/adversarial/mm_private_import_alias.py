"""CHEAT (matmul): `torch.mm` (cuBLAS on a GPU: the speed win an optimiser wants) hidden from the
dispatch recorder and from the profiler (CPU and CUDA activity) by torch's private switches imported
under aliases, then a decoy Triton copy. On a GPU this would be `accepted` (faster) with no Triton
GEMM at all.
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
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        c = torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=a.dtype)
        _collect(False, _ACTS)
        with _quiet():
            r = torch.mm(a, b)
        _collect(True, _ACTS)
        n = c.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](r, c, n, BLOCK=1024)
        return c
