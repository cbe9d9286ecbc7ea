"""CHEAT (scale_grad): forward y = x * w and backward dx = dy * w are computed with torch's `mul`
(an operator the original's backward already runs for dw, so the guard's "new operator" rule does
not fire); a decoy Triton kernel runs one program in each direction so the launch count is non-zero.
Expected: rejected (computation moved from Triton to torch)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _noop(p, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, tl.load(p + offs))


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        y = x * w
        _noop[(1,)](y, BLOCK=1)
        ctx.save_for_backward(x, w)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        dx = dy * w
        _noop[(1,)](dx, BLOCK=1)
        dw = (dy * x).sum(0)
        return dx, dw


def scale(x, w):
    return Scale.apply(x, w)
