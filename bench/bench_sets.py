"""Tournament-set benchmark: dealing, and double-dummy tables per second per worker.

Measured in one run on the same boards (a seeded 3-session x 27-board set,
or --boards N from a seeded unconstrained set):

* dealing the set (all sessions, derivation + sampler + deal numbers);
* DD tables/s of 1 worker process (DDS limited to 1 thread, as a worker runs);
* the same boards split over 2 worker processes: tables/s and the speed-up
  against 1 process (the baseline);
* DDS with its own threads over all cores in one process, for comparison;
* files (PBN, LIN, DUP, DLM, BRI, CSV, HTML, PDF) for one session.

No assertions: run it and read the ratios.

    .venv/bin/python bench/bench_sets.py [--boards 48]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
import time
from pathlib import Path

from truedeal.tournament.build import session_boards
from truedeal.tournament.derive import seeded_key
from truedeal.tournament.files import write_session
from truedeal.tournament.run import prepare
from truedeal.tournament.setfile import parse_set
from truedeal.tournament.solve import solve_boards
from truedeal.tournament.solve_threads import set_dds_threads

ROOT = Path(__file__).resolve().parents[1]


def _set(boards_per_session: int, sessions: int):
    return parse_set({"event": "Bench", "site": "here", "date": "2025-01-01",
                      "sessions": [{"name": str(i + 1), "boards": [1, boards_per_session]} for i in range(sessions)],
                      "spec": {}, "dealer": "rotate", "vulnerability": "rotate", "double_dummy": True})


def _deal(sf):
    prep = prepare(sf, ROOT)
    t0 = time.perf_counter()
    recs = [session_boards(sp, seeded_key("bench", sp.name), "", prep.plans) for sp in prep.sessions]
    return recs, time.perf_counter() - t0


def _solve_one_thread(records):
    set_dds_threads(1)
    return solve_boards(records)


def _timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boards", type=int, default=48, help="boards solved in each DD measurement")
    args = ap.parse_args()

    sessions, dealt = _deal(_set(27, 3))
    print(f"dealing 3 x 27 boards: {dealt:.3f} s ({81 / dealt:,.0f} boards/s)")
    big, dealt_big = _deal(_set(10_000, 1))
    print(f"dealing 10,000 boards: {dealt_big:.2f} s ({10_000 / dealt_big:,.0f} boards/s)")

    boards = big[0][: args.boards]
    ctx = mp.get_context("spawn")
    with ctx.Pool(1) as pool:
        pool.apply(set_dds_threads, (1,))  # warm up DDS in the worker
        one, t1 = _timed(pool.apply, _solve_one_thread, (boards,))
    half = len(boards) // 2
    with ctx.Pool(2) as pool:
        pool.map(set_dds_threads, [1, 1])
        two, t2 = _timed(pool.map, _solve_one_thread, [boards[:half], boards[half:]])
    assert [r.dd for r in one] == [r.dd for part in two for r in part]  # same answers either way
    set_dds_threads(0)
    _, tall = _timed(solve_boards, boards)
    n = len(boards)
    print(f"DD, 1 worker (1 DDS thread):   {n / t1:6.2f} tables/s per worker  (baseline)")
    print(f"DD, 2 workers (1 thread each): {n / t2:6.2f} tables/s in all, {n / t2 / 2:.2f} per worker, "
          f"speed-up {t1 / t2:.2f}x")
    print(f"DD, 1 process, DDS threads on all cores: {n / tall:6.2f} tables/s, {t1 / tall:.2f}x the baseline")

    with tempfile.TemporaryDirectory() as tmp:
        solved = one[:27]
        _, tf = _timed(write_session, Path(tmp), _set(27, 1), "1", solved)
    print(f"files for one 27-board session: {tf:.2f} s")


if __name__ == "__main__":
    main()
