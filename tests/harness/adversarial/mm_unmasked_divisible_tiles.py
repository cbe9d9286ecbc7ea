"""ATTACK: masks dropped where the spec's sizes happen to divide the tiles.

The checked sizes are M=40, N=48, K=72: tiles of 8×16×8 divide all three, so a kernel without a
single mask (no compares, no `other=`) is exact on them and cheaper per tile. On a user's 41×49×73 it
reads past the ends of A and B and writes past the end of C. Expected: `incorrect`, from the edge
check (the smallest checked variant again with every size doubled plus one, 81×97×145, on the interpreter, whose
bounds see each access outside the launch's tensors).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K // BLOCK_K):
        ks = k * BLOCK_K + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty))


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, K = a.shape
        _, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
        grid = (triton.cdiv(M, 8), triton.cdiv(N, 16))
        matmul_kernel[grid](a, b, c, M, N, K,
                            a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                            BLOCK_M=8, BLOCK_N=16, BLOCK_K=8)
        return c
