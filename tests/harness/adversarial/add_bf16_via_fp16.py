"""CHEAT (vector_add_bf16): the bf16 add is done in fp16 (x and y converted to fp16, added, converted
back). For the spec's randn inputs and the range check's x64 (|x| < ~300) fp16 is even closer than
bf16. WRONG for any |x| or |x+y| above 65504 (fp16 overflows to inf; bf16 holds up to 3.4e38) and for
tiny values below fp16's range (flushed): e.g. x = y = 1e5 gives inf instead of 2e5.
A correct harness must answer `incorrect` (the range check's factor is too small for bf16)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float16)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float16)
    tl.store(out_ptr + offsets, (x + y).to(tl.bfloat16), mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
        return out
