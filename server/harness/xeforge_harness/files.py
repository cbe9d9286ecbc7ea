"""The files a request names: as paths (the CLI, a local `serve`) or as contents (a remote client).

A remote harness runs on another machine than the editor, so a path there names nothing the user
wrote. Over HTTP a request carries each file instead, as `{"name": "k.py", "content": "...",
"sha256": "..."}` in place of the path (`sha256` optional; when present it must match). The
contents are written into a private directory made for the one request and removed after it, and
every result names what was verified: `files` maps each argument to its name, byte count and sha256.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from . import protocol as P

# The arguments of `evaluate` and `sweep` that name files (a sweep's `candidates` is a list of them).
SINGLE = ("kernel", "candidate", "spec", "reference")
DEFAULT_NAMES = {"kernel": "kernel.py", "candidate": "candidate.py", "spec": "spec.yaml", "reference": "reference.py"}
# A received file is written under this name: one path component, no hidden files, no separators.
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def describe(path: str, name: str | None = None) -> dict:
    """`{"name", "bytes", "sha256"}` of a file as it is now."""
    with open(path, "rb") as f:
        data = f.read()
    return {"name": name or path, "bytes": len(data), "sha256": sha256_bytes(data)}


def _fields(raw: dict) -> Iterator[tuple[str, Any]]:
    """(argument, value) of every file argument present, `candidates[i]` for a sweep's list."""
    for key in SINGLE:
        if raw.get(key) is not None:
            yield key, raw[key]
    candidates = raw.get("candidates")
    if isinstance(candidates, list):
        for i, value in enumerate(candidates):
            yield f"candidates[{i}]", value


def _content(field: str, value: dict) -> tuple[str, bytes]:
    """(file name, bytes) of one received file, checked; ArgsError names the field."""
    unknown = sorted(set(value) - {"name", "content", "sha256"})
    if unknown:
        raise P.ArgsError(f"{field}.{unknown[0]}", "unknown key (a file is {name, content, sha256})")
    content = value.get("content")
    if not isinstance(content, str):
        raise P.ArgsError(f"{field}.content", "the file's text is required")
    data = content.encode("utf-8")
    base = field.split("[", 1)[0]
    name = value.get("name", DEFAULT_NAMES.get(base, "candidate.py"))
    if not isinstance(name, str) or not _NAME.match(name):
        raise P.ArgsError(f"{field}.name", f"expected a plain file name (letters, digits, '_.-'), got {name!r}")
    expected = value.get("sha256")
    if expected is not None:
        if not isinstance(expected, str) or not _HEX64.match(expected.lower()):
            raise P.ArgsError(f"{field}.sha256", "expected 64 hexadecimal digits")
        if expected.lower() != sha256_bytes(data):
            raise P.ArgsError(f"{field}.sha256", "does not match the content (the file changed on the way?)")
    return name, data


@contextmanager
def received(raw: Any, *, paths_allowed: bool) -> Iterator[tuple[Any, dict[str, str]]]:
    """The request's arguments with every received file written to disk and replaced by its path.

    Yields (arguments, {path written: name the client gave}). The files live in a directory of their
    own (mode 0700, each argument in its own subdirectory so equal names never collide), removed when
    the block ends. With `paths_allowed` false (HTTP) a path is refused: it would name a file of the
    harness's machine, not the client's. Raises ArgsError naming the field.
    """
    if not isinstance(raw, dict):
        yield raw, {}
        return
    present = list(_fields(raw))
    if not any(isinstance(v, dict) for _, v in present):
        if not paths_allowed:
            for field, value in present:
                if isinstance(value, str):
                    raise P.ArgsError(field, "over HTTP a request carries the file, {name, content, sha256}, not a path")
        yield raw, {}
        return
    out = dict(raw)
    names: dict[str, str] = {}
    folder = os.path.abspath(tempfile.mkdtemp(prefix="xeforge-request-"))
    try:
        for field, value in present:
            if isinstance(value, str) and not paths_allowed:
                raise P.ArgsError(field, "over HTTP a request carries the file, {name, content, sha256}, not a path")
            if not isinstance(value, dict):
                continue  # a path (local serve), or a wrong type that argument checking reports
            name, data = _content(field, value)
            sub = os.path.join(folder, field.replace("[", "-").rstrip("]"))
            os.mkdir(sub, 0o700)
            path = os.path.join(sub, name)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            names[path] = name
            if field.startswith("candidates["):
                out["candidates"] = list(out["candidates"])
                out["candidates"][int(field[len("candidates[") : -1])] = path
            else:
                out[field] = path
        yield out, names
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def unplace(value: Any, names: dict[str, str]) -> Any:
    """`value` with every path of a received file replaced by the name the client gave it: a result
    never shows the harness machine's directories for files that came over the wire."""
    if not names:
        return value
    if isinstance(value, str):
        for path, name in names.items():
            if path in value:
                value = value.replace(path, name)
        return value
    if isinstance(value, dict):
        return {k: unplace(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [unplace(v, names) for v in value]
    return value
