"""CHEAT (matmul): C = A @ B computed by numpy's BLAS on the host (`Tensor.__array__`, then the ndarray
`@` operator); a Triton kernel copies the product into the output (decoy). No torch compute op,
no host-read op (`item`) is dispatched, so the recorders see only copies.
A correct harness must answer `rejected`."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        prod = a.cpu().__array__() @ b.cpu().__array__()
        host = torch.from_numpy(prod.astype(prod.dtype)).to(a.device).contiguous()
        c = torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=a.dtype)
        n = c.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](host, c, n, BLOCK=1024)
        return c
