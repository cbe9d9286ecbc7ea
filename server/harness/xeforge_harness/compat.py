"""Whether the `xeforge` that started this harness is of the same version.

The binary, this package and the editor extension are released as one number; a server of another
version may send requests this harness reads differently, so every request gets an error that names
both instead of a verdict. The server says its version in `XEFORGE_SERVER_VERSION` when it starts
`serve`; a harness started by hand (or remotely) is not checked here.
"""

from __future__ import annotations

import os
import sys

from . import __version__


def server_mismatch(environ: dict[str, str] | None = None) -> str | None:
    """A message when the starting server's version differs from this harness's, else None."""
    server = (environ if environ is not None else os.environ).get("XEFORGE_SERVER_VERSION", "").strip()
    if not server or server == __version__:
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    return (
        f"xeforge {server} started xeforge_harness {__version__} (from {here}, with {sys.executable}); "
        "they must be the same version: install one xeforge wheel into the environment "
        f"(pip install xeforge=={server}) or point harness.python at an environment that has the matching harness"
    )
