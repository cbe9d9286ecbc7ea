"""Parent side of the zygote: start it with a sanitized environment, send jobs, survive its death."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

from . import envsafe
from . import protocol as P

_STARTUP_TIMEOUT_S = 300.0  # a cold `import torch` on a loaded CI machine can take a while
_REPLY_GRACE_S = 30.0  # on top of the job's own limit, for the zygote's bookkeeping


def _package_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    env = envsafe.sanitized(dict(os.environ if base is None else base))
    root = _package_root()
    parts = [root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Zygote:
    """A warm `python -m xeforge_harness.zygote`, restarted on demand if it ever dies.

    `interpret=True` starts it with TRITON_INTERPRET=1: Triton builds its standard library
    (`tl.max`, `tl.sum`, ...) when it is imported, so the interpreter must be chosen before that import
    and one warm process cannot serve both the interpreter and a real GPU backend.
    """

    def __init__(self, interpret: bool = False, python: str | None = None):
        self.interpret = interpret
        self.python = python or sys.executable
        self.proc: subprocess.Popen | None = None
        self.info: dict = {}

    def start(self) -> dict:
        if self.proc is not None and self.proc.poll() is None:
            return self.info
        self.proc = subprocess.Popen(
            [self.python, "-m", "xeforge_harness.zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self._environment(),
            start_new_session=True,  # a Ctrl-C to the server does not reach the zygote mid-job
            text=True,
            bufsize=1,
        )
        line = self._readline(_STARTUP_TIMEOUT_S)
        if line is None:
            self.close()
            raise RuntimeError("the harness worker did not start (no ready line)")
        self.info = json.loads(line)
        return self.info

    def _environment(self) -> dict[str, str]:
        env = child_environment()
        if self.interpret:
            env["TRITON_INTERPRET"] = "1"
        return env

    def run(self, job: dict) -> dict:
        """Run one job; always returns a result envelope, never raises for job failures."""
        try:
            self.start()
        except (RuntimeError, OSError, ValueError) as e:
            return P.error_result(f"cannot start the harness worker: {e}")
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            self.close()
            return P.error_result(f"the harness worker is gone: {e}")
        limit = float(job.get("timeout", P.DEFAULT_TIMEOUT_S)) + _REPLY_GRACE_S
        line = self._readline(limit)
        if line is None:
            self.close()  # a wedged zygote is replaced on the next job
            return P.error_result("the harness worker stopped answering")
        try:
            return json.loads(line)
        except ValueError as e:
            return P.error_result(f"the harness worker sent an unreadable reply: {e}")

    def _readline(self, timeout: float) -> str | None:
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self.proc.stdout], [], [], remaining)
            if ready:
                line = self.proc.stdout.readline()
                return line if line else None  # "" is EOF: the zygote died

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Workers:
    """The zygotes of one harness session: one per Triton mode, started on first use."""

    def __init__(self, python: str | None = None):
        self.python = python
        self._zygotes: dict[bool, Zygote] = {}
        self._auto: str | None = None

    def zygote(self, interpret: bool) -> Zygote:
        if interpret not in self._zygotes:
            self._zygotes[interpret] = Zygote(interpret=interpret, python=self.python)
        return self._zygotes[interpret]

    def for_device(self, kind: str) -> Zygote:
        return self.zygote(interpret=(kind == "cpu"))

    def resolve(self, requested: str) -> tuple[str | None, dict | None]:
        """`auto` → the device a child finds (xpu, else cuda, else cpu), asked once per session.

        Returns (kind, None) or (None, error result).
        """
        if requested != "auto":
            return requested, None
        if self._auto is None:
            reply = self.zygote(interpret=False).run({"kind": "probe", "args": {"device": "auto"}, "timeout": 120})
            kind = (reply.get("device") or {}).get("kind")
            if kind is None:
                return None, reply
            self._auto = kind
        return self._auto, None

    def info(self) -> dict:
        return {("interpreter" if k else "compiler"): z.info for k, z in self._zygotes.items()}

    def start(self, interpret: bool) -> dict:
        return self.zygote(interpret).start()

    def close(self) -> None:
        for z in self._zygotes.values():
            z.close()
        self._zygotes.clear()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
