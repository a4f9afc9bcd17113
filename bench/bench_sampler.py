"""Exact constrained generation: the compiled sampler against the numpy path and a C dealer, same run.

Run as ``.venv/bin/python bench/bench_sampler.py [n_deals] [n_cli] [spec ...]`` (``n_cli`` 0 skips the CLI runs).

For each spec (default: ``examples/*.json`` and ``bench/specs/*.json``) it
builds the plan once (build time printed, not counted), then times seeded
deals *with deal numbers encoded* (``plan.deals`` + ``encode_batch``):

* kernel: the compiled sampler and the compiled encoder;
* numpy: the same inside ``kernel.numpy_only()`` with ``encode_batch_numpy``
  (the reference path, timed on fewer deals), checked byte-identical to the
  kernel's deals on the deals both drew;
* C: ``bench/fisher_yates.c`` (compiled here, ``cc -O2``), unconstrained
  Fisher-Yates deals printed one line each to /dev/null.

Then the whole CLI, start-up and build included:
``truedeal generate SPEC -n n_cli --format numbers|pbn > file`` with the
kernel and with TRUEDEAL_NO_KERNEL=1 (on n_cli / 10 deals), against the C
baseline printing n_cli lines.  Rates are deals per second of wall time,
best of two; one process, one thread.  No assertion is about time.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import CLI, ROOT, best, compile_baseline, run_wall  # noqa: E402
from truedeal import dealnumber as dn  # noqa: E402
from truedeal import kernel  # noqa: E402
from truedeal.engine import Plan  # noqa: E402
from truedeal.spec import load_spec  # noqa: E402

CLI_SPECS = ["examples/strong-nt.json", "examples/nine-spades.json", "bench/specs/cases62m.json", "bench/specs/none.json"]


def draw(plan: Plan, n: int, encode) -> np.ndarray:
    """n seeded deals with their numbers; returns the deals."""
    out = []
    for owners in plan.deals(n, seed="bench"):
        encode(owners)
        out.append(owners)
    return np.concatenate(out)


def bench_spec(path: str, n: int, c_rate: float) -> None:
    t0 = time.perf_counter()
    plan = Plan.build(load_spec(path))
    build = time.perf_counter() - t0
    if not plan.possible:
        print(f"{Path(path).stem:<22} impossible", flush=True)
        return
    got = draw(plan, 4096, dn.encode_batch)  # warm-up: the sampler's tables
    t_k = best(lambda: draw(plan, n, dn.encode_batch), 2)
    m = max(4096, n // 10)
    with kernel.numpy_only():
        ref = draw(plan, m, dn.encode_batch_numpy)
        t_n = best(lambda: draw(plan, m, dn.encode_batch_numpy), 1)
    got = draw(plan, m, dn.encode_batch)
    assert got.tobytes() == ref.tobytes(), f"{path}: kernel and numpy deals differ"
    rk, rn = n / t_k, m / t_n
    exact = "exact" if plan.exact else "partly rejection"
    print(f"{Path(path).stem:<22} build {build:6.3f} s  kernel {rk:11,.0f}/s  numpy {rn:9,.0f}/s  "
          f"kernel/numpy {rk / rn:5.1f}x  kernel/C {rk / c_rate:5.2f}x  ({exact})", flush=True)


def bench_cli(n: int, exe: Path, c_rate: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "deals.txt"
        for spec in CLI_SPECS:
            for fmt in ("numbers", "pbn"):
                argv = ["sh", "-c", f'"$0" generate "$1" -n "$2" --seed bench --format {fmt} > "$3"', CLI[0], spec]
                t_k = run_wall([*argv, str(n), str(out)], {"TRUEDEAL_NO_KERNEL": ""}, repeats=2)
                m = max(1, n // 10)
                t_n = run_wall([*argv, str(m), str(out)], {"TRUEDEAL_NO_KERNEL": "1"})
                rk, rn = n / t_k, m / t_n
                print(f"CLI {Path(spec).stem:<14} --format {fmt:<7} {n:,}: kernel {rk:11,.0f}/s  numpy {rn:9,.0f}/s  "
                      f"kernel/numpy {rk / rn:5.1f}x  kernel/C {rk / c_rate:5.2f}x", flush=True)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 400_000
    n_cli = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000_000
    found = sorted(ROOT.glob("examples/*.json")) + sorted(ROOT.glob("bench/specs/*.json"))
    specs = sys.argv[3:] or [str(p.relative_to(ROOT)) for p in found]
    if kernel.sampler() is None:
        sys.exit(f"bench_sampler: the kernel is {kernel.missing_reason()}")
    os.chdir(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        exe = compile_baseline(Path(tmp))
        c_n = max(n, 1_000_000)
        c_rate = c_n / run_wall([str(exe), str(c_n), "seats"], repeats=2)
        print(f"C baseline (Fisher-Yates, xoshiro256**, one line per deal): {c_rate:,.0f} deals/s", flush=True)
        for spec in specs:
            bench_spec(spec, n, c_rate)
        if n_cli < 1:  # n_cli = 0: the specs alone
            return
        c_rate = n_cli / run_wall([str(exe), str(n_cli), "seats"], repeats=2)
        bench_cli(n_cli, exe, c_rate)


if __name__ == "__main__":
    main()
