# Inclusive prefix sum along the last dim, one program per row.
import torch
import triton
import triton.language as tl


@triton.jit
def row_cumsum_kernel(
    X_ptr,
    Y_ptr,
    n_cols,
    stride_x,
    stride_y,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = X_ptr + row * stride_x
    y_row = Y_ptr + row * stride_y
    carry = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(y_row + offs, y.to(Y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


def cumsum_lastdim(x: torch.Tensor) -> torch.Tensor:
    x2d = x.reshape(-1, x.shape[-1]).contiguous()
    n_rows, n_cols = x2d.shape
    y = torch.empty_like(x2d)
    row_cumsum_kernel[(n_rows,)](
        x2d,
        y,
        n_cols,
        x2d.stride(0),
        y.stride(0),
        BLOCK_SIZE=512,
        num_warps=4,
    )
    return y.view(x.shape)


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda"
    x = torch.rand(4096, 4096, device=device, dtype=torch.float32)
    y = cumsum_lastdim(x)
    ref = torch.cumsum(x.double(), dim=-1).float()
    torch.testing.assert_close(y, ref, atol=1e-2, rtol=1e-4)
    print("cumsum ok")
