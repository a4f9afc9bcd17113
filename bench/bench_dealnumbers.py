"""Benchmark deal-number conversion: plain big-integer loops vs batch forms.

Run as ``.venv/bin/python bench/bench_dealnumbers.py [n_deals]``.  Measures, in
the same run, the article's plain loops (:func:`encode` / :func:`decode`, on a
subsample) and the vectorised :func:`encode_batch` / :func:`decode_batch` on
``n_deals`` random deals (default 1,000,000), best of a few repeats with
``time.perf_counter``, and prints deals/s and batch/plain ratios.  Single
process, single thread; no assertions on timings (only a correctness check).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from truedeal import dealnumber as dn


def random_deals(n: int, seed: int = 2024) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = np.repeat(np.arange(4, dtype=np.uint8), 13)
    return rng.permuted(np.tile(base, (n, 1)), axis=1)


def best_rate(fn, n_items: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return n_items / best


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    n_plain = min(n, 20_000)
    owners = random_deals(n)

    t0 = time.perf_counter()
    dn._tables()
    dn._tail_tables()
    print(f"table build (one-off): {time.perf_counter() - t0:.3f} s")

    rows = owners[:n_plain].tolist()  # plain loop on Python lists (its fastest input)
    plain_enc = best_rate(lambda: [dn.encode(r) for r in rows], n_plain, 3)
    numbers = [dn.encode(r) for r in rows]
    plain_dec = best_rate(lambda: [dn.decode(x) for x in numbers], n_plain, 3)

    batch_enc = best_rate(lambda: dn.encode_batch(owners), n, 5)
    limbs = dn.encode_batch(owners)
    batch_dec = best_rate(lambda: dn.decode_batch(limbs), n, 5)

    # correctness spot check (not timed)
    assert dn.limbs_to_ints(limbs[:n_plain]) == numbers
    assert np.array_equal(dn.decode_batch(limbs), owners)

    print(f"deals: {n:,} batch, {n_plain:,} plain")
    print(f"plain encode : {plain_enc:14,.0f} deals/s")
    print(f"plain decode : {plain_dec:14,.0f} deals/s")
    print(f"batch encode : {batch_enc:14,.0f} deals/s   ratio batch/plain {batch_enc / plain_enc:7.1f}x")
    print(f"batch decode : {batch_dec:14,.0f} deals/s   ratio batch/plain {batch_dec / plain_dec:7.1f}x")


if __name__ == "__main__":
    main()
