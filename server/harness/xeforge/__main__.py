"""`python -m xeforge ...` runs the installed `xeforge` binary with the same arguments."""

from __future__ import annotations

import os
import subprocess
import sys

from . import find_xeforge_bin


def main() -> int:
    try:
        binary = find_xeforge_bin()
    except FileNotFoundError as e:
        print(f"xeforge: {e}", file=sys.stderr)
        return 2
    if os.name == "posix":
        os.execv(binary, [binary, *sys.argv[1:]])
    return subprocess.call([binary, *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
