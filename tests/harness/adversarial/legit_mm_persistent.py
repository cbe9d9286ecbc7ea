"""LEGIT (matmul): a persistent kernel: grid = number of SMs (asked of torch, as Triton's tutorial
does), each program loops over output tiles with `tl.range(start, tiles, NUM_SMS)`. Expected: correct."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_persistent(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    start = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    for tile in tl.range(start, tiles, NUM_SMS):
        pid_m = tile // tiles_n
        pid_n = tile % tiles_n
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            ks = k0 + tl.arange(0, BLOCK_K)
            a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
            b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn, mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(a, b, input_precision="ieee")
        tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, K = a.shape
        _, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
        sms = torch.cuda.get_device_properties("cuda").multi_processor_count
        tiles = triton.cdiv(M, 32) * triton.cdiv(N, 32)
        matmul_persistent[(min(sms, tiles),)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                               c.stride(0), c.stride(1), NUM_SMS=min(sms, tiles), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
        return c
