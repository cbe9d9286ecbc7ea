#!/usr/bin/env bash
# Benchmark: `xeforge check` (release build) against `ruff check` (pinned, from PyPI, in a temp venv) over the
# same downloaded corpus of third-party Triton libraries (tests/corpus/packages.txt). Median of 5 runs each,
# measured with hyperfine (`apt-get install -y hyperfine`). Writes the table and xeforge's phase breakdown at the
# top of tests/bench/results/check_vs_ruff.md, keeping what the file has from its first `## Reading` heading on.
#
# Two workloads:
#   tree    every package directory: each tool walks and filters the tree itself (what users run);
#   triton  only the .py files that contain `@triton.jit`, named on the command line (parse + analysis cost).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
RUFF_VERSION="${RUFF_VERSION:-0.17.5}"
RUNS="${RUNS:-5}"

command -v hyperfine >/dev/null || { echo "hyperfine missing: apt-get install -y hyperfine" >&2; exit 2; }
corpus="$("$repo/tests/corpus/fetch.sh" | tail -1)"
(cd "$repo" && cargo build --release --quiet)
xeforge="$repo/target/release/xeforge"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# RUFF=path/to/ruff skips the install (it must be $RUFF_VERSION).
if [ -n "${RUFF:-}" ]; then
  ruff="$RUFF"
else
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install -q "ruff==$RUFF_VERSION"
  ruff="$work/venv/bin/ruff"
fi

mapfile -t dirs < <(find "$corpus" -mindepth 1 -maxdepth 1 -type d ! -name _dl | sort)
grep -rlF --include='*.py' '@triton.jit' "${dirs[@]}" | sort >"$work/triton-files.txt"
mapfile -t files <"$work/triton-files.txt"
n_py=$(find "${dirs[@]}" -name '*.py' | wc -l)
lines_triton=$(cat "${files[@]}" | wc -l)

q() { printf '%q ' "$@"; }
# Both tools: no cache, exit status ignored, output discarded. ruff --isolated ignores the packages' own configs,
# as xeforge finds none there; its default rule set is what `ruff check` users get.
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$work/tree.json" \
  -n "xeforge tree" "$(q "$xeforge" check --exit-zero --format json "${dirs[@]}")" \
  -n "ruff tree" "$(q "$ruff" check --no-cache --isolated --exit-zero --output-format json "${dirs[@]}")" \
  >/dev/null
# The file list is longer than one argument may be: a tiny wrapper execs each tool with the list (same cost for both).
cat >"$work/with-files.sh" <<'SH'
#!/usr/bin/env bash
list="$1"; shift
mapfile -t files <"$list"
exec "$@" "${files[@]}"
SH
chmod +x "$work/with-files.sh"
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$work/triton.json" \
  -n "xeforge triton" "$(q "$work/with-files.sh" "$work/triton-files.txt" "$xeforge" check --exit-zero --format json)" \
  -n "ruff triton" "$(q "$work/with-files.sh" "$work/triton-files.txt" "$ruff" check --no-cache --isolated --exit-zero --output-format json)" \
  >/dev/null

# Where xeforge's CPU time goes, per phase (one run of each workload, XEFORGE_TIMINGS=1).
XEFORGE_TIMINGS=1 "$xeforge" check --exit-zero --format json "${dirs[@]}" 2>"$work/tree.phases" >/dev/null
XEFORGE_TIMINGS=1 "$work/with-files.sh" "$work/triton-files.txt" "$xeforge" check --exit-zero --format json \
  2>"$work/triton.phases" >/dev/null

# The direct parser against tree-sitter over every .py file of the corpus: where it answers, its tree must be
# tree-sitter's node for node (the bench exits non-zero on any difference, which fails this script).
find "${dirs[@]}" -name '*.py' | sort >"$work/all-files.txt"
(cd "$repo" && XF_BENCH_FILES="$work/all-files.txt" cargo test --release --quiet --test direct_parse_bench) >"$work/direct.txt"
(cd "$repo" && XF_BENCH_FILES="$work/triton-files.txt" cargo test --release --quiet --test direct_parse_bench) >"$work/direct-triton.txt"

python3 - "$work" "$here/results/check_vs_ruff.md" "$RUFF_VERSION" "$n_py" "${#files[@]}" "$lines_triton" "$RUNS" <<'PY'
import json, os, platform, subprocess, sys
work, out, ruff_v, n_py, n_tri, lines, runs = sys.argv[1:]
rows = []
for w in ("tree", "triton"):
    # hyperfine reports each command under its -n name ("xeforge tree", "ruff triton").
    res = {r["command"].split()[0]: r for r in json.load(open(f"{work}/{w}.json"))["results"]}
    x, r = res["xeforge"], res["ruff"]
    rows.append((w, x["median"], r["median"], x["median"] / r["median"], x["user"], r["user"]))
cpu = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
import datetime
lines_md = [
    "# `xeforge check` vs `ruff check`", "",
    f"## Run of {datetime.date.today().isoformat()} (`bash tests/bench/check_vs_ruff.sh`)", "",
    f"Corpus: the pinned packages of `tests/corpus/packages.txt` ({n_py} .py files; {n_tri} files with "
    f"`@triton.jit`, {lines} lines). ruff {ruff_v} from PyPI, default rules, `--no-cache --isolated`. "
    f"Median of {runs} runs (hyperfine, 1 warm-up), {cpu} CPUs, {platform.machine()}. "
    "Goals (issue 14): `triton` ≤ 1.0, `tree` ≤ 0.5.", "",
    "| workload | xeforge median (s) | ruff median (s) | ratio xeforge/ruff | xeforge user CPU (s) | ruff user CPU (s) |",
    "|---|---:|---:|---:|---:|---:|",
]
for w, x, r, ratio, xu, ru in rows:
    lines_md.append(f"| {w} | {x:.3f} | {r:.3f} | {ratio:.2f} | {xu:.2f} | {ru:.2f} |")
lines_md += ["", "`tree`: every package directory (each tool walks and filters). "
             "`triton`: only files containing `@triton.jit`, named explicitly. User CPU: hyperfine's mean.", ""]
for name, what in (("direct.txt", "every .py file"), ("direct-triton.txt", "the kernel files")):
    lines_md += [f"Direct parser vs tree-sitter over {what} (`tests/bench/direct_parse.rs`; one thread):", "", "```"]
    lines_md += [l for l in open(f"{work}/{name}").read().splitlines() if l.strip() and not l.startswith("declined")][:3]
    lines_md += ["```", ""]
for w in ("tree", "triton"):
    lines_md += [f"xeforge phases, `{w}` (`XEFORGE_TIMINGS=1`, CPU seconds summed over threads):", "", "```"]
    lines_md += [l for l in open(f"{work}/{w}.phases").read().splitlines() if l.strip()]
    lines_md += ["```", ""]
kept = ""
if os.path.exists(out):
    old = open(out).read()
    at = old.find("\n## Reading")
    kept = old[at + 1:] if at >= 0 else ""
open(out, "w").write("\n".join(lines_md) + ("\n" + kept if kept else ""))
print("\n".join(lines_md))
PY
