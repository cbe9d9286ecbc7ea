"""1-D max pooling over the last dim of a [B, C, L] tensor (no padding, no dilation)."""

import torch
import triton
import triton.language as tl


@triton.jit
def maxpool1d_kernel(
    x_ptr,
    y_ptr,
    L,
    L_out,
    stride_x_row,
    stride_y_row,
    kernel_size,
    pool_stride,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    pid = tl.program_id(1)
    out_idx = pid * BLOCK + tl.arange(0, BLOCK)
    out_mask = out_idx < L_out

    x_row = x_ptr + row.to(tl.int64) * stride_x_row
    acc = tl.full((BLOCK,), -float("inf"), dtype=tl.float32)
    start = out_idx * pool_stride
    for k in range(0, kernel_size):
        pos = start + k
        v = tl.load(x_row + pos, mask=out_mask & (pos < L), other=-float("inf")).to(tl.float32)
        acc = tl.where(v > acc, v, acc)

    tl.store(y_ptr + row.to(tl.int64) * stride_y_row + out_idx, acc.to(y_ptr.dtype.element_ty), mask=out_mask)


def max_pool1d(x: torch.Tensor, kernel_size: int, stride: int = None) -> torch.Tensor:
    if stride is None:
        stride = kernel_size
    B, C, L = x.shape
    L_out = (L - kernel_size) // stride + 1
    x2 = x.contiguous().view(B * C, L)
    y = torch.empty((B * C, L_out), device=x.device, dtype=x.dtype)
    BLOCK = 256
    grid = (B * C, triton.cdiv(L_out, BLOCK))
    maxpool1d_kernel[grid](
        x2,
        y,
        L,
        L_out,
        x2.stride(0),
        y.stride(0),
        kernel_size,
        stride,
        BLOCK=BLOCK,
    )
    return y.view(B, C, L_out)


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda"
    x = torch.randn(16, 64, 8192, device=device, dtype=torch.float32)
    for ks, st in [(3, 2), (4, 4), (7, 1)]:
        y = max_pool1d(x, ks, st)
        ref = torch.nn.functional.max_pool1d(x, kernel_size=ks, stride=st)
        torch.testing.assert_close(y, ref)
    print("max_pool1d ok")
