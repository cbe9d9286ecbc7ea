import torch
import triton
import triton.language as tl


@triton.jit
def log_softmax_kernel(
    output_ptr,
    input_ptr,
    input_row_stride,
    output_row_stride,
    n_cols,
    BLOCK_SIZE: tl.constexpr,
):
    # one program per row
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    mask = col_offsets < n_cols

    row = tl.load(input_ptrs, mask=mask, other=-float("inf")).to(tl.float32)
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    log_softmax_output = row_minus_max - tl.log(denominator)

    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    output_ptrs = output_row_start_ptr + col_offsets
    tl.store(output_ptrs, log_softmax_output.to(output_ptr.dtype.element_ty), mask=mask)


def log_softmax(x: torch.Tensor) -> torch.Tensor:
    """log_softmax over the last dimension, for any number of leading dims."""
    orig_shape = x.shape
    x_2d = x.reshape(-1, x.shape[-1])
    if x_2d.stride(-1) != 1:
        x_2d = x_2d.contiguous()
    n_rows, n_cols = x_2d.shape

    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 4
    if BLOCK_SIZE >= 2048:
        num_warps = 8
    if BLOCK_SIZE >= 4096:
        num_warps = 16

    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    log_softmax_kernel[(n_rows,)](
        y,
        x_2d,
        x_2d.stride(0),
        y.stride(0),
        n_cols,
        num_warps=num_warps,
        BLOCK_SIZE=BLOCK_SIZE,
    )
    return y.view(orig_shape)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(2, 3, 97, device=device)
    y = log_softmax(x)
    y_ref = torch.log_softmax(x, dim=-1)
    print("max abs diff:", (y - y_ref).abs().max().item())
    torch.testing.assert_close(y, y_ref, atol=1e-5, rtol=1e-5)

    x16 = torch.randn(64, 300, device=device, dtype=torch.float16)
    torch.testing.assert_close(log_softmax(x16), torch.log_softmax(x16.float(), dim=-1).half(), atol=2e-3, rtol=2e-3)
    print("ok")
