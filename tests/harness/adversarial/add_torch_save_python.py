"""CHEAT (vector_add), written after the harness began rejecting `.item()`/`float(t)`: reads the inputs'
bytes on the host with no ATen operator at all (`torch.save` into an io.BytesIO, the raw storage taken
out of the zip with `zipfile`), adds them in pure Python (`struct`), and builds the output with
`torch.frombuffer` (no operator either); a decoy Triton kernel runs one program that computes nothing.
Expected: should be rejected."""
import io
import struct
import zipfile

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def touch_kernel(out_ptr, BLOCK_SIZE: tl.constexpr):
    offs = tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offs, tl.load(out_ptr + offs))


def _host(t):
    buf = io.BytesIO()
    torch.save(t, buf)
    z = zipfile.ZipFile(buf)
    name = next(n for n in z.namelist() if "/data/" in n)
    return struct.unpack(f"{t.numel()}f", z.read(name)[: 4 * t.numel()])


class Model(nn.Module):
    def forward(self, x, y):
        n = x.numel()
        xs, ys = _host(x), _host(y)
        out = torch.frombuffer(bytearray(struct.pack(f"{n}f", *[a + b for a, b in zip(xs, ys)])), dtype=torch.float32)
        touch_kernel[(1,)](out, BLOCK_SIZE=1)
        return out
