"""The Ray backend: the lanes of `pool.Workers`, as Ray actors spread over a cluster.

`serve --ray ADDRESS` (and `evaluate`/`sweep`/`probe --ray`) use it in place of the local lanes. Each
lane is an actor that owns one warm zygote (`pool.Zygote`), so a job on a Ray node runs exactly the
machinery it runs locally: the zygote forks a judge that never imports the candidate, the judge forks
the trusted and the candidate worker. Ray only carries the job to a lane and its result back.

- A GPU lane asks Ray for `num_gpus=1`: Ray's accelerator managers pin the actor's process (and so
  its zygote and every process it forks) to that one device with CUDA_VISIBLE_DEVICES (NVIDIA) or
  ZE_AFFINITY_MASK (Intel), the variables the local lanes set. There is one GPU lane per GPU of
  the cluster; a lane runs up to `jobs_per_device` jobs at once (threads of the actor, default 1),
  and its zygote's gate times one candidate at a time on its device with nothing else there, as
  locally (`gate.py`).
- A CPU lane (the Triton interpreter) asks for `num_cpus=1`; `cpu_workers` of them.
- Files travel with the job: the submitting side reads every file the job names and sends the bytes;
  the actor writes them into a private directory of its node and puts the submitting side's paths
  back into the result. No path of the submitting machine is read on a node.
- A lane lost while it runs a job (its actor or node died: Ray raises `RayActorError`,
  `WorkerCrashedError`, `NodeDiedError`, `ObjectLostError`, ...) is not a verdict on the candidate:
  the job runs once more on another lane and the result says so in `pool` (`retried`, `lost`).
  A candidate that crashes its own process gets `crashed` from the judge, as locally: that is a
  verdict, and is never retried. Lost twice: an `error` result (no verdict), with both losses.
- Cancellation: a job's task is cancelled with `ray.cancel`; the actor polls the flag and tells its
  zygote to stop the job (its processes killed). A `serve` that dies takes its actors with it (Ray
  ends the actors of a driver that exits), and a zygote whose parent is gone stops its job.
- A `ray://` address (or `auto` with such a RAY_ADDRESS) goes through Ray Client: `ray.init` connects
  to the head's client server and the same API runs there. It needs the `ray[client]` extra (grpcio);
  without it the backend is unavailable with the `pip install` that fixes it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from typing import Any

from . import files
from . import protocol as P
from .pool import Cancelled, Slots, again_alone, mark_device, pool_report

# The arguments of a job that name files (pool jobs are built by `service` with every path resolved).
_FILE_ARGS = ("kernel", "candidate", "spec", "reference")
_STARTUP_S = 600.0  # an actor's start: Ray schedules it, the zygote imports torch and triton
_GRACE_S = 60.0  # beyond the job's own limit (the zygote's and the pool's grace periods, the transfer)
# A local cluster this process starts (`--ray local`, or `auto` with none to join) stays small:
# no dashboard, the smallest object store Ray allows (jobs move kilobytes of JSON and source).
_OBJECT_STORE_BYTES = 80 * 1024 * 1024
_CANCEL_POLL_S = 0.25  # how often a waiting job asks whether its client cancelled it


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached."""


class LaneActor:
    """What runs in each Ray actor: one warm zygote, one job at a time (wrapped by `ray.remote`)."""

    def __init__(self, kind: str, python: str | None = None):
        from .pool import Zygote

        self.kind = kind
        self.zygote = Zygote(interpret=kind == "cpu", python=python)

    def start(self) -> dict:
        import ray

        ctx = ray.get_runtime_context()
        info = dict(self.zygote.start())
        gpus = ctx.get_accelerator_ids().get("GPU") or []
        info.update(node=ctx.get_node_id(), actor_pid=os.getpid(), gpu=gpus[0] if gpus else None)
        return info

    def run(self, job: dict, shipped: dict) -> dict:
        import ray

        ctx = ray.get_runtime_context()
        folder = tempfile.mkdtemp(prefix="xeforge-ray-job-")
        try:
            placed, back = _place(job, shipped, folder)
            result = self.zygote.run(placed, cancelled=ctx.is_canceled)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        result = files.unplace(result, back)
        gpus = ctx.get_accelerator_ids().get("GPU") or []
        if gpus and isinstance(result, dict):
            mark_device(result, str(gpus[0]))
        return result

    def pid(self) -> dict:
        """The actor's and its zygote's process ids (tests kill one to see a lane lost)."""
        proc = self.zygote.proc
        return {"actor": os.getpid(), "zygote": proc.pid if proc is not None else None}


def _ship(job: dict) -> dict:
    """Every file the job names, read here: {path: bytes}. The job itself keeps the paths (they are
    its names); the actor replaces them with copies on its node."""
    args = job.get("args") or {}
    paths = [args.get(k) for k in _FILE_ARGS] + list(args.get("candidates") or [])
    out = {}
    for path in paths:
        if isinstance(path, str) and path and path not in out:
            with open(path, "rb") as f:
                out[path] = f.read()
    return out


def _place(job: dict, shipped: dict, folder: str) -> tuple[dict, dict]:
    """The job with each shipped file written under `folder` (0700, one subdirectory per file, the
    file's own name kept: a kernel imports as itself) and its path replaced; and {copy: original}."""
    os.chmod(folder, 0o700)
    copies: dict[str, str] = {}
    for i, (original, data) in enumerate(shipped.items()):
        sub = os.path.join(folder, str(i))
        os.mkdir(sub, 0o700)
        path = os.path.join(sub, os.path.basename(original) or "file")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        copies[original] = path
    args = dict(job.get("args") or {})
    for key in _FILE_ARGS:
        if isinstance(args.get(key), str) and args[key] in copies:
            args[key] = copies[args[key]]
    if isinstance(args.get("candidates"), list):
        args["candidates"] = [copies.get(c, c) for c in args["candidates"]]
    return {**job, "args": args}, {copy: original for original, copy in copies.items()}


class Lane:
    """One actor and its name; `info` is what its start reported."""

    def __init__(self, name: str, actor: Any):
        self.name = name
        self.actor = actor
        self.info: dict = {}


class RayWorkers:
    """The `pool.Backend` over a Ray cluster: one lane (actor) per GPU of the cluster, or
    `cpu_workers` interpreter lanes; each runs up to `jobs_per_device` jobs at once, a job on one
    lane from start to end."""

    def __init__(self, address: str = "auto", cpu_workers: int = 1, python: str | None = None, jobs_per_device: int = 1):
        try:
            import ray
        except ImportError as e:
            raise RayUnavailable(f"--ray needs the `ray` package in the harness's environment (pip install ray): {e}") from e
        self._ray = ray
        self.address = address
        self.cpu_workers = max(1, cpu_workers)
        self.jobs_per_device = max(1, jobs_per_device)
        self.python = python
        self._lock = threading.Lock()
        self._lanes: dict[str, list[Lane]] = {}
        self._slots: dict[str, Slots] = {}
        self._auto: str | None = None
        self._running: dict[int, Any] = {}  # id(thread) → the task it waits for (cancelled on close)
        self._connect()

    def _connect(self) -> None:
        ray = self._ray
        kwargs: dict[str, Any] = {
            "log_to_driver": False,
            "logging_level": "warning",
            # The harness's code travels to every node with the job (a node needs torch and triton).
            "runtime_env": {"py_modules": [os.path.dirname(os.path.abspath(__file__))]},
        }
        address = None if self.address in ("", "auto") else self.address
        # `auto` follows RAY_ADDRESS, which may name a Ray Client address too.
        client = is_client_address(address or os.environ.get("RAY_ADDRESS", ""))
        if client:
            # Ray Client: this process drives the cluster through its head's client server (`ray start
            # --head` runs one on port 10001); the cluster is the head's, and its dashboard too.
            missing = client_extra_missing()
            if missing:
                raise RayUnavailable(missing)
        else:
            kwargs["include_dashboard"] = False
        if address == "local" or (address is None and not client and not _cluster_to_join()):
            # A private cluster for this process: as many CPUs as CPU lanes, nothing else.
            kwargs.update(num_cpus=self.cpu_workers, object_store_memory=_OBJECT_STORE_BYTES)
            address = "local"
        try:
            ray.init(address=address, **kwargs)
        except Exception as e:  # noqa: BLE001  (Ray raises many kinds; each is "no cluster")
            hint = (
                " (Ray Client: the head must run a client server, `ray start --head --ray-client-server-port=10001`, and the"
                " same Ray and Python versions as this side)"
                if client
                else ""
            )
            raise RayUnavailable(f"cannot reach the Ray cluster {self.address!r}: {type(e).__name__}: {e}{hint}") from e

    # --- lanes ------------------------------------------------------------------------------------

    def _group(self, kind: str) -> str:
        return "cpu" if kind == "cpu" else "gpu"  # cuda and xpu are both Ray "GPU"s

    def _slots_for(self, kind: str) -> Slots:
        group = self._group(kind)
        with self._lock:
            if group not in self._slots:
                lanes = self._make_lanes(group)
                self._lanes[group] = lanes
                self._slots[group] = Slots(lanes, self.jobs_per_device)
            return self._slots[group]

    def _make_lanes(self, group: str) -> list[Lane]:
        ray = self._ray
        if group == "cpu":
            count, options = self.cpu_workers, {"num_cpus": 1}
        else:
            count, options = int(ray.cluster_resources().get("GPU", 0)), {"num_gpus": 1, "num_cpus": 0}
        remote = ray.remote(LaneActor).options(
            # A lane whose actor or node dies is started again (where Ray finds room); the job it ran
            # is retried by `run`, not by Ray, so that the retry is reported.
            max_restarts=-1,
            max_task_retries=0,
            max_concurrency=self.jobs_per_device,  # its jobs share its device under its zygote's gate
            **options,
        )
        lanes = [Lane(f"ray:{group}#{i}", remote.remote(group, self.python)) for i in range(count)]
        starts = [lane.actor.start.remote() for lane in lanes]
        for lane, ref in zip(lanes, starts):
            try:
                lane.info = ray.get(ref, timeout=_STARTUP_S)
            except Exception as e:  # noqa: BLE001
                lane.info = {"ready": False, "error": f"{type(e).__name__}: {e}"}
        return lanes

    def warm(self, kind: str) -> None:
        self._slots_for(kind)

    def resolve(self, requested: str) -> tuple[str | None, dict | None]:
        """`auto`: `cpu` on a cluster without GPUs, else what a GPU lane's probe finds (cuda, xpu)."""
        if requested != "auto":
            return requested, None
        with self._lock:
            if self._auto is not None:
                return self._auto, None
        if not self._ray.cluster_resources().get("GPU"):
            kind = "cpu"
        else:
            reply = self.run("cuda", {"kind": "probe", "args": {"device": "auto"}, "timeout": 120})
            found: str | None = (reply.get("device") or {}).get("kind")
            if found is None:
                return None, reply
            kind = found
        with self._lock:
            self._auto = kind
        return kind, None

    # --- jobs -------------------------------------------------------------------------------------

    def run(self, kind: str, job: dict, cancelled: Cancelled | None = None) -> dict:
        slots = self._slots_for(kind)
        count = len(slots.lanes)
        if count == 0:
            return P.error_result(f"the Ray cluster {self.address!r} has no GPU for a {kind} job", field="device")
        try:
            shipped = _ship(job)
        except OSError as e:
            return P.error_result(f"cannot read a file of the job to send it to the Ray cluster: {e}")
        result = self._run(slots, count, job, shipped, cancelled)

        def alone(lane: Lane, one: dict) -> dict:
            return _with_pool(self._attempt(lane, one, shipped, [], cancelled), lane, [])

        return again_alone(slots, job, result, alone, cancelled)

    def _run(self, slots: Slots, count: int, job: dict, shipped: dict, cancelled: Cancelled | None) -> dict:
        lane = slots.take(cancelled)
        if lane is None:
            return P.cancelled_result(job.get("kind"), "the client cancelled the job before a lane was free")
        lost: list[dict] = []
        job = {**job, "slots": self.jobs_per_device}
        try:
            result = self._attempt(lane, job, shipped, lost, cancelled)
            if not lost or (cancelled is not None and cancelled()):
                return _with_pool(result, lane, lost)
            # The lane was lost mid-job: once more on another lane (the same one, restarted by Ray,
            # when it is the only one), and the loss is reported with the result.
            retry = lane if count == 1 else slots.take(cancelled, avoid=lane)
            if retry is None:
                return _with_pool(P.cancelled_result(job.get("kind"), "the client cancelled the job before its retry"), lane, lost)
            try:
                result = self._attempt(retry, job, shipped, lost, cancelled)
            finally:
                if retry is not lane:
                    slots.give(retry)
            if len(lost) > 1:
                result = P.error_result(
                    "the Ray lanes running this job were lost twice; no verdict: " + "; ".join(x["error"] for x in lost)
                )
                if job.get("kind") == "sweep":
                    result = P.sweep_failed(result)
            return _with_pool(result, retry, lost)
        finally:
            slots.give(lane)

    def _attempt(self, lane: Lane, job: dict, shipped: dict, lost: list[dict], cancelled: Cancelled | None = None) -> dict:
        """One try on `lane`: its result, or (lane lost) an `error` result with the loss appended."""
        ray = self._ray
        from ray import exceptions as rx

        # A job that shares its device may wait for the other jobs' timed comparisons (its zygote does not
        # count that against it): up to its share of the lane's time.
        limit = (float(job.get("timeout", P.DEFAULT_TIMEOUT_S)) + _GRACE_S) * self.jobs_per_device + _STARTUP_S
        ref = lane.actor.run.remote(job, shipped)
        me = threading.get_ident()
        with self._lock:
            self._running[me] = ref
        try:
            return self._wait(ref, limit, cancelled)
        except rx.TaskCancelledError:
            return P.error_result("cancelled: the Ray task was cancelled", cancelled=True)
        except rx.GetTimeoutError:
            ray.cancel(ref)
            return P.error_result(f"the Ray lane {lane.name} did not answer within {limit:g} s")
        except rx.RayTaskError as e:  # the lane's own code raised: a harness bug, not a lost worker
            return P.error_result(f"the Ray lane {lane.name} failed: {e}")
        except (rx.RayActorError, rx.WorkerCrashedError, rx.NodeDiedError, rx.ObjectLostError, rx.OwnerDiedError) as e:
            what = f"{lane.name} on node {str(lane.info.get('node') or '?')[:12]}: {type(e).__name__}"
            lost.append({"lane": lane.name, "node": lane.info.get("node"), "error": what})
            return P.error_result(f"the Ray lane was lost: {what}")
        finally:
            with self._lock:
                self._running.pop(me, None)

    def _wait(self, ref: Any, limit: float, cancelled: Cancelled | None) -> Any:
        """`ray.get(ref, timeout=limit)`, but the task is cancelled (`ray.cancel`: the actor sees it and
        stops its zygote's job) once `cancelled` says so; what the task then answers is returned."""
        if cancelled is None:
            return self._ray.get(ref, timeout=limit)
        deadline = time.monotonic() + limit
        while not cancelled():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            ready, _ = self._ray.wait([ref], timeout=min(remaining, _CANCEL_POLL_S))
            if ready:
                return self._ray.get(ref)
        else:
            self._ray.cancel(ref)
        return self._ray.get(ref, timeout=max(0.0, deadline - time.monotonic()))

    def cancel_all(self) -> None:
        """`ray.cancel` every task a request is waiting for (serve's end, a cancelled client)."""
        with self._lock:
            refs = list(self._running.values())
        for ref in refs:
            try:
                self._ray.cancel(ref)
            except Exception:  # noqa: BLE001  (already done, or the cluster is gone)
                pass

    def info(self) -> dict:
        with self._lock:
            lanes = [lane for group in self._lanes.values() for lane in group]
        return {lane.name: {**lane.info, "backend": "ray"} for lane in lanes} or {"ray": {"address": self.address, "backend": "ray"}}

    def pool(self) -> dict:
        """Ray's slots: `cpu_workers` interpreter lanes, and one GPU lane per GPU of the cluster (Ray
        counts Intel and NVIDIA GPUs alike, so both kinds get the count), each `jobs_per_device` jobs."""
        try:
            gpus = int(self._ray.cluster_resources().get("GPU", 0))
        except Exception:  # noqa: BLE001  (the cluster is gone: the jobs will say so)
            gpus = 0
        devices = {"cpu": self.cpu_workers, **({"cuda": gpus, "xpu": gpus} if gpus else {})}
        return pool_report("ray", self._auto, devices, self.jobs_per_device)

    def lanes(self, kind: str) -> list[Lane]:
        self._slots_for(kind)
        return list(self._lanes[self._group(kind)])

    def close(self) -> None:
        self.cancel_all()
        with self._lock:
            lanes = [lane for group in self._lanes.values() for lane in group]
            self._lanes.clear()
            self._slots.clear()
        for lane in lanes:
            try:
                self._ray.kill(lane.actor, no_restart=True)
            except Exception:  # noqa: BLE001
                pass
        try:
            self._ray.shutdown()
        except Exception:  # noqa: BLE001
            pass

    def __enter__(self) -> RayWorkers:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _with_pool(result: dict, lane: Lane, lost: list[dict]) -> dict:
    """The result with `pool`: where it ran, and each lane lost on the way (never a verdict)."""
    if isinstance(result, dict):
        pool: dict[str, Any] = {"backend": "ray", "lane": lane.name, "node": lane.info.get("node"), "retried": min(len(lost), 1)}
        if lost:
            pool["lost"] = lost
        result["pool"] = pool
    return result


def is_client_address(address: str | None) -> bool:
    """A Ray Client address (`ray://host:10001`): reached through the head's client server."""
    return bool(address) and str(address).strip().lower().startswith("ray://")


def client_extra_missing() -> str | None:
    """Why a `ray://` address cannot be used here, or None: Ray Client needs the `ray[client]` extra
    (grpcio), which the plain `ray` package leaves out."""
    import importlib.util

    try:
        found = importlib.util.find_spec("grpc") is not None
    except (ImportError, ValueError):
        found = False
    if found:
        return None
    try:
        import ray

        version = f"=={ray.__version__}"
    except ImportError:
        version = ""
    return (
        "a ray:// address connects through Ray Client, which needs the `ray[client]` extra (grpcio) in the "
        f'harness\'s environment: pip install "ray[client]{version}"'
    )


def _cluster_to_join() -> bool:
    """Whether `ray.init()` would join a cluster rather than start one: RAY_ADDRESS is set, or a
    cluster started with `ray start` on this machine left its address file (Ray's own lookup)."""
    if os.environ.get("RAY_ADDRESS"):
        return True
    try:
        from ray._private.services import find_bootstrap_address  # Ray's own lookup for address=None

        return bool(find_bootstrap_address(None))
    except Exception:  # noqa: BLE001  (a private API: when it moves, assume none, start our own)
        return False
