"""A worker: one process that imports one side of a problem and runs it when the judge asks.

There are two per evaluation, forked by the judge before anything is imported:

- the **trusted** worker imports the original kernel file (and the reference, if any). It makes the
  inputs, computes the reference outputs, runs the original in the timed calls, and flushes L2.
- the **candidate** worker imports the candidate and nothing the judge relies on. It receives its
  inputs over the wire (or regenerates timed inputs from a seed) and sends back raw outputs. Nothing
  else it says is believed: its outputs are compared by the judge, its timed calls are clocked by the
  judge, and a digest of every timed call's outputs is checked against the trusted worker's.

Both run this same loop, so both sides of a timed pair pay the same protocol costs. A handler's
failure is a reply (`ok: false`), never a dead loop.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import importlib
import importlib.util
import os
import signal
import site
import socket
import sys
import sysconfig
import time
import traceback
import warnings
from collections.abc import Sequence
from typing import Any

import torch

from .. import wire
from ..spec import Spec, load_spec
from . import affinity, compile_meta, device, entry, guard, inputs, integrity, interpreter, loading, precompile, search_effects
from . import digest as digests
from .compare import aliased_inputs, changed_inputs, flatten, same_values
from .digest import weights as _weights

PR_SET_PDEATHSIG = 1
FLUSH_BYTES = 256 * 1024 * 1024  # larger than any current GPU's L2: zeroing it evicts everything


def start(role: str, sock: socket.socket, keep_fd: int, workdir: str, kind: str, preload: Sequence[str] = ()) -> None:
    """Runs in the freshly forked process; never returns. `preload`: modules the original imports,
    imported before a candidate gives up root (see `preload_installed`)."""
    code = 0
    try:
        _isolate(role, keep_fd, workdir, preload)
        Worker(role, sock, kind).loop()
    except BaseException:  # noqa: BLE001  (whatever happens, this process must end here)
        code = 70
    finally:
        os._exit(code)


def _isolate(role: str, keep_fd: int, workdir: str, preload: Sequence[str] = ()) -> None:
    # Only the socket to the judge stays open: no way back to the zygote or the other worker.
    os.closerange(3, keep_fd)
    os.closerange(keep_fd + 1, 65536)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if role == "candidate":
        os.setpgid(0, 0)  # its own group: the judge can stop or kill all of it at once
        inputs.forget_salt()  # forked from the judge: the checked seeds' secret is the judge's alone
    if os.environ.get("XEFORGE_HARNESS_PIN") == "1":
        _pin(role)
    os.makedirs(workdir, exist_ok=True)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    log = os.open(os.path.join(workdir, "output.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(devnull)
    sys.stdout = os.fdopen(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stdin = open(os.devnull, encoding="utf-8")
    # Where it was when the judge gave up on it: on SIGUSR1 every thread's Python stack goes into the
    # log (`Link.dump_stacks`), text for people beside a timeout, never read as a result.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    shared = os.environ.pop("XEFORGE_HARNESS_TRUSTED_CACHE", None)  # never visible to the candidate
    os.environ["TRITON_CACHE_DIR"] = shared if role == "trusted" and shared else os.path.join(workdir, "triton-cache")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(workdir, "inductor-cache")
    os.environ["HOME"] = workdir
    os.chdir(workdir)
    if role == "candidate":
        if sandbox_uid() is not None:
            preload_installed(preload)
        drop_privileges(workdir)


def _pin(role: str) -> None:
    """A knob for measuring the harness (`XEFORGE_HARNESS_PIN=1`): each side on a physical core of its own
    from the start (measured on an H200: it did not narrow intervals; see child/affinity.py)."""
    try:
        cores = affinity.physical_cores()
        if len(cores) >= 3:  # core 0 left to the judge and the system
            os.sched_setaffinity(0, {cores[1] if role == "trusted" else cores[2]})
    except (OSError, ValueError):
        pass


def sandbox_uid() -> int | None:
    """The user a candidate runs as when the harness runs as root (XEFORGE_HARNESS_SANDBOX_UID,
    default 65534 `nobody`; `off` keeps root). As root a candidate could read and write every other
    process's memory and descriptors; as another user it can reach none of the harness's."""
    if os.geteuid() != 0:
        return None
    value = os.environ.get("XEFORGE_HARNESS_SANDBOX_UID", "65534")
    return None if value == "off" else int(value)


def _installed_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots |= set(site.getsitepackages()) | {site.getusersitepackages()}
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)


def preload_installed(names: Sequence[str]) -> None:
    """Import, while still root, the installed modules (standard library, site-packages) that the
    original file imports. Under the sandbox user a module not yet imported must be read from disk,
    and a Python installed where only root can read (under /root, as pyenv and uv put it) would
    then not be found: `import pytest` failed with "No module named 'html'". Only installed code
    runs here: a name that resolves anywhere else (the user's folder, the working directory) is
    left for the candidate to import as itself, and a failure is left for it to meet too."""
    roots = _installed_roots()
    for name in names:
        if name in sys.modules:
            continue
        try:
            found = importlib.util.find_spec(name.partition(".")[0])
            where = found and (found.origin if found.has_location else None)
            if not where and found and found.submodule_search_locations:
                where = next(iter(found.submodule_search_locations), None)
            if where and os.path.realpath(where).startswith(roots):
                importlib.import_module(name)
        except BaseException:  # noqa: BLE001  (the candidate meets the same failure, as itself)
            pass


def give_to_sandbox(path: str) -> None:
    """Hand a directory tree the judge made to the sandbox user (a no-op unless running as root)."""
    uid = sandbox_uid()
    if uid is None:
        return
    for root, dirs, files in os.walk(path):
        for name in [root] + [os.path.join(root, f) for f in dirs + files]:
            os.chown(name, uid, uid)


def drop_privileges(workdir: str) -> None:
    uid = sandbox_uid()
    if uid is None:
        return
    give_to_sandbox(workdir)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


class Worker:
    def __init__(self, role: str, sock: socket.socket, kind: str):
        self.role = role
        self.sock = sock
        self.kind = kind
        self.dev = device.torch_device(kind)
        self.modules: dict[str, Any] = {}
        self.spec: Spec | None = None
        self.models: dict[str, Any] = {}
        self.batch: list[dict] = []
        self.flush_buf: torch.Tensor | None = None
        self.zero_us: float | None = None  # one zeroing of flush_buf on the device, measured on first use
        self.snapshot: integrity.Snapshot | None = None
        # The last checked call's outputs as returned, and copies taken then (`_overwrote`).
        # Earlier checked calls' outputs, and copies of them, newest last (`_overwrote`).
        self.last_outputs: list[tuple[list[torch.Tensor], list[torch.Tensor]]] = []

    def _overwrote(self, returned: Any) -> bool:
        """Whether this call changed a tensor an earlier checked call returned (a buffer kept and handed
        out again, or two handed out in turn: a caller's earlier result silently becomes a later one's);
        then hold this call's outputs, and copies of them, for the later calls to be checked against.
        The last `HELD_CALLS` calls are held."""
        changed = any(t.shape != c.shape or not same_values(t, c) for held, copies in self.last_outputs for t, c in zip(held, copies))
        tensors = [t for t in flatten(returned) if isinstance(t, torch.Tensor)]
        self.last_outputs = [*self.last_outputs, (tensors, [t.detach().clone() for t in tensors])][-HELD_CALLS:]
        return changed

    def loop(self) -> None:
        device.prepare(self.kind)
        warnings.filterwarnings("ignore", message=".*Profiler clears events.*")
        guard.install_launch_hooks()
        guard.install_host_hooks()
        if self.kind == "cpu":
            interpreter.install()
        else:
            if os.environ.get("XEFORGE_HARNESS_PRECOMPILE", "1") != "0":  # off: to measure what it saves
                precompile.install()
            try:  # both workers make their device context now, side by side, not one after the other later
                torch.empty(1, device=self.dev)
            except Exception:  # noqa: BLE001  (a broken device is reported by the first real request)
                pass
        # Outermost: it sees a call's search whole (see search_effects).
        search_effects.install(precompile.will_search, keep_once=self.role == "trusted")
        while True:
            try:
                msg, tensors = wire.recv(self.sock)
            except wire.Closed:
                return
            op = msg.get("op")
            if op == "quit":
                return
            search_effects.settle()  # outside any call's recording
            handler = getattr(self, f"op_{op}", None)
            try:
                if handler is None:
                    raise ValueError(f"unknown worker operation {op!r}")
                reply, out = handler(msg, tensors)
                reply = {"ok": True, **reply}
            except BaseException as e:  # noqa: BLE001  (SystemExit from user code is a failure too)
                reply, out = _failure(e), []
            try:
                wire.send(self.sock, reply, out)
            except wire.WireError as e:  # an output that cannot be described
                wire.send(self.sock, {"ok": False, "error": str(e), "kind": "wire"}, [])
            sys.stdout.flush()
            sys.stderr.flush()

    # --- loading -------------------------------------------------------------------------------

    def op_load(self, msg: dict, _t) -> tuple[dict, list]:
        if msg.get("spec"):
            self.spec = load_spec(msg["spec"])
        if self.role == "candidate":
            self.snapshot = integrity.Snapshot()
        for role, path in msg["files"].items():
            self.modules[role] = loading.import_file(path, role)
        found = {role: self._entry(role) is not None for role in self.modules}
        has_inputs = {role: hasattr(m, "get_inputs") for role, m in self.modules.items()}
        return {"has_model": found, "has_get_inputs": has_inputs}, []

    def _built_entry(self, role: str) -> entry.Entry:
        """The entry of a file that `load` found to have one (a file without one never gets here)."""
        found = self._entry(role)
        if found is None:
            raise RuntimeError(f"the {role} file has no entry to build")
        return found

    def _build(self, role: str, init_args: list, dtype: str | None):
        """One file's callable for a variant; with `backward: true`, outputs and input gradients."""
        built = entry.build(self._built_entry(role), self.modules[role], init_args, self.dev, dtype)
        return entry.Backward(built) if self.spec is not None and self.spec.backward else built

    def _entry(self, role: str) -> entry.Entry | None:
        """The problem's entry in one file. A reference file without the spec's entry may give a `Model`."""
        name = self.spec.entry if self.spec is not None else None
        found = entry.find(self.modules[role], name, allow_model_new=(role == "candidate"))
        if found is None and role == "reference" and name is not None:
            found = entry.find(self.modules[role], None)
        return found

    def _inputs_source(self):
        ref = self.modules.get("reference")
        if ref is not None and hasattr(ref, "get_inputs"):
            return ref
        if "original" not in self.modules and "inputs" in self.modules:
            return self.modules["inputs"]
        return self.modules["original"]

    # --- models --------------------------------------------------------------------------------

    def op_model(self, msg: dict, tensors) -> tuple[dict, list]:
        """Trusted: build the reference (and original) models of a variant, send init args and weights.
        Candidate: build its model from those init args and load those weights."""
        name, dtype = msg["variant"], msg.get("dtype")
        variant = self.spec.variant_by_name(name) if self.spec is not None and name != "default" else None
        if self.role == "trusted":
            init_args = (
                self.spec.init_args(variant)
                if self.spec is not None and variant is not None
                else inputs.file_init_args(self._inputs_source())
            )
            ref_role = "reference" if "reference" in self.modules else "original"
            ref = self._build(ref_role, init_args, dtype)
            orig = ref if ref_role == "original" else self._build("original", init_args, dtype)
            note = inputs.copy_weights(entry.weights_of(ref), entry.weights_of(orig)) if orig is not ref else None
            self.models[name] = (ref, orig)
            owner = entry.weights_of(ref)
            state = owner.state_dict() if owner is not None else {}
            out: list = []
            tree = wire.encode(list(init_args), out)
            names = sorted(state)
            weights = [state[k] for k in names]
            return {"init": tree, "n_init": len(out), "weights": names, "note": note}, out + weights
        n_init = msg["n_init"]
        init_args = wire.decode(msg["init"], tensors[:n_init])
        init_args = [a.to(self.dev) if isinstance(a, torch.Tensor) else a for a in init_args]
        model = self._build("candidate", init_args, dtype)
        note = None
        names, weights = msg.get("weights", []), tensors[n_init:]
        owner = entry.weights_of(model)
        if owner is not None and names:
            mine = owner.state_dict()
            if set(mine) == set(names) and all(mine[k].shape == w.shape for k, w in zip(names, weights)):
                owner.load_state_dict({k: w.to(self.dev) for k, w in zip(names, weights)})
            else:
                note = "parameters differ in name or shape from the reference; relying on seeded construction"
        self.models[name] = (model, model)
        return {"note": note}, []

    # --- checked calls -------------------------------------------------------------------------

    def op_reference(self, msg: dict, _t) -> tuple[dict, list]:
        """Trusted: the inputs of (variant, seed), the reference's outputs, what it ran."""
        name, seed = msg["variant"], msg["seed"]
        ref, orig = self.models[name]
        # A timed-only variant's inputs never leave this process (only their sizes do): drawn on the
        # device, as the timed batches' are, not on the CPU as a checked call's (shared with the judge).
        base = self._make_inputs(name, seed, on_device=bool(msg.get("summary")))
        scaled: list[tuple[int, float]] = []
        if msg.get("stress"):  # the range check's inputs (`evaluate._stress_reference`)
            variant = self.spec.variant_by_name(name) if self.spec is not None and name != "default" else None
            base, scaled = inputs.stressed(base, self.spec, variant)
        args = _laid_out(msg, inputs.clone_args(base))
        with torch.no_grad(), guard.Recording(self.kind) as rec, _filled_allocations(msg.get("fill")):
            out = ref(*args)
            device.synchronize(self.kind)
        report = rec.report()
        report["of"] = "reference" if orig is not ref else "original"
        if not msg.get("summary"):  # a timed-only variant's outputs are large, and never compared
            report["overwritten"] = self._overwrote(out)
        if orig is not ref and msg.get("record_original"):
            with torch.no_grad(), guard.Recording(self.kind) as rec_orig:
                orig(*_laid_out(msg, inputs.clone_args(base)))
                device.synchronize(self.kind)
            report = {**rec_orig.report(), "of": "original"}
        if msg.get("summary"):  # a timed-only variant: the judge needs its sizes, not its tensors
            return {"sizes": _sizes(base, out), "record": report}, []
        reply, tensors = self._call_reply(base, args, out, report)
        return {**reply, "sizes": _sizes(base, out), "scaled": scaled}, tensors

    def op_run(self, msg: dict, tensors) -> tuple[dict, list]:
        """Candidate: run the candidate's model on the judge's inputs."""
        model, _ = self.models[msg["variant"]]
        base = [t.to(self.dev) if isinstance(t, torch.Tensor) else t for t in wire.decode(msg["args"], tensors)]
        args = _laid_out(msg, inputs.clone_args(base))
        with (
            torch.no_grad(),
            precompile.searching(msg.get("search", True)),
            guard.Recording(self.kind) as rec,
            _filled_allocations(msg.get("fill")),
        ):
            out = model(*args)
            device.synchronize(self.kind)
            # Sealed while still recorded: what is sent is a copy taken here, so work done after the
            # recorders stop (a thread, a profile hook, a finaliser, a subclass's lazy `detach`) changes
            # nothing the judge reads, and work before this point is on the record.
            plain = _plain(out)
            alias = aliased_inputs(flatten(plain), args)
            out = _copied(plain)
            device.synchronize(self.kind)
        report = rec.report()
        report["overwritten"] = self._overwrote(plain)
        hooks = [n for n, h in (("sys.setprofile", sys.getprofile()), ("sys.settrace", sys.gettrace())) if h is not None]
        if hooks:
            sys.setprofile(None)
            sys.settrace(None)
            report["tampered"] = report["tampered"] + [f"left a hook that runs at every call: {', '.join(hooks)}"]
        rebound: list[str] = self.snapshot.changed() if self.snapshot is not None else []
        if rebound:
            shown = ", ".join(rebound[:6]) + (f" and {len(rebound) - 6} more" if len(rebound) > 6 else "")
            report["tampered"] = report["tampered"] + [f"rebound functions the checks rely on: {shown}"]
        return self._call_reply(base, args, out, report, send_inputs=False, alias=alias)  # the judge has them

    def _call_reply(
        self, base: list, args: list, out: Any, report: dict, send_inputs: bool = True, alias: dict | None = None
    ) -> tuple[dict, list]:
        ins: list = []
        outs: list = []
        tree_in = wire.encode(list(base), ins) if send_inputs else None
        tree_out = wire.encode(out, outs)  # indices of each tree count from 0 in its own list
        n_in, n_out = len(ins), len(outs)
        changed = changed_inputs(base, args)
        tensors = ins + outs + [args[i] for i in changed]
        alias = aliased_inputs(flatten(out), args) if alias is None else alias
        reply = {
            "inputs": tree_in,
            "n_inputs": n_in,
            "outputs": tree_out,
            "n_outputs": n_out,
            "changed": changed,
            "alias": {str(k): v for k, v in alias.items()},
            "record": report,
        }
        return reply, tensors

    def _import_inputs(self, msg: dict) -> None:
        """Without a spec the candidate makes inputs with the original's `get_inputs`, from a copy of
        that file the judge gave it (`inputs_file`), imported on first use."""
        if self.role == "candidate" and self.spec is None and "inputs" not in self.modules and msg.get("inputs_file"):
            self.modules["inputs"] = loading.import_file(msg["inputs_file"], "inputs")

    def _make_inputs(self, name: str, seed: int, on_device: bool) -> list:
        if self.spec is not None and name != "default":
            return inputs.spec_inputs(self.spec, self.spec.variant_by_name(name), seed, self.dev, on_device=on_device)
        if "inputs" not in self.modules and "original" not in self.modules:
            raise RuntimeError("no spec and no get_inputs() to make inputs from")
        return inputs.file_inputs(self._inputs_source(), seed, self.dev)

    def op_compile_meta(self, _msg, _t) -> tuple[dict, list]:
        if self.kind == "cpu":
            return {"configs": None}, []
        module = self.modules.get("candidate") or self.modules.get("original")
        if module is None:
            return {"configs": None}, []
        return {
            "configs": compile_meta.collect(module),
            "autotune_picks": compile_meta.picks(module),
            "autotune_timings": compile_meta.timings(module),
        }, []

    def op_searches(self, _msg, _t) -> tuple[dict, list]:
        """The autotune searches so far that left their arguments changed (search_effects)."""
        return {"changed": search_effects.findings()}, []

    def op_once(self, msg: dict, _t) -> tuple[dict, list]:
        """Candidate: one call on fresh device inputs of a variant, untimed and unchecked (its
        compiles and autotune searches keyed on that shape happen here, as in a warm-up)."""
        name = msg["variant"]
        self._import_inputs(msg)
        model, _ = self.models[name]
        with torch.no_grad():
            model(*self._make_inputs(name, msg["seed"], on_device=True))
        device.synchronize(self.kind)
        return {}, []

    # --- timed calls ---------------------------------------------------------------------------

    def op_prepare(self, msg: dict, _t) -> tuple[dict, list]:
        """Fresh inputs for each seed of the next batch, made here on the device (untimed)."""
        name = msg["variant"]
        self._import_inputs(msg)
        _, orig = self.models[name]
        keep = self.role == "trusted" and self.models[name][0] is not orig  # a separate reference re-runs them
        previous, self.batch = self.batch, []
        for k, (s, n) in enumerate(zip(msg["seeds"], msg["nonces"])):
            args = _reuse(previous[k]["args"] if k < len(previous) else None, self._make_inputs(name, s, on_device=True))
            self.batch.append(
                {
                    "args": args,
                    "nonce": n,
                    "pristine": inputs.clone_args(args) if keep else None,
                    "weights": [_weights(n + j, self.dev, numel) for j, numel in enumerate(msg.get("numels") or [])],
                    "scales": list(msg.get("scales") or []),
                }
            )
        self.tables = digests.Tables([item["weights"] for item in self.batch], list(msg.get("scales") or []), self.dev)
        device.synchronize(self.kind)
        return {}, []

    def op_go(self, msg: dict, _t) -> tuple[dict, list]:
        """The timed part: every call of the batch, then a digest of each call's outputs.

        The digests leave this process only once every output exists, so the judge's clock cannot
        stop before the work is done, whatever streams, threads or deferral the code used.
        """
        model, orig = self.models[msg["variant"]]
        fn = orig if self.role == "trusted" else model
        diag = _Diag(self.kind) if msg.get("diag") else None
        with torch.no_grad(), precompile.timed():
            if diag:
                diag.mark()
            issued = time.perf_counter()
            for item in self.batch:
                item["out"] = fn(*item["args"])
            issued = time.perf_counter() - issued
            if diag:
                diag.mark()
            # one launch per output dtype for the whole batch, one transfer back
            values = digests_of(self.batch, self.tables)
            # Work on other streams that no output depends on (queued by the code, or left running
            # on purpose) finishes inside this request too: a process stopped while the other side is
            # timed stops issuing, but its queued device work would run on beside that side's batch.
            device.synchronize(self.kind)
        reply: dict = {"digests": values}
        if self.role == "trusted":
            # The original's launch issue, on this process's clock (the trusted side only: what the
            # judge reads as a fact about the original, never the candidate's account of itself).
            reply["issue_us"] = issued * 1e6
        if diag:
            reply["diag"] = diag.read()
        return reply, []

    def op_redigest(self, _msg, _t) -> tuple[dict, list]:
        """Trusted: the timed call's own cost without any call in it (digests of the outputs it has)."""
        with torch.no_grad():
            values = digests_of(self.batch, self.tables)
            device.synchronize(self.kind)  # as `go` ends, so the overhead taken off covers it
            return {"digests": values}, []

    def op_warm(self, msg: dict, _t) -> tuple[dict, list]:
        model, orig = self.models[msg["variant"]]
        fn = orig if self.role == "trusted" else model
        out = None
        with torch.no_grad():
            for _ in range(msg["n"]):
                for item in self.batch:
                    out = fn(*inputs.clone_args(item["args"]))
            if out is not None:  # the digest's own kernels compile here, not in the first timed call
                digests.batch([flatten(out)] + [[] for _ in self.batch[1:]], self.tables)
        device.synchronize(self.kind)
        return {}, []

    def op_bounds(self, msg: dict, _t) -> tuple[dict, list]:
        """Trusted, after a batch: the reference's digests, and how far an allclose output's may drift.

        Without a separate reference the original's timed outputs are the reference outputs, and the
        digests its `go` answered are the reference digests (`null` here: not computed twice); with
        one, the reference runs now (untimed) on pristine copies of the same inputs.
        """
        ref, orig = self.models[msg["variant"]]
        refs = []
        with torch.no_grad():
            for item in self.batch:
                out = item["out"] if ref is orig else ref(*item["pristine"])
                refs.append(flatten(out))
        return {
            "digests": None if ref is orig else digests.batch(refs, self.tables),
            "bounds": digests.bounds(refs, msg.get("rtol"), msg.get("atol"), [item["scales"] for item in self.batch]),
        }, []

    def op_outputs(self, msg: dict, _t) -> tuple[dict, list]:
        """The full outputs of one call of the last batch (the reference's, on the trusted side)."""
        item = self.batch[msg["index"]]
        out = item["out"]
        if self.role == "trusted" and item["pristine"] is not None:
            ref, _ = self.models[msg["variant"]]
            with torch.no_grad():
                out = ref(*inputs.clone_args(item["pristine"]))
        tensors: list = []
        tree = wire.encode(out, tensors)
        return {"outputs": tree}, tensors

    def op_describe(self, _msg, _t) -> tuple[dict, list]:
        device.resolve(self.kind)  # DeviceError: "no such device"
        return {"device": device.describe(self.kind), "memory": device.memory_bytes(self.kind)}, []

    def op_flush(self, _msg, _t) -> tuple[dict, list]:
        """Trusted: evict L2 (shared by every process on the device) before the next timed call."""
        if self.kind == "cpu":
            return {}, []
        if self.flush_buf is None:
            self.flush_buf = torch.empty(FLUSH_BYTES, dtype=torch.int8, device=self.dev)
        buf: torch.Tensor = self.flush_buf
        buf.zero_()
        preroll = float(_msg.get("preroll_us") or 0)
        if preroll > 0:
            # Keep the device busy a while before the timed batch, so that it starts at the clocks a
            # busy device runs at whichever side is timed (an idle one is clocked down, see timing.py).
            if self.zero_us is None:
                self.zero_us = max(1.0, _device_us(self.kind, buf.zero_))
            for _ in range(min(10_000, int(preroll / self.zero_us))):
                buf.zero_()
        device.synchronize(self.kind)
        return {}, []

    def op_touch(self, _msg, _t) -> tuple[dict, list]:
        """A tiny device operation, so the device last ran this process's context.

        Before the original's timed call the candidate's worker touches the device (the trusted
        worker just flushed L2), so both sides of a pair start with the same context switch.
        """
        torch.zeros(1, device=self.dev).add_(1)
        device.synchronize(self.kind)
        return {}, []


def _event(kind: str):
    return getattr(torch, kind).Event(enable_timing=True)


def _device_us(kind: str, fn) -> float:
    """Device time of `fn`'s work, by the device's own events (trusted side only)."""
    start, end = _event(kind), _event(kind)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000.0


class _Diag:
    """For measuring the harness itself (`XEFORGE_HARNESS_DIAG=1` on the judge): where a timed batch's
    time goes in this process, by its own clocks. Never read as a result: a candidate could say anything."""

    def __init__(self, kind: str):
        self.kind = kind
        self.events = [_event(kind), _event(kind)] if kind in ("cuda", "xpu") else []
        self.wall: list[float] = []

    def mark(self) -> None:
        if self.events:
            self.events[len(self.wall)].record()
        self.wall.append(time.perf_counter())

    def read(self) -> dict:
        done = time.perf_counter()
        out = {"issue_us": (self.wall[1] - self.wall[0]) * 1e6, "digest_us": (done - self.wall[1]) * 1e6}
        if self.events:
            self.events[1].synchronize()
            out["calls_gpu_us"] = self.events[0].elapsed_time(self.events[1]) * 1000.0
        return out


# Earlier calls whose outputs a call must leave as they were (a ring of more buffers than this is
# handed out rarely enough that a caller would notice less, and holds more of the device's memory).
HELD_CALLS = 4


def _laid_out(msg: dict, args: list) -> list:
    """The call's arguments, in other memory layouts where the layout check asks (`inputs.relaid`)."""
    return inputs.relaid(args) if msg.get("layout") else args


@contextlib.contextmanager
def _filled_allocations(value: float | None):
    """With `value`, every `torch.empty*` in the block comes back filled with it: two calls of a
    deterministic original with different fills agree only if it writes every element it returns
    (`evaluate._edge_reference`), and a candidate that relies on what a fresh allocation holds (an
    accumulator from `torch.empty`) fails where the original was shown not to (`_check_edge`).
    Without, nothing changes."""
    if value is None:
        yield
        return
    names = ("empty", "empty_like", "empty_strided")
    saved = {n: getattr(torch, n) for n in names}
    new_empty = torch.Tensor.new_empty

    def filled(make):
        def call(*args, **kwargs):
            t = make(*args, **kwargs)
            return t if t.dtype.is_complex else t.fill_(value)

        return call

    try:
        for n in names:
            setattr(torch, n, filled(saved[n]))
        torch.Tensor.new_empty = filled(new_empty)  # type: ignore[method-assign]
        yield
    finally:
        for n in names:
            setattr(torch, n, saved[n])
        torch.Tensor.new_empty = new_empty  # type: ignore[method-assign]


def _plain(value: Any) -> Any:
    """`value` with only exact tensors, tuples, lists, str-keyed dicts and Python scalars left; anything
    else (a tensor subclass, a container of a class of its own) becomes a `wire.Foreign`, so none of
    its methods runs from here on. Only `type()` and `isinstance` are asked of it."""
    if isinstance(value, torch.Tensor):
        if type(value) is torch.Tensor:
            return value
        if type(value) is torch.nn.Parameter:
            return torch.Tensor.detach(value)
        return wire.Foreign(f"tensor subclass {type(value).__name__}")
    if type(value) is tuple:
        return tuple(_plain(v) for v in value)
    if type(value) is list:
        return [_plain(v) for v in value]
    if type(value) is dict and all(type(k) is str for k in value):
        return {k: _plain(v) for k, v in value.items()}
    if value is None or type(value) in (bool, int, float, str):
        return value
    return wire.Foreign(type(value).__name__)


def _copied(value: Any) -> Any:
    """A `_plain` tree with every tensor copied into memory of its own."""
    if type(value) is torch.Tensor:
        return torch.Tensor.clone(value)
    if type(value) is tuple:
        return tuple(_copied(v) for v in value)
    if type(value) is list:
        return [_copied(v) for v in value]
    if type(value) is dict:
        return {k: _copied(v) for k, v in value.items()}
    return value


def _sizes(base: list, out: Any) -> dict:
    """What the judge's timing needs of a reference call, computed here on the device."""
    ins = [t for t in flatten(base) if isinstance(t, torch.Tensor)]
    outs = [t for t in flatten(out) if isinstance(t, torch.Tensor)]
    return {
        "input_numel": sum(t.numel() for t in ins),
        "bytes": sum(t.numel() * t.element_size() for t in ins + outs),
        "outputs": [t.numel() * (2 if t.is_complex() else 1) for t in outs],
        "scales": digests.output_scales(outs),
    }


def digests_of(batch: list, tables) -> list:
    return digests.batch([flatten(item["out"]) for item in batch], tables)


def _reuse(old: list | None, new: list) -> list:
    """New contents in the previous call's tensors where shapes allow: the same buffers and the same
    Python objects carry different values, so a cache keyed by pointer or identity returns stale outputs."""
    if old is None or len(old) != len(new):
        return new
    out = []
    for o, n in zip(old, new):
        if (
            isinstance(o, torch.Tensor)
            and isinstance(n, torch.Tensor)
            and o.shape == n.shape
            and o.dtype == n.dtype
            and o.stride() == n.stride()
        ):
            o.copy_(n)
            out.append(o)
        else:
            out.append(n)
    return out


def is_compile_failure(e: BaseException) -> bool:
    try:
        from triton.compiler.errors import CompilationError
        from triton.runtime.errors import OutOfResources, PTXASError
    except ImportError:  # older Triton layouts: fall back to names
        return type(e).__name__ in {"CompilationError", "OutOfResources", "PTXASError"}
    return isinstance(e, (CompilationError, OutOfResources, PTXASError))


def _failure(e: BaseException) -> dict:
    kind = "compile" if is_compile_failure(e) else "oom" if isinstance(e, torch.OutOfMemoryError) else "raise"
    if isinstance(e, SyntaxError):
        kind = "syntax"
        where = f"line {e.lineno}" + (f", column {e.offset}" if e.offset else "")
        return {"ok": False, "kind": kind, "error": f"syntax error at {where}: {e.msg}", "trace": traceback.format_exc()}
    text = f"{type(e).__name__}: {e}".strip()
    return {"ok": False, "kind": kind, "error": text if len(text) < 600 else text[:600] + "…", "trace": traceback.format_exc()}
