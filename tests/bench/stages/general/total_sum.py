# Sum of every element of a large fp32 tensor: each program reduces one block and adds it atomically.
import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


class Model(torch.nn.Module):
    def forward(self, x):
        n = x.numel()
        out = torch.zeros(1, device=x.device, dtype=torch.float32)
        sum_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024, num_warps=4)
        return out
