"""The Ray backend (`serve --ray`), on a private local Ray cluster of CPU workers with the Triton
interpreter as the device.

- Verdicts: adversarial and legitimate candidates (tests/harness/adversarial/cases.py) through
  `serve --ray local --cpu-workers 2` equal the local `serve`'s, candidate for candidate, and so do
  the hashes of the files judged (the files travelled to the Ray lane as contents).
- A lane lost mid-job (its actor's process killed, as a node death would) is retried once on the
  other lane and reported in `pool`, and the verdict is still the candidate's own.
- Cancellation: a `serve` ended while a job runs stops the job's processes (SIGTERM: `ray.cancel` of
  the task; SIGKILL of a local serve: the zygote sees its parent gone); `ray.cancel` alone stops the
  job and the lane judges the next one.
- Joining a cluster started apart (`ray start --head`, workers without the harness on their path):
  the harness's code travels with the job; through its GCS address and through Ray Client
  (`ray://HOST:PORT`, skipped without the `ray[client]` extra), and a `ray://` address without the
  extra is refused naming the install.

Ray's footprint stays small: 2 CPUs, no dashboard, an 80 MiB object store, its files in a temp
directory under /tmp. Every CPU case of the matrix runs (the timed ones in the timed protocol on both
sides; the attacks on the harness's processes through Ray only, which must answer them with a cheat
verdict and keep judging); `XEFORGE_RAY_CASES=subset` runs a quick subset.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from conftest import HARNESS, HERE, ON_GPU, ServeSession, evaluate_args, gate_held, overlap, pool_job, timing_alone

try:
    import ray  # noqa: F401  (the backend imports it in the serve process; here: is it installed)
except ImportError:
    if os.environ.get("CI") == "true":
        raise  # tests/harness/install_deps.sh installs it: missing in CI is a failure, not a skip
    pytest.skip("the `ray` package is not installed (tests/harness/install_deps.sh installs it)", allow_module_level=True)

if ON_GPU:
    pytest.skip("the Ray tests run on the CPU interpreter", allow_module_level=True)

_spec = importlib.util.spec_from_file_location("xeforge_adversarial_cases", HERE / "adversarial" / "cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

CPU_LANES = 2
# `XEFORGE_RAY_CASES=subset` compares these only (a quick run); by default every CPU case is run.
SUBSET = {
    "legit_add_autotune.py",
    "legit_sm_online.py",
    "legit_mm_tiles.py",
    "legit_conv_unchanged.py",
    "add_write_into_y.py",
    "mm_empty_reuse.py",
    "add_gc_expected.py",
    "add_patch_torch_compare.py",
    "add_tensor_subclass.py",
    "add_thread_fill.py",
    "sm_fork_child.py",
    "mm_torch_matmul.py",
    "mm_fp16_downgrade.py",
    "add_os_exit_forward.py",
    "add_honest_first_n.py",
    "mm_digest_forge.py",
    "add_kill_ancestors.py",
    "add_forge_stdout.py",
}
CPU_CASES = [c for c in cases.CASES if not c[3] and (os.environ.get("XEFORGE_RAY_CASES") != "subset" or c[0] in SUBSET)]
PLAIN = [c for c in CPU_CASES if cases.SESSION.get(c[0], "plain") == "plain"]
TIMED = [c for c in CPU_CASES if cases.SESSION.get(c[0]) == "timed"]
FRESH = [c for c in CPU_CASES if cases.SESSION.get(c[0]) == "fresh"]
CPU_TIMING = {"XEFORGE_HARNESS_CPU_TIMING": "1"}  # the timed protocol on the interpreter, times discarded


def _ray_serve(tmp: str, **env: str) -> ServeSession:
    return ServeSession("--ray", "local", "--cpu-workers", str(CPU_LANES), env={"RAY_TMPDIR": tmp, **env})


@pytest.fixture(scope="module")
def ray_tmp():
    # Short: Ray's Unix sockets live under it (a socket path has at most 107 bytes).
    folder = tempfile.mkdtemp(prefix="xfray-", dir="/tmp")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def ray_serve(ray_tmp):
    session = _ray_serve(ray_tmp)
    yield session
    session.close()


@pytest.fixture(scope="module")
def timed_pair(ray_tmp):
    """A local serve and a Ray serve that both run the timed protocol on the interpreter."""
    local, remote = ServeSession(env=CPU_TIMING), _ray_serve(ray_tmp, **CPU_TIMING)
    yield local, remote
    local.close()
    remote.close()


def _args(file: str, problem: str, timed: bool = False) -> dict:
    extra = {"runs": 10, "warmup": 2} if timed else {}
    return evaluate_args(f"adversarial/{file}", problem, family="ci", timeout=cases.TIMEOUT_S.get(file, cases.DEFAULT_TIMEOUT_S), **extra)


def _hashes(result: dict) -> dict:
    return {k: v.get("sha256") for k, v in (result.get("files") or {}).items() if isinstance(v, dict)}


def _same(local: dict, remote: dict, file: str, note: str) -> None:
    assert remote.get("verdict") == local.get("verdict"), (
        f"{file} ({note}): Ray said {remote.get('verdict')!r}, the local pool {local.get('verdict')!r}\n"
        f"Ray: {remote.get('message')}\nlocal: {local.get('message')}"
    )
    assert _hashes(remote) == _hashes(local) and _hashes(local), "the Ray lane judged other files than the local one"
    pool = remote.get("pool") or {}
    assert pool.get("backend") == "ray" and pool.get("retried") == 0 and "lost" not in pool, pool
    assert "pool" not in local
    # Nothing of the Ray node's copies shows: the result names the submitting side's files.
    assert "xeforge-ray-job-" not in json.dumps(remote)


@pytest.mark.parametrize(("file", "problem", "expected", "gpu_only", "note"), PLAIN, ids=[c[0][:-3] for c in PLAIN])
def test_ray_verdict_equals_the_local_one(serve, ray_serve, file, problem, expected, gpu_only, note):
    local = serve.request("evaluate", _args(file, problem), timeout=400)
    remote = ray_serve.request("evaluate", _args(file, problem), timeout=400)
    _same(local, remote, file, note)


@pytest.mark.parametrize(("file", "problem", "expected", "gpu_only", "note"), TIMED, ids=[c[0][:-3] for c in TIMED])
def test_ray_verdict_equals_the_local_one_in_the_timed_protocol(timed_pair, file, problem, expected, gpu_only, note):
    local, remote = timed_pair
    _same(
        local.request("evaluate", _args(file, problem, True), timeout=400),
        remote.request("evaluate", _args(file, problem, True), timeout=400),
        file,
        note,
    )


@pytest.mark.parametrize(("file", "problem", "expected", "gpu_only", "note"), FRESH, ids=[c[0][:-3] for c in FRESH])
def test_attacks_on_the_harness_processes_get_a_verdict_on_ray_too(ray_serve, file, problem, expected, gpu_only, note):
    """The cases that attack the harness's own processes (each gets a fresh local serve in
    test_adversarial.py) through the shared Ray serve: a cheat verdict, and the serve still judges."""
    reply = ray_serve.request("evaluate", _args(file, problem), timeout=400)
    assert reply.get("verdict") in cases.CHEAT_VERDICTS, f"{file} ({note}): {reply.get('verdict')!r}: {reply.get('message')}"
    assert (reply.get("pool") or {}).get("retried") == 0, reply.get("pool")
    assert ray_serve.alive()
    after = ray_serve.request("evaluate", _args(*cases.SANITY), timeout=400)
    assert after.get("verdict") == "correct", f"after {file}: {after.get('verdict')}: {after.get('message')}"


# --- joining a cluster that was started apart ----------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_joining_a_started_cluster_the_harness_code_travels(ray_tmp):
    """`ray start --head` apart from the harness (its workers cannot import xeforge_harness: no
    PYTHONPATH), then `serve --ray HOST:PORT`: the lanes run the harness shipped with the job."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # Token authentication (Ray 2.60's default for `ray start`) with a token of the test's own: the
    # head and the driver share it, and nothing depends on a ~/.ray/auth_token being there.
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    env.update(RAY_TMPDIR=ray_tmp, **auth)
    head = subprocess.Popen(
        [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1",
         "--num-cpus=1", "--include-dashboard=false", "--object-store-memory=80000000", "--disable-usage-stats", "--block"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True,
    )  # fmt: skip
    session = None
    try:
        # Ray's rule: the driver uses the cluster's auth mode and its token.
        session = ServeSession("--ray", f"127.0.0.1:{port}", env={"RAY_TMPDIR": ray_tmp, **auth})
        reply = session.request("evaluate", _args("legit_sm_online.py", "softmax"), timeout=400)
        assert reply.get("verdict") == "correct", f"{reply.get('verdict')}: {reply.get('message')}"
        assert (reply.get("pool") or {}).get("backend") == "ray", reply.get("pool")
    finally:
        if session is not None:
            session.close()
        head.terminate()  # `ray start --block` ends the processes it started
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        if _group_alive(head.pid):  # its own session: every process it left, and nothing else
            os.killpg(head.pid, signal.SIGKILL)


# --- Ray Client (`ray://`) ---------------------------------------------------------------------------


def test_a_ray_client_address_without_the_extra_says_which_to_install(monkeypatch):
    """Without grpcio (the `ray[client]` extra), a `ray://` address is refused before anything is
    tried, naming the install that fixes it; `auto` following such a RAY_ADDRESS too."""
    import importlib.util

    from xeforge_harness import raypool

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "grpc" else real(name, *a))
    for address, env in (("ray://127.0.0.1:1", None), ("auto", "ray://127.0.0.1:1")):
        if env:
            monkeypatch.setenv("RAY_ADDRESS", env)
        with pytest.raises(raypool.RayUnavailable) as caught:
            raypool.RayWorkers(address)
        message = str(caught.value)
        assert 'pip install "ray[client]==' in message and "Ray Client" in message, message
    assert not raypool.is_client_address("127.0.0.1:6379") and raypool.is_client_address("RAY://h:10001")


def test_serve_with_a_ray_client_address_and_no_extra_answers_why(ray_tmp):
    """`serve --ray ray://...` where grpcio is missing keeps answering, every job with the `error`
    that names the extra (the Rust client shows it)."""
    hide = tempfile.mkdtemp(prefix="xf-nogrpc-")
    try:
        # grpcio hidden from the serve process, whether or not this environment has it.
        blocker = os.path.join(hide, "sitecustomize.py")
        with open(blocker, "w") as f:
            f.write(
                "import importlib.util as _u\n_real = _u.find_spec\n"
                "_u.find_spec = lambda name, *a, **k: None if name == 'grpc' else _real(name, *a, **k)\n"
            )
        path = os.pathsep.join([hide, str(HARNESS), os.environ.get("PYTHONPATH", "")])
        session = ServeSession("--ray", "ray://127.0.0.1:1", env={"RAY_TMPDIR": ray_tmp, "PYTHONPATH": path})
        try:
            reply = session.request("evaluate", _args("legit_sm_online.py", "softmax"), timeout=120)
            assert reply.get("verdict") == "error" and reply.get("field") == "ray", reply
            assert 'pip install "ray[client]==' in reply["error"], reply["error"]
        finally:
            session.close()
    finally:
        shutil.rmtree(hide, ignore_errors=True)


def _client_server_logs(ray_tmp: str) -> str:
    """The head's per-client server logs: why one did not start ("Starting Ray client server failed")
    is only written there, and the session directory goes with the test."""
    out = []
    for path in sorted(Path(ray_tmp).glob("**/logs/ray_client_server_*.err")):
        out.append(f"--- {path.name}\n{path.read_text(errors='replace')[-2000:]}")
    return "\n".join(out)


def _has_client_extra() -> bool:
    return importlib.util.find_spec("grpc") is not None


# tests/harness/install_deps.sh installs the extra: missing in CI is a failure, not a skip.
@pytest.mark.skipif(
    not _has_client_extra() and os.environ.get("CI") != "true",
    reason='Ray Client needs the `ray[client]` extra (grpcio): pip install "ray[client]==2.60.0" (tests/harness/install_deps.sh)',
)
def test_a_ray_client_address_runs_jobs_on_the_heads_cluster(ray_tmp):
    """`ray start --head` with a client server, its workers without the harness on their path, then
    `serve --ray ray://HOST:PORT`: the jobs go through Ray Client and the harness travels with them."""
    port, client_port = _free_port(), _free_port()
    harness_path = str(HARNESS)
    env = dict(os.environ)
    # The head keeps whatever gives it grpcio (its client server needs it), not the harness.
    env["PYTHONPATH"] = os.pathsep.join(p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.abspath(p) != harness_path)
    # Token authentication, with a token of the test's own (not ~/.ray's): the head and the driver share it.
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    env.update(RAY_TMPDIR=ray_tmp, **auth)
    head = subprocess.Popen(
        [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1",
         f"--ray-client-server-port={client_port}", "--num-cpus=1", "--include-dashboard=false",
         "--object-store-memory=80000000", "--disable-usage-stats", "--block"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True,
    )  # fmt: skip
    session = None
    try:
        _wait_for_port(client_port, 120)
        session = ServeSession("--ray", f"ray://127.0.0.1:{client_port}", env={"RAY_TMPDIR": ray_tmp, **auth})
        reply = session.request("evaluate", _args("legit_sm_online.py", "softmax"), timeout=400)
        assert reply.get("verdict") == "correct", (
            f"{reply.get('verdict')}: {reply.get('message')}\n{''.join(session.stderr)[-3000:]}\n{_client_server_logs(ray_tmp)}"
        )
        pool = reply.get("pool") or {}
        assert pool.get("backend") == "ray" and pool.get("retried") == 0, pool
        assert session.request("ping")["pool"]["backend"] == "ray"
    finally:
        if session is not None:
            session.close()
        head.terminate()
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        if _group_alive(head.pid):
            os.killpg(head.pid, signal.SIGKILL)


def _wait_for_port(port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise AssertionError(f"nothing listens on {port} after {seconds} s")


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except OSError:
        return False


# --- a lane lost mid-job -------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _send(session: ServeSession, request: dict) -> threading.Thread:
    """Write one request; the returned (started) thread reads its reply into `session.reply`."""
    session.proc.stdin.write(json.dumps(request) + "\n")
    session.proc.stdin.flush()
    session.reply = None

    def read():
        line = session.proc.stdout.readline()
        try:
            session.reply = json.loads(line) if line else None
        except ValueError:
            session.reply = {"not JSON": line}

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


def _busy_lane(workers: dict, limit_s: float = 120) -> dict:
    """The lane whose zygote is running a job (has a judge child), once one does."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        for info in workers.values():
            if info.get("pid") and _children(info["pid"]):
                return info
        time.sleep(0.1)
    raise AssertionError(f"no lane started the job within {limit_s} s: {workers}")


def test_a_lane_lost_mid_job_is_retried_on_another_and_reported(ray_serve):
    workers = ray_serve.request("ping")["workers"]
    assert len(workers) == CPU_LANES and all(w.get("ready") for w in workers.values()), workers
    started = time.monotonic()
    reader = _send(ray_serve, {"id": "lost", "command": "evaluate", "args": evaluate_args("fixtures/add_sleepy.py", timeout=120)})
    busy = _busy_lane(workers)
    judge = _children(busy["pid"])[0]
    time.sleep(1.0)  # well inside the candidate's sleeps
    os.kill(busy["actor_pid"], signal.SIGKILL)  # the lane's actor dies, as on a lost node
    reader.join(300)
    reply = ray_serve.reply
    assert reply is not None and reply.get("id") == "lost", f"no reply; stderr:\n{''.join(ray_serve.stderr)[-3000:]}"
    assert reply["verdict"] == "correct", f"a lost lane changed the verdict: {reply.get('verdict')}: {reply.get('message')}"
    pool = reply["pool"]
    assert pool["retried"] == 1 and len(pool["lost"]) == 1, pool
    assert "Actor" in pool["lost"][0]["error"], pool  # ActorDiedError, or ActorUnavailableError while Ray restarts it
    assert pool["lane"] != pool["lost"][0]["lane"], f"the retry ran on the lane that was lost: {pool}"
    # The lost lane's job did not live on: its zygote saw its parent go and killed the judge.
    deadline = time.monotonic() + 30
    while _alive(judge) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(judge), "the lost lane's judge is still running"
    print(f"lost-lane retry: {time.monotonic() - started:.1f} s, pool={pool}")
    # Ray restarts the lost lane's actor; the server keeps judging.
    after = ray_serve.request("evaluate", _args(*cases.SANITY), timeout=400)
    assert after.get("verdict") == "correct", after.get("message")


# --- cancellation ------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["local", "ray"])
def test_ending_serve_mid_job_stops_the_job(ray_tmp, backend):
    """A `serve` that ends (its client gone, or a client that kills a harness that answers nothing)
    leaves no job running: SIGTERM on a Ray serve (which `ray.cancel`s the task), SIGKILL on a local
    one (nothing to catch; the zygote sees its stdin close). One request is cancelled with `cancel`
    (test_pool_stdio.py, and the Ray case below)."""
    session = _ray_serve(ray_tmp) if backend == "ray" else ServeSession()
    try:
        workers = session.request("ping")["workers"]
        if backend == "local":
            session.request("probe", {"device": "cpu"})  # starts the interpreter lane
            workers = session.request("ping")["workers"]
        _send(session, {"id": "c", "command": "evaluate", "args": evaluate_args("fixtures/add_sleepy.py", timeout=120)})
        busy = _busy_lane({k: v for k, v in workers.items() if v.get("interpret")})
        judge = _children(busy["pid"])[0]
        time.sleep(1.0)
        started = time.monotonic()
        session.proc.send_signal(signal.SIGTERM if backend == "ray" else signal.SIGKILL)
        deadline = started + 30
        while (_alive(judge) or _alive(busy["pid"])) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(judge), f"{backend}: the job's judge runs on after its serve ended"
        assert not _alive(busy["pid"]), f"{backend}: the lane's zygote runs on after its serve ended"
        print(f"{backend}: job stopped {time.monotonic() - started:.1f} s after serve was ended")
    finally:
        if session.alive():
            session.proc.kill()
        session.proc.wait(timeout=60)


def test_ray_cancel_stops_the_running_job_and_the_lane_goes_on(ray_tmp, monkeypatch):
    """`ray.cancel` of a job's task (what `serve` does for its tasks when it ends): the actor sees the
    task's cancelled flag, its zygote kills the job's processes, the reply is an `error` marked
    `cancelled` (no verdict), and the lane judges the next job."""
    from xeforge_harness.raypool import RayWorkers

    monkeypatch.setenv("RAY_TMPDIR", ray_tmp)
    with RayWorkers("local", cpu_workers=1) as backend:
        lane = backend.lanes("cpu")[0]
        job = pool_job("fixtures/add_sleepy.py", device="cpu")
        box: list[dict] = []
        runner = threading.Thread(target=lambda: box.append(backend.run("cpu", job)), daemon=True)
        runner.start()
        _busy_lane({"lane": lane.info})
        time.sleep(1.0)
        started = time.monotonic()
        backend.cancel_all()
        runner.join(60)
        assert box, "the cancelled job never returned"
        reply = box[0]
        assert reply["verdict"] == "error" and reply.get("cancelled") is True, reply.get("message")
        assert time.monotonic() - started < 15, "the cancelled job ran on"
        after = backend.run("cpu", pool_job("adversarial/legit_add_block1024.py", device="cpu"))
        assert after["verdict"] == "correct", after.get("message")


def test_a_stdio_cancel_stops_one_ray_job_and_leaves_the_other(ray_serve):
    """`cancel` over stdio reaches a Ray lane through `ray.cancel`: the named job stops, the job on
    the other lane is judged as usual; `ping` counts Ray's slots."""
    pool = ray_serve.request("ping")["pool"]
    assert pool["backend"] == "ray" and pool["kinds"]["cpu"] == CPU_LANES and pool["size"] == CPU_LANES, pool
    for rid in ("keep", "stop"):
        ray_serve.write({"id": rid, "command": "evaluate", "args": evaluate_args("fixtures/add_sleepy.py", timeout=120)})
    time.sleep(4.0)  # both are running on their lanes
    asked = time.monotonic()
    ray_serve.write({"id": "c", "command": "cancel", "args": {"id": "stop"}})
    replies, times = {}, {}
    for _ in range(3):
        reply = ray_serve.read(400)
        replies[reply["id"]], times[reply["id"]] = reply, time.monotonic()
    assert replies["c"]["cancelled"] is True
    assert replies["stop"]["verdict"] == "error" and replies["stop"].get("cancelled") is True, replies["stop"].get("message")
    assert times["stop"] - asked < 15, "the cancelled Ray job ran on"
    assert replies["keep"]["verdict"] == "correct", replies["keep"].get("message")


def test_a_ray_lane_shares_its_device_under_its_zygotes_gate(ray_tmp, tmp_path):
    """`--jobs-per-device 2` on Ray: one lane (an actor, its one zygote) runs two jobs at once; their
    correctness phases overlap and each timed comparison has the device to itself (the gate's log,
    written by the actor's zygote); a `cancel` of one of them (`ray.cancel` of its task, on a threaded
    actor) stops it alone."""
    log = tmp_path / "gate.jsonl"
    session = ServeSession(
        "--ray", "local", "--cpu-workers", "1", "--jobs-per-device", "2",
        env={"RAY_TMPDIR": ray_tmp, **CPU_TIMING, "XEFORGE_HARNESS_GATE_LOG": str(log)},
    )  # fmt: skip
    try:
        pool = session.request("ping")["pool"]
        assert pool["backend"] == "ray" and pool["kinds"]["cpu"] == 2 and pool["per_device"] == 2, pool
        timed = {"runs": 10, "warmup": 2}
        session.write({"id": "a", "command": "evaluate", "args": evaluate_args("adversarial/legit_add_block1024.py", **timed)})
        session.write({"id": "b", "command": "evaluate", "args": evaluate_args("adversarial/legit_add_num_warps.py", **timed)})
        replies = {r["id"]: r for r in (session.read(600), session.read(600))}
        for rid in ("a", "b"):
            assert replies[rid]["verdict"] == "correct", replies[rid].get("message")
            assert replies[rid]["pool"]["lane"] == "ray:cpu#0", replies[rid]["pool"]
        grants = gate_held(log)
        assert len({g["job"] for g in grants}) == 2, grants
        timing_alone(grants)
        shared = [g for g in grants if g["mode"] == "device"]
        assert any(overlap(x, y) for x in shared for y in shared if x["job"] != y["job"]), shared

        session.write({"id": "stop", "command": "evaluate", "args": evaluate_args("fixtures/add_sleepy.py", timeout=120)})
        session.write({"id": "keep", "command": "evaluate", "args": evaluate_args("adversarial/legit_add_block1024.py")})
        time.sleep(4.0)
        session.write({"id": "c", "command": "cancel", "args": {"id": "stop"}})
        replies = {r["id"]: r for r in (session.read(400), session.read(400), session.read(400))}
        assert replies["stop"].get("cancelled") is True, replies["stop"].get("message")
        assert replies["keep"]["verdict"] == "correct", replies["keep"].get("message")
    finally:
        session.close()
