"""Shared helpers for the harness tests.

The suite runs on the device named by XEFORGE_TEST_DEVICE (default `cpu`, the Triton interpreter);
tests/harness/gpu/run_gpu_suite.sh runs it again with `cuda`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
HARNESS = REPO / "server" / "harness"
PROBLEMS = HERE / "problems"
FIXTURES = HERE / "fixtures"
DEVICE = os.environ.get("XEFORGE_TEST_DEVICE", "cpu")
ON_GPU = DEVICE in ("cuda", "xpu")

if str(HARNESS) not in sys.path:
    sys.path.insert(0, str(HARNESS))


def harness_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HARNESS)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.update(extra)
    return env


def run_cli(*args: str, env: dict | None = None, timeout: float = 300) -> tuple[int, dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "xeforge_harness", *args],
        capture_output=True,
        text=True,
        env=env or harness_env(),
        timeout=timeout,
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines, f"no JSON on stdout; stderr:\n{proc.stderr[-3000:]}"
    return proc.returncode, json.loads(lines[-1])


def evaluate_args(candidate: str, problem: str = "vector_add", **extra) -> dict:
    """Request arguments; `candidate` is relative to tests/harness (e.g. "fixtures/add_zeros.py")."""
    args = {"kernel": str(PROBLEMS / f"{problem}.py"), "candidate": str(HERE / candidate), "device": DEVICE}
    if ON_GPU and "no_timing" not in extra:
        args["no_timing"] = True  # verdict tests want `correct`, not a timing outcome
    args.update(extra)
    return args


class ServeSession:
    """`python -m xeforge_harness serve` driven over stdio, one request at a time."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "xeforge_harness", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            env=harness_env(),
        )
        self.stderr: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()
        self.counter = 0

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def request(self, command: str, args: dict | None = None, timeout: float = 300) -> dict:
        self.counter += 1
        rid = f"req-{self.counter}"
        return self.send({"id": rid, "command": command, "args": args or {}}, timeout)

    def send(self, obj, timeout: float = 300) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        line = obj if isinstance(obj, str) else json.dumps(obj)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        result: list[str] = []
        reader = threading.Thread(target=lambda: result.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        assert result and result[0], f"serve gave no reply (alive: {self.proc.poll() is None}); stderr:\n{''.join(self.stderr)[-3000:]}"
        return json.loads(result[0])

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.alive():
            try:
                self.send({"id": "bye", "command": "shutdown"}, timeout=30)
                self.proc.wait(timeout=30)
            except Exception:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def serve():
    session = ServeSession()
    yield session
    session.close()
