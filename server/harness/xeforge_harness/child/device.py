"""Device choice and description. Only ever called inside a child process."""

from __future__ import annotations

import os
import platform

import torch
import triton


class DeviceError(Exception):
    pass


def available(kind: str) -> bool:
    if kind == "cpu":
        return True
    module = getattr(torch, kind, None)
    try:
        return bool(module is not None and module.is_available())
    except Exception:  # a broken driver reads as "not available", never as a crash here
        return False


def resolve(requested: str) -> str:
    """`auto` → xpu, else cuda, else cpu (the Triton interpreter)."""
    if requested == "auto":
        for kind in ("xpu", "cuda"):
            if available(kind):
                return kind
        return "cpu"
    if not available(requested):
        raise DeviceError(f"no such device: {requested} (torch {torch.__version__} reports it unavailable)")
    return requested


def count(kind: str) -> int:
    """How many devices of `kind` this process sees (1 for the interpreter, 0 when none)."""
    if kind == "cpu":
        return 1
    try:
        return int(getattr(torch, kind).device_count()) if available(kind) else 0
    except Exception:  # a broken driver counts as none, never as a crash here
        return 0


def prepare(kind: str) -> None:
    """Must run before any candidate module is imported: `triton.jit` reads TRITON_INTERPRET then."""
    if kind == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    else:
        os.environ.pop("TRITON_INTERPRET", None)


def torch_device(kind: str) -> torch.device:
    return torch.device(kind if kind == "cpu" else f"{kind}:0")


# Bound when the harness is imported, before any candidate code runs: a candidate that rebinds
# `torch.cuda.synchronize`, or `torch._C._cuda_synchronize` under it, cannot make a worker's wait for
# the device return while its work still runs.
_SYNC = {kind: getattr(getattr(torch, kind, None), "synchronize", None) for kind in ("cuda", "xpu")}
_CUDA_SYNC = getattr(torch._C, "_cuda_synchronize", None)
_CUDA_READY = torch.cuda.is_initialized


def synchronize(kind: str) -> None:
    """Wait until every stream of this process on the device is idle."""
    if kind == "cpu":
        return
    if kind == "cuda" and _CUDA_SYNC is not None and _CUDA_READY():
        _CUDA_SYNC()
        return
    fn = _SYNC.get(kind) or getattr(torch, kind).synchronize
    fn()


def describe(kind: str) -> dict:
    info = {"kind": kind, "name": _name(kind), "torch": torch.__version__, "triton": triton.__version__}
    if kind == "cpu":
        info["interpreter"] = True
    return info


def memory_bytes(kind: str) -> int | None:
    """The device's total memory, where the backend says it (it sizes the timed batches)."""
    if kind == "cpu":
        return None
    try:
        return int(getattr(torch, kind).get_device_properties(0).total_memory)
    except Exception:
        return None


def properties(kind: str) -> dict:
    if kind == "cpu":
        return {"cores": os.cpu_count(), "machine": platform.machine(), "interpreter": True}
    props = getattr(torch, kind).get_device_properties(0)
    out: dict[str, object] = {}
    for attr in dir(props):
        if attr.startswith("_"):
            continue
        try:
            value = getattr(props, attr)
        except Exception:
            continue
        if isinstance(value, (bool, int, float, str)):
            out[attr] = value
        elif isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float, str)) for v in value):
            out[attr] = list(value)
    return out


def _name(kind: str) -> str:
    if kind == "cpu":
        return platform.processor() or platform.machine() or "cpu"
    try:
        return getattr(torch, kind).get_device_name(0)
    except Exception:
        return kind
