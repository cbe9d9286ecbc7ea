"""Several jobs on one device (`serve --jobs-per-device N`): the phases of a job, and the one rule.

A lane's zygote holds its device's gate (`xeforge_harness/gate.py`): untimed phases (setup, compile,
correctness) share the device, a timed comparison has it to itself. Shown here by the order of
events, from the gate's side (the zygote's log of grants) and from the jobs' side (when each held a
permit and worked):

(a) two timing phases never overlap on one device;
(b) no other phase runs on a device while a timing phase runs there;
(c) one job's correctness runs beside another's (the throughput the split buys), and timing on one
    device beside anything on another;
(d) a job cancelled, or crashed, while it holds or waits for a permit gives it back.

Most use `script` jobs (test-only: sleeps in the permits a script names, no candidate), so the
scheduling is checked in seconds; the last runs real evaluations through `serve` with the timed
protocol on the interpreter (XEFORGE_HARNESS_CPU_TIMING=1) and checks the same of their phases.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import threading
import time
from pathlib import Path

import pytest
from conftest import DEVICE, ServeSession, evaluate_args, gate_held, overlap, timing_alone
from xeforge_harness.gate import DEVICE as SHARED
from xeforge_harness.gate import TIMING, Gate, GateError

cpu_only = pytest.mark.skipif(DEVICE != "cpu", reason="interpreter lanes stand for devices here")


# --- the gate alone -------------------------------------------------------------------------------


def test_timing_waits_for_every_phase_and_holds_the_device_alone():
    gate = Gate()
    assert gate.request("a", SHARED) == ["a"]
    assert gate.request("b", SHARED) == ["b"]  # untimed phases share the device
    assert gate.request("a", TIMING) == []  # a gives back its phase and waits for b's to end
    assert gate.holds("a") is None and gate.holds("b") == SHARED
    assert gate.request("c", SHARED) == []  # behind a waiting timing request: waits too (first come, first served)
    assert gate.release("b") == ["a"]
    assert gate.held == {"a": TIMING}
    assert gate.request("b", TIMING) == []  # a second timing waits for the first
    assert gate.request("a", SHARED) == ["c"]  # a done timing: c, which asked first, goes; a and b wait in order
    assert gate.release("c") == ["b"]
    assert gate.drop("b") == ["a"]  # a job that ends gives back what it held
    assert gate.held == {"a": SHARED} and not gate.waiting


def test_a_job_that_ends_leaves_the_queue_and_unknown_permits_are_refused():
    gate = Gate()
    gate.request("t", TIMING)
    gate.request("w", TIMING)
    gate.request("x", SHARED)
    assert gate.drop("w") == []  # it waited; now it does not
    assert gate.release("t") == ["x"]
    with pytest.raises(GateError):
        gate.request("y", "turbo")


def test_random_schedules_keep_the_rule_and_never_stall():
    """Any order of requests, releases and ends: timing is never held beside anything, and whenever
    nothing is held, nobody waits (every request is granted once the device is free)."""
    rng = random.Random(17)
    for _ in range(300):
        gate = Gate()
        jobs = [f"j{i}" for i in range(rng.randint(2, 6))]
        for _ in range(60):
            job = rng.choice(jobs)
            op = rng.random()
            if op < 0.55:
                gate.request(job, rng.choice((SHARED, SHARED, TIMING)))
            elif op < 0.85:
                gate.release(job)
            else:
                gate.drop(job)
            gate.check()
            assert gate.held or not gate.waiting, (gate.held, gate.waiting)
            timing = [j for j, m in gate.held.items() if m == TIMING]
            assert len(timing) <= 1 and (not timing or len(gate.held) == 1)


# --- script jobs on interpreter lanes -------------------------------------------------------------


def _intervals(path: Path) -> list[dict]:
    """The jobs' own account: one line per step, when it held its permit and slept."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def script_env(tmp_path_factory):
    """Script jobs allowed and the gate's log on, for the zygotes the module's pools start."""
    folder = tmp_path_factory.mktemp("gate")
    saved = {k: os.environ.get(k) for k in ("XEFORGE_HARNESS_SCRIPT_JOBS", "XEFORGE_HARNESS_GATE_LOG")}
    os.environ["XEFORGE_HARNESS_SCRIPT_JOBS"] = "1"
    os.environ["XEFORGE_HARNESS_GATE_LOG"] = str(folder / "gate.jsonl")
    yield folder
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="module")
def one_device(script_env):
    """One interpreter lane (one "device") running three jobs at once."""
    from xeforge_harness.pool import Workers

    workers = Workers(cpu_workers=1, jobs_per_device=3)
    workers.warm("cpu")
    yield workers
    workers.close()


@pytest.fixture(scope="module")
def two_devices(script_env):
    from xeforge_harness.pool import Workers

    workers = Workers(cpu_workers=2, jobs_per_device=2)
    workers.warm("cpu")
    yield workers
    workers.close()


class _Logs:
    def __init__(self, folder: Path, name: str):
        self.activity = folder / f"{name}.jsonl"
        self.gate = folder / "gate.jsonl"
        self.since = time.monotonic()

    def jobs(self) -> list[dict]:
        return _intervals(self.activity)

    def grants(self) -> list[dict]:
        return [i for i in gate_held(self.gate) if i["t0"] >= self.since]


def _script(logs: _Logs, name: str, steps: list, timeout: float = 60) -> dict:
    return {"kind": "script", "args": {"name": name, "steps": steps, "log": str(logs.activity)}, "timeout": timeout}


def _run_all(workers, jobs: list[dict], cancelled: dict | None = None) -> dict[str, dict]:
    results: dict[str, dict] = {}

    def one(job: dict) -> None:
        name = job["args"]["name"]
        flag = (cancelled or {}).get(name)
        results[name] = workers.run("cpu", job, flag.is_set if flag is not None else None)

    threads = [threading.Thread(target=one, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results


@cpu_only
def test_on_one_device_timing_is_alone_and_correctness_phasesoverlap(one_device, script_env):
    logs = _Logs(script_env, "one")
    steps = [[SHARED, 1.0], [TIMING, 0.2], [SHARED, 0.6], [TIMING, 0.2]]  # a sweep-like job: two candidates
    started = time.monotonic()
    results = _run_all(one_device, [_script(logs, n, steps) for n in ("a", "b", "c")])
    wall = time.monotonic() - started
    assert all(r.get("ok") for r in results.values()), results
    jobs, grants = logs.jobs(), logs.grants()
    assert len(jobs) == 12 and len(grants) == 12, (jobs, grants)
    timing_alone(jobs)  # (a), (b) as the jobs saw it
    timing_alone(grants)  # ... and as the gate granted it
    # (c) untimed phases of different jobs ran at once ...
    shared = [i for i in jobs if i["mode"] == SHARED]
    assert any(overlap(x, y) for x in shared for y in shared if x["job"] != y["job"]), shared
    # ... so three jobs took much less than one after another (3 × 2 s), and no less than their
    # timing one after another (3 × 0.4 s) after their first untimed phase (1 s).
    assert 2.2 <= wall < 4.5, wall
    # Waiting for another job's phase is reported, and is not the job's own time.
    assert any(r["elapsed"]["permit_wait_s"] > 0.1 for r in results.values()), results


@cpu_only
def test_jobs_spread_over_devices_and_time_on_both_at_once(two_devices, script_env):
    logs = _Logs(script_env, "two")
    steps = [[SHARED, 0.2], [TIMING, 0.8]]
    results = _run_all(two_devices, [_script(logs, n, steps) for n in ("a", "b", "c", "d")])
    assert all(r.get("ok") for r in results.values()), results
    jobs = logs.jobs()
    timing_alone(jobs)
    timing_alone(logs.grants())
    per_device: dict[int, set] = {}
    for i in jobs:
        per_device.setdefault(i["zygote"], set()).add(i["job"])
    assert sorted(len(v) for v in per_device.values()) == [2, 2], per_device  # the least busy lane first
    timing = [i for i in jobs if i["mode"] == TIMING]
    # (c) timing on one device beside timing on the other: allowed, and what G devices are for.
    assert any(overlap(x, y) for x in timing for y in timing if x["zygote"] != y["zygote"]), timing


@cpu_only
def test_a_cancelled_job_gives_back_its_timing_and_its_place_in_the_queue(one_device, script_env):
    logs = _Logs(script_env, "cancel")
    flags = {"holder": threading.Event(), "queued": threading.Event()}
    jobs = [
        _script(logs, "holder", [[TIMING, 60]]),  # holds timing a minute unless cancelled
        _script(logs, "queued", [[TIMING, 60]]),  # waits behind it
        _script(logs, "next", [[TIMING, 0.2]]),
    ]
    out: dict = {}
    runner = threading.Thread(target=lambda: out.update(_run_all(one_device, jobs, flags)))
    runner.start()
    time.sleep(2.0)  # holder has timing, the other two wait
    asked = time.monotonic()
    flags["queued"].set()  # cancelled where it waits: it leaves the queue
    time.sleep(0.5)
    flags["holder"].set()  # cancelled holding timing: it gives it back
    runner.join(60)
    assert out["holder"].get("cancelled") is True and out["queued"].get("cancelled") is True, out
    assert out["next"].get("ok"), out
    mine = [i for i in logs.jobs() if i["job"] == "next"]
    assert mine and mine[0]["t0"] - asked < 3.0, "the next job got the device soon after the cancels"
    assert not any(i["job"] == "queued" for i in logs.jobs()), "a cancelled waiter never ran"
    timing_alone(logs.grants())


@cpu_only
def test_a_job_that_crashes_holding_timing_gives_it_back(one_device, script_env):
    logs = _Logs(script_env, "crash")
    jobs = [
        _script(logs, "crasher", [[SHARED, 0.1], [TIMING, 0.5], ["crash", 0]]),
        _script(logs, "waiter", [[SHARED, 0.3], [TIMING, 0.2]]),
    ]
    results = _run_all(one_device, jobs)
    crashed, waiter = results["crasher"], results["waiter"]
    assert crashed["verdict"] == "error" and "SIGKILL" in crashed["message"], crashed
    assert waiter.get("ok"), waiter
    grants = logs.grants()
    timing_alone(grants)
    timing = sorted((g for g in grants if g["mode"] == TIMING), key=lambda g: g["t0"])
    assert len(timing) == 2 and timing[0]["t1"] != float("inf"), timing  # the crasher's, ended by its drop
    waited = [i for i in logs.jobs() if i["job"] == "waiter" and i["mode"] == TIMING]
    assert waited and 0 <= waited[0]["t0"] - timing[0]["t1"] < 1.0, (waited, timing)


# --- real evaluations ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_lane(tmp_path_factory):
    """`serve` with one interpreter lane running two jobs at once, the timed protocol on, the gate logged."""
    log = tmp_path_factory.mktemp("shared") / "gate.jsonl"
    # The source check off: the stray daemon's fixture forks through a name built at run time, which that
    # check rejects before it runs; here the layer under test is the one that must catch it running.
    env = {"XEFORGE_HARNESS_CPU_TIMING": "1", "XEFORGE_HARNESS_GATE_LOG": str(log), "XEFORGE_HARNESS_SOURCE_CHECK": "off"}
    session = ServeSession("--jobs-per-device", "2", env=env)
    session.log = log  # type: ignore[attr-defined]
    yield session
    session.close()


@cpu_only
def test_real_evaluations_share_a_device_and_time_alone(shared_lane):
    """Two evaluations on one interpreter lane with the timed protocol: both verdicts as alone,
    their correctness phases at once, each timed comparison (the original alone, then the pairs)
    with the device to itself."""
    session = shared_lane
    pool = session.send({"id": "p", "command": "ping"})["pool"]
    assert pool["kinds"]["cpu"] == 2 and pool["devices"]["cpu"] == 1 and pool["per_device"] == 2, pool
    since = time.monotonic()
    args = {"runs": 10, "warmup": 2}
    session.write({"id": "a", "command": "evaluate", "args": evaluate_args("adversarial/legit_add_block1024.py", **args)})
    session.write({"id": "b", "command": "evaluate", "args": evaluate_args("adversarial/legit_add_num_warps.py", **args)})
    replies = {r["id"]: r for r in (session.read(600), session.read(600))}
    for rid in ("a", "b"):
        assert replies[rid]["verdict"] == "correct", replies[rid]["message"]
        assert "timed protocol ran" in replies[rid]["timing"]["reason"], replies[rid]["timing"]
        assert "permit_wait_s" in replies[rid]["elapsed"], replies[rid]["elapsed"]
    grants = [g for g in gate_held(session.log) if g["t0"] >= since]
    jobs = {g["job"] for g in grants}
    assert len(jobs) == 2, grants
    timing_alone(grants)
    for job in jobs:  # each timed twice: the original alone, then the pairs
        assert len([g for g in grants if g["job"] == job and g["mode"] == TIMING]) == 2, grants
    shared = [g for g in grants if g["mode"] == SHARED]
    assert any(overlap(x, y) for x in shared for y in shared if x["job"] != y["job"]), shared


@cpu_only
def test_a_candidate_process_outside_its_group_is_killed_and_rejected_before_its_job_waits(shared_lane):
    """On a shared device a job's candidate is stopped while it waits for a permit; a process of it
    in a session of its own would not be, so it is killed there and the candidate rejected (the
    timed protocol's own check comes later: the message says which caught it)."""
    pid_file = Path(tempfile.gettempdir()) / "xeforge_test_stray_daemon.pid"  # the fixture's stray writes it
    pid_file.unlink(missing_ok=True)
    reply = shared_lane.request("evaluate", evaluate_args("fixtures/add_stray_daemon.py", runs=10, warmup=2), timeout=600)
    assert reply["verdict"] == "rejected", reply["message"]
    assert "outside its process group" in reply["message"] and "before timing" not in reply["message"], reply["message"]
    pid = int(pid_file.read_text())
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        state = "gone"
    assert state in ("gone", "Z"), f"the stray {pid} still runs (state {state})"
    pid_file.unlink(missing_ok=True)


@cpu_only
def test_time_spent_waiting_for_the_device_is_not_the_jobs_own(one_device, script_env):
    """A job of 1 s whose timed comparison waits 18 s behind another's is not out of time: the
    zygote's limit (1 s + its 15 s grace) stops while the job waits, as the pool's does."""
    logs = _Logs(script_env, "limit")
    jobs = [_script(logs, "long", [[TIMING, 18]]), _script(logs, "short", [[SHARED, 0.2], [TIMING, 0.1]], timeout=1)]
    results = _run_all(one_device, jobs)
    assert results["long"].get("ok") and results["short"].get("ok"), results
    assert results["short"]["elapsed"]["permit_wait_s"] > 15, results["short"]


@cpu_only
def test_a_job_out_of_device_memory_beside_others_is_judged_again_alone(one_device, script_env):
    """No verdict may depend on what else shared the device: a job whose worker ran out of device
    memory beside other jobs runs again once the lane has emptied, with the lane to itself (a job
    sent meanwhile waits), and that second result is the answer."""
    logs = _Logs(script_env, "oom")
    out: dict = {}
    first = threading.Thread(
        target=lambda: out.update(
            _run_all(
                one_device,
                [
                    _script(logs, "greedy", [[SHARED, 0.3], ["oom", 0], [SHARED, 0.4], [TIMING, 0.2]]),
                    _script(logs, "other", [[SHARED, 1.2], [TIMING, 0.3]]),
                ],
            )
        )
    )
    first.start()
    time.sleep(0.8)  # greedy has failed, the lane is being emptied for it; this one waits
    out.update(_run_all(one_device, [_script(logs, "late", [[SHARED, 0.2]])]))
    first.join(60)
    greedy = out["greedy"]
    assert greedy.get("ok") and "out of device memory" in greedy.get("rerun_alone", ""), greedy
    assert out["other"].get("ok") and out["late"].get("ok"), out
    jobs = logs.jobs()
    again = [i for i in jobs if i["job"] == "greedy"][1:]  # the first run's one step, then the rerun's
    assert [i["mode"] for i in again] == [SHARED, SHARED, TIMING], jobs
    others = [i for i in jobs if i["job"] != "greedy"]
    assert not any(overlap(a, o) for a in again for o in others), (again, others)
    late = next(i for i in jobs if i["job"] == "late")
    assert late["t0"] >= again[-1]["t1"], "the job sent while the lane emptied ran after the rerun"
