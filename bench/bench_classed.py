"""The classed listing (cells never listed) against the paired listing, where both list.

`truedeal.listing.paired_classes` keeps one list of diamonds+clubs pairs per
key where the paired listing keeps a row per cell.  The engine tries it only
where the paired listing is too wide, so that plans that list keep their
deals; this measures what it would cost or save where both apply.  For each
spec: each listing's build time (best of ``--repeats``, fresh each time), a
fresh process's peak memory for each, its cells, and the draw rate of each
sampler (one core); the counts must agree.  No assertions: run it and read
the ratios.

    .venv/bin/python bench/bench_classed.py [--repeats 3] [--deals 200000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from truedeal.constraints.compile import compile_program
from truedeal.constraints.dealer import parse_program
from truedeal.listing import paired
from truedeal.listing.paired_classes import build_classed
from truedeal.randomness import chunk_rng

SPECS = {
    "N 4-4 majors, S 5+ spades, three seats by losers": "spades(north) == 4 && hearts(north) == 4 && losers(north) <= 7"
                                                         " && spades(south) >= 5 && losers(south) <= 8 && losers(east) <= 8",
    "N flat, S and E by losers": "shape(north, any 4333) && losers(south) <= 8 && losers(east) <= 8",
    "N 5+ S, S 5+ H, E 6+ D, each by losers": "spades(north) >= 5 && losers(north) <= 7 && hearts(south) >= 5 && losers(south) <= 8"
                                               " && diamonds(east) >= 6 && losers(east) <= 8",
    "N and S by losers": "losers(north) <= 7 && losers(south) <= 8",
}
BUILDERS = {"paired": paired.build_paired, "classed": build_classed}


def peak_mb(kind: str, condition: str) -> float:
    """Peak RSS (MB) of a fresh process that builds one listing and draws one deal."""
    code = (
        "import sys\nfrom truedeal.constraints.compile import compile_program\n"
        "from truedeal.constraints.dealer import parse_program\nfrom truedeal.listing import paired\n"
        "from truedeal.listing.paired_classes import build_classed\nfrom truedeal.randomness import chunk_rng\n"
        "build = {'paired': paired.build_paired, 'classed': build_classed}[sys.argv[1]]\n"
        "build(compile_program(parse_program(sys.argv[2]))).make_sampler().draw(1, chunk_rng('m', 0))\n"
        "print([int(l.split()[1]) / 1024 for l in open('/proc/self/status') if l.startswith('VmHWM')][0])"
    )
    out = subprocess.run([sys.executable, "-c", code, kind, condition], capture_output=True, text=True, check=True)
    return float(out.stdout)


def measure(kind: str, condition: str, repeats: int, deals: int) -> dict:
    comp = compile_program(parse_program(condition))
    build = BUILDERS[kind]
    best, listing = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        listing = build(comp)
        best = min(best, time.perf_counter() - t0)
    assert listing is not None
    sampler = listing.make_sampler()
    sampler.draw(10_000, chunk_rng("warm", 0))
    t0 = time.perf_counter()
    sampler.draw(deals, chunk_rng("rate", 0))
    rate = deals / (time.perf_counter() - t0)
    cells = listing.n_cells if kind == "classed" else len(listing.cells)
    return {"build": best, "deals": listing.deals, "cells": cells, "rate": rate, "peak": peak_mb(kind, condition)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--deals", type=int, default=200_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    print(f"{'spec':44s} {'cells':>10s} {'paired s':>9s} {'classed s':>9s} {'ratio':>6s} {'paired MB':>9s} "
          f"{'classed MB':>10s} {'paired/s':>10s} {'classed/s':>10s}")
    for name, condition in SPECS.items():
        p, c = (measure(kind, condition, args.repeats, args.deals) for kind in BUILDERS)
        if p["deals"] != c["deals"]:
            raise SystemExit(f"{name}: the listings disagree ({p['deals']} against {c['deals']})")
        rows.append({"spec": name, "paired": p, "classed": c})
        print(f"{name[:44]:44s} {p['cells']:>10,} {p['build']:9.3f} {c['build']:9.3f} {p['build'] / c['build']:5.1f}x "
              f"{p['peak']:9.0f} {c['peak']:10.0f} {p['rate']:10,.0f} {c['rate']:10,.0f}")
    if args.json:
        print(json.dumps(rows, default=str))


if __name__ == "__main__":
    main()
