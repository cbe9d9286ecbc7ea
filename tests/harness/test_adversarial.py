"""Adversarial candidates (tests/harness/adversarial/) through the real harness, over `serve`.

A cheat must never come out `correct`, `accepted` or `slower` (nor `error`, which blames the
original); a legitimate rewrite must come out `correct` (or `accepted` on a GPU). After all cases,
no forged result file may be left where the cheats wrote them, and the servers must still answer.

See adversarial/cases.py for the matrix and for which cases need a timed or a fresh `serve`.
XEFORGE_ADVERSARIAL_REPORT=path appends one JSON line per case (file, verdict, message) there.
"""

from __future__ import annotations

import importlib.util
import json
import os
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest
from conftest import DEVICE, HERE, ON_GPU, PROBLEMS, REPO, ServeSession, evaluate_args

ADV = HERE / "adversarial"
_spec = importlib.util.spec_from_file_location("xeforge_adversarial_cases", ADV / "cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

REPLY_GRACE_S = 90  # beyond the request's own timeout: judge, zygote and pool grace periods
REPORT = os.environ.get("XEFORGE_ADVERSARIAL_REPORT")


# --- talking to a serve ----------------------------------------------------------------------


def _readline(session: ServeSession, timeout: float) -> str | None:
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(session.proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(max(0.1, timeout))
    return box[0] if box and box[0] else None


def ask(session: ServeSession, command: str, args: dict | None, timeout: float) -> tuple[dict | None, list[str]]:
    """Send one request with an unguessable id; return (the reply with that id, other lines seen).

    Any other line on the server's stdout before the reply is something that should never be there
    (e.g. a line a candidate forged into the server's stdout)."""
    rid = f"adv-{uuid.uuid4().hex}"
    stray: list[str] = []
    try:
        session.proc.stdin.write(json.dumps({"id": rid, "command": command, "args": args or {}}) + "\n")
        session.proc.stdin.flush()
    except (BrokenPipeError, OSError, ValueError) as e:
        return None, [f"<could not send: {e}>"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = _readline(session, deadline - time.monotonic())
        if line is None:
            return None, stray
        try:
            obj = json.loads(line)
        except ValueError:
            stray.append(line.rstrip("\n")[:500])
            continue
        if isinstance(obj, dict) and obj.get("id") == rid:
            return obj, stray
        stray.append(line.rstrip("\n")[:500])
    return None, stray


def _env_session(**env: str) -> ServeSession:
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return ServeSession()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _request_args(file: str, problem: str, session_kind: str) -> dict:
    extra: dict = {"family": "ci", "timeout": cases.TIMEOUT_S.get(file, cases.DEFAULT_TIMEOUT_S)}
    if ON_GPU:
        extra.update(no_timing=False, runs=20, warmup=5)
    elif session_kind == "timed":
        extra.update(runs=10, warmup=2)
    return evaluate_args(f"adversarial/{file}", problem, **extra)


def _show(reply, stray=()) -> str:
    text = json.dumps(reply, indent=1, default=str) if reply is not None else "<no reply>"
    if stray:
        text += "\nlines on the server's stdout that were not the reply:\n" + "\n".join(stray[:20])
    return text


# --- fixtures --------------------------------------------------------------------------------


def _leftovers() -> list[Path]:
    """Marked files a cheat managed to write where it must not reach: the repository, the user's home,
    the harness's job directories. World-writable folders (/tmp) are left out: any user can write
    there, and the harness never reads from them (the stray files are still removed)."""
    tmp = Path(tempfile.gettempdir())
    _remove_marked([tmp / name for name in cases.LEFTOVER_NAMES])
    folders = {HERE, ADV, PROBLEMS, REPO, Path.home(), Path.cwd()}
    folders |= {Path(p) for p in tmp.glob("xeforge-*") if Path(p).is_dir()}
    found = []
    for folder in folders:
        for name in cases.LEFTOVER_NAMES:
            path = folder / name
            try:
                if not path.is_file():
                    continue
                if cases.MARKER in path.read_text(errors="replace"):  # every file a cheat writes has it
                    found.append(path)
            except OSError:
                continue
    return sorted(set(found))


def _remove_marked(paths) -> None:
    for path in paths:
        try:
            if cases.MARKER in path.read_text(errors="replace"):
                path.unlink()
        except OSError:
            pass


@pytest.fixture(scope="module", autouse=True)
def _clean_leftovers_of_earlier_runs():
    _remove_marked(_leftovers())
    yield


@pytest.fixture(scope="module")
def timed_serve(serve):
    """On CPU, a serve whose judges run the timed protocol on the interpreter; on a GPU, `serve`."""
    if ON_GPU:
        yield serve
        return
    session = _env_session(XEFORGE_HARNESS_CPU_TIMING="1")
    yield session
    session.close()


SURVIVORS: dict[str, ServeSession] = {}


# --- the cases -------------------------------------------------------------------------------


def _verdict_problem(expected: str, reply: dict | None) -> str | None:
    verdict = (reply or {}).get("verdict")
    if expected == "cheat":
        if verdict not in cases.CHEAT_VERDICTS:
            return f"a cheat got verdict {verdict!r}; expected one of {', '.join(cases.CHEAT_VERDICTS)}"
        return None
    if expected == "nogain":
        if verdict == "accepted" or verdict is None:
            return f"work left running past its reply got verdict {verdict!r}; anything but accepted"
        return None
    allowed = cases.LEGIT_VERDICTS_GPU if ON_GPU else cases.LEGIT_VERDICTS_CPU
    if verdict not in allowed:
        return f"a legitimate rewrite got verdict {verdict!r}; expected {' or '.join(allowed)}"
    return None


def _record(file: str, problem: str, kind: str, reply: dict | None, problems: list[str]) -> None:
    if not REPORT:
        return
    entry = {
        "file": file,
        "problem": problem,
        "session": kind,
        "device": DEVICE,
        "verdict": (reply or {}).get("verdict"),
        "message": ((reply or {}).get("message") or "")[:400],
        "problems": problems,
    }
    with open(REPORT, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


@pytest.mark.parametrize(("file", "problem", "expected", "gpu_only", "note"), cases.CASES, ids=[c[0][:-3] for c in cases.CASES])
def test_adversarial_candidate(serve, timed_serve, file, problem, expected, gpu_only, note):
    if gpu_only and not ON_GPU:
        pytest.skip("GPU-only attack (streams, graphs, torch.cuda); set XEFORGE_TEST_DEVICE=cuda")
    kind = cases.SESSION.get(file, "plain")
    session = {"plain": serve, "timed": timed_serve}.get(kind)
    if kind == "fresh":
        session = _env_session(**{cases.CANARY_NAME: cases.CANARY_VALUE})
    try:
        args = _request_args(file, problem, kind)
        reply, stray = ask(session, "evaluate", args, args["timeout"] + REPLY_GRACE_S)
        problems = []
        verdict_problem = _verdict_problem(expected, reply)
        if verdict_problem:
            problems.append(f"{file} ({note}): {verdict_problem}")
        if stray:
            problems.append(f"{file}: {len(stray)} line(s) other than the reply reached the client")
        if not session.alive():
            problems.append(f"{file}: the serve process died")
        elif kind == "fresh":
            sane, sane_stray = ask(session, "evaluate", _request_args(*cases.SANITY, "plain"), 60)
            if (sane or {}).get("verdict") not in (cases.LEGIT_VERDICTS_GPU if ON_GPU else cases.LEGIT_VERDICTS_CPU):
                problems.append(
                    f"{file}: afterwards the same serve answered a legitimate candidate with "
                    f"{(sane or {}).get('verdict')!r} (desynchronised or broken): {_show(sane, sane_stray)[:1500]}"
                )
        _record(file, problem, kind, reply, problems)
        assert not problems, "\n".join(problems) + "\n--- full reply ---\n" + _show(reply, stray)
    finally:
        if kind == "fresh":
            session.close()


# --- after all cases ---------------------------------------------------------------------------


def test_no_forged_result_files_were_left_behind():
    found = _leftovers()
    details = []
    for path in found:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            text = ""
        leaked = " (contains the canary secret!)" if cases.CANARY_VALUE in text else ""
        details.append(f"{path}{leaked}: {text[:200]!r}")
    _remove_marked(found)  # so the next run starts clean; the failure below still reports them
    assert not found, "files left where the cheats wrote them:\n" + "\n".join(details)


def test_the_serve_processes_survived_every_candidate(serve, timed_serve):
    for name, session in (("serve", serve), ("timed serve", timed_serve)):
        assert session.alive(), f"the {name} process died"
        pong, stray = ask(session, "ping", None, 60)
        assert pong is not None and pong.get("ok"), f"the {name} does not answer ping: {_show(pong, stray)}"
        reply, stray = ask(session, "evaluate", _request_args(*cases.SANITY, "plain"), 120)
        allowed = cases.LEGIT_VERDICTS_GPU if ON_GPU else cases.LEGIT_VERDICTS_CPU
        assert (reply or {}).get("verdict") in allowed and not stray, (
            f"the {name} no longer judges a legitimate candidate correctly:\n{_show(reply, stray)}"
        )
