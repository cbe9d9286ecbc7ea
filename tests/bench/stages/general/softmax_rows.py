# Row softmax, fp32, one program per row with the whole row in one block (as in Triton's tutorial 02).
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(output, input, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    row = tl.load(input + row_idx * input_row_stride + col_offsets, mask=mask, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    tl.store(output + row_idx * output_row_stride + col_offsets, numerator / denominator, mask=mask)


class Model(torch.nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        softmax_kernel[(n_rows,)](y, x, x.stride(0), y.stride(0), n_cols,
                                  BLOCK_SIZE=triton.next_power_of_2(n_cols), num_warps=4)
        return y
