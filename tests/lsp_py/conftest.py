import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def xeforge_binary() -> str:
    return os.environ.get("XEFORGE_BIN", str(ROOT / "target" / "debug" / "xeforge"))
