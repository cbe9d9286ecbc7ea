"""LEGIT (add_scale): the two kernels fused into one (no intermediate buffer), autotuned block.
Expected: correct."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 2048}, num_warps=8),
             triton.Config({"BLOCK": 512}, num_warps=2)],
    key=["n"],
)
@triton.jit
def add_scale_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, (tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m)) * 2.0, mask=m)


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = out.numel()
        add_scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n)
        return out
