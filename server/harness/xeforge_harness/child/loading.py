"""Importing kernel files as real modules (Triton's JIT needs their source on disk)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from types import ModuleType


def import_file(path: str, role: str) -> ModuleType:
    """Import `path` under a unique name; its own directory is importable while it loads."""
    path = os.path.abspath(path)
    digest = hashlib.sha1(path.encode()).hexdigest()[:10]
    name = f"_xeforge_{role}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = os.path.dirname(path)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        try:
            sys.path.remove(folder)
        except ValueError:
            pass
    return module
