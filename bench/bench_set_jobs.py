"""Tournament sets on real Celery workers: time, scaling, memory, Redis.

It starts its own ``redis-server`` on a Unix socket (bench_jobs.RedisServer)
and real ``truedeal worker -c K`` processes, and prints, in one run:

1. **The acceptance set** (examples/sets/club-night.json: 3 sessions x 27
   boards with double dummy and par) dealt and solved on 1 worker process
   and on 2: submit -> ``done`` time, DD tables/s, the ratio, and whether
   both runs' files are byte-identical (they must be).
2. With ``--research N``: an N-board set (default 10,000; one session, DD)
   on 2 worker processes: time, tables/s per worker process, the workers'
   peak resident memory (VmHWM), Redis ``used_memory`` per board, and the
   time to render its PBN file from the stored boards.

No assertions: run it and read the numbers.  The default run takes a minute
or two on the 2-core machine; ``--research 10000`` about five more.

    .venv/bin/python bench/bench_set_jobs.py [--research 10000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

import truedeal_jobs as jobs
from bench_jobs import PY, RedisServer, Workers, mb, worker_memory
from truedeal_jobs import sets as setjobs

ROOT = Path(__file__).resolve().parents[1]
CLUB_NIGHT = ROOT / "examples" / "sets" / "club-night.json"


def run_set(store, dispatcher, server: RedisServer, data: dict, seed: str, timeout: float = 7200) -> dict:
    """Submit one set, wait until it is done; its time, files digest and sizes."""
    sets = store.set_store()
    used0 = server.used_memory()
    t0 = time.perf_counter()
    set_id = setjobs.submit_set(sets, data, ROOT, seed=seed)
    dispatcher.app.send_task(setjobs.DEAL_TASK, args=[set_id], ignore_result=True)
    deadline = time.monotonic() + timeout
    while (st := setjobs.set_status(sets, set_id))["state"] not in ("done", "failed", "cancelled"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"set {set_id} still {st['phase']} after {timeout} s")
        time.sleep(0.1)
    took = time.perf_counter() - t0
    if st["state"] != "done":
        raise RuntimeError(f"set {set_id} ended {st['state']}: {st.get('error')}")
    used1 = server.used_memory()
    t0 = time.perf_counter()
    pbn = setjobs.set_file(sets, set_id, st["sessions"][0], "pbn")
    render = time.perf_counter() - t0
    return {"id": set_id, "seconds": took, "boards": st["boards"], "redis_bytes": used1 - used0,
            "digest": files_digest(sets, set_id, st["sessions"]), "pbn_seconds": render, "pbn_bytes": len(pbn)}


def files_digest(sets, set_id: str, sessions: list[str]) -> str:
    """SHA-256 over every session's PBN and CSV (DD tables and par included)."""
    h = hashlib.sha256()
    for name in sessions:
        for ext in ("pbn", "csv"):
            h.update(setjobs.set_file(sets, set_id, name, ext))
    return h.hexdigest()


def on_workers(k: int, store, dispatcher, server: RedisServer, env, tmp: Path, data: dict, seed: str) -> tuple[dict, str]:
    w = Workers(k, env, tmp / f"worker{k}-{seed}.log")
    try:
        w.pool_ready()
        warm = {**data, "sessions": [{"name": "w", "boards": [1, 4 * k]}]}
        run_set(store, dispatcher, server, warm, "warm-up")  # imports and DDS loaded in every pool process
        w.start_sampling()
        r = run_set(store, dispatcher, server, data, seed)
        w.stop_sampling()
        return r, worker_memory(w)
    finally:
        w.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--research", type=int, default=0, metavar="N", help="also an N-board DD set on 2 workers")
    ap.add_argument("--seed", default="bench")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="truedeal-bench-sets-"))
    server = RedisServer(tmp, "everysec")
    env = dict(os.environ, TRUEDEAL_REDIS_URL=server.url)
    store = jobs.JobStore(jobs.connect(server.url), jobs.JobSettings())
    from truedeal_worker.app import CeleryDispatcher, WorkerConfig, create_app

    dispatcher = CeleryDispatcher(create_app(WorkerConfig.from_env(env)))
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; redis-server {server.version}; "
          f"python {PY}")
    try:
        club = json.loads(CLUB_NIGHT.read_text())
        runs = {}
        for k in (1, 2):
            r, mem = on_workers(k, store, dispatcher, server, env, tmp, club, args.seed)
            runs[k] = r
            print(f"club night (3 x 27 boards, DD and par), {k} worker process{'es' if k > 1 else ''}: "
                  f"{r['seconds']:.2f} s submit->done, {r['boards'] / r['seconds']:.1f} boards/s; {mem}")
        print(f"  scaling: 2 / 1 = {runs[1]['seconds'] / runs[2]['seconds']:.2f}x; files identical: "
              f"{runs[1]['digest'] == runs[2]['digest']}; load average now {os.getloadavg()[0]:.2f}")
        if args.research:
            n = args.research
            data = {**club, "event": "Research", "sessions": [{"name": "r", "boards": [1, n]}]}
            r, mem = on_workers(2, store, dispatcher, server, env, tmp, data, args.seed)
            print(f"research set ({n:,} boards, DD and par), 2 worker processes: {r['seconds']:.1f} s submit->done, "
                  f"{n / r['seconds']:.1f} DD tables/s ({n / r['seconds'] / 2:.1f} per worker process)")
            print(f"  worker memory: {mem}")
            print(f"  redis: {r['redis_bytes'] / n:,.0f} bytes/board of used_memory (+{mb(r['redis_bytes'])}); "
                  f"PBN of the session rendered from Redis in {r['pbn_seconds']:.2f} s ({mb(r['pbn_bytes'])})")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
