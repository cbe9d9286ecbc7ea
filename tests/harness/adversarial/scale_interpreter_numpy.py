"""CHEAT (add_scale): (x + y) * 2 computed with numpy reached as the Triton interpreter module's own
`np` (`import triton.runtime.interpreter as TI`; the source check flags `from triton.runtime.interpreter
import` and `.interpreter`, not a plain `import ... as`), then a decoy Triton copy kernel. The same file
runs on a GPU (the interpreter module is importable there too).
A correct harness must answer `rejected`."""
import torch
import torch.nn as nn
import triton
import triton.language as tl
import triton.runtime.interpreter as TI


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        np = TI.np
        r = np.multiply(np.add(np.asarray(x.cpu()), np.asarray(y.cpu())), 2.0, dtype=np.float32)
        host = torch.from_numpy(r).to(x.device)
        out = torch.empty_like(x)
        n = out.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](host, out, n, BLOCK=1024)
        return out
