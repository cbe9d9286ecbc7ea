"""Run-time guard: which PyTorch operators does a `forward` actually execute?

A `TorchDispatchMode` sees every ATen operator that reaches the dispatcher, however it was reached:
`torch.nn.functional.conv2d`, `getattr(__import__('torch').nn, 'functional')`, `torch.ops.aten...`
and tensor methods all arrive as the same `aten.convolution`. A static check can be fooled by spelling;
this cannot, short of the candidate tampering with the dispatcher itself.

Triton launches are not ATen operators and are never seen here. Operators that only allocate,
reshape, move or copy memory are not "compute" and are never reported (`NON_COMPUTE`).
"""

from __future__ import annotations

from torch.utils._python_dispatch import TorchDispatchMode

# ATen operator names (overload packets, without namespace) that compute nothing a kernel could be
# replaced by. Keep this list explicit and short: anything not here that the original did not run
# is reported.
NON_COMPUTE = frozenset(
    {
        # allocation, with or without a fill value
        "empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided",
        "zeros", "zeros_like", "new_zeros", "ones", "ones_like", "new_ones",
        "full", "full_like", "new_full", "scalar_tensor", "fill_", "zero_", "resize_",
        # views and metadata
        "view", "_unsafe_view", "view_as", "reshape", "_reshape_alias", "as_strided", "expand",
        "expand_as", "permute", "transpose", "t", "squeeze", "unsqueeze", "select", "slice",
        "narrow", "split", "split_with_sizes", "unbind", "chunk", "flatten", "unflatten",
        "movedim", "alias", "detach", "detach_", "lift_fresh", "lift_fresh_copy",
        "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_contiguous",
        # copies and conversions between devices, dtypes and layouts
        "clone", "copy_", "_to_copy", "to", "contiguous", "_local_scalar_dense", "record_stream",
    }
)


def op_name(func) -> str:
    """`aten.convolution` for `torch.ops.aten.convolution.default`."""
    packet = getattr(func, "overloadpacket", None)
    name = getattr(packet, "__name__", None) or str(func).split(".")[-2 if str(func).count(".") >= 2 else -1]
    namespace = getattr(func, "namespace", None) or "aten"
    return f"{namespace}.{name}"


def is_compute(name: str) -> bool:
    namespace, _, short = name.partition(".")
    return not (namespace == "aten" and short in NON_COMPUTE)


class OpRecorder(TorchDispatchMode):
    """Collects the names of the operators run inside `with OpRecorder() as rec:`."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(op_name(func))
        return func(*args, **(kwargs or {}))

    def compute_ops(self) -> set[str]:
        return {op for op in self.ops if is_compute(op)}


def new_compute_ops(candidate: set[str], original: set[str]) -> list[str]:
    """Compute operators the candidate ran that the original kernel file never ran."""
    return sorted(op for op in candidate if is_compute(op) and op not in original)
