"""The warm parent ("zygote"): imports torch and triton once, then forks one child per job.

Protocol (private to the harness, `pool.Zygote` its only client): on stdin one line per job,
`{"id": K, "job": {...}}`, and `cancel K` to stop job K; on the zygote's original stdout, after its
ready line, one line per job when it ends, `{"id": K, "result": {...}}`; `{"id": K, "waiting": true}` when job K waits for its device's
permit and `{"id": K, "waited_s": S}` when it gets it (its limits grow by the S seconds waited). Several
jobs may run at once (the pool decides how many per lane): each in a fresh `os.fork()` child in its
own session and its own work directory; the zygote never touches a device, so every child
initialises CUDA/XPU itself. The zygote enforces each job's wall-clock limit, kills the child's whole
process group on timeout, and turns signal deaths into `crashed`, so nothing a candidate does can
take the zygote (or the server) down.

The zygote of a lane is the parent of every judge on its device, so it holds the device's `Gate`
(`gate.py`): a judge asks it for a `device` or `timing` permit over its event pipe and waits for the
grant on a pipe of its own; a job that ends, however, gives back what it held.

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
from .gate import MODES, TIMING, Gate

LOG_TAIL_CHARS = 6000
TRUSTED_CACHE_ENV = "XEFORGE_HARNESS_TRUSTED_CACHE"
JUDGE_GRACE_S = 15.0  # the judge enforces the job's limit itself; this is the backstop
# A line the parent may send while a job runs, `cancel K`: stop job K now (its processes killed, an
# `error` reply, no verdict). A cancel of a job that is not running is ignored. EOF on stdin (the
# parent died: a cancelled `serve`, a lost Ray actor) stops every running job the same way, then the zygote.
CANCEL = "cancel"
# Tests: a file to which the zygote appends each gate event (one JSON line: t, zygote, job, event, mode).
GATE_LOG_ENV = "XEFORGE_HARNESS_GATE_LOG"
_REAP_S = 10.0  # after its pipe closed (or it was killed), how long a judge gets to be reaped


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
    """Lines from the parent, read from fd 0 unbuffered, so that the zygote's loop can watch it with
    the jobs' pipes without a buffered reader holding lines it cannot see."""

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

    def lines(self) -> list[str]:
        """The complete lines received (and at EOF the unterminated rest), taken out of the buffer."""
        *done, self.buf = self.buf.split(b"\n")
        if self.eof and self.buf.strip():
            done.append(self.buf)
            self.buf = b""
        return [line.decode("utf-8", errors="replace") for line in done]


class Running:
    """One job in flight: its judge, the two pipes to it, its limit and what it has reported."""

    def __init__(self, rid, job: dict, pid: int, events: int, grant: int, workdir: str):
        self.rid = rid  # the parent's id, echoed in the reply
        self.job = job
        self.pid = pid
        self.events = events  # read end of the judge's event pipe
        self.grant = grant  # write end of the pipe the judge reads its grants from
        self.workdir = workdir
        self.started = time.monotonic()
        self.timeout = float(job.get("timeout", P.DEFAULT_TIMEOUT_S))
        self.deadline = self.started + self.timeout + JUDGE_GRACE_S
        self.report: dict = {
            "phase": "setup",
            "device": None,
            "groups": [],
            "partial": [],
            "result": None,
            "timed_out": False,
            "cancelled": None,
        }
        self.buf = b""
        self.eof = False  # its event pipe closed: the judge has ended
        self.killed = False
        self.ending: float | None = None  # when it closed its pipe or was killed
        self.asked: float | None = None  # when its pending permit request was made
        self.waited = 0.0  # seconds spent waiting for permits
        self.used_gate = False
        self.announced = False  # the parent was told it waits

    def deadline_at(self, now: float) -> float:
        """Its limit: the time it waits for a permit (another job's phase) is not its own."""
        return self.deadline + (now - self.asked if self.asked is not None else 0.0)


class Jobs:
    """The zygote's loop: jobs started, their events read, permits granted, limits enforced, replies."""

    def __init__(self, replies, stdin: Stdin, ready: dict):
        self.replies = replies
        self.stdin = stdin
        self.ready = ready
        self.running: dict[str, Running] = {}
        self.gate = Gate(on_event=self._log)
        self.log_path = os.environ.get(GATE_LOG_ENV) or None

    def loop(self) -> None:
        while not (self.stdin.eof and not self.running):
            self.step()

    def step(self) -> None:
        now = time.monotonic()
        waits = [0.01 if j.ending is not None else j.deadline_at(now) - now for j in self.running.values()]
        timeout = max(0.0, min(waits)) if waits else None
        watched = [j.events for j in self.running.values() if j.ending is None]
        if not self.stdin.eof:
            watched.append(self.stdin.fd)
        ready, _, _ = select.select(watched, [], [], timeout)
        if self.stdin.fd in ready:
            self.stdin.fill()
            self._commands()
        for job in list(self.running.values()):
            if job.ending is None and job.events in ready:
                self._read(job)
        now = time.monotonic()
        for job in list(self.running.values()):
            if job.ending is None and now >= job.deadline_at(now):
                job.report["timed_out"] = True
                self._kill(job)
            if job.ending is not None:
                self._reap(job)

    # --- the parent's lines -----------------------------------------------------------------------

    def _commands(self) -> None:
        for line in self.stdin.lines():
            line = line.strip()
            if not line:
                continue
            if line.split(" ", 1)[0] == CANCEL:
                job = self.running.get(line[len(CANCEL) :].strip())
                if job is not None and job.ending is None:
                    job.report["cancelled"] = "the client cancelled the job"
                    self._kill(job)
                continue
            try:
                message = json.loads(line)
                rid, job = message["id"], message["job"]
                if not isinstance(job, dict):
                    raise ValueError("the job is not an object")
            except (ValueError, KeyError, TypeError) as e:
                print(f"xeforge_harness zygote: bad job line: {e}", file=sys.stderr, flush=True)
                continue
            if not self.ready["ready"]:
                self._reply(rid, P.error_result(self.ready["error"]))
            elif _key(rid) in self.running:
                self._reply(rid, P.error_result(f"zygote: job {rid!r} is already running"))
            else:
                self._start(rid, job)
        if self.stdin.eof:
            for job in self.running.values():
                if job.ending is None:
                    job.report["cancelled"] = "the harness's parent process went away"
                    self._kill(job)

    def _reply(self, rid, result: dict) -> None:
        self._write({"id": rid, "result": result})

    def _write(self, obj: dict) -> None:
        try:
            self.replies.write(json.dumps(obj) + "\n")
        except (OSError, ValueError):
            pass  # the parent is gone; its EOF on stdin ends the jobs

    # --- one job ----------------------------------------------------------------------------------

    def _start(self, rid, job: dict) -> None:
        workdir = tempfile.mkdtemp(prefix="xeforge-job-")
        read_fd, write_fd = os.pipe()
        grant_read, grant_write = os.pipe()
        others = [fd for j in self.running.values() for fd in (j.events, j.grant)]
        try:
            pid = os.fork()
        except OSError as e:  # no process left on the host: this job fails, the zygote goes on
            for fd in (read_fd, write_fd, grant_read, grant_write):
                os.close(fd)
            shutil.rmtree(workdir, ignore_errors=True)
            self._reply(rid, P.error_result(f"zygote: cannot start the job's process: {e}"))
            return
        if pid == 0:  # the child: never returns into the zygote loop
            code = 0
            try:
                # Nothing of the zygote's other jobs: their events, their grants, the reply stream.
                for fd in (read_fd, grant_write, *others):
                    os.close(fd)
                self.replies.close()
                _child_main(job, workdir, write_fd, grant_read)
            except BaseException:  # noqa: BLE001  (anything escaping the job must still end this process)
                code = 70
            finally:
                os._exit(code)
        os.close(write_fd)
        os.close(grant_read)
        self.running[_key(rid)] = Running(rid, job, pid, read_fd, grant_write, workdir)

    def _read(self, job: Running) -> None:
        chunk = os.read(job.events, 1 << 20)
        if not chunk:
            self._ended(job)
            return
        job.buf += chunk
        *lines, job.buf = job.buf.split(b"\n")
        for line in lines:
            tag, _, payload = line.decode("utf-8", errors="replace").partition(" ")
            try:
                value = json.loads(payload)
            except ValueError:
                continue
            report = job.report
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
            elif tag == "A":  # a permit of the device: granted now or when the gate allows
                job.used_gate = True
                job.asked = time.monotonic()
                granted = self.gate.request(_key(job.rid), value if value in MODES else TIMING)
                if _key(job.rid) not in granted:
                    job.announced = True
                    self._write({"id": job.rid, "waiting": True})  # the parent's clock stops too
                self._grant(granted)
            elif tag == "F":
                self._grant(self.gate.release(_key(job.rid)))

    def _grant(self, keys: list) -> None:
        now = time.monotonic()
        for key in keys:
            job = self.running.get(key)
            if job is None:
                continue
            waited = now - (job.asked if job.asked is not None else now)
            job.asked = None
            job.deadline += waited  # waiting for another job's phase is not this job's time
            job.waited += waited
            try:
                os.write(job.grant, b"g\n")
            except OSError:
                pass  # the judge is gone; its pipe's EOF ends the job
            if job.announced:
                job.announced = False
                self._write({"id": job.rid, "waited_s": round(waited, 3)})

    def _ended(self, job: Running) -> None:
        """Its judge closed its pipe (it exited) or was killed: it holds nothing any more."""
        if job.ending is None:
            job.ending = time.monotonic()
        job.eof = True
        self._grant(self.gate.drop(_key(job.rid)))

    def _kill(self, job: Running) -> None:
        job.killed = True
        for group in job.report["groups"]:
            _kill_group(group)
        _kill_group(job.pid)
        self._ended(job)

    def _reap(self, job: Running) -> None:
        try:
            done, status = os.waitpid(job.pid, os.WNOHANG)
        except ChildProcessError:
            done, status = job.pid, 0
        if not done:
            if time.monotonic() - (job.ending or 0.0) < _REAP_S:
                return
            _kill_group(job.pid)
            status = os.waitpid(job.pid, 0)[1]
        for group in job.report["groups"]:  # whatever the candidate left behind
            _kill_group(group)
        job.report["status"] = status
        del self.running[_key(job.rid)]
        for fd in (job.events, job.grant):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            result = _outcome(job.job, job.workdir, job.report, job.timeout, time.monotonic() - job.started)
        finally:
            if not os.environ.get("XEFORGE_KEEP_WORKDIR"):
                shutil.rmtree(job.workdir, ignore_errors=True)
        if job.used_gate and isinstance(result, dict):
            result.setdefault("elapsed", {})["permit_wait_s"] = round(job.waited, 3)
        self._reply(job.rid, result)

    def _log(self, what: str, key, mode: str) -> None:
        if self.log_path is None:
            return
        line = json.dumps({"t": time.monotonic(), "zygote": os.getpid(), "job": key, "event": what, "mode": mode}) + "\n"
        try:
            fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)
        except OSError:
            pass


def _key(rid) -> str:
    return str(rid)


def _serve(replies, ready: dict) -> None:
    Jobs(replies, Stdin(), ready).loop()


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


class Channel:
    """The child's side of its pipes: one tagged line per event (phase, device, group, result, and
    the device's permits), and, when the lane's device is shared by several jobs, the grants."""

    def __init__(self, fd: int, grant_fd: int | None = None, slots: int = 1):
        self.fd = fd
        self.current = ""
        self.grant_fd = grant_fd
        self.slots = max(1, slots)  # jobs the lane runs at once: the device's memory is shared by as many
        self.shared = grant_fd is not None and self.slots > 1
        self.held: str | None = None

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

    def permit(self, mode: str) -> float:
        """Hold `mode` (`gate.DEVICE` or `gate.TIMING`) of the device from now on, giving back what was
        held; blocks until the zygote grants it. The seconds waited (0 when the device is not shared:
        then there is nothing to ask)."""
        if not self.shared:
            return 0.0
        assert self.grant_fd is not None
        started = time.monotonic()
        self.held = None
        self._send("A", mode)
        data = b""
        while not data.endswith(b"\n"):
            chunk = os.read(self.grant_fd, 1)
            if not chunk:
                raise RuntimeError("the harness's zygote is gone (no grant of the device's permit)")
            data += chunk
        self.held = mode
        return time.monotonic() - started

    def release(self) -> None:
        """Give back what is held (the job goes on holding nothing: its processes must not run)."""
        if self.shared and self.held is not None:
            self.held = None
            self._send("F", None)


def _child_main(job: dict, workdir: str, fd: int, grant_fd: int | None = None) -> None:
    os.setsid()  # own process group: a timeout kills the judge and its trusted worker together
    envsafe.protect_process()
    _die_with_parent()  # a judge never outlives its zygote (whose gate would be gone with it)
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

    try:
        slots = int(job.get("slots") or 1)
    except (TypeError, ValueError):
        slots = 1
    channel = Channel(fd, grant_fd, slots)
    result = jobmod.run(job, channel)
    channel.result(result)
    sys.stdout.flush()
    sys.stderr.flush()


def _die_with_parent() -> None:
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux
        pass


def _json_default(o):
    if hasattr(o, "item"):
        return o.item()
    return str(o)


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
