"""Messages between the judge and its workers: JSON plus raw tensor bytes, never pickle.

A candidate's worker is untrusted, so nothing it sends may execute code or carry behaviour into the
judge: a message is one JSON header and, for each tensor, a dtype name from a fixed list, a shape and
its bytes. The judge rebuilds plain `torch.Tensor`s from those bytes; a tensor subclass, a custom
`__eq__`, a lazy tensor or a `__torch_function__` override cannot survive the trip. Values are
described by a small tree (`encode` / `decode`): tensors, tuples, lists, dicts with string keys and
JSON scalars; anything else arrives as `{"other": type name}` and fails the structure check.

Frames: 8-byte big-endian length, then that many bytes. A message is the JSON header frame followed
by one frame per tensor.
"""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import Sequence
from typing import Any

import torch

# The dtypes a tensor may carry over the wire; anything else is refused when sent and when read.
DTYPES = {
    name: getattr(torch, name)
    for name in (
        "float64",
        "float32",
        "float16",
        "bfloat16",
        "int64",
        "int32",
        "int16",
        "int8",
        "uint8",
        "bool",
        "complex64",
        "complex128",
        "float8_e4m3fn",
        "float8_e5m2",
    )
    if hasattr(torch, name)
}
_NAMES = {v: k for k, v in DTYPES.items()}
MAX_HEADER = 64 * 1024 * 1024
MAX_FRAME = 1 << 40


class WireError(Exception):
    """The peer sent something that is not a message, or went away."""


class Closed(WireError):
    """The peer closed its end (or died)."""


def _recv_exact(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise Closed("the other process closed the connection")
        got += k
    return buf


def _frame(sock: socket.socket, limit: int) -> bytearray:
    (n,) = struct.unpack(">Q", bytes(_recv_exact(sock, 8)))
    if n > limit:
        raise WireError(f"frame of {n} bytes is over the limit")
    return _recv_exact(sock, n)


def _raw(t: torch.Tensor) -> memoryview:
    flat = t.detach().to("cpu").contiguous().reshape(-1)
    if flat.numel() == 0:
        return memoryview(b"")
    # numpy arrays export the buffer protocol (numpy's stubs do not say so).
    return memoryview(flat.view(torch.uint8).numpy())  # type: ignore[arg-type]


def send(sock: socket.socket, header: dict, tensors: Sequence[torch.Tensor] = ()) -> None:
    metas = []
    for t in tensors:
        if type(t) is not torch.Tensor and not isinstance(t, torch.nn.Parameter):
            raise WireError(f"not a plain tensor: {type(t).__name__}")
        if t.dtype not in _NAMES:
            raise WireError(f"dtype {t.dtype} cannot be sent")
        metas.append({"dtype": _NAMES[t.dtype], "shape": list(t.shape), "channels_last": _channels_last(t)})
    body = json.dumps({**header, "_tensors": metas}).encode()
    sock.sendall(struct.pack(">Q", len(body)) + body)
    for t in tensors:
        data = _raw(t)
        sock.sendall(struct.pack(">Q", data.nbytes))
        if data.nbytes:
            sock.sendall(data)


def recv(sock: socket.socket) -> tuple[dict, list[torch.Tensor]]:
    try:
        header = json.loads(bytes(_frame(sock, MAX_HEADER)))
    except (ValueError, UnicodeDecodeError) as e:
        raise WireError(f"unreadable message header: {e}") from None
    if not isinstance(header, dict):
        raise WireError("a message header must be a JSON object")
    metas = header.pop("_tensors", [])
    if not isinstance(metas, list):
        raise WireError("bad tensor list")
    tensors = [_tensor(meta, _frame(sock, MAX_FRAME)) for meta in metas]
    return header, tensors


def _tensor(meta: Any, data: bytearray) -> torch.Tensor:
    if not isinstance(meta, dict) or meta.get("dtype") not in DTYPES:
        raise WireError(f"bad tensor description: {meta!r}")
    shape = meta.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise WireError(f"bad tensor shape: {shape!r}")
    dtype = DTYPES[meta["dtype"]]
    numel = 1
    for d in shape:
        numel *= d
    itemsize = torch.empty((), dtype=dtype).element_size()
    if len(data) != numel * itemsize:
        raise WireError(f"tensor of shape {shape} and dtype {meta['dtype']} needs {numel * itemsize} bytes, got {len(data)}")
    if numel == 0:
        return torch.empty(shape, dtype=dtype)
    t = torch.frombuffer(data, dtype=torch.uint8).view(dtype).reshape(shape)
    if meta.get("channels_last") and t.dim() in (4, 5):
        t = t.contiguous(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)
    return t


def _channels_last(t: torch.Tensor) -> bool:
    if t.dim() == 4:
        return not t.is_contiguous() and t.is_contiguous(memory_format=torch.channels_last)
    if t.dim() == 5:
        return not t.is_contiguous() and t.is_contiguous(memory_format=torch.channels_last_3d)
    return False


def encode(value: Any, tensors: list) -> Any:
    """A value tree for `value`; its tensors are appended to `tensors` and named by index."""
    if isinstance(value, Foreign):
        return {"other": value.what}
    if isinstance(value, torch.Tensor):
        # Exactly a tensor (or exactly a Parameter): a subclass's methods are the sender's code.
        if type(value) not in (torch.Tensor, torch.nn.Parameter):
            return {"other": f"tensor subclass {type(value).__name__}"}
        tensors.append(value)
        return {"t": len(tensors) - 1}
    if type(value) is tuple:
        return {"tuple": [encode(v, tensors) for v in value]}
    if type(value) is list:
        return {"list": [encode(v, tensors) for v in value]}
    if type(value) is dict and all(type(k) is str for k in value):
        return {"dict": [[k, encode(value[k], tensors)] for k in sorted(value)]}
    if value is None or type(value) in (bool, int, float, str):
        return {"py": value}
    return {"other": type(value).__name__}


def decode(tree: Any, tensors: list[torch.Tensor]) -> Any:
    """The inverse of `encode`; an `other` leaf becomes an `Opaque` that equals nothing."""
    if not isinstance(tree, dict) or len(tree) != 1:
        raise WireError(f"bad value tree: {tree!r:.200}")
    ((kind, body),) = tree.items()
    if kind == "t":
        if not isinstance(body, int) or not 0 <= body < len(tensors):
            raise WireError("bad tensor index")
        return tensors[body]
    if kind in ("tuple", "list"):
        items = [decode(v, tensors) for v in body]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        return {str(k): decode(v, tensors) for k, v in body}
    if kind == "py":
        return body
    if kind == "other":
        return Opaque(str(body))
    raise WireError(f"unknown value kind {kind!r}")


class Foreign:
    """Stands, on the sending side, for a value whose own methods must not run (a tensor subclass, a
    container of a class of its own): encoded as `other`, which equals nothing."""

    def __init__(self, what: str) -> None:
        self.what = what


class Opaque:
    """Stands for a value the worker could not describe (an object of some class): never equal."""

    def __init__(self, what: str):
        self.what = what

    def __repr__(self) -> str:
        return f"<{self.what}>"


def shape_of(tree: Any) -> Any:
    """The structure of a value tree with tensors and scalars erased: what must match exactly."""
    ((kind, body),) = tree.items()
    if kind in ("tuple", "list"):
        return (kind, tuple(shape_of(v) for v in body))
    if kind == "dict":
        return ("dict", tuple((k, shape_of(v)) for k, v in body))
    if kind == "py":
        return ("py", type(body).__name__)
    return (kind,) if kind == "t" else (kind, body)


def describe(structure: Any) -> str:
    kind = structure[0]
    if kind == "t":
        return "a tensor"
    if kind in ("tuple", "list"):
        return f"a {kind} of {len(structure[1])}"
    if kind == "dict":
        return f"a dict with keys {[k for k, _ in structure[1]]}"
    if kind == "py":
        return f"a {structure[1]}"
    return str(structure[1])
