"""Lanes, with a real Redis and the real ``truedeal worker`` command (issue 12,
reliability 1): a small job submitted behind a slow one finishes while the
slow one still runs.

The slow job's worker process is stopped (SIGSTOP) once it has started, so the
slow job cannot finish whatever the machine's speed: the small job is done
only if the fast lane has processes of its own.  With one worker process for
both lanes the small job would wait for ever.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

import truedeal_jobs as jobs
from web_support import REDIS_URL, scoped_namespace

ROOT = Path(__file__).resolve().parents[1]
SLOW_SPEC = json.loads((ROOT / "bench" / "specs" / "weak2.json").read_text())  # seconds to list, 8 partitions
SMALL_SPEC = {"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}}


@pytest.fixture(scope="module")
def ns():
    yield from scoped_namespace("lanes")


@pytest.fixture(scope="module")
def split_worker(ns, tmp_path_factory):
    """``truedeal worker -c 1 --slow-workers 1``: one fast-lane and one slow-lane process."""
    log = tmp_path_factory.mktemp("lanes") / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-P", "-m", "truedeal.cli", "worker", "-c", "1", "--slow-workers", "1"],
                                env=ns.env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    yield proc, log
    if proc.poll() is None:
        for p in psutil.Process(proc.pid).children(recursive=True):
            p.send_signal(signal.SIGCONT)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
    subprocess.run(["pkill", "-KILL", "-g", str(proc.pid)], check=False)  # whatever is left of its group


def _store_and_dispatcher(ns):
    from truedeal_worker.app import CeleryDispatcher, WorkerConfig, create_app

    env = ns.env()
    return jobs.JobStore(jobs.connect(REDIS_URL), jobs.JobSettings.from_env(env)), \
        CeleryDispatcher(create_app(WorkerConfig.from_env(env)))


def _slow_nodes(worker: subprocess.Popen) -> list[psutil.Process]:
    """The running slow-lane workers started by ``worker`` (zombies left out)."""
    out = []
    for child in psutil.Process(worker.pid).children():
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "--lanes slow" in " ".join(child.cmdline()):
                out.append(child)
        except psutil.Error:
            pass
    return out


def _slow_pool(worker: subprocess.Popen, deadline: float) -> psutil.Process:
    """The pool process of the slow lane's worker (a child of the split worker)."""
    while time.monotonic() < deadline:
        for node in _slow_nodes(worker):
            try:
                children = node.children()  # once: a pool process may come and go between two calls
            except psutil.Error:
                continue
            if children:
                return children[0]
        time.sleep(0.1)
    raise AssertionError("the slow lane's worker did not start")


def _wait_state(store, job_id: str, states: set[str], deadline: float, log: Path) -> str:
    while time.monotonic() < deadline:
        state = store.get(job_id).state
        if state in states:
            return state
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} not in {states} (it is {store.get(job_id).state}): {log.read_text()[-3000:]}")


def test_a_small_job_finishes_while_a_slow_one_runs(ns, split_worker):
    worker, log = split_worker
    store, dispatcher = _store_and_dispatcher(ns)
    deadline = time.monotonic() + 120
    slow = jobs.submit(store, dispatcher, SLOW_SPEC, 1000, seed="slow", lane=jobs.SLOW_LANE)
    _wait_state(store, slow.id, {"enumerating"}, deadline, log)
    pool = _slow_pool(worker, deadline)  # the process that runs the slow job, now that it runs
    pool.send_signal(signal.SIGSTOP)  # the slow job now cannot finish
    try:
        small = jobs.submit(store, dispatcher, SMALL_SPEC, 100, seed="small", lane=jobs.FAST_LANE)
        assert _wait_state(store, small.id, {"done", "failed"}, deadline, log) == "done"
        assert store.get(slow.id).state == "enumerating"
    finally:
        pool.send_signal(signal.SIGCONT)
    store.cancel(slow.id, dispatcher)


def test_the_slow_lane_s_worker_ends_with_its_parent(ns, split_worker):
    worker, _ = split_worker
    deadline = time.monotonic() + 60
    while len(_slow_nodes(worker)) != 1 and time.monotonic() < deadline:  # it may be restarting after the last test
        time.sleep(0.05)
    (slow_node,) = _slow_nodes(worker)
    worker.send_signal(signal.SIGKILL)  # no clean-up code runs: the kernel tells the child (PR_SET_PDEATHSIG)
    worker.wait(10)
    assert slow_node.wait(60) is not None or not slow_node.is_running()


def test_a_dead_slow_lane_is_started_again(ns, tmp_path):
    """An out-of-memory kill of a slow build must not leave slow jobs without a worker."""
    with (tmp_path / "worker.log").open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-P", "-m", "truedeal.cli", "worker", "-c", "1", "--slow-workers", "1"],
                                env=ns.env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        first = _slow_pool(proc, deadline).parent()
        first.kill()
        while time.monotonic() < deadline:
            nodes = [n for n in _slow_nodes(proc) if n.pid != first.pid]
            if nodes:
                break
            time.sleep(0.2)
        assert nodes, (tmp_path / "worker.log").read_text()[-2000:]
        assert "starting it again" in (tmp_path / "worker.log").read_text()
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        subprocess.run(["pkill", "-KILL", "-g", str(proc.pid)], check=False)
