import torch
import triton
import triton.language as tl


@triton.jit
def _row_max_argmax_kernel(
    x_ptr,
    values_ptr,
    indices_ptr,
    n_cols,
    x_row_stride,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    x = x.to(tl.float32)

    max_val = tl.max(x, axis=0)
    max_idx = tl.argmax(x, axis=0)

    tl.store(values_ptr + row, max_val.to(values_ptr.dtype.element_ty))
    tl.store(indices_ptr + row, max_idx.to(tl.int64))


def top1(x):
    """Per-row max over the last dim. Returns (values, indices[int64])."""
    *lead, n_cols = x.shape
    x2 = x.reshape(-1, n_cols)
    if x2.stride(1) != 1:
        x2 = x2.contiguous()
    n_rows = x2.shape[0]
    values = torch.empty(n_rows, dtype=x.dtype, device=x.device)
    indices = torch.empty(n_rows, dtype=torch.int64, device=x.device)
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    _row_max_argmax_kernel[(n_rows,)](
        x2,
        values,
        indices,
        n_cols,
        x2.stride(0),
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=8 if BLOCK_SIZE >= 4096 else 4,
    )
    return values.view(lead), indices.view(lead)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    logits = torch.randn(8, 16, 1000, device=device)
    vals, idx = top1(logits)
    ref_vals, ref_idx = logits.max(dim=-1)
    assert idx.dtype == torch.int64
    torch.testing.assert_close(vals, ref_vals)
    assert torch.equal(idx, ref_idx), "argmax mismatch"
    print("top1 ok", tuple(vals.shape))
