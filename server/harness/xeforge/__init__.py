"""The `xeforge` wheel's Python side: where its binary is, for `python -m xeforge`."""

from __future__ import annotations

import os
import sys
import sysconfig


def find_xeforge_bin() -> str:
    """The `xeforge` binary installed with this package (the environment's scripts directory)."""
    name = "xeforge" + (sysconfig.get_config_var("EXE") or "")
    candidates = [os.path.join(sysconfig.get_path("scripts"), name)]
    user = sysconfig.get_path("scripts", scheme=f"{os.name}_user") if os.name == "posix" else None
    if user:
        candidates.append(os.path.join(user, name))
    # A venv's scripts directory is beside its interpreter even when sysconfig says otherwise.
    candidates.append(os.path.join(os.path.dirname(sys.executable), name))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(f"the xeforge binary was not found (looked in: {', '.join(candidates)}); reinstall the xeforge wheel")
