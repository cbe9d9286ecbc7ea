"""Seeded model arguments and forward() inputs, from a spec variant or the file's get_inputs()."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from types import ModuleType
from typing import Any

import torch

from ..spec import Spec, Variant

WEIGHT_SEED = 42  # every model of a variant is built right after seeding with this (KernelBench)


# Drawn once per judge process, on its first use, never shown to a candidate before its checked calls:
# with fixed seeds a candidate could draw the checked inputs itself at import (unrecorded) and return
# stored answers. A candidate's worker is forked from the judge, so it forgets the salt first thing
# (`forget_salt`), and drawing on first use keeps it out of workers forked before that.
_SALT: int | None = None


def seeds(count: int) -> list[int]:
    """Distinct seeds for the correctness trials, fixed within one judge process (its references are
    computed once for them) and unpredictable from outside it."""
    global _SALT
    if _SALT is None:
        _SALT = secrets.randbelow(1 << 24)
    return [(1 << 25) + _SALT * 64 + 1009 * (i + 1) + 7 for i in range(count)]


def forget_salt() -> None:
    global _SALT
    _SALT = secrets.randbelow(1 << 24) if _SALT is not None else None


def spec_inputs(spec: Spec, variant: Variant, seed: int, device: torch.device, on_device: bool = False) -> list[Any]:
    """Seeded inputs of a variant. `on_device` draws them on the device itself (the timed runs: fast,
    and the same numbers in every process on that device), otherwise on the CPU (the checked runs)."""
    gen = torch.Generator(device=device if on_device else "cpu").manual_seed(seed)
    tensors = []
    for name in variant.params:
        entry = spec.inputs[name]
        if entry.is_scalar:
            tensors.append(spec.scalar_value(variant, name))
            continue
        shape = spec.input_shape(variant, name)
        dtype = getattr(torch, spec.input_dtype(variant, name))
        t = _draw(shape, dtype, entry.value_range, variant.dims, gen)
        for transform in entry.transforms:
            t = _transform(t, transform, gen)
        t = t.to(dtype)
        if variant.memory_format and t.dim() in (4, 5):
            fmt = getattr(torch, variant.memory_format)
            if (fmt is torch.channels_last and t.dim() == 4) or (fmt is torch.channels_last_3d and t.dim() == 5):
                t = t.contiguous(memory_format=fmt)
        tensors.append(t.to(device))
    return tensors


# The range check's factor: float inputs drawn from randn, times this, reach values where an
# exponential of an unshifted input overflows fp32 (e^88.7), and a product of two stays far inside fp32
# and bf16 (see `stressed`). fp16 holds only 65504: its inputs are scaled by `STRESS_FP16`, so that a
# GEMM's partial sums (64 · 4.5σ squared, times a few hundred terms) stay inside it too. bf16 has
# fp32's range: its inputs are scaled by `STRESS_BF16`, past fp16's largest value (a sum of two reaches
# it), so that bf16 computed in fp16 overflows where the original stays finite.
STRESS = 64.0
STRESS_FP16 = 8.0
STRESS_BF16 = 16384.0


def stressed(values: list[Any], spec: Spec | None, variant: Variant | None) -> tuple[list[Any], list[tuple[int, float]]]:
    """`values` with every float tensor the spec draws from randn (no `range:` and no `inits:`; every
    float tensor of a file's `get_inputs()`) multiplied by [`STRESS`] ([`STRESS_FP16`] for fp16), and
    each scaled input's index with its factor.

    A range the spec gives says which values the problem means, so those inputs are left as drawn."""
    out, scaled = list(values), []
    for i, v in enumerate(values):
        if not (isinstance(v, torch.Tensor) and v.dtype.is_floating_point and v.numel()):
            continue
        if spec is not None and variant is not None:
            entry = spec.inputs.get(variant.params[i]) if i < len(variant.params) else None
            if entry is None or entry.value_range is not None or entry.transforms:
                continue
        factor = STRESS_FP16 if v.dtype == torch.float16 else STRESS_BF16 if v.dtype == torch.bfloat16 else STRESS
        out[i] = (v.double() * factor).to(v.dtype)
        scaled.append((i, factor))
    return out, scaled


def _bound(value: Any, dims: dict) -> float:
    return float(dims[value]) if isinstance(value, str) else float(value)


def _draw(shape, dtype: torch.dtype, value_range, dims: dict, gen: torch.Generator) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen, device=gen.device).bool()
    if dtype.is_floating_point or dtype.is_complex:
        if value_range is not None:
            lo, hi = (_bound(v, dims) for v in value_range)
            return torch.rand(shape, generator=gen, device=gen.device) * (hi - lo) + lo
        return torch.randn(shape, generator=gen, device=gen.device)
    lo, hi = (int(_bound(v, dims)) for v in value_range) if value_range is not None else (0, 16)
    return torch.randint(lo, max(hi, lo + 1), shape, generator=gen, dtype=torch.int64, device=gen.device)


def _transform(t: torch.Tensor, name: str, gen: torch.Generator) -> torch.Tensor:
    """AI Bench's input transforms (`apply_input_inits`), drawn from the same seeded generator."""
    if name == "scale":
        return t * torch.rand((), generator=gen, device=gen.device)
    if name == "softmax":
        return t.float().softmax(dim=-1)
    if name == "abs":
        return t.abs()
    if name == "normalize":
        return torch.nn.functional.normalize(t.float(), dim=-1)
    if name in ("symmetric", "triu", "tril", "transpose"):
        if t.dim() != 2 or (name == "symmetric" and t.shape[0] != t.shape[1]):
            raise ValueError(f"input transform '{name}' needs a {'square ' if name == 'symmetric' else ''}2-D tensor, got {tuple(t.shape)}")
        made: dict[str, Callable[[], torch.Tensor]] = {
            "symmetric": lambda: (t + t.T) / 2,
            "triu": t.triu,
            "tril": t.tril,
            "transpose": lambda: t.T,
        }
        return made[name]()
    if name == "uniform":
        return torch.rand(t.shape, generator=gen, device=gen.device) * 2 - 1
    if name == "rademacher":
        return (torch.randint(0, 2, t.shape, generator=gen, device=gen.device) * 2 - 1).to(t.dtype)
    raise ValueError(f"unknown input transform {name!r}")


def file_inputs(module: ModuleType, seed: int, device: torch.device) -> list[Any]:
    """KernelBench convention: seed, call get_inputs(), move tensors to the device."""
    torch.manual_seed(seed)
    values = module.get_inputs()
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def file_init_args(module: ModuleType) -> list[Any]:
    fn = getattr(module, "get_init_inputs", None)
    return list(fn()) if fn is not None else []


def copy_weights(src, dst) -> str | None:
    """Give `dst` exactly `src`'s parameters and buffers when both have the same names and shapes.

    Returns a note when they do not (the seeded construction is then all that ties them).
    """
    if not (isinstance(src, torch.nn.Module) and isinstance(dst, torch.nn.Module)):
        return None
    s, d = src.state_dict(), dst.state_dict()
    if not s and not d:
        return None
    if set(s) != set(d) or any(s[k].shape != d[k].shape for k in s):
        return "parameters differ in name or shape from the reference; relying on seeded construction"
    dst.load_state_dict(s)
    return None


def clone_args(args: list[Any]) -> list[Any]:
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


def relaid(args: list[Any]) -> list[Any]:
    """`args` holding the same values in other memory layouts, as a caller's views do: a tensor whose
    last two sizes both exceed one becomes column-major in them (what `b.t()` of a row-major matrix
    is), any other tensor of two or more elements every other element of a buffer twice as long in
    its last dimension (what `x[::2]` is). The layout check (`evaluate._layout_reference`) runs both
    sides on them: code that drops the strides its original honours reads the wrong elements."""
    out: list[Any] = []
    for a in args:
        if not isinstance(a, torch.Tensor) or a.dim() == 0 or a.numel() < 2:
            out.append(a)
        elif a.dim() >= 2 and a.shape[-1] > 1 and a.shape[-2] > 1:
            out.append(a.transpose(-1, -2).contiguous().transpose(-1, -2))
        else:
            spread = torch.zeros((*a.shape[:-1], 2 * a.shape[-1]), dtype=a.dtype, device=a.device)
            view = spread[..., ::2]
            view.copy_(a)
            out.append(view)
    return out
