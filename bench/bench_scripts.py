"""Plans of a directory of dealer scripts: how much is exact, how long it takes.

For each ``*.dlr`` file, in a fresh process (so that peak memory is the
script's own), ``Plan.build`` and the sampler's tables, then 50,000 seeded deals (100
when a double-dummy solve checks each).  Prints one row per
script: exact (or exact with ``rnd`` weighed) or what goes to rejection, the measured acceptance (the share
of listed deals kept), the acceptance of plain rejection (the script's
probability: what a rejection dealer keeps), the build's wall time, the draw
rate and the peak memory, and whether a split too large to keep whole is
listed one class at a time (:mod:`truedeal.class_split`); then a summary.

    .venv/bin/python bench/bench_scripts.py [DIR ...] [--timeout 300]

The default directory is ``tests/scripts``.  The public library of BBO
practice scenarios (github.com/ADavidBailey/Practice-Bidding-Scenarios,
``Bidding Scenarios/**/*.dlr``) is the real test: clone it and pass its
folders.  No assertions: run it and read the table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Runs in the child: build, draw, report (one JSON line).
_CHILD = """
import json, resource, sys, time
from truedeal.constraints.load import load_constraints
from truedeal.engine import Plan
t = time.perf_counter()
plan = Plan.build(load_constraints(sys.argv[1]))
next(plan.deals(1, seed="warm"))  # the sampler's tables
built = time.perf_counter() - t
n, t = 0, time.perf_counter()
for batch in plan.deals(100 if plan.double_dummy else 50_000, seed="bench"):  # DDS: about 25 deals/s
    n += len(batch)
drawn = time.perf_counter() - t
s = plan.summary()
print(json.dumps({"exact": plan.exact, "weighed": getattr(plan, "weighted", False),  # (False before 2026-11-28)
                  "method": s.method, "probability": float(s.probability),
                  "acceptance": s.rejection.acceptance_rate if s.rejection else 1.0, "build": built,
                  "rate": n / drawn, "mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(path: Path, timeout: float) -> dict:
    """One script's row (``error`` set when it failed or timed out)."""
    t = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"no plan and draws after {timeout:.0f} s"}
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["exit " + str(done.returncode)])[-1][:120]}
    row = json.loads(done.stdout.strip().splitlines()[-1])
    row["wall"] = time.perf_counter() - t
    return row


def describe(name: str, row: dict) -> str:
    if "error" in row:
        return f"{name:<34} ERROR {row['error']}"
    kept = "exact" if row["exact"] else f"{row['acceptance']:7.2%}"
    rejected = "" if row["exact"] else row["method"].replace("exact listing, rejection for ", "rejection: ")
    if row["weighed"]:  # rnd() weighed: every deal drawn is kept, or only the relaxed seats are rejected
        kept = "weighed" if row["acceptance"] == 1.0 else kept
        rejected = "rnd() weighed" + ("" if row["acceptance"] == 1.0 else "; " + row["method"].split("; ", 1)[1])
    if "listed one at a time" in row["method"]:
        rejected = "split listed one class at a time"
    return (f"{name:<34} {kept:>8} {row['probability']:9.3%} {row['build']:7.1f} s {row['rate']:>9,.0f}/s "
            f"{row['mb']:6.0f} MB  {rejected}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path, default=[ROOT / "tests" / "scripts"])
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    paths = sorted(p for d in args.dirs for p in (d.rglob("*.dlr") if d.is_dir() else [d]))
    print(f"{'script':<34} {'kept':>8} {'rejection':>9} {'build':>9} {'draws':>11} {'peak':>9}")
    rows = []
    for path in paths:
        row = run(path, args.timeout)
        rows.append(row)
        print(describe(path.stem[:34], row), flush=True)
    ok = [r for r in rows if "error" not in r]
    exact = sum(r["exact"] for r in ok)
    weighed = sum(r["weighed"] and r["acceptance"] == 1.0 for r in ok)
    partial = [r for r in ok if not r["exact"] and r["acceptance"] < 1.0]
    by_classes = sum("listed one at a time" in r["method"] for r in ok)
    print(f"\n{len(rows)} scripts: {exact} exact ({by_classes} split one class at a time), {weighed} exact with rnd() "
          f"weighed, {len(partial)} partly by rejection, {len(rows) - len(ok)} failed")
    if partial:
        gains = sorted(r["acceptance"] / r["probability"] for r in partial if r["probability"])
        print(f"partly by rejection: kept {min(r['acceptance'] for r in partial):.2%} to "
              f"{max(r['acceptance'] for r in partial):.2%}; median {gains[len(gains) // 2]:,.0f}x plain rejection's share")
    if ok:
        print(f"build: median {sorted(r['build'] for r in ok)[len(ok) // 2]:.1f} s, longest {max(r['build'] for r in ok):.1f} s; "
              f"peak memory at most {max(r['mb'] for r in ok):,.0f} MB")


if __name__ == "__main__":
    main()
