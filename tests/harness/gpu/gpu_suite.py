"""Pytest-free driver for the GPU run: timing checks, a JSON summary, and (with --verdicts) the
verdict matrix for machines without pytest. Called by run_gpu_suite.sh; runs on cpu for a dry run.
Writes OUT/summary.json and prints 'N passed, M failed' last.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
REPO = TESTS.parent.parent
sys.path.insert(0, str(TESTS))
from cases import VERDICT_CASES, hang_timeout  # noqa: E402


class Serve:
    def __init__(self, env: dict):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "xeforge_harness", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1, env=env
        )
        self.n = 0

    def request(self, command: str, args: dict | None = None, timeout: float = 300) -> dict:
        self.n += 1
        self.proc.stdin.write(json.dumps({"id": self.n, "command": command, "args": args or {}}) + "\n")
        self.proc.stdin.flush()
        box: list[str] = []
        t = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        t.start()
        t.join(timeout)
        if not box or not box[0]:
            raise RuntimeError(f"no reply to {command} (serve alive: {self.proc.poll() is None})")
        return json.loads(box[0])

    def close(self) -> None:
        try:
            self.request("shutdown", timeout=30)
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=os.environ.get("XEFORGE_TEST_DEVICE", "cuda"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--verdicts", action="store_true", help="also run the verdict matrix (when pytest is missing)")
    ns = ap.parse_args()
    on_gpu = ns.device in ("cuda", "xpu")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "server" / "harness")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])

    checks: list[dict] = []

    def record(name: str, ok: bool, detail: dict) -> None:
        checks.append({"name": name, "ok": ok, **detail})
        print(f"{'PASS' if ok else 'FAIL'} {name}: {json.dumps(detail)[:400]}", flush=True)

    def args_for(candidate: str, problem: str, **extra) -> dict:
        a = {"kernel": str(TESTS / "problems" / f"{problem}.py"), "candidate": str(TESTS / candidate), "device": ns.device}
        a.update(extra)
        return a

    started = time.monotonic()
    serve = Serve(env)
    summary: dict = {"device": ns.device}
    try:
        probe = serve.request("probe", {"device": ns.device})
        summary["probe"] = probe
        record("probe", probe.get("ok") is True and probe["device"]["kind"] == ns.device, {"device": probe.get("device")})
        pids = {k: v.get("pid") for k, v in serve.request("ping")["workers"].items()}

        if ns.verdicts:
            for candidate, problem, verdict, words in VERDICT_CASES:
                extra = {"timeout": hang_timeout(on_gpu)} if "hang" in candidate else {}
                reply = serve.request("evaluate", args_for(candidate, problem, no_timing=True, **extra))
                ok = reply.get("verdict") == verdict and words in reply.get("message", "")
                record(
                    f"verdict {candidate}",
                    ok,
                    {"expected": verdict, "got": reply.get("verdict"), "message": reply.get("message"), "elapsed": reply.get("elapsed")},
                )

        # Timing: the same kernel against itself, for three problems; then a slowed candidate.
        for problem in ("vector_add", "softmax", "matmul"):
            reply = serve.request("evaluate", args_for(f"problems/{problem}.py", problem, family="bench-gpu" if on_gpu else None))
            t = reply.get("timing", {})
            if on_gpu:
                lo, hi = t.get("speedup_ci95", [None, None])
                ok = reply.get("verdict") == "correct" and t.get("meaningful") and lo <= 1.0 <= hi
            else:
                ok = reply.get("verdict") == "correct" and t.get("meaningful") is False
            record(
                f"self-timing {problem}",
                bool(ok),
                {"verdict": reply.get("verdict"), "timing": t, "compile": reply.get("compile"), "message": reply.get("message")},
            )

        reply = serve.request("evaluate", args_for("fixtures/add_slow.py", "vector_add", family="bench-gpu" if on_gpu else None))
        expected = "slower" if on_gpu else "correct"
        record(
            "slowed candidate",
            reply.get("verdict") == expected,
            {"expected": expected, "verdict": reply.get("verdict"), "timing": reply.get("timing")},
        )

        if on_gpu:
            reply = serve.request("evaluate", args_for("fixtures/add_correct.py", "vector_add", no_timing=True))
            configs = reply.get("compile", {}).get("configs", [])
            ok = bool(configs) and all(isinstance(c.get("registers"), int) and isinstance(c.get("shared_bytes"), int) for c in configs)
            record("compile metadata", ok, {"configs": configs})

        after = {k: v.get("pid") for k, v in serve.request("ping")["workers"].items()}
        record("warm worker survived", all(after.get(k) == v for k, v in pids.items()), {"before": pids, "after": after})
    except Exception as e:  # the driver itself failing is a failed check, with the reason in the summary
        record("driver", False, {"error": f"{type(e).__name__}: {e}"})
    finally:
        serve.close()

    passed = sum(c["ok"] for c in checks)
    failed = len(checks) - passed
    summary.update(checks=checks, passed=passed, failed=failed, wall_s=round(time.monotonic() - started, 1))
    Path(ns.out).mkdir(parents=True, exist_ok=True)
    (Path(ns.out) / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
