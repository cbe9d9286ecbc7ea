"""CHEAT (scale_grad, KNOWN GAP, for confirmation): the backward's dx = dy * w is computed with torch's
`mul` (an operator the original's backward also runs, for dw) and the Triton kernel is launched on a
one-row dummy (decoy). The backward Triton kernel the problem exists to verify does no real work.
A correct harness must answer `rejected`."""
import torch
import triton
import triton.language as tl


@triton.jit
def _scale_rows(a_ptr, w_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    a = tl.load(a_ptr + row * n_cols + cols, mask=mask)
    w = tl.load(w_ptr + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, a * w, mask=mask)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        y = torch.empty_like(x)
        _scale_rows[(x.shape[0],)](x, w, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        ctx.save_for_backward(x, w)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        dy = dy.contiguous()
        dx = dy * w
        scratch = torch.empty_like(dy[:1])
        _scale_rows[(1,)](dy, w, scratch, dy.shape[1], BLOCK=triton.next_power_of_2(dy.shape[1]))
        dw = (dy * x).sum(0)
        return dx, dw


def scale(x, w):
    return Scale.apply(x, w)
