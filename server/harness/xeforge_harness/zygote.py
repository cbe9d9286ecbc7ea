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

from . import protocol as P

LOG_TAIL_CHARS = 6000


def main() -> int:
    # Keep the reply channel private: fd 1 becomes stderr, so whatever torch or triton print while
    # importing (or a job prints) can never corrupt a reply line.
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

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            job = json.loads(line)
        except ValueError as e:
            replies.write(json.dumps(P.error_result(f"zygote: bad job line: {e}")) + "\n")
            continue
        if not ready["ready"]:
            replies.write(json.dumps(P.error_result(ready["error"])) + "\n")
            continue
        replies.write(json.dumps(run_forked(job, replies)) + "\n")
    return 0


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
    for name in ("xeforge_harness.child.evaluate", "xeforge_harness.child.job"):  # the harness's own torch-side code
        importlib.import_module(name)


def run_forked(job: dict, replies) -> dict:
    timeout = float(job.get("timeout", P.DEFAULT_TIMEOUT_S))
    workdir = tempfile.mkdtemp(prefix="xeforge-job-")
    paths = {
        "result": os.path.join(workdir, "result.json"),
        "phase": os.path.join(workdir, "phase"),
        "log": os.path.join(workdir, "child.log"),
        "workdir": workdir,
    }
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the zygote loop
        code = 0
        try:
            replies.close()
            _child_main(job, paths)
        except BaseException:  # noqa: BLE001  (anything escaping the job must still end this process)
            code = 70
        finally:
            os._exit(code)

    status, timed_out = _wait(pid, timeout)
    wall = time.monotonic() - started
    try:
        return _outcome(job, paths, status, timed_out, timeout, wall)
    finally:
        if not os.environ.get("XEFORGE_KEEP_WORKDIR"):
            shutil.rmtree(workdir, ignore_errors=True)


def _child_main(job: dict, paths: dict) -> None:
    os.setsid()  # own process group: a timeout kills anything the candidate started, too
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    log = os.open(paths["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.environ["TRITON_CACHE_DIR"] = os.path.join(paths["workdir"], "triton-cache")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(paths["workdir"], "inductor-cache")
    os.chdir(paths["workdir"])
    # Python-level streams were opened on the zygote's descriptors; rebind them to the log.
    sys.stdout = os.fdopen(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stdin = open(os.devnull, encoding="utf-8")

    from .child import job as jobmod

    result = jobmod.run(job, phase_path=paths["phase"])
    tmp = paths["result"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, default=_json_default)
    os.replace(tmp, paths["result"])
    sys.stdout.flush()
    sys.stderr.flush()


def _json_default(o):
    if hasattr(o, "item"):
        return o.item()
    return str(o)


def _wait(pid: int, timeout: float) -> tuple[int, bool]:
    """Wait for `pid` up to `timeout` seconds; on timeout kill its process group. Returns (status, timed_out)."""
    deadline = time.monotonic() + timeout
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = None
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status, False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            if pidfd is not None:
                select.select([pidfd], [], [], remaining)
            else:
                time.sleep(min(0.01, remaining))
    finally:
        if pidfd is not None:
            os.close(pidfd)
    _kill_group(pid)
    _, status = os.waitpid(pid, 0)
    return status, True


def _kill_group(pid: int) -> None:
    """SIGKILL the child's process group (its pid, after setsid), so grandchildren die with it."""
    for kill in (os.killpg, os.kill):  # os.kill too: before setsid ran, no group has that id
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _read_json(path: str):
    try:
        return json.loads(_read(path) or "null")
    except ValueError:
        return None


def _outcome(job: dict, paths: dict, status: int, timed_out: bool, timeout: float, wall: float) -> dict:
    log_text = _read(paths["log"])
    log_tail = log_text[-LOG_TAIL_CHARS:]
    phase = _read(paths["phase"]).strip() or "setup"
    side = phase.split(":", 1)[0]  # "candidate", "reference" or "setup"
    elapsed = {"wall_s": round(wall, 4)}

    if not timed_out and os.path.exists(paths["result"]):
        try:
            with open(paths["result"], encoding="utf-8") as f:
                result = json.load(f)
        except ValueError as e:
            return P.error_result(f"the child wrote an unreadable result: {e}", log_tail, elapsed=elapsed)
        child_log = result.get("log") or ""
        result["log"] = (child_log + ("\n--- output ---\n" + log_tail if log_tail.strip() else ""))[-LOG_TAIL_CHARS:]
        result.setdefault("elapsed", {}).update(elapsed)
        return result

    if timed_out:
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

    if job.get("kind") == "evaluate" and side == "candidate":
        return {
            "verdict": verdict,
            "message": f"the candidate {what}",
            "phase": phase,
            "device": _read_json(paths["phase"] + ".device"),
            "compile": {"ok": None, "configs": []},
            "correctness": {"ok": False, "variants": []},
            "guard": {"ok": None, "new_torch_ops": []},
            "timing": {"meaningful": False, "reason": f"not measured: verdict {verdict}"},
            "elapsed": elapsed,
            "log": log_tail,
        }
    # The original kernel, the reference or the harness itself failed: no verdict on the candidate.
    return P.error_result(f"the {side if side != 'setup' else 'harness child'} {what}", log_tail, phase=phase, elapsed=elapsed)


if __name__ == "__main__":
    sys.exit(main())
