"""ATTACK: a lazy tensor that the wire lets through because it is an `nn.Parameter`.

`wire.encode`/`wire.send` refuse tensor subclasses, except `isinstance(t, torch.nn.Parameter)`. A
subclass of `nn.Parameter` with its own `__torch_function__` therefore reaches `wire._raw`, which
calls `t.detach()` -- after `Recording` has exited. The override computes `x + y` with torch right
there (outside every recorder) and returns a plain tensor whose bytes are sent. Inside the recorded
call only one Triton launch happens (a copy of x into the placeholder), so the guard sees nothing.

A correct harness must NOT say `correct`: expected `incorrect` (an opaque/subclass output) or
`rejected` (library compute).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)


class Lazy(nn.Parameter):
    _pending = {}

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self = args[0] if args else None
        if func is torch.Tensor.detach and isinstance(self, Lazy) and id(self) in Lazy._pending:
            x, y = Lazy._pending.pop(id(self))
            return torch.add(x, y)  # runs during serialization: no recorder is active
        return super().__torch_function__(func, types, args, kwargs)  # Parameter's: plain behaviour


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        buf = torch.empty_like(x)
        n = buf.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](x, buf, n, BLOCK=1024)
        out = Lazy(buf, requires_grad=False)
        Lazy._pending[id(out)] = (x.detach().clone(), y.detach().clone())
        return out
