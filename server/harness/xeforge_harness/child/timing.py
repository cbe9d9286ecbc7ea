"""GPU timing of original vs candidate, clocked by the judge, in two separate worker processes.

Why this shape: anything inside the candidate's process (events, timers, `synchronize`, the
autotuner's benchmark, the harness's own code there) can be patched by the candidate, so nothing
measured there is believed. The judge's own monotonic clock brackets one `go` request per timed
batch; the worker answers only with a digest of every call's outputs (a random projection whose
weights come from a nonce per call), so the answer cannot leave before the work it proves is done,
whatever streams, graphs, threads or deferral the candidate used. Each batch gets fresh inputs
(new random seeds, drawn by the judge after the previous batch), so caching by pointer, shape or
value gains nothing; every digest is checked against the trusted worker's, and the full outputs of a
random sample of calls are compared too.

Around each timed call: both workers make the batch's inputs (untimed), the trusted worker zeroes a
256 MiB buffer (L2 is shared by every process on the device, so this flushes the candidate's lines
too), then the judge times `go`. While the original is timed, the candidate's whole process group is
stopped (SIGSTOP), so no thread of it can queue work or load the CPU beside the original. The
original's calls are first timed alone, before the candidate is imported anywhere ("solo"); if they
run more than INTERFERENCE slower beside the candidate, the timing is declared not meaningful. A stop
or continue of the trusted worker that the judge did not send rejects the candidate.

Batches: one request costs a round trip (~0.1 ms) and the batch's digests on both sides alike; a
batch of B calls of distinct inputs (B from the original's marginal cost per call, so a batch lasts
about TARGET_BATCH_US, within the device's memory) keeps that cost small beside short kernels, and
what remains (timed on the trusted side before the candidate exists: a request with the digests
and no calls) is taken off both sides, so it neither pulls ratios towards 1 nor widens them. Pairs alternate order (A B, B A, ...); the speedup is the
median of per-pair ratios with an order-statistic 95% interval, widened by RESOLUTION.
"""

from __future__ import annotations

import os
import random
import time

from .. import wire
from ..stats import median, median_ci
from . import affinity
from .compare import compare_one, default_tolerance, flatten
from .link import stray_processes

FASTER = 1.02  # the interval's lower end must clear this for "faster"
RESOLUTION = 0.005  # systematic floor: ratios within ±0.5% of each other are not told apart
TARGET_BATCH_US = float(os.environ.get("XEFORGE_HARNESS_BATCH_US", "20000"))
MAX_BATCH = int(os.environ.get("XEFORGE_HARNESS_MAX_BATCH", "256"))
# Inputs and outputs of one batch, COPIES times one call's (room for the trusted worker's pristine
# inputs and the candidate's temporaries), per worker: a quarter of the device's memory (two workers
# hold batches, and the candidate needs room of its own), 8 GiB where the device does not say. Short
# kernels need many calls in a batch for the request's own cost, and its noise, to vanish: on an H100
# a memory-bound batch's spread on the judge's clock went from 2.3% to 1.0% with 1.5 instead of 3 (71
# calls of vector_add instead of 35; tests/harness/gpu-results/2026-12-06b-h100-batch).
BATCH_SHARE = 4
COPIES = 1.5
BATCH_BYTES = int(os.environ.get("XEFORGE_HARNESS_BATCH_BYTES", "0")) or None
SOLO_RUNS = 15
OVERHEAD_RUNS = 9
NET_FLOOR = 0.05
PROBE_CALLS = 4
TARGET_CALLS_IN_ONE = 64  # a call costs at least a 64th of a whole one-call request (a floor against a noisy probe)
INTERFERENCE = 1.5  # gross interference only: solo and interleaved medians differ by up to ~35% on a shared VM
FULL_CHECK_EVERY = 8  # on average one batch in this many gets a full output comparison

_rng = random.SystemRandom()
PREPARE_SLACK = 1.25  # the candidate's input-making may take this much longer than the trusted's, free
PREPARE_FLOOR_US = 300.0
PREPARE_WORK = 0.25  # extra input-making time, as a share of the candidate's batch time, that rejects it
# `median`: the median excess input-making time is added to every candidate batch; `sample`: each
# batch its own (kept for measurement: it widens intervals, see the harness README).
CHARGE = os.environ.get("XEFORGE_HARNESS_CHARGE", "median")
PAUSE = os.environ.get("XEFORGE_HARNESS_PAUSE", "1") == "1"
# Pairs beyond `--runs` for an undecided, wide interval (see `_planned_runs`): off by default. On an
# H200 (2026-12-05, tests/harness/gpu-results/2026-12-05-h200) 30-75 more pairs narrowed self-vs-self
# intervals of short kernels by 5-12% only: their noise comes in regimes lasting tens of pairs, not
# independently per pair, so more pairs do not shrink it as 1/sqrt(n). Kept as a knob for measurement.
EXTEND = float(os.environ.get("XEFORGE_HARNESS_EXTEND", "1"))
EXTEND_S = float(os.environ.get("XEFORGE_HARNESS_EXTEND_S", "20"))
EXTEND_WIDTH = 0.02
# Device work (µs, zeroing the flush buffer) before every timed batch, on the trusted side for both
# sides alike: off by default; a knob for measuring whether clocks lowered while idle widen intervals.
PREROLL_US = float(os.environ.get("XEFORGE_HARNESS_PREROLL_US", "0"))
# Each timed batch's own account of its time (launch issue, device time of the calls, digest) and the
# wall clock of each pair, in the timing's `diag`: for measuring the harness, never used in a verdict.
DIAG = os.environ.get("XEFORGE_HARNESS_DIAG", "0") == "1"
# With DIAG: each timing (summary, diag and every pair's per-call times) appended as a JSON line to this
# file, for runs where the harness's answer goes through a client that keeps only the verdict (a stage).
DIAG_LOG = os.environ.get("XEFORGE_HARNESS_DIAG_LOG") if DIAG else None
# `pair` (default): the judge on one physical core and both workers on another for the timed batches,
# released for each full output check (child/affinity.py; a no-op on hosts with fewer than three physical cores). On an H100
# (tests/harness/gpu-results/2026-12-05c-h100-pair, 3 rounds) it took the same kernel against itself
# from 0.955 and 0.908 ("slower") to 0.972 and 0.981 ("correct"), softmax's interval 0.098 -> 0.031 wide.
# `0` leaves placement to the OS; `1` pins each worker to a core of its own from its start.
PLACE = os.environ.get("XEFORGE_HARNESS_PIN", "pair") == "pair"
# The original's calls are launch-bound (`timing.issue_bound`) when issuing one takes at least this share
# of its measured time: on an H100 a rotary embedding issued in about the time it ran, and a 7% device-time
# gain (do_bench) came out 1.00 on the harness (tests/bench/results/autotune_gemm_h100.md).
ISSUE_BOUND = 0.85
# `both` (default): the candidate too comes to its timed batch from a request of its own one step
# earlier (see `_before`); `original`: only the original does. On an H100 `both` took the lean towards
# the original away (self against self 0.982/0.978 -> 0.999/0.999) and narrowed the intervals
# (0.029/0.033 -> 0.024/0.022): tests/harness/gpu-results/2026-12-06-h100-touch.
TOUCH = os.environ.get("XEFORGE_HARNESS_TOUCH", "both")


def not_meaningful(reason: str) -> dict:
    return {"meaningful": False, "reason": reason}


def classify(timing: dict) -> str:
    """'faster', 'slower' or 'same' from the ratio interval (symmetric margins around 1)."""
    lo, hi = timing["speedup_ci95"]
    if lo > FASTER:
        return "faster"
    if hi < 1 / FASTER:
        return "slower"
    return "same"


def _fresh(count: int) -> tuple[list[int], list[int]]:
    return [_rng.randrange(1, 2**62) for _ in range(count)], [_rng.randrange(1, 2**62) for _ in range(count)]


def _prepare(name: str, count: int, outputs: list[int], scales: list[float]) -> dict:
    """A `prepare` request: fresh seeds and digest nonces for a batch of `count` calls."""
    seeds, nonces = _fresh(count)
    return {"op": "prepare", "variant": name, "seeds": seeds, "nonces": nonces, "numels": outputs, "scales": scales}


def _name(variant) -> str:
    return variant.name if variant is not None else "default"


def _n_outputs(problem, name: str) -> list[int]:
    """The element count of each tensor output (complex ones counted as pairs of reals)."""
    return list(problem.refs[name][0].sizes["outputs"])


def _scales(problem, name: str) -> list[float]:
    return list(problem.refs[name][0].sizes["scales"])


class _Awake:
    """Calls to one worker, which is kept stopped (SIGSTOP) between them during the timed loop.

    The candidate runs only while it serves a request, so no thread of it can compute the next
    outputs ahead, or load the machine, while the judge or the original is busy. The trusted worker
    is kept the same way, so both sides of a pair come to their timed call from the same wake-up
    (a process just continued runs its first microseconds slower than one that was only blocked).
    """

    def __init__(self, judge, pause: bool, role: str = "candidate"):
        self.link = judge.candidate if role == "candidate" else judge.trusted
        self.call = judge.candidate_call if role == "candidate" else judge.trusted_call
        self.pause = pause and PAUSE

    def __call__(self, msg: dict, what: str):
        return self.around(lambda: self.call(msg, what=what))

    def around(self, fn):
        """Run `fn` with the worker awake; it is woken before and stopped after, outside any clock."""
        if self.pause:
            self.link.resume()
        try:
            return fn()
        finally:
            if self.pause:
                self.link.pause()


def _before(judge, side: str, candidate_call) -> None:
    """Flush L2 (trusted), then leave the device on the other side's context, for both sides alike.

    The original comes to its batch from a request of its own one step earlier (the flush). By
    default (`XEFORGE_HARNESS_TOUCH=both`) the candidate does too (a touch of its own, then the
    original's touch leaves the device on the other context as before): without it, on an H100 the
    candidate's batches of the same kernel took 0.5-3% longer than the original's, in either order of
    a pair (tests/harness/gpu-results/2026-12-05c-h100-pair).
    """
    judge.trusted_call({"op": "flush", "preroll_us": PREROLL_US})
    if side == "A":
        candidate_call({"op": "touch"}, what="touching the device")
    elif TOUCH == "both":
        candidate_call({"op": "touch"}, what="touching the device")
        judge.trusted_call({"op": "touch"})


def _clocked(call, msg: dict) -> tuple[float, dict]:
    """One request on the judge's clock: µs from sending it to having the whole reply."""
    start = time.perf_counter()
    reply, _ = call(msg, what="timed call")
    return (time.perf_counter() - start) * 1e6, reply


def _issue(issue: list[float], batch: int, call_us: float) -> dict:
    """The original's launch issue per call (median over its timed batches, its own process's clock),
    and whether its calls are bound by it: issuing one takes at least `ISSUE_BOUND` of the time a call
    is measured at. Such a call's measured time is its issue time, so a candidate's device-time gain
    below that floor cannot show here (it would where the launches are not the bottleneck: CUDA graphs,
    other work queued ahead). Never read for a verdict."""
    if not issue or batch <= 0 or call_us <= 0:
        return {}
    per_call = median(issue) / batch
    return {"issue_us": round(per_call, 3), "issue_bound": per_call >= ISSUE_BOUND * call_us}


def _timed(call, name: str) -> tuple[float, dict]:
    """One timed batch: the judge's µs and the reply (whose `digests` prove the work was done)."""
    return _clocked(call, {"op": "go", "variant": name, "diag": DIAG})


def solo(judge, problem, variant) -> dict:
    """The original timed alone, before any candidate code exists: batch size and the baseline."""
    name = _name(variant)
    trusted = judge.trusted_call
    outputs = _n_outputs(problem, name)
    scales = _scales(problem, name)
    trusted(_prepare(name, 1, outputs, scales))
    trusted({"op": "warm", "variant": name, "n": max(3, judge.args.warmup // 4)})
    per_set = problem.refs[name][0].sizes["bytes"]
    memory = judge.device_memory
    # A device shared by several jobs (`serve --jobs-per-device`) gives each its share: the others'
    # processes keep their memory while this one is timed.
    budget = BATCH_BYTES or (memory // BATCH_SHARE if memory else 8 << 30) // max(1, getattr(judge, "slots", 1))
    fits = max(1, int(budget // max(1, COPIES * per_set)))

    def probe(k: int) -> float:
        if k > 1:
            trusted(_prepare(name, k, outputs, scales))
        times = []
        for _ in range(5):
            _before(judge, "A", judge.candidate_call)  # the candidate's worker has imported nothing yet
            times.append(_timed(judge.trusted_call, name)[0])
        return median(times)

    # One call's own cost without the request's round trip: the step from a batch of 1 to one of k.
    one = probe(1)
    k = min(PROBE_CALLS, fits)
    call_us = max(1.0, (probe(k) - one) / (k - 1) if k > 1 else one, one / TARGET_CALLS_IN_ONE)
    batch = int(max(1, min(MAX_BATCH, round(TARGET_BATCH_US / call_us), fits)))
    times = []
    for _ in range(SOLO_RUNS):
        trusted(_prepare(name, batch, outputs, scales))
        _before(judge, "A", judge.candidate_call)
        times.append(_timed(judge.trusted_call, name)[0])
    overhead = _overhead(judge)
    return {"batch": batch, "us": median(_net(times, overhead, batch)), "probe_us": call_us, "overhead_us": overhead}


def _overhead(judge) -> float:
    """What a timed request costs beside its calls: the round trip and the batch's digests, timed by the
    judge on the trusted worker (the candidate has not been imported). It is the same work on both
    sides of a pair, so it is taken off both: left in, it pulls every ratio towards 1."""
    return median([_clocked(judge.trusted_call, {"op": "redigest"})[0] for _ in range(OVERHEAD_RUNS)])


def _net(times: list[float], overhead: float, batch: int) -> list[float]:
    """Per call, a batch's time less the protocol's own cost (never below NET_FLOOR of the whole)."""
    return [max(t - overhead, NET_FLOOR * t) / batch for t in times]


def measure(judge, problem, variant, solo_info: dict) -> dict:
    args = judge.args
    name = _name(variant)
    batch = solo_info["batch"]
    candidate = judge.candidate
    inputs_file = judge._give(args.reference or args.kernel)
    rtol = variant.rtol if variant is not None else None
    atol = variant.atol if variant is not None else None

    outputs = _n_outputs(problem, name)
    scales = _scales(problem, name)

    # Awake only while it serves a request (it starts stopped after the first call below).
    awake = _Awake(judge, pause=True)

    prep_times: list[tuple[float, float]] = []

    def prepare() -> float:
        """Both workers make the batch's inputs; returns the candidate's time beyond the trusted's, in µs.

        Making inputs is untimed, but it is the candidate's code that runs: time it spends there
        beyond what the trusted worker needs for the same inputs (computing outputs ahead, say) is
        charged to its timed batch.
        """
        msg = _prepare(name, batch, outputs, scales)
        sides = {
            "trusted": lambda: judge.trusted_call(msg),
            "candidate": lambda: awake({**msg, "inputs_file": inputs_file}, what="making timed inputs"),
        }
        took = {}
        # Who goes first alternates, as in the timed pairs: a cost that falls on whichever process
        # makes its inputs second (the device's or the allocator's state after the other's) is then
        # not charged to the candidate every time.
        for side in ("trusted", "candidate") if len(prep_times) % 2 == 0 else ("candidate", "trusted"):
            t0 = time.perf_counter()
            sides[side]()
            took[side] = (time.perf_counter() - t0) * 1e6
        trusted_us, cand_us = took["trusted"], took["candidate"]
        prep_times.append((trusted_us, cand_us))
        return max(0.0, cand_us - PREPARE_SLACK * trusted_us - PREPARE_FLOOR_US)

    # Warm-up: compiles, autotuner searches and caches happen here, never inside a timed call.
    prepare()
    judge.trusted_call({"op": "warm", "variant": name, "n": max(1, args.warmup // batch)})
    awake({"op": "warm", "variant": name, "n": max(1, args.warmup // batch)}, what="warm-up")
    stray = stray_processes(candidate.pid)
    if stray:
        return {
            "meaningful": False,
            "reason": "rejected",
            "rejected": f"the candidate left {len(stray)} process(es) running outside its process group before timing",
        }

    base, cand, checked, full, charged = [], [], 0, 0, []
    issue: list[float] = []  # the original's own launch issue per batch (its worker's clock), µs
    diag: dict = {"original": [], "candidate": [], "t": []}
    original = _Awake(judge, pause=True, role="trusted")
    if original.pause:  # from here on it sleeps between requests too (judge.trusted_call wakes it)
        judge.trusted.pause()
        judge.trusted_asleep = True
    started = time.monotonic()
    planned = args.runs
    placement = affinity.Placement([judge.trusted.pid, candidate.pid]) if PLACE else None
    try:
        i = 0
        while True:
            extra = prepare()
            charged.append(extra)
            order = ("A", "B") if i % 2 == 0 else ("B", "A")
            digests = {}
            diag["t"].append(round(time.time(), 3))
            for side in order:
                _before(judge, side, awake)
                if side == "A":
                    us, reply = original.around(lambda: _timed(lambda m, what="": judge.trusted_call(m, what=what, wake=False), name))
                    base.append(us)
                    if isinstance(reply.get("issue_us"), (int, float)):
                        issue.append(float(reply["issue_us"]))
                else:
                    # The clock runs inside `around`: a stopped process's wake-up is not the
                    # candidate's time (the original never pays it).
                    us, reply = awake.around(lambda: _timed(judge.candidate_call, name))
                    cand.append(us)
                digests[side] = reply.get("digests")
                if DIAG:
                    diag["original" if side == "A" else "candidate"].append(reply.get("diag"))
            outcome = _after_pair(judge, problem, variant, name, i, batch, digests, rtol, atol)
            if outcome is not None:
                return outcome
            checked += batch
            overhead = solo_info.get("overhead_us", 0.0)
            stop = _decided_slower(base, cand, charged, overhead, batch, args.stop_below)
            if len(base) == args.runs and judge.kind != "cpu":  # the interpreter's times are discarded
                planned = _planned_runs(base, cand, charged, overhead, batch, args, EXTEND)
                started = time.monotonic()
            out_of_time = len(base) > args.runs and time.monotonic() - started > EXTEND_S
            last = stop or len(base) >= planned or out_of_time
            # Random full checks in the planned runs; the pairs added to narrow the interval get
            # digests only (a full comparison costs as much as several pairs), and the last pair a full check.
            if (i < args.runs and _rng.randrange(FULL_CHECK_EVERY) == 0) or last:
                if placement is not None:  # a comparison of large outputs wants every core (affinity.Placement)
                    placement.release()
                reason = awake.around(lambda: _full_check(judge, name, variant, _rng.randrange(batch)))
                if placement is not None and not last:
                    placement.hold()
                if reason is not None:
                    return {"meaningful": False, "reason": "incorrect", "incorrect": f"timed run {i + 1}: {reason}"}
                full += 1
            i += 1
            if last:
                break
    finally:
        if placement is not None:
            placement.release()
        if awake.pause:
            candidate.resume()
        if judge.trusted_asleep:
            judge.trusted_asleep = False
            judge.trusted.resume()
    result = _summary(args, variant, batch, solo_info, base, cand, checked, full, charged, prep_times[1:])
    if DIAG:
        result["diag"] = diag
    if placement is not None and placement.where is not None:
        result["cpus"] = placement.where
    if result.get("meaningful") and judge.kind != "cpu":  # the interpreter computes as it issues
        result.update(_issue(issue, batch, result["baseline_us"]))
    if DIAG_LOG:
        _log_diag(DIAG_LOG, result, base, cand)
    return result


def _log_diag(path: str, result: dict, base: list, cand: list) -> None:
    import json

    line = {**result, "pairs_us": [[round(a, 3), round(b, 3)] for a, b in zip(base, cand)], "at": time.time()}
    with open(path, "a") as f:
        f.write(json.dumps(line, default=str) + "\n")


def _after_pair(judge, problem, variant, name, i, batch, digests, rtol, atol) -> dict | None:
    if judge.trusted.stopped_by_someone():
        return {
            "meaningful": False,
            "reason": "rejected",
            "rejected": "the original's process was stopped or continued by a signal the harness did not send, during timing",
        }
    reply, _ = judge.trusted_call({"op": "bounds", "variant": name, "rtol": rtol, "atol": atol})
    reference = reply["digests"] if reply["digests"] is not None else digests["A"]  # `null`: the original's own
    bad = _digest_mismatch(reference, reply["bounds"], digests["B"])
    if bad is not None:
        return {
            "meaningful": False,
            "reason": "incorrect",
            "incorrect": f"{variant.name if variant else name}, timed run {i + 1}, call {bad}: "
            "the candidate's outputs differ from the reference's (digest check of a timed call)",
        }
    return None


STOP_MIN_RUNS = 10  # the fewest pairs an interval is read from
STOP_EVERY = 5  # looks at the interval: few, so that stopping early rarely drops a config that is as good


def _charged(cand: list[float], charged: list[float]) -> list[float]:
    """The candidate's batch times with its input-making charge added (see `_charge`)."""
    charge = _charge(charged)
    return [c + (x if CHARGE == "sample" else charge) for c, x in zip(cand, charged)]


def _ratios(base: list[float], cand: list[float], charged: list[float], overhead: float, batch: int) -> list[float]:
    """Per-pair speedups: each side's batch less the request's own cost, the candidate charged for input-making."""
    return [b / c for b, c in zip(_net(base, overhead, batch), _net(_charged(cand, charged), overhead, batch)) if c > 0]


def _decided_slower(base, cand, charged, overhead: float, batch: int, stop_below: float | None) -> bool:
    """Sequential stopping: the interval (with the resolution floor) already lies below `stop_below`."""
    n = len(base)
    if stop_below is None or n < STOP_MIN_RUNS or n % STOP_EVERY != 0:
        return False
    _, hi = median_ci(_ratios(base, cand, charged, overhead, batch))
    return hi * (1 + RESOLUTION) < stop_below


def _planned_runs(base, cand, charged, overhead: float, batch: int, args, extend: float) -> int:
    """How many pairs to time in all, decided once, when the `--runs` pairs are done: `extend` times as
    many when the interval is still undecided (it straddles 1.02 or 1/1.02) and wider than
    EXTEND_WIDTH, else `--runs`. One look only: reading the interval after every added pair and
    stopping once it looks decided (optional stopping) turned identical kernels into "slower" on an
    H200. A sweep's sequential stopping (`stop_below`) keeps its own budget: never extended."""
    n = len(base)
    if args.stop_below is not None or extend <= 1 or n < 6:
        return args.runs
    lo, hi = median_ci(_ratios(base, cand, charged, overhead, batch))
    decided = lo / (1 + RESOLUTION) > FASTER or hi * (1 + RESOLUTION) < 1 / FASTER
    return int(args.runs * extend) if not decided and hi - lo > EXTEND_WIDTH else args.runs


def _summary(args, variant, batch, solo_info, base, cand, checked, full, charged: list[float], prep_times) -> dict:
    if median(charged) > PREPARE_WORK * median(cand):
        return {
            "meaningful": False,
            "reason": "rejected",
            "rejected": f"the candidate's process works while its timed inputs are made (a median {median(charged):.0f} µs per batch more "
            f"than the original's process needs for the same inputs, against a median timed batch of {median(cand):.0f} µs): "
            "work moved out of the timed calls",
            # The evidence of a rejection: each batch's input-making on both sides, so that a
            # reader can tell work moved by the candidate from a cost of the machine.
            "inputs_us": {
                "original": [round(t, 1) for t, _ in prep_times],
                "candidate": [round(c, 1) for _, c in prep_times],
                "batch": batch,
            },
        }
    overhead = solo_info.get("overhead_us", 0.0)
    base_gross, cand_gross = list(base), list(cand)
    charge = _charge(charged)
    ratios = _ratios(base, cand, charged, overhead, batch)
    cand = _charged(cand, charged)
    raw_base, raw_cand = median(base) / batch, median(cand) / batch
    base, cand = _net(base, overhead, batch), _net(cand, overhead, batch)
    raw_lo, raw_hi = median_ci(ratios)
    lo, hi = raw_lo / (1 + RESOLUTION), raw_hi * (1 + RESOLUTION)
    result = {
        "meaningful": True,
        "baseline_us": round(median(base), 3),
        "candidate_us": round(median(cand), 3),
        "speedup": round(median(ratios), 4),
        "speedup_ci95": [round(lo, 4), round(hi, 4)],
        "speedup_ci95_raw": [round(raw_lo, 4), round(raw_hi, 4)],
        "runs": len(base),
        "stopped_early": len(base) < args.runs,
        "extended": max(0, len(base) - args.runs),
        "warmup": args.warmup,
        "batch": batch,
        "solo_baseline_us": round(solo_info["us"], 3),
        "request_overhead_us": round(overhead / batch, 3),
        "gross_us": [round(raw_base, 3), round(raw_cand, 3)],
        "digests_checked": checked,
        "full_checks": full,
        "prepare_charged_us": round(sum(charged) if CHARGE == "sample" else charge * len(cand), 1),
        "variant": _name(variant),
        # Per pair, the per-call times the ratios are made of (what a report plots), and the spec's
        # work for the timed variant (achieved FLOP/s and bytes/s against the device's peaks).
        "samples_us": {"original": [round(x, 3) for x in base], "candidate": [round(x, 3) for x in cand]},
        "flop": getattr(variant, "flop", None),
        "mem_bytes": getattr(variant, "mem_bytes", None),
        "batches_us": {
            "original": [round(x, 1) for x in base_gross],
            "candidate": [round(x, 1) for x in cand_gross],
            "inputs_original": [round(t, 1) for t, _ in prep_times],
            "inputs_candidate": [round(c, 1) for _, c in prep_times],
        },
        "method": "judge-side clock around each batch of calls in separate original and candidate processes; fresh inputs per "
        "batch; every call's output digest checked, a random sample compared in full; 256 MiB L2 flush by the trusted "
        "process before each batch; candidate stopped while the original runs; the request's own cost (round trip "
        "and digests, timed on the trusted side) taken off both sides; A/B pairs in alternating order, "
        "median ratio with order-statistic 95% interval widened by a 0.5% resolution floor",
    }
    slowdown = median(base) / solo_info["us"] if solo_info["us"] > 0 else 1.0
    if slowdown > INTERFERENCE:
        return {
            **result,
            "meaningful": False,
            "reason": f"the original ran {slowdown:.2f}x slower beside the candidate than alone: something interfered; no speedup is claimed",
        }
    return result


def _charge(charged: list[float]) -> float:
    """What every candidate batch is charged for input-making beyond the trusted side's (see README)."""
    return median(charged) if CHARGE == "median" else 0.0


def _digest_mismatch(ref_digests: list, bounds: list, cand_digests) -> int | None:
    """The index of the first call whose candidate digest is out of bounds, else None."""
    if not isinstance(cand_digests, list) or len(cand_digests) != len(ref_digests):
        return 0
    for k, (refs, bnds, cands) in enumerate(zip(ref_digests, bounds, cand_digests)):
        if not isinstance(cands, list) or len(cands) != len(refs):
            return k
        for r, b, c in zip(refs, bnds, cands):
            try:
                value = float(c)
            except (TypeError, ValueError):
                return k
            if r != r:  # the reference has NaN or Inf: only the sampled full checks can judge this call
                continue
            if value != value or abs(value - r) > b:
                return k
    return None


def _full_check(judge, name: str, variant, index: int) -> str | None:
    reply, tensors = judge.trusted_call({"op": "outputs", "variant": name, "index": index})
    ref = wire.decode(reply["outputs"], tensors)
    ref_shape = wire.shape_of(reply["outputs"])
    reply, tensors = judge.candidate_call({"op": "outputs", "variant": name, "index": index}, what="sending timed outputs")
    try:
        out = wire.decode(reply["outputs"], tensors)
        shape = wire.shape_of(reply["outputs"])
    except (KeyError, wire.WireError) as e:
        return f"the candidate's outputs cannot be read ({e})"
    if shape != ref_shape:
        return f"the candidate returns {wire.describe(shape)}, the reference {wire.describe(ref_shape)}"
    for j, (r, o) in enumerate(zip(flatten(ref), flatten(out))):
        rtol, atol = default_tolerance(r.dtype) if hasattr(r, "dtype") else (0.0, 0.0)
        if variant is not None:
            rtol = variant.rtol if variant.rtol is not None else rtol
            atol = variant.atol if variant.atol is not None else atol
        diff = compare_one(r, o, rtol, atol, f"call {index}, output {j}")
        if not diff.ok:
            return diff.reason
    return None
