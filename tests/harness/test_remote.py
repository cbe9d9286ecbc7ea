"""The remote harness: `serve --http` as a real process on loopback, spoken to as a remote client would.

Requests carry their files (the server never reads the client's paths); a token is required and
checked before anything is read; bodies over the limit are refused unread; refused requests run
nothing; requests are answered concurrently; and the token never reaches a candidate.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest
from conftest import DEVICE, FIXTURES, ON_GPU, PROBLEMS, HttpServe, file_content, harness_env

TOKEN = "xf-test-9b1d4c2e7a"
MAX_BODY = 200_000

KERNEL = PROBLEMS / "vector_add.py"
SPEC = PROBLEMS / "vector_add.yaml"


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    # The server runs in a directory of its own: nothing the client writes is under it.
    home = tmp_path_factory.mktemp("server-cwd")
    server = HttpServe("--max-body", str(MAX_BODY), "--cpu-workers", "2", token=TOKEN, cwd=home)
    assert server.base, server.first
    yield server
    server.close()
    assert server.proc.returncode == 0, "".join(server.stderr)[-3000:]


@pytest.fixture
def drop():
    """A directory any user may write (as root the harness runs candidates as another user): where a
    marker candidate leaves proof that it ran."""
    d = Path(tempfile.mkdtemp(prefix="xeforge-drop-"))
    d.chmod(0o777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def marker_candidate(drop: Path) -> str:
    """vector_add, correct, that writes a file into `drop` when it is imported."""
    text = (FIXTURES / "add_correct.py").read_text()
    return text + f"\nopen({str(drop / 'ran')!r}, 'w').write('imported')\n"


def base_args(**files) -> dict:
    args = {"kernel": file_content(KERNEL), "spec": file_content(SPEC), "device": DEVICE}
    if ON_GPU:
        args["no_timing"] = True
    args.update(files)
    return args


def served(remote) -> dict:
    status, body = remote.post("/ping", {})
    assert status == 200, body
    return body["served"]


def test_a_file_that_exists_only_on_the_client_is_verified(remote, tmp_path):
    """The kernel, spec and candidate are in a client directory that is gone before the request is
    sent: only the request's contents can have been verified. The result names them by sha256."""
    client = tmp_path / "client-only"
    client.mkdir()
    for src in (KERNEL, SPEC):
        (client / src.name).write_text(src.read_text())
    (client / "rewrite.py").write_text((FIXTURES / "add_correct.py").read_text())
    args = base_args(
        kernel=file_content(client / "vector_add.py"),
        spec=file_content(client / "vector_add.yaml"),
        candidate=file_content(client / "rewrite.py"),
    )
    wanted = {
        k: hashlib.sha256((client / n).read_bytes()).hexdigest()
        for k, n in (("kernel", "vector_add.py"), ("spec", "vector_add.yaml"), ("candidate", "rewrite.py"))
    }
    for f in client.iterdir():
        f.unlink()
    client.rmdir()

    status, body = remote.post("/evaluate", {"id": "c1", "args": args})
    assert status == 200 and body["id"] == "c1"
    assert body["verdict"] == "correct", body.get("message")
    assert {k: v["sha256"] for k, v in body["files"].items()} == wanted
    assert body["files"]["candidate"]["name"] == "rewrite.py"
    # Names as the client gave them: no directory of the harness's machine shows through.
    assert "xeforge-request-" not in json.dumps(body)


def test_a_wrong_file_is_judged_on_its_contents(remote):
    args = base_args(candidate=file_content(FIXTURES / "add_zeros.py", "rewrite.py"))
    status, body = remote.post("/evaluate", args)
    assert status == 200 and body["verdict"] == "incorrect"


@pytest.mark.parametrize(
    "authorization",
    [None, f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", f"Basic {TOKEN}", TOKEN, "Bearer "],
    ids=["missing", "longer", "shorter", "basic-scheme", "no-scheme", "empty"],
)
def test_without_the_token_nothing_runs(remote, drop, authorization):
    before = served(remote)
    args = base_args(candidate={"name": "marker.py", "content": marker_candidate(drop)})
    headers = {"Authorization": authorization} if authorization is not None else {}
    sweep = {**{k: v for k, v in args.items() if k != "candidate"}, "candidates": [args["candidate"]]}
    for path, body in (("/evaluate", args), ("/", {"id": 1, "command": "evaluate", "args": args}), ("/sweep", sweep)):
        status, reply = remote.post(path, body, token=None, headers=headers)
        assert status == 401, (path, status, reply)
        assert reply["verdict"] == "error" and "unauthorized" in reply["error"]
        assert TOKEN not in json.dumps(reply)
    url = urlparse(remote.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.request("GET", "/ping", headers=headers)
    assert conn.getresponse().status == 401
    conn.close()
    time.sleep(0.5)
    assert not (drop / "ran").exists(), "a request without the right token ran its candidate"
    assert served(remote) == before


def test_the_marker_candidate_does_run_with_the_token(remote, drop):
    """The control for the test above: with the token the same request runs and leaves its mark."""
    args = base_args(candidate={"name": "marker.py", "content": marker_candidate(drop)})
    status, body = remote.post("/evaluate", args)
    assert status == 200 and body["verdict"] == "correct", body.get("message")
    assert (drop / "ran").exists()


def test_an_oversized_body_is_refused_before_it_is_read(remote, drop):
    before = served(remote)
    # Declared too large, and nothing sent: the answer comes without the server waiting for a body.
    url = urlparse(remote.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.putrequest("POST", "/evaluate")
    conn.putheader("Authorization", f"Bearer {TOKEN}")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(MAX_BODY + 1))
    conn.endheaders()
    started = time.monotonic()
    resp = conn.getresponse()
    assert resp.status == 413 and time.monotonic() - started < 10
    assert "limit" in json.loads(resp.read())["error"]
    conn.close()

    # Sent in full: a valid request whose candidate is padded past the limit.
    padded = marker_candidate(drop) + "#" * MAX_BODY + "\n"
    status, reply = remote.post("/evaluate", base_args(candidate={"name": "marker.py", "content": padded}))
    assert status == 413, reply
    # Without the token an oversized body is refused as unauthenticated first.
    status, _ = remote.post("/evaluate", base_args(candidate={"name": "marker.py", "content": padded}), token=None)
    assert status == 401
    time.sleep(0.5)
    assert not (drop / "ran").exists()
    assert served(remote) == before


def test_a_chunked_body_is_refused(remote):
    url = urlparse(remote.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.request("POST", "/evaluate", body=iter([b'{"device": "cpu"}']), headers={"Authorization": f"Bearer {TOKEN}"}, encode_chunked=True)
    assert conn.getresponse().status == 411
    conn.close()


def test_paths_are_refused_over_http(remote):
    args = base_args(candidate=str(FIXTURES / "add_correct.py"))
    status, body = remote.post("/evaluate", args)
    assert status == 200 and body["verdict"] == "error" and body["field"] == "candidate"
    assert "not a path" in body["error"]


def test_a_hash_that_does_not_match_the_content_is_an_error(remote):
    cand = file_content(FIXTURES / "add_correct.py")
    cand["sha256"] = hashlib.sha256(b"something else").hexdigest()
    status, body = remote.post("/evaluate", base_args(candidate=cand))
    assert status == 200 and body["verdict"] == "error" and body["field"] == "candidate.sha256"
    cand["sha256"] = hashlib.sha256(cand["content"].encode()).hexdigest()
    status, body = remote.post("/evaluate", base_args(candidate=cand))
    assert body["verdict"] == "correct" and body["files"]["candidate"]["sha256"] == cand["sha256"]


@pytest.mark.parametrize("name", ["../escape.py", "a/b.py", ".hidden.py", "", "x" * 200])
def test_a_file_name_cannot_leave_the_request_directory(remote, name):
    status, body = remote.post("/evaluate", base_args(candidate={"name": name, "content": "x = 1\n"}))
    assert status == 200 and body["verdict"] == "error" and body["field"] == "candidate.name"


def test_a_sweep_carries_its_candidates_and_names_each_result(remote):
    cands = [file_content(FIXTURES / "add_correct.py", "a.py"), file_content(FIXTURES / "add_zeros.py", "b.py")]
    args = base_args(candidates=cands)
    status, body = remote.post("/sweep", args)
    assert status == 200 and body["kind"] == "sweep", body
    assert [r["verdict"] for r in body["results"]] == ["correct", "incorrect"]
    for r, c in zip(body["results"], cands):
        assert r["files"]["candidate"] == {
            "name": c["name"],
            "bytes": len(c["content"].encode()),
            "sha256": hashlib.sha256(c["content"].encode()).hexdigest(),
        }
        assert r["files"]["kernel"]["sha256"] == hashlib.sha256(KERNEL.read_bytes()).hexdigest()


def test_requests_are_served_concurrently(remote):
    """Two slow candidates at once finish in about the time of one (two interpreter workers), and a
    ping is answered while they run. On the interpreter even on a GPU machine: one GPU is one lane,
    where two requests rightly wait for each other (the pool's rule, tested in test_cancel/test_ray)."""
    slow = (FIXTURES / "add_correct.py").read_text() + "\nimport time\ntime.sleep(6)\n"
    args = {**base_args(candidate={"name": "slow.py", "content": slow}), "device": "cpu"}
    # One alone, for the time it takes here.
    started = time.monotonic()
    status, body = remote.post("/evaluate", args)
    alone = time.monotonic() - started
    assert status == 200 and body["verdict"] == "correct", body.get("message")

    results: list[tuple[int, dict, float]] = []

    def one():
        t = time.monotonic()
        s, b = remote.post("/evaluate", args)
        results.append((s, b, time.monotonic() - t))

    threads = [threading.Thread(target=one) for _ in range(2)]
    started = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(1.0)
    t = time.monotonic()
    status, _ = remote.post("/ping", {})
    assert status == 200 and time.monotonic() - t < 3, "a ping waited for the evaluations"
    for t in threads:
        t.join(600)
    both = time.monotonic() - started
    assert [r[1]["verdict"] for r in results] == ["correct", "correct"]
    assert both < 1.6 * alone, f"two requests took {both:.1f} s, one alone {alone:.1f} s: served one at a time"


def test_the_token_never_reaches_a_candidate(remote):
    """A candidate that looks for the token in its environment and in every process's environment and
    command line it can read computes zeros if it finds it."""
    probe = (FIXTURES / "add_correct.py").read_text().replace("return out", "return out * 0 if _found() else out") + (
        "\nimport os as _os\n\n\ndef _found():\n"
        f"    token = {TOKEN!r}\n"
        # Read into a name first: a condition that reads the environment itself is rejected by the
        # harness's source check (code that can tell where it runs), and this one must run.
        "    seen = list(_os.environ.items())\n"
        "    if any(token in v or k == 'XEFORGE_HARNESS_TOKEN' for k, v in seen):\n"
        "        return True\n"
        "    for pid in _os.listdir('/proc'):\n"
        "        for what in ('environ', 'cmdline'):\n"
        "            try:\n"
        "                with open(f'/proc/{pid}/{what}', 'rb') as f:\n"
        "                    if token.encode() in f.read():\n"
        "                        return True\n"
        "            except OSError:\n"
        "                pass\n"
        "    return False\n"
    )
    status, body = remote.post("/evaluate", base_args(candidate={"name": "probe.py", "content": probe}))
    assert status == 200 and body["verdict"] == "correct", body.get("message")
    assert TOKEN not in "".join(remote.stderr)


def test_no_token_no_listening_beyond_loopback():
    env = harness_env()
    env.pop("XEFORGE_HARNESS_TOKEN", None)
    proc = subprocess.run(
        [sys.executable, "-m", "xeforge_harness", "serve", "--http", "0.0.0.0:0"], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 2
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["verdict"] == "error" and out["field"] == "http" and "XEFORGE_HARNESS_TOKEN" in out["error"]


def test_with_a_token_any_address_may_be_used():
    server = HttpServe(token=TOKEN, address="0.0.0.0:0")
    try:
        assert server.base and server.base.startswith("http://0.0.0.0:")
        port = urlparse(server.base).port
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/ping")
        assert conn.getresponse().status == 401
        conn.close()
    finally:
        server.close()
    assert server.proc.returncode == 0


def test_on_loopback_without_a_token_one_is_made_and_still_required():
    """No unauthenticated requests even on loopback (another local user could reach the port): the
    server makes a token for the run and gives it once, to whoever started it, on its stdout."""
    server = HttpServe()
    try:
        made = server.first.get("token")
        assert made and len(made) >= 32, server.first
        status, _ = server.post("/ping", {}, token=None)
        assert status == 401
        port = urlparse(server.base).port
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/ping", headers={"Authorization": f"Bearer {made}"})
        assert conn.getresponse().status == 200
        conn.close()
        assert made not in "".join(server.stderr), "the token was logged"
        server.token = made
    finally:
        server.close()


# --- cancellation over HTTP ---------------------------------------------------------------------------


def long_candidate(drop: Path, marker: str, sleep_s: float = 1000.0) -> dict:
    """add_sleepy with `sleep_s` seconds in every forward call, leaving `drop/marker` when imported
    (the job is on a lane by then). With 1000 s only a cancel ends it within the test."""
    text = (FIXTURES / "add_sleepy.py").read_text().replace("SLEEP_S = 1.0", f"SLEEP_S = {sleep_s}")
    assert f"SLEEP_S = {sleep_s}" in text
    return {"name": f"{marker}.py", "content": text + f"\nopen({str(drop / marker)!r}, 'w').write('imported')\n"}


def in_background(remote, path: str, body: dict) -> tuple[threading.Thread, list]:
    """POST on a thread of its own; the list gets (status, reply, when it came)."""
    out: list = []

    def post():
        status, reply = remote.post(path, body)
        out.append((status, reply, time.monotonic()))

    thread = threading.Thread(target=post, daemon=True)
    thread.start()
    return thread, out


def wait_for(path: Path, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never ran"
        time.sleep(0.1)


def test_a_cancel_stops_a_sleeping_candidate_and_frees_its_lane(remote, drop):
    """Both lanes hold a candidate that sleeps 1000 s per call. `POST /cancel` of one answers at once,
    its request is answered `cancelled` (never a verdict) within seconds, and a third request then
    gets that lane: it could get none otherwise until the sleepers' own limit."""
    before = served(remote)
    runs = {}
    for rid in ("long-a", "long-b"):
        args = {**base_args(candidate=long_candidate(drop, rid)), "device": "cpu", "timeout": 600}
        runs[rid] = in_background(remote, "/evaluate", {"id": rid, "args": args})
    for rid in runs:
        wait_for(drop / rid)
    # An id still in flight names one request: a second request with it is refused, and runs nothing.
    status, dup = remote.post("/evaluate", {"id": "long-a", "args": {**base_args(candidate=file_content(FIXTURES / "add_correct.py"))}})
    assert status == 200 and dup["verdict"] == "error" and dup["field"] == "id", dup

    asked = time.monotonic()
    status, reply = remote.post("/cancel", {"id": "long-a"})
    assert (status, reply) == (200, {"id": None, "ok": True, "cancelled": True}), reply
    runs["long-a"][0].join(60)
    [(status, cancelled, when)] = runs["long-a"][1]
    assert status == 200 and cancelled["id"] == "long-a", cancelled
    assert cancelled["verdict"] == "error" and cancelled.get("cancelled") is True, cancelled
    assert "cancelled" in cancelled["message"], cancelled
    assert when - asked < 10, f"the cancelled job ran on for {when - asked:.1f} s"

    # The freed lane takes the next request while the other sleeper still holds its own.
    quick = {**base_args(candidate=file_content(FIXTURES / "add_correct.py")), "device": "cpu"}
    status, body = remote.post("/evaluate", {"id": "quick", "args": quick}, timeout=120)
    assert status == 200 and body["verdict"] == "correct", body.get("message")
    assert not runs["long-b"][1], "the other sleeper cannot have finished"

    # The full request form (`POST /` with `command`) names a request as well.
    status, reply = remote.post("/", {"id": "c2", "command": "cancel", "args": {"id": "long-b"}})
    assert (status, reply) == (200, {"id": "c2", "ok": True, "cancelled": True}), reply
    runs["long-b"][0].join(60)
    assert runs["long-b"][1] and runs["long-b"][1][0][1].get("cancelled") is True, runs["long-b"][1]
    after = served(remote)
    assert after["cancelled"] == before["cancelled"] + 2
    assert after["evaluate"] == before["evaluate"] + 3, "the refused duplicate started nothing"


@pytest.mark.parametrize("authorization", [None, f"Bearer {TOKEN}x"], ids=["missing", "wrong"])
def test_a_cancel_without_the_token_cancels_nothing(remote, drop, authorization):
    before = served(remote)
    args = {**base_args(candidate=long_candidate(drop, "kept", sleep_s=0.5)), "device": "cpu"}
    thread, out = in_background(remote, "/evaluate", {"id": "kept", "args": args})
    wait_for(drop / "kept")
    headers = {"Authorization": authorization} if authorization is not None else {}
    for path, body in (("/cancel", {"id": "kept"}), ("/", {"id": "c", "command": "cancel", "args": {"id": "kept"}})):
        status, reply = remote.post(path, body, token=None, headers=headers)
        assert status == 401 and "unauthorized" in reply["error"], (path, status, reply)
    thread.join(300)
    [(status, body, _)] = out
    assert status == 200 and body["verdict"] == "correct" and "cancelled" not in body, body
    assert served(remote)["cancelled"] == before["cancelled"]


def test_a_cancel_of_an_unknown_id_is_an_error(remote):
    for path, body in (
        ("/cancel", {"id": "nobody"}),
        ("/cancel", {"id": "c", "args": {"id": 7}}),
        ("/", {"command": "cancel", "args": {"id": "nobody"}}),
    ):
        status, reply = remote.post(path, body)
        assert status == 200 and reply["verdict"] == "error" and reply["field"] == "id", (path, reply)
        assert reply["cancelled"] is False and "no request with id" in reply["error"], reply
    status, reply = remote.post("/cancel", {})
    assert status == 200 and reply["verdict"] == "error" and reply["field"] == "id" and "id of the request" in reply["error"], reply


def test_a_client_that_disconnects_cancels_its_request(remote, drop):
    """Nobody can read the reply of a request whose connection closed: its job is stopped and its lane
    freed (here while the other lane sleeps), with or without an `id`."""
    other_args = {**base_args(candidate=long_candidate(drop, "other")), "device": "cpu", "timeout": 600}
    other = in_background(remote, "/evaluate", {"id": "other", "args": other_args})
    wait_for(drop / "other")
    url = urlparse(remote.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    body = json.dumps({**base_args(candidate=long_candidate(drop, "gone")), "device": "cpu", "timeout": 600}).encode()
    conn.request("POST", "/evaluate", body=body, headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    wait_for(drop / "gone")
    conn.close()
    quick = {**base_args(candidate=file_content(FIXTURES / "add_correct.py")), "device": "cpu"}
    status, reply = remote.post("/evaluate", quick, timeout=120)
    assert status == 200 and reply["verdict"] == "correct", reply.get("message")
    assert not other[1], "the other sleeper cannot have finished"
    assert remote.post("/cancel", {"id": "other"})[1]["cancelled"] is True
    other[0].join(60)
    assert other[1] and other[1][0][1].get("cancelled") is True
