"""LEGIT (vector_add_bf16): loads bf16, adds in fp32, rounds once to bf16 on store (what a GPU's bf16
add does); 2048-element block. Expected: correct."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offsets, (x + y).to(tl.bfloat16), mask=mask)


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 2048),)](x, y, out, n, BLOCK_SIZE=2048, num_warps=8)
        return out
