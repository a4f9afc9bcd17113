"""Partitioned listing on real workers: one worker process against two.

Starts its own ``redis-server`` (as bench_jobs.py does) and, for each of one
and two worker processes (``truedeal worker -c K``), runs the same job and
prints:

* the single-process build of the same spec (``Plan.build`` in a fresh
  process): wall time and peak RSS -- the baseline;
* the job's enumeration wall time (submit until its exact count is merged
  and drawing starts) and each pool process's peak RSS while it enumerated
  (sampled every 50 ms) and over the whole job (the kernel's VmHWM: drawing
  needs the merged listing);
* the ratios two workers / one worker and worker peak / single build;
* whether the job's deals are byte-identical to ``truedeal generate``'s.

No assertions: run it and read the numbers.

    .venv/bin/python bench/bench_partitions.py [--spec bench/specs/fit25.json] [--parts 8] [--deals 8192]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

import truedeal_jobs as jobs
from bench_jobs import PY, ROOT, RedisServer, Workers, mb, wait_done
from truedeal_jobs.dispatch import dispatcher_from_env

BUILD = """
import json, resource, sys, time
from truedeal.engine import Plan
from truedeal.spec import load_spec
t0 = time.perf_counter()
plan = Plan.build(load_spec(sys.argv[1]))
plan.chunk(0, "bench")  # the sampler's tables too: what drawing holds
print(json.dumps({"seconds": time.perf_counter() - t0, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "exact": plan.exact, "entries": len(plan.listing.e_weight)}))
"""


def single_build(spec: str) -> dict:
    out = subprocess.run([PY, "-c", BUILD, spec], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


class EnumerationPeak:
    """Peak RSS of each pool process while ``active()`` holds (sampled)."""

    def __init__(self, workers: Workers) -> None:
        self.workers, self.peak = workers, {}
        self.active = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        main = self.workers.proc.pid
        while self.active:
            for p in self.workers.processes():
                if p.pid != main:
                    try:
                        self.peak[p.pid] = max(self.peak.get(p.pid, 0), p.memory_info().rss)
                    except psutil.Error:
                        pass
            time.sleep(0.05)


def one_config(k: int, store, dispatcher, spec: str, n: int, seed: str, stream: str, env, tmp: Path) -> dict:
    w = Workers(k, env, tmp / f"worker{k}.log")
    try:
        w.pool_ready()
        time.sleep(2.0)  # let the pool processes finish importing
        sampler = EnumerationPeak(w)
        t0 = time.perf_counter()
        job = jobs.submit(store, dispatcher, spec, n, seed=seed, stream=stream)
        while store.get(job.id).state in (jobs.QUEUED, jobs.ENUMERATING):
            time.sleep(0.02)
        enumeration = time.perf_counter() - t0
        sampler.active = False
        status = wait_done(store, job.id)
        total = time.perf_counter() - t0
        data = b"".join(store.iter_chunk_bytes(job.id))
        main = w.proc.pid
        hwm = {pid: v for pid, v in w.hwm().items() if pid != main}
        store.delete(job.id)
        return {"enumeration": enumeration, "total": total, "enum_peak": max(sampler.peak.values(), default=0),
                "job_peak": max(hwm.values(), default=0), "data": data, "slices": status["count"].get("slices")}
    finally:
        w.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", default=str(ROOT / "bench" / "specs" / "fit25.json"))
    ap.add_argument("--parts", type=int, default=8, help="TRUEDEAL_PARTITIONS of the job")
    ap.add_argument("--deals", type=int, default=8192)
    ap.add_argument("--seed", default="bench partitions")
    ap.add_argument("--stream", default="v1", choices=("v1", "v2", "v3"),
                    help="v3: routed jobs, whose workers hold only their partitions' shards while drawing")
    args = ap.parse_args()
    spec = Path(args.spec).read_text()

    tmp = Path(tempfile.mkdtemp(prefix="truedeal-bench-"))
    server = RedisServer(tmp, "no")
    env = dict(os.environ, TRUEDEAL_REDIS_URL=server.url, TRUEDEAL_PARTITIONS=str(args.parts))
    store = jobs.JobStore(jobs.connect(server.url), jobs.JobSettings(partitions=args.parts))
    dispatcher = dispatcher_from_env(env)
    try:
        base = single_build(args.spec)
        print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; spec {Path(args.spec).name}; "
              f"{args.parts} partitions; {args.deals:,} deals; stream {args.stream}")
        print(f"single-process Plan.build and a chunk (stream v1): {base['seconds']:.2f} s, peak RSS {mb(base['rss'])} "
              f"(exact {base['exact']}, {base['entries']:,} level-0 entries)")
        runs = {}
        for k in (1, 2):
            r = runs[k] = one_config(k, store, dispatcher, spec, args.deals, args.seed, args.stream, env, tmp)
            print(f"job on {k} worker process{'es' if k > 1 else ''}: enumeration {r['enumeration']:.2f} s, "
                  f"whole job {r['total']:.2f} s; pool peak RSS while enumerating {mb(r['enum_peak'])}, "
                  f"over the job {mb(r['job_peak'])}; sliced: {r['slices'] or 'no (built whole)'}")
        cli = subprocess.run([PY, "-m", "truedeal.cli", "generate", args.spec, "-n", str(args.deals), "--seed",
                              args.seed, "--stream", args.stream, "--format", "numbers"], capture_output=True, check=True).stdout
        from truedeal.dealnumber import bytes_to_limbs, limbs_to_ints

        job_numbers = "".join(f"{x}\n" for x in limbs_to_ints(bytes_to_limbs(runs[2]["data"]))).encode()
        print(f"\nenumeration, 2 workers / 1 worker: {runs[2]['enumeration'] / runs[1]['enumeration']:.2f}x (target <= 0.6)")
        print(f"pool peak while enumerating, 2 workers / single build: {runs[2]['enum_peak'] / base['rss']:.2f}x (target <= 0.6)")
        held = "its partitions' shards" if args.stream == "v3" else "the merged listing"
        print(f"pool peak over the whole job (drawing holds {held}) / single build: "
              f"{runs[2]['job_peak'] / base['rss']:.2f}x (1 worker: {runs[1]['job_peak'] / base['rss']:.2f}x)")
        print(f"whole job, 2 workers / 1 worker: {runs[2]['total'] / runs[1]['total']:.2f}x")
        same = runs[1]["data"] == runs[2]["data"]
        print(f"deals: 1 worker == 2 workers: {same}; == truedeal generate --stream {args.stream} --format numbers: "
              f"{job_numbers == cli}")
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
