"""Embedding forward: out[t, :] = weight[idx[t], :]"""

import torch
import triton
import triton.language as tl


@triton.jit
def embedding_fwd_kernel(
    indices_ptr,
    weight_ptr,
    out_ptr,
    n_tokens,
    embed_dim,
    stride_w,
    stride_o,
    BLOCK_N: tl.constexpr,
):
    tok = tl.program_id(0)
    pid_n = tl.program_id(1)
    idx = tl.load(indices_ptr + tok)  # int64

    offs = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = offs < embed_dim
    vals = tl.load(weight_ptr + idx * stride_w + offs, mask=mask)
    tl.store(out_ptr + tok.to(tl.int64) * stride_o + offs, vals, mask=mask)


class TritonEmbedding(torch.nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, device=None, dtype=None):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(num_embeddings, embedding_dim, device=device, dtype=dtype))

    def forward(self, indices: torch.Tensor) -> torch.Tensor:
        orig_shape = indices.shape
        flat = indices.reshape(-1).contiguous()
        n_tokens = flat.numel()
        embed_dim = self.weight.shape[1]
        out = torch.empty((n_tokens, embed_dim), device=self.weight.device, dtype=self.weight.dtype)
        BLOCK_N = 256
        grid = (n_tokens, triton.cdiv(embed_dim, BLOCK_N))
        embedding_fwd_kernel[grid](
            flat,
            self.weight,
            out,
            n_tokens,
            embed_dim,
            self.weight.stride(0),
            out.stride(0),
            BLOCK_N=BLOCK_N,
            num_warps=2,
        )
        return out.view(*orig_shape, embed_dim)


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda"
    vocab, dim = 32000, 4096
    emb = TritonEmbedding(vocab, dim, device=device, dtype=torch.float16)
    ids = torch.randint(0, vocab, (8, 1024), device=device, dtype=torch.int64)
    with torch.no_grad():
        out = emb(ids)
    ref = torch.nn.functional.embedding(ids, emb.weight.detach())
    torch.testing.assert_close(out, ref)
    print("embedding ok")
