"""The judge's end of a worker: fork it, call it with a deadline, tell how it ended, stop it.

A call either returns the worker's reply or raises `Died` (with the wait status) or `Hung` (the
deadline passed; the worker's group has been killed by then). The judge maps those onto verdicts
depending on whose worker it was.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import time
from collections.abc import Sequence

from .. import wire

# Kineto's own log lines (profiler start/stop), printed on every profiled call.
_PROFILER_NOISE = re.compile(r"^(USDT|ERROR|WARNING|INFO):\d{4}-\d\d-\d\d [\d:]+ \d+:\d+ \w+\.cpp:\d+\]")


class Died(Exception):
    def __init__(self, role: str, how: str):
        super().__init__(f"the {role} process {how}")
        self.how = how


class Hung(Exception):
    pass


class Failed(Exception):
    """The worker answered `ok: false`: user code raised (`kind` says how)."""

    def __init__(self, reply: dict):
        super().__init__(reply.get("error", "failed"))
        self.reply = reply
        self.kind = reply.get("kind", "raise")
        self.error = reply.get("error", "failed")
        self.trace = reply.get("trace", "")


PR_SET_CHILD_SUBREAPER = 36
# The workers this process forked: any other child it has was adopted (see `adopt_orphans`).
FORKED: set[int] = set()
_adopting = False


def adopt_orphans() -> bool:
    """Make this process (the judge) the subreaper of everything its workers start, once.

    A process that a candidate starts and that outlives its parent (a double fork) would otherwise be
    reparented to init, out of reach of a walk over the candidate's descendants; as a subreaper the
    judge adopts it instead, so it shows up as a child the judge never forked (`stray_processes`).
    """
    global _adopting
    if not _adopting:
        try:
            import ctypes

            _adopting = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            _adopting = False
    return _adopting


class Link:
    def __init__(self, role: str, workdir: str, kind: str, preload: Sequence[str] = ()):
        from . import worker

        self.role = role
        self.workdir = workdir
        adopt_orphans()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            mine.close()
            worker.start(role, theirs, theirs.fileno(), workdir, kind, preload)
        theirs.close()
        FORKED.add(pid)
        self.pid = pid
        self.sock = mine
        self.status: int | None = None
        self.foreign_stop = False
        self.spent: dict[str, list] = {}  # op → [requests, seconds]: where an evaluation's time goes
        if role == "candidate":
            try:
                os.setpgid(pid, pid)  # also done by the child; whichever runs first wins the race
            except OSError:
                pass

    def call(self, msg: dict, tensors: Sequence = (), deadline: float | None = None):
        if self.status is not None:
            raise Died(self.role, self.describe_end())
        start = time.monotonic()
        try:
            self.sock.settimeout(None if deadline is None else max(0.01, deadline - time.monotonic()))
            wire.send(self.sock, msg, list(tensors))
            reply, out = wire.recv(self.sock)
        except TimeoutError:
            self.dump_stacks()
            self.kill()
            raise Hung() from None
        except (wire.Closed, BrokenPipeError, ConnectionResetError, OSError):
            self.reap(block=True)
            raise Died(self.role, self.describe_end()) from None
        except wire.WireError as e:
            self.kill()
            raise Died(self.role, f"sent an unreadable message ({e})") from None
        finally:
            tally = self.spent.setdefault(str(msg.get("op")), [0, 0.0])
            tally[0] += 1
            tally[1] += time.monotonic() - start
        if not reply.get("ok"):
            raise Failed(reply)
        return reply, out

    def reap(self, block: bool = False) -> None:
        if self.status is not None:
            return
        deadline = time.monotonic() + 5
        while True:
            try:
                done, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                self.status = 0
                return
            if done:
                self.status = status
                return
            if not block or time.monotonic() > deadline:
                if block:
                    self.kill()
                return
            time.sleep(0.005)

    def describe_end(self) -> str:
        status = self.status
        if status is None:
            return "stopped answering"
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            hint = " (out of memory?)" if sig == signal.SIGKILL else ""
            return f"was killed by {name}{hint}"
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
        return f"exited with status {code}"

    def stopped_by_someone(self) -> bool:
        """True once the worker was stopped or continued by a signal the judge did not send."""
        if self.status is not None:
            return self.foreign_stop
        try:
            done, status = os.waitpid(self.pid, os.WNOHANG | os.WUNTRACED | os.WCONTINUED)
        except ChildProcessError:
            return self.foreign_stop
        if done:
            if os.WIFSTOPPED(status) or os.WIFCONTINUED(status):
                self.foreign_stop = True
            else:
                self.status = status
        return self.foreign_stop

    def pause(self) -> None:
        """SIGSTOP the worker's whole group (the candidate's threads and children too)."""
        self._signal_group(signal.SIGSTOP)
        self._own_event(os.WUNTRACED, os.WIFSTOPPED)

    def resume(self) -> None:
        self._signal_group(signal.SIGCONT)
        self._own_event(os.WCONTINUED, os.WIFCONTINUED)

    def _own_event(self, flag: int, ours) -> None:
        """The trusted worker: collect the state change the judge's own signal caused, so that
        `stopped_by_someone` sees only the ones it did not send (a foreign one seen here counts too)."""
        if self.role != "trusted" or self.status is not None:
            return
        for _ in range(4):
            try:
                done, status = os.waitpid(self.pid, flag)
            except ChildProcessError:
                return
            if not done:
                return
            if ours(status):
                return
            if os.WIFSTOPPED(status) or os.WIFCONTINUED(status):
                self.foreign_stop = True
                continue
            self.status = status
            return

    def _signal_group(self, sig: int) -> None:
        for send in (lambda: os.killpg(self.pid, sig), lambda: os.kill(self.pid, sig)):
            try:
                send()
                return
            except (ProcessLookupError, PermissionError):
                continue

    def dump_stacks(self, within_s: float = 1.0) -> None:
        """Ask the worker for its threads' stacks (faulthandler on SIGUSR1, see `worker._isolate`) and give
        it `within_s` to write them into its log. A worker that ignores the signal only costs the wait."""
        if self.status is not None:
            return
        path = os.path.join(self.workdir, "output.log")
        try:
            before = os.path.getsize(path)
            os.kill(self.pid, signal.SIGUSR1)
        except OSError:
            return
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            time.sleep(0.05)
            try:
                if os.path.getsize(path) > before and "(most recent call first)" in self.log_tail():
                    time.sleep(0.05)  # the other threads' stacks follow the first
                    return
            except OSError:
                return

    def stuck_at(self) -> str | None:
        """The innermost frame of user code in the stacks `dump_stacks` left in the log (`file.py:LINE in
        fn`), else the innermost frame; None without a dump."""
        return stuck_at(self.log_tail())

    def kill(self) -> None:
        if self.status is not None:
            return
        self._signal_group(signal.SIGKILL)
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.reap(block=True)

    def close(self) -> None:
        if self.status is None:
            try:
                self.sock.settimeout(2)
                wire.send(self.sock, {"op": "quit"})
            except (OSError, wire.WireError):
                pass
            self.reap(block=True)
        if self.role == "candidate":
            self._signal_group(signal.SIGKILL)  # anything it left behind in its group
        self.sock.close()

    def log_tail(self, chars: int = 4000) -> str:
        """What the worker printed (text for people, never read as a result)."""
        try:
            with open(os.path.join(self.workdir, "output.log"), "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - chars))
                text = f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return "".join(line for line in text.splitlines(keepends=True) if not _PROFILER_NOISE.match(line))


_FRAME = re.compile(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<fn>\S+)')


def stuck_at(log: str) -> str | None:
    """See `Link.stuck_at`: faulthandler writes the thread that took the signal (the main one) under
    "Current thread", innermost frame first."""
    at = log.rfind("Current thread")
    if at < 0:
        at = log.rfind("(most recent call first)")
    if at < 0:
        return None
    frames = [m for m in map(_FRAME.match, log[at:].splitlines()[1:40]) if m]
    if not frames:
        return None
    library = ("site-packages", "dist-packages", "/lib/python", "xeforge_harness")
    own = next((m for m in frames if not m["file"].startswith("<") and not any(s in m["file"] for s in library)), frames[0])
    return f"{os.path.basename(own['file'])}:{own['line']} in {own['fn']}"


def stray_processes(root: int) -> list[int]:
    """Processes of the candidate (`root`) that SIGSTOP of its group would miss, killed: descendants that
    left its process group (setsid, setpgid), and orphans of its tree that the judge adopted (a double
    fork: see `adopt_orphans`), with their descendants."""
    group: dict[int, int] = {}  # pid → process group
    children: dict[int, list[int]] = {}  # ppid → pids
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            group[int(entry)] = int(fields[2])
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue

    def descendants(top: int) -> list[int]:
        found, frontier = [], [top]
        while frontier:
            below = children.get(frontier.pop(), [])
            found += below
            frontier += below
        return found

    adopted = [pid for pid in children.get(os.getpid(), []) if pid not in FORKED]
    stray = [pid for pid in descendants(root) if group[pid] != root]
    for pid in adopted:
        stray += [pid, *descendants(pid)]
    for pid in stray:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    _reap(adopted)
    return stray


def _reap(children: list[int], within_s: float = 2.0) -> None:
    """Wait for killed children of ours (adopted orphans), so that none is left a zombie."""
    deadline = time.monotonic() + within_s
    left = list(children)
    while left and time.monotonic() < deadline:
        for pid in list(left):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                left.remove(pid)
        if left:
            time.sleep(0.005)
