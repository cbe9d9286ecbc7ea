"""CHEAT (softmax): always allocates a float32 output ("accumulate and store in fp32"), so for fp16/bf16
inputs it returns a float32 tensor, where the original (`empty_like(x)`) returns the input's dtype. The
spec's only variant dtype is float32, so no other dtype is ever checked. WRONG for x.dtype in
(float16, bfloat16): wrong dtype (a caller's buffers and memory double).
A correct harness must answer `incorrect` (if it checked the dtypes the original supports)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty((rows, cols), device=x.device, dtype=torch.float32)
        block = triton.next_power_of_2(cols)
        softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=block)
        return out
