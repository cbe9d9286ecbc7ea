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
    """`python -m xeforge_harness serve` driven over stdio, one request at a time (`extra`: serve's
    options, `env`: added to its environment)."""

    def __init__(self, *extra: str, env: dict[str, str] | None = None) -> None:
        # XEFORGE_TEST_JOBS_PER_DEVICE=N runs every such `serve` with N jobs per device (the device
        # gate's permits asked by every job), unless the test chose its own.
        shared = os.environ.get("XEFORGE_TEST_JOBS_PER_DEVICE")
        if shared and "--jobs-per-device" not in extra:
            extra = (*extra, "--jobs-per-device", shared)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "xeforge_harness", "serve", *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            env=harness_env(**(env or {})),
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
        self.write(obj)
        return self.read(timeout)

    def write(self, obj) -> None:
        """Send one request without waiting for its reply (several may be in flight)."""
        assert self.proc.stdin is not None
        line = obj if isinstance(obj, str) else json.dumps(obj)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read(self, timeout: float = 300) -> dict:
        """The next reply line, whichever request it answers."""
        assert self.proc.stdout is not None
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


def file_content(path: str | Path, name: str | None = None) -> dict:
    """A file as an HTTP request carries it (server/harness/README.md, remote harness)."""
    path = Path(path)
    return {"name": name or path.name, "content": path.read_text()}


class HttpServe:
    """`python -m xeforge_harness serve --http 127.0.0.1:0`, a real process on loopback.

    `cwd` is where the server runs; `token` goes into its environment as XEFORGE_HARNESS_TOKEN."""

    def __init__(self, *extra: str, token: str | None = None, cwd: str | Path | None = None, address: str = "127.0.0.1:0") -> None:
        env = harness_env()
        env.pop("XEFORGE_HARNESS_TOKEN", None)
        if token is not None:
            env["XEFORGE_HARNESS_TOKEN"] = token
        self.token = token
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "xeforge_harness", "serve", "--http", address, *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
        )
        self.stderr: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(300)
        assert first and first[0], f"the HTTP server said nothing; stderr:\n{''.join(self.stderr)[-3000:]}"
        self.first = json.loads(first[0])
        self.base = self.first.get("listening")

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def post(self, path: str, body, token: str | None = "default", headers: dict | None = None, timeout: float = 300) -> tuple[int, dict]:
        import urllib.error
        import urllib.request

        token = self.token if token == "default" else token
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        if token is not None:
            hdrs["Authorization"] = f"Bearer {token}"
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.post("/shutdown", {}, timeout=30)
                self.proc.wait(timeout=60)
            except Exception:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def serve():
    session = ServeSession()
    yield session
    session.close()


def pool_job(candidate: str, device: str = DEVICE) -> dict:
    """An `evaluate` job for a pool lane as `service` builds it (every field, paths resolved): the
    vector_add problem, untimed, against `candidate` (relative to tests/harness)."""
    args = {
        "kernel": str(PROBLEMS / "vector_add.py"),
        "candidate": str(HERE / candidate),
        "spec": str(PROBLEMS / "vector_add.yaml"),
        "reference": None,
        "device": device,
        "family": "ci",
        "seeds": 3,
        "timeout": 120.0,
        "no_timing": True,
        "runs": 100,
        "warmup": 25,
        "timing_family": None,
        "stop_below": None,
    }
    return {"kind": "evaluate", "args": args, "timeout": 120.0}


# --- the device gate's order of events (tests/harness/test_pool_split.py, test_ray.py) ---


def gate_held(path: Path) -> list[dict]:
    """The gate's account: from each `grant` to the `free` or `drop` that ends it, per zygote."""
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    open_: dict[tuple, dict] = {}
    out = []
    for e in sorted(events, key=lambda e: e["t"]):
        key = (e["zygote"], e["job"])
        if e["event"] == "grant":
            open_[key] = {"zygote": e["zygote"], "job": e["job"], "mode": e["mode"], "t0": e["t"], "t1": None}
        elif e["event"] in ("free", "drop") and key in open_:
            interval = open_.pop(key)
            interval["t1"] = e["t"]
            out.append(interval)
    out.extend({**i, "t1": float("inf")} for i in open_.values())
    return out


def overlap(a: dict, b: dict) -> bool:
    return a["t0"] < b["t1"] and b["t0"] < a["t1"]


def timing_alone(intervals: list[dict]) -> None:
    """On one device (one zygote), a timing interval overlaps no interval of another job: two timings
    never overlap there, and nothing else runs beside one."""
    for t in intervals:
        if t["mode"] != "timing":
            continue
        for other in intervals:
            if other is t or other["zygote"] != t["zygote"] or other["job"] == t["job"]:
                continue
            assert not overlap(t, other), f"{other['job']}'s {other['mode']} ran beside {t['job']}'s timing: {t} {other}"
