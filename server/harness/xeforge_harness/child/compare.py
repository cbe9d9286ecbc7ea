"""Comparing a candidate's outputs with the reference's, and the cheats that comparison must catch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

# Per-dtype tolerances (KernelBench's): used when the spec variant sets none.
_TOLERANCES = {
    torch.float32: (1e-4, 1e-4),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (1e-2, 1e-2),
    torch.float64: (1e-7, 1e-7),
}


def same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Element for element equal, NaN where both are NaN (shapes and dtypes already alike)."""
    if a.dtype.is_floating_point or a.dtype.is_complex:
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return torch.equal(a, b)


def default_tolerance(dtype: torch.dtype) -> tuple[float, float]:
    if dtype in _TOLERANCES:
        return _TOLERANCES[dtype]
    if dtype.is_floating_point:  # fp8 and friends
        return (1e-1, 1e-1)
    return (0.0, 0.0)  # integers and bools compare exactly


def flatten(out: Any) -> list[Any]:
    if isinstance(out, (list, tuple)):
        items = []
        for o in out:
            items.extend(flatten(o))
        return items
    if isinstance(out, dict):
        return flatten([out[k] for k in sorted(out)])
    return [out]


@dataclass
class Diff:
    ok: bool
    reason: str = ""
    max_abs: float = 0.0
    rel_err: float = 0.0


def compare_one(ref: Any, out: Any, rtol: float, atol: float, where: str) -> Diff:
    if not isinstance(ref, torch.Tensor):
        if isinstance(out, torch.Tensor):
            return Diff(False, f"{where}: expected a {type(ref).__name__}, got a tensor")
        if ref != out:
            return Diff(False, f"{where}: expected {ref!r}, got {out!r}")
        return Diff(True)
    if not isinstance(out, torch.Tensor):
        return Diff(False, f"{where}: expected a tensor, got {type(out).__name__}")
    if out.shape != ref.shape:
        return Diff(False, f"{where}: shape {tuple(out.shape)} differs from the reference's {tuple(ref.shape)}")
    if out.dtype != ref.dtype:
        # Casting one to the other would hide a precision downgrade: the dtype is part of the result.
        return Diff(False, f"{where}: dtype {out.dtype} differs from the reference's {ref.dtype}")
    if out.device != ref.device:
        return Diff(False, f"{where}: on {out.device}, the reference is on {ref.device}")
    if ref.numel() == 0:
        return Diff(True)

    if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        equal = torch.equal(out, ref)
        mismatch = 0.0 if equal else float((out != ref).sum().item())
        return Diff(equal, "" if equal else f"{where}: {int(mismatch)} elements differ", mismatch, mismatch / ref.numel())

    r, o = ref.float(), out.float()
    ref_finite, out_finite = torch.isfinite(r), torch.isfinite(o)
    new_nonfinite = int((~out_finite & ref_finite).sum().item())
    both = ref_finite & out_finite
    diff = (o - r).abs()
    max_abs = float(diff[both].max().item()) if bool(both.any()) else 0.0
    num = float(torch.linalg.vector_norm(torch.where(both, o - r, torch.zeros_like(r))).item())
    den = float(torch.linalg.vector_norm(torch.where(ref_finite, r, torch.zeros_like(r))).item())
    rel_err = num / den if den > 0 else num

    if new_nonfinite:
        return Diff(False, f"{where}: {new_nonfinite} NaN/Inf values where the reference is finite", max_abs, rel_err)
    if not torch.allclose(o, r, rtol=rtol, atol=atol, equal_nan=True):
        bad = int((~torch.isclose(o, r, rtol=rtol, atol=atol, equal_nan=True)).sum().item())
        return Diff(
            False,
            f"{where}: {bad} of {ref.numel()} elements outside rtol={rtol:g}, atol={atol:g} (max_abs {max_abs:.3g})",
            max_abs,
            rel_err,
        )
    if bool((r != 0).any()) and not bool((o != 0).any()):
        return Diff(False, f"{where}: all zeros where the reference is not", max_abs, rel_err)
    return Diff(True, "", max_abs, rel_err)


def storage_ptr(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return t.data_ptr()


def aliased_inputs(outputs: list[Any], inputs: list[Any]) -> dict[int, int]:
    """{output index: input index} for outputs sharing memory with an input."""
    ptrs = {storage_ptr(t): i for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.numel() > 0}
    found = {}
    for j, o in enumerate(outputs):
        if isinstance(o, torch.Tensor) and o.numel() > 0 and storage_ptr(o) in ptrs:
            found[j] = ptrs[storage_ptr(o)]
    return found


def changed_inputs(before: list[Any], after: list[Any]) -> list[int]:
    changed = []
    for i, (b, a) in enumerate(zip(before, after)):
        if isinstance(b, torch.Tensor) and isinstance(a, torch.Tensor):
            if b.shape != a.shape or b.dtype != a.dtype or not _same(b, a):
                changed.append(i)
    return changed


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise-equal values, NaN equal to NaN."""
    if a.dtype.is_floating_point or a.dtype.is_complex:
        return bool(torch.equal(a, b) or ((a == b) | (torch.isnan(a) & torch.isnan(b))).all().item())
    return bool(torch.equal(a, b))


def fingerprint(outputs: list[Any]) -> tuple:
    """Cheap identity of a set of outputs, to notice one that does not depend on its inputs."""
    parts: list[object] = []
    for o in outputs:
        if isinstance(o, torch.Tensor):
            flat = o.detach().reshape(-1)
            if o.dtype.is_floating_point or o.dtype.is_complex:
                flat = flat.float()
            step = max(1, flat.numel() // 64)
            sample = flat[::step][:64].cpu().tolist() if flat.numel() else []
            parts.append((tuple(o.shape), str(o.dtype), float(flat.float().sum().item()) if flat.numel() else 0.0, tuple(sample)))
        else:
            parts.append(repr(o))
    return tuple(parts)
