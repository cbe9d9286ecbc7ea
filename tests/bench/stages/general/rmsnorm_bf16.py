# RMS norm, bf16, whole row per program, two warps.
import torch
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, out_ptr, stride_row, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=0) / n_cols
    rstd = tl.rsqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride_row + cols, (x * rstd * w).to(tl.bfloat16), mask=mask)


class Model(torch.nn.Module):
    def forward(self, x, w):
        rows, cols = x.shape
        out = torch.empty_like(x)
        rms_norm_kernel[(rows,)](x, w, out, x.stride(0), cols, 1e-6,
                                 BLOCK_SIZE=triton.next_power_of_2(cols), num_warps=2)
        return out
