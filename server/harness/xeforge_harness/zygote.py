"""The warm parent ("zygote"): imports torch and triton once, then forks one child per job.

Protocol (private to the harness): one JSON job per line on stdin, one JSON reply per line on the
zygote's original stdout. Each job runs in a fresh `os.fork()` child in its own session and its own
work directory; the zygote never touches a device, so every child initialises CUDA/XPU itself.
The zygote enforces the wall-clock limit, kills the child's whole process group on timeout, and turns
signal deaths into `crashed`, so nothing a candidate does can take the zygote (or the server) down.

Run as `python -m xeforge_harness.zygote`; `pool.Zygote` starts and talks to it.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time

from . import envsafe
from . import protocol as P
from .child.source import read as _read

LOG_TAIL_CHARS = 6000
TRUSTED_CACHE_ENV = "XEFORGE_HARNESS_TRUSTED_CACHE"
JUDGE_GRACE_S = 15.0  # the judge enforces the job's limit itself; this is the backstop
# A line the parent may send while a job runs: stop it now (its processes killed, an `error` reply, no
# verdict). Never answered by a line of its own; between jobs it is ignored. EOF on stdin (the parent
# died: a cancelled `serve`, a lost Ray actor) stops the running job the same way, then the zygote.
CANCEL = "cancel"


def main() -> int:
    # Keep the reply channel private: fd 1 becomes stderr, so whatever torch or triton print while
    # importing (or a job prints) can never corrupt a reply line.
    envsafe.protect_process()
    reply_fd = os.dup(1)
    os.dup2(2, 1)
    replies = os.fdopen(reply_fd, "w", buffering=1, encoding="utf-8")

    ready: dict = {"ready": True, "pid": os.getpid(), "interpret": os.environ.get("TRITON_INTERPRET") == "1"}
    try:
        import torch  # noqa: F401  (warm import: this is the point of the zygote)
        import triton  # noqa: F401

        _warm_imports()

        ready.update(torch=torch.__version__, triton=triton.__version__)
    except Exception as e:  # a broken install is reported per job, not by dying
        ready = {"ready": False, "error": f"cannot import torch/triton: {type(e).__name__}: {e}"}
    replies.write(json.dumps(ready) + "\n")
    # One Triton cache for the trusted workers of every job this zygote runs: the original kernel of a
    # stage's many candidates compiles once, not once per candidate. Only trusted code writes it (the
    # candidate's worker gets a fresh cache of its own per job); removed when the zygote ends.
    trusted_cache = tempfile.mkdtemp(prefix="xeforge-trusted-cache-")
    os.environ[TRUSTED_CACHE_ENV] = trusted_cache
    try:
        _serve(replies, ready)
    finally:
        shutil.rmtree(trusted_cache, ignore_errors=True)
    return 0


class Stdin:
    """Job lines from the parent, read from fd 0 unbuffered, so that `_collect` can also watch it for
    CANCEL (or EOF) while a job runs without a buffered reader holding lines it cannot see."""

    def __init__(self, fd: int = 0):
        self.fd = fd
        self.buf = b""
        self.eof = False

    def fill(self) -> None:
        chunk = os.read(self.fd, 1 << 16)
        if chunk:
            self.buf += chunk
        else:
            self.eof = True

    def readline(self) -> str | None:
        """The next line (blocking), None at EOF."""
        while b"\n" not in self.buf and not self.eof:
            self.fill()
        if b"\n" not in self.buf:
            rest, self.buf = self.buf, b""
            return rest.decode("utf-8", errors="replace") if rest.strip() else None
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode("utf-8", errors="replace")

    def take_cancel(self) -> bool:
        """Remove the complete CANCEL lines waiting; whether there was one (other lines stay queued)."""
        *lines, tail = self.buf.split(b"\n")
        kept = [line for line in lines if line.strip() != CANCEL.encode()]
        self.buf = b"".join(line + b"\n" for line in kept) + tail
        return len(kept) < len(lines)


def _serve(replies, ready: dict) -> None:
    stdin = Stdin()
    while True:
        line = stdin.readline()
        if line is None:
            return
        line = line.strip()
        if not line or line == CANCEL:  # a cancel that arrived after its job ended
            continue
        try:
            job = json.loads(line)
        except ValueError as e:
            replies.write(json.dumps(P.error_result(f"zygote: bad job line: {e}")) + "\n")
            continue
        if not ready["ready"]:
            replies.write(json.dumps(P.error_result(ready["error"])) + "\n")
            continue
        replies.write(json.dumps(run_forked(job, replies, stdin)) + "\n")
        if stdin.eof:
            return


def _warm_imports() -> None:
    """Import, once, what every child would otherwise import on its own first use.

    A dispatch mode's first operator pulls in torch._dynamo (seconds), and the first interpreted
    launch pulls in Triton's interpreter. Imports only: nothing here may initialise a device, or the
    forked children could not use it.
    """
    import importlib

    for name in ("torch._dynamo", "torch.utils._python_dispatch", "triton.runtime.interpreter", "numpy"):
        try:
            importlib.import_module(name)
        except Exception:  # an optional speed-up; the child imports it again if it needs it
            pass
    for name in (
        "xeforge_harness.child.evaluate",
        "xeforge_harness.child.job",
        "xeforge_harness.child.worker",
        "torch.profiler",
    ):  # the harness's own torch-side code
        importlib.import_module(name)


def run_forked(job: dict, replies, stdin: Stdin | None = None) -> dict:
    """Run one job in a forked child; its phases and its result come back through a pipe.

    Only this process holds the pipe's read end and only the child (the judge) its write end; the
    judge's workers close it when they start. A candidate therefore has no file and no descriptor
    through which to plant a result.
    """
    timeout = float(job.get("timeout", P.DEFAULT_TIMEOUT_S))
    workdir = tempfile.mkdtemp(prefix="xeforge-job-")
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the zygote loop
        code = 0
        try:
            os.close(read_fd)
            replies.close()
            _child_main(job, workdir, write_fd)
        except BaseException:  # noqa: BLE001  (anything escaping the job must still end this process)
            code = 70
        finally:
            os._exit(code)
    os.close(write_fd)
    try:
        report = _collect(pid, read_fd, timeout + JUDGE_GRACE_S, stdin)
        wall = time.monotonic() - started
        return _outcome(job, workdir, report, timeout, wall)
    finally:
        os.close(read_fd)
        if not os.environ.get("XEFORGE_KEEP_WORKDIR"):
            shutil.rmtree(workdir, ignore_errors=True)


class Channel:
    """The child's side of the pipe: one tagged line per event (phase, device, group, result)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.current = ""

    def _send(self, tag: str, payload) -> None:
        data = (tag + " " + json.dumps(payload, default=_json_default) + "\n").encode()
        while data:
            data = data[os.write(self.fd, data) :]

    def __call__(self, phase: str) -> None:
        if phase != self.current:
            self.current = phase
            self._send("P", phase)

    def device(self, info: dict) -> None:
        self._send("D", info)

    def group(self, pgid: int) -> None:
        self._send("G", pgid)

    def result(self, result: dict) -> None:
        self._send("R", result)

    def partial(self, result: dict) -> None:
        """One sweep candidate's result, as soon as it is known: a judge that dies later keeps it."""
        self._send("S", result)


def _child_main(job: dict, workdir: str, fd: int) -> None:
    os.setsid()  # own process group: a timeout kills the judge and its trusted worker together
    envsafe.protect_process()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    log = os.open(os.path.join(workdir, "child.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.environ["TRITON_CACHE_DIR"] = os.path.join(workdir, "triton-cache")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(workdir, "inductor-cache")
    os.chdir(workdir)
    # Python-level streams were opened on the zygote's descriptors; rebind them to the log.
    sys.stdout = os.fdopen(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stdin = open(os.devnull, encoding="utf-8")

    from .child import job as jobmod

    channel = Channel(fd)
    result = jobmod.run(job, channel)
    channel.result(result)
    sys.stdout.flush()
    sys.stderr.flush()


def _json_default(o):
    if hasattr(o, "item"):
        return o.item()
    return str(o)


def _collect(pid: int, fd: int, limit: float, stdin: Stdin | None = None) -> dict:
    """Read the child's events until it exits or `limit` seconds pass (then kill it and its groups),
    or until the parent cancels the job (CANCEL on stdin, or EOF: the parent is gone)."""
    deadline = time.monotonic() + limit
    report: dict = {"phase": "setup", "device": None, "groups": [], "partial": [], "result": None, "timed_out": False, "cancelled": None}
    buf = b""
    eof = False
    if stdin is not None and stdin.take_cancel():  # read together with the job line, already buffered
        report["cancelled"] = "the client cancelled the job"
        eof = True
    while not eof:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            report["timed_out"] = True
            break
        watched = [fd] if stdin is None or stdin.eof else [fd, stdin.fd]
        ready, _, _ = select.select(watched, [], [], remaining)
        if stdin is not None and stdin.fd in ready:
            stdin.fill()
            if stdin.take_cancel() or stdin.eof:
                report["cancelled"] = "the client cancelled the job" if not stdin.eof else "the harness's parent process went away"
                break
        if fd not in ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            eof = True
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            tag, _, payload = line.decode("utf-8", errors="replace").partition(" ")
            try:
                value = json.loads(payload)
            except ValueError:
                continue
            if tag == "P":
                report["phase"] = str(value)
            elif tag == "D":
                report["device"] = value
            elif tag == "G" and isinstance(value, int):
                report["groups"].append(value)
            elif tag == "S" and isinstance(value, dict):
                report["partial"].append(value)
            elif tag == "R":
                report["result"] = value
    if report["timed_out"] or report.get("cancelled"):
        for group in report["groups"]:
            _kill_group(group)
        _kill_group(pid)
    status = _reap(pid)
    for group in report["groups"]:  # whatever the candidate left behind
        _kill_group(group)
    report["status"] = status
    return report


def _reap(pid: int) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.01)
    _kill_group(pid)
    return os.waitpid(pid, 0)[1]


def _kill_group(pid: int) -> None:
    """SIGKILL the child's process group (its pid, after setsid), so grandchildren die with it."""
    for kill in (os.killpg, os.kill):  # os.kill too: before setsid ran, no group has that id
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _outcome(job: dict, workdir: str, report: dict, timeout: float, wall: float) -> dict:
    log_tail = _read(os.path.join(workdir, "child.log"))[-LOG_TAIL_CHARS:]
    phase = report["phase"]
    side = phase.split(":", 1)[0]  # "candidate", "reference" or "setup"
    elapsed = {"wall_s": round(wall, 4)}
    status = report["status"]
    result = report["result"]

    if report.get("cancelled"):
        # Not a verdict on anything: nobody is waiting for one.
        return P.cancelled_result(job.get("kind"), f"{report['cancelled']} (while in {phase})", phase=phase, elapsed=elapsed)
    if not report["timed_out"] and isinstance(result, dict):
        child_log = result.get("log") or ""
        result["log"] = (child_log + ("\n--- harness output ---\n" + log_tail if log_tail.strip() else ""))[-LOG_TAIL_CHARS:]
        result.setdefault("elapsed", {}).update(elapsed)
        return result

    if report["timed_out"]:
        what = f"did not finish within {timeout:g} s (while in {phase})"
        verdict = P.TIMEOUT
    elif os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        hint = " (out of memory?)" if sig == signal.SIGKILL else ""
        what = f"was killed by {name}{hint} (while in {phase})"
        verdict = P.CRASHED
    else:
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
        what = f"exited with status {code} without a result (while in {phase})"
        verdict = P.CRASHED

    if job.get("kind") in ("evaluate", "sweep") and side == "candidate":
        # The judge itself died or hung while the candidate ran: whatever did it, the candidate
        # gets no better than this.
        blamed = {
            "verdict": verdict,
            "message": f"the harness's judge process {what}; the candidate was running",
            "phase": phase,
            "device": report["device"],
            "compile": {"ok": None, "configs": []},
            "correctness": {"ok": False, "variants": []},
            "guard": {"ok": None, "new_torch_ops": []},
            "timing": {"meaningful": False, "reason": f"not measured: verdict {verdict}"},
            "elapsed": elapsed,
            "log": log_tail,
        }
        if job.get("kind") == "evaluate":
            return blamed
        # A sweep keeps the candidates judged before; the one running is blamed; the rest are not started.
        done = report["partial"]
        total = len((job.get("args") or {}).get("candidates") or [])
        return {
            "kind": "sweep",
            "device": report["device"],
            "results": [*done, blamed],
            "stopped": f"the judge died while candidate {len(done) + 1} of {total} ran: {what}",
            "elapsed": elapsed,
            "log": "",
        }
    # The original kernel, the reference or the harness itself failed: no verdict on the candidate.
    if job.get("kind") == "sweep":
        return P.sweep_failed(P.error_result(f"the sweep's judge process {what}", log_tail, phase=phase, elapsed=elapsed))
    return P.error_result(f"the {side if side != 'setup' else 'harness child'} {what}", log_tail, phase=phase, elapsed=elapsed)


if __name__ == "__main__":
    sys.exit(main())
