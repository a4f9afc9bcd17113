"""Python's int against gmpy2's mpz on the big-integer work of a listing.

The listing's wide integers are level-0 weights ``G(C) * T1 * U`` (below
2**20, 2**42 and 2**50: about 2**112 at most), their cumulative totals (the
level-0 draw locates a uniform integer in them), the sum of a job's slice
totals, and binomial tables.  Each is timed both ways on the same numbers,
and the ratio printed (>1: gmpy2 is slower).  The listing uses whichever
measures faster; on every machine measured so far that is Python's int, so
gmpy2 is not imported by truedeal itself.

    .venv/bin/python bench/bench_bigint.py [--n 1000000]
"""

from __future__ import annotations

import argparse
import math
import random
from itertools import accumulate

import gmpy2

from bench_kernel import best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    n = ap.parse_args().n
    rnd = random.Random(2008)
    g = [rnd.randrange(1, 1 << 20) for _ in range(n)]
    t1 = [rnd.randrange(1, 1 << 42) for _ in range(n)]
    u = [rnd.randrange(1, 1 << 50) for _ in range(n)]
    mg, mt, mu = ([gmpy2.mpz(x) for x in xs] for xs in (g, t1, u))
    w = [a * b * c for a, b, c in zip(g, t1, u)]
    mw = [gmpy2.mpz(x) for x in w]
    totals = [x * 7 ** 30 for x in w[:64]]
    rows = [
        ("weights G*T1*U (from Python ints)", lambda: [a * b * c for a, b, c in zip(g, t1, u)],
         lambda: [gmpy2.mpz(a) * b * c for a, b, c in zip(g, t1, u)]),
        ("weights G*T1*U (operands already mpz)", lambda: [a * b * c for a, b, c in zip(g, t1, u)],
         lambda: [a * b * c for a, b, c in zip(mg, mt, mu)]),
        ("cumulative totals", lambda: list(accumulate(w)), lambda: list(accumulate(mw))),
        ("side total (sum)", lambda: sum(w), lambda: sum(mw, gmpy2.mpz(0))),
        ("slice totals merged (64 slices, x10,000)", lambda: [sum(totals) for _ in range(10_000)],
         lambda: [sum((gmpy2.mpz(x) for x in totals), gmpy2.mpz(0)) for _ in range(10_000)]),
        ("binomials C(52, k), 53 x 2,000", lambda: [math.comb(52, k) for k in range(53) for _ in range(2000)],
         lambda: [gmpy2.comb(52, k) for k in range(53) for _ in range(2000)]),
    ]
    print(f"{n:,} weights; gmpy2 {gmpy2.version()}; best of 3")
    print(f"{'operation':45s} {'int s':>8s} {'gmpy2 s':>8s} {'gmpy2/int':>10s}")
    for name, py, gm in rows:
        a, b = best(py), best(gm)
        print(f"{name:45s} {a:8.3f} {b:8.3f} {b / a:9.2f}x")


if __name__ == "__main__":
    main()
