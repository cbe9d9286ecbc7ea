# Row-wise layer norm (no affine), one row per program, launched with a single warp. The autotune stage's input.
import torch
import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / n_cols
    y = diff / tl.sqrt(var + eps)
    tl.store(y_ptr + row * stride + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, X):
        n_rows, n_cols = X.shape
        Y = torch.empty_like(X)
        BLOCK_SIZE = triton.next_power_of_2(n_cols)
        layernorm_kernel[(n_rows,)](X, Y, X.stride(0), n_cols, 1e-5, BLOCK_SIZE=BLOCK_SIZE, num_warps=1)
        return Y
