"""`serve` over stdio with several requests in flight: each runs on a thread, the lanes decide what
runs at once, replies come tagged with their `id` as requests finish (out of order), and `cancel`
stops one request without touching the others. `ping` says how many jobs run at once."""

from __future__ import annotations

import time

import pytest
from conftest import DEVICE, ServeSession, evaluate_args

SLEEPY = "fixtures/add_sleepy.py"  # correct, one second of sleep per forward call: several seconds a job
LEGIT = "adversarial/legit_add_block1024.py"


@pytest.fixture(scope="module")
def two_lanes():
    session = ServeSession("--cpu-workers", "2")
    yield session
    session.close()


def _replies(session: ServeSession, count: int, timeout: float = 300) -> list[tuple[dict, float]]:
    """The next `count` replies, each with when it came (monotonic seconds)."""
    return [(session.read(timeout), time.monotonic()) for _ in range(count)]


@pytest.mark.skipif(DEVICE != "cpu", reason="two interpreter lanes: --cpu-workers is the CPU's")
def test_ping_reports_the_pool_size(two_lanes):
    pool = two_lanes.send({"id": "p", "command": "ping"})["pool"]
    assert pool["kind"] == "cpu" and pool["size"] == 2 and pool["kinds"]["cpu"] == 2, pool


@pytest.mark.skipif(DEVICE != "cpu", reason="two interpreter lanes: --cpu-workers is the CPU's")
def test_requests_in_flight_are_answered_by_id_as_they_finish(two_lanes):
    two_lanes.write({"id": "slow", "command": "evaluate", "args": evaluate_args(SLEEPY)})
    two_lanes.write({"id": "fast", "command": "evaluate", "args": evaluate_args(LEGIT)})
    (first, _), (second, _) = _replies(two_lanes, 2)
    # The quick one was not held behind the sleepy one: both lanes ran at once.
    assert [first["id"], second["id"]] == ["fast", "slow"], (first.get("message"), second.get("message"))
    assert first["verdict"] == "correct" and second["verdict"] == "correct", (first["message"], second["message"])
    assert first["files"]["candidate"]["name"].endswith("legit_add_block1024.py")
    assert second["files"]["candidate"]["name"].endswith("add_sleepy.py")


@pytest.mark.skipif(DEVICE != "cpu", reason="two interpreter lanes: --cpu-workers is the CPU's")
def test_a_cancel_stops_its_request_and_leaves_the_other_alone(two_lanes):
    two_lanes.write({"id": 1, "command": "evaluate", "args": evaluate_args(SLEEPY)})
    two_lanes.write({"id": 2, "command": "evaluate", "args": evaluate_args(SLEEPY)})
    time.sleep(3.0)  # both are in their candidates' sleeps by now
    asked = time.monotonic()
    two_lanes.write({"id": "c", "command": "cancel", "args": {"id": 1}})
    replies = {r["id"]: (r, t) for r, t in _replies(two_lanes, 3)}
    assert replies["c"][0] == {"id": "c", "ok": True, "cancelled": True}
    cancelled, when = replies[1]
    assert cancelled["verdict"] == "error" and cancelled.get("cancelled") is True, cancelled
    assert when - asked < 10, f"the cancelled job ran on for {when - asked:.1f} s"
    other = replies[2][0]
    assert other["verdict"] == "correct" and "cancelled" not in other, other.get("message")
    # Nothing is running any more: a cancel now names nothing, and the session goes on.
    assert two_lanes.send({"id": "c2", "command": "cancel", "args": {"id": 2}}) == {"id": "c2", "ok": True, "cancelled": False}
    assert two_lanes.send({"id": 3, "command": "evaluate", "args": evaluate_args(LEGIT)})["verdict"] == "correct"


def test_a_request_waiting_for_the_lane_is_cancelled_where_it_waits(serve):
    """One lane: the second request waits for it; cancelling it answers at once, and the first job,
    which holds the lane, is not disturbed."""
    serve.send({"id": "ready", "command": "ping"})  # the session reads requests (its warm-up is over)
    serve.write({"id": "holds", "command": "evaluate", "args": evaluate_args(SLEEPY)})
    time.sleep(1.5)  # "holds" has the lane by now
    serve.write({"id": "waits", "command": "evaluate", "args": evaluate_args(SLEEPY)})
    time.sleep(0.5)
    asked = time.monotonic()
    serve.write({"id": "c", "command": "cancel", "args": {"id": "waits"}})
    (a, _), (b, tb), (c, tc) = _replies(serve, 3)
    assert (a["id"], b["id"]) == ("c", "waits") and a["cancelled"] is True, (a, b)
    assert b["verdict"] == "error" and b["cancelled"] is True and "before a lane was free" in b["message"], b
    assert tb - asked < 2, "a waiting request is dropped at once"
    assert c["id"] == "holds" and c["verdict"] == "correct", c.get("message")


def test_an_id_already_in_flight_is_refused(serve):
    serve.write({"id": "twice", "command": "evaluate", "args": evaluate_args(SLEEPY)})
    serve.write({"id": "twice", "command": "evaluate", "args": evaluate_args(LEGIT)})
    refused = serve.read()
    assert refused["id"] == "twice" and refused["verdict"] == "error" and refused["field"] == "id", refused
    # The first one runs on, and is the one a `cancel` of that id names.
    serve.write({"id": "c", "command": "cancel", "args": {"id": "twice"}})
    answers = {r["id"]: r for r in (serve.read(), serve.read())}
    assert answers["c"]["cancelled"] is True and answers["twice"]["cancelled"] is True, answers


def test_shutdown_answers_every_request_in_flight_first():
    session = ServeSession()
    try:
        session.write({"id": "running", "command": "evaluate", "args": evaluate_args(SLEEPY)})
        time.sleep(2.0)
        session.write({"id": "bye", "command": "shutdown"})
        first, second = session.read(), session.read()
        assert first["id"] == "running" and first["cancelled"] is True, first
        assert second == {"id": "bye", "ok": True}
        session.proc.wait(timeout=60)
    finally:
        session.close()


def test_a_cancel_without_an_id_is_an_error_and_only_a_request_loop_answers_one(serve):
    """`cancel` needs the requests in flight, which only the stdio session and the HTTP server know
    (HTTP's `POST /cancel`: test_remote.py); `handle` alone refuses it."""
    from xeforge_harness import serve as serve_module

    refused = serve.send({"id": "c", "command": "cancel", "args": {}})
    assert refused["verdict"] == "error" and refused["field"] == "id", refused
    alone, _ = serve_module.handle({"id": 1, "command": "cancel", "args": {"id": 2}}, workers=None)
    assert alone["verdict"] == "error" and alone["field"] == "command", alone
