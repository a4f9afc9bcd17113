"""Generation jobs against a real Redis and real Celery worker processes.

Redis: 127.0.0.1:6379, database 15, under a key prefix unique to this test
session (job keys and, through kombu's ``global_keyprefix``, the broker's
keys too); everything under the prefix is deleted at the end.  Workers are
``celery -A truedeal_worker.app worker`` subprocesses, each in its own
process group.  No eager mode, no fake Redis.  The tests skip (with the
reason) only when Redis is unreachable.

Expected deals come from the engine itself (``Plan.chunk`` /
``truedeal generate --seed``): the job system must reproduce them byte for
byte whatever the workers, retries or kills.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import time
import uuid
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

redis = pytest.importorskip("redis")

import truedeal_jobs as jobs  # noqa: E402
from test_opaque_support import NT_N, NT_S  # noqa: E402
from test_pool_filters import CALM_EVERYWHERE  # noqa: E402
from truedeal.cli import cli as truedeal_cli  # noqa: E402
from truedeal.constraints.load import load_constraints  # noqa: E402
from truedeal.dealnumber import encode_batch, limbs_to_bytes  # noqa: E402
from truedeal.engine import Plan  # noqa: E402
from truedeal.evaluate import satisfies, valid  # noqa: E402
from truedeal.listing import count_cases  # noqa: E402
from truedeal.randomness import CHUNK_DEALS  # noqa: E402
from truedeal.spec import load_spec  # noqa: E402
from worker_harness import Worker, running  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
REDIS_URL = "redis://127.0.0.1:6379/15"
SESSION = uuid.uuid4().hex[:10]
PREFIX = f"tdtest-{SESSION}:"
UNIT_PREFIX = f"tdtest-{SESSION}-unit:"  # in-process tests: invisible to the workers' watchdog
WORKER_MAX_DEALS = 2_500_000  # the workers' own limit (the test client allows more)

STRONG_NT = (EXAMPLES / "strong-nt.json").read_text()
NINE_SPADES = (EXAMPLES / "nine-spades.json").read_text()
IMPOSSIBLE = '{"north": {"hcp": 37}, "east": {"hcp": 0}, "south": {"hcp": 0}, "west": {"hcp": 0}}'


def _redis_client():
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2, socket_timeout=10)
    try:
        client.ping()
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
        pytest.skip(f"Redis is not reachable at {REDIS_URL}: {exc}")
    return client


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        TRUEDEAL_REDIS_URL=REDIS_URL,
        TRUEDEAL_KEY_PREFIX=PREFIX,
        TRUEDEAL_QUEUE=f"truedeal-{SESSION}",
        TRUEDEAL_WATCHDOG_INTERVAL="1",
        TRUEDEAL_WATCHDOG_STALE="3",
        TRUEDEAL_MAX_JOB_DEALS=str(WORKER_MAX_DEALS),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def rclient():
    client = _redis_client()
    yield client
    for prefix in (PREFIX, UNIT_PREFIX):
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        for lo in range(0, len(keys), 500):
            client.delete(*keys[lo:lo + 500])


@pytest.fixture(scope="module")
def workers(rclient, tmp_path_factory):
    logdir = tmp_path_factory.mktemp("workers")
    with running([Worker(f"w{i}", _env(), logdir) for i in range(2)]) as ws:
        yield ws


@pytest.fixture(scope="module")
def store(rclient):
    """The test's client-side store: same keys as the workers, but it accepts
    more deals per job than the workers do (TRUEDEAL_MAX_JOB_DEALS)."""
    settings = jobs.JobSettings(prefix=PREFIX, stale_after=3)
    return jobs.JobStore(jobs.connect(REDIS_URL), settings)


@pytest.fixture(scope="module")
def dispatcher(rclient):
    from truedeal_worker.app import CeleryDispatcher, WorkerConfig, create_app

    return CeleryDispatcher(create_app(WorkerConfig.from_env(_env())))


@pytest.fixture()
def group():
    from truedeal.cli import cli

    return cli  # the job commands reach it through the truedeal.commands entry points


def _invoke(group, args, **kw):
    return CliRunner().invoke(group, args, env=_env(), catch_exceptions=False, **kw)


def _wait(store, job_id, states=jobs.FINAL_STATES, timeout=60.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = store.status(job_id)
        if s["state"] in states:
            return s
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} still {store.status(job_id)} after {timeout} s")


def _expected_bytes(spec_text: str, n: int, seed: str, plan: Plan | None = None) -> dict[int, bytes]:
    """Chunk by chunk, the first ``n`` deals of the spec's plan for ``seed`` (``plan``: that plan, built already)."""
    plan = Plan.build(load_constraints(spec_text)) if plan is None else plan
    total = -(-n // CHUNK_DEALS)
    out = {}
    for i in range(total):
        size = min(CHUNK_DEALS, n - i * CHUNK_DEALS)
        out[i] = limbs_to_bytes(encode_batch(plan.chunk(i, seed)[:size]))
    return out


def _job_keys(rclient) -> int:
    return sum(1 for _ in rclient.scan_iter(match=PREFIX + "job:*", count=1000))


# --------------------------------------------------------------------------- end to end


def test_submit_without_n_deals_the_scripts_produce(store, workers, group, rclient, tmp_path):
    script = tmp_path / "three.dlr"
    script.write_text("produce 3\ngenerate 100\ncondition hcp(north) >= 12\n")
    res = _invoke(group, ["submit", str(script), "--seed", "produce"])
    assert res.exit_code == 0, res.output
    s = _wait(store, res.stdout.strip(), timeout=60)
    assert s["state"] == "done" and s["progress"]["drawing"]["deals_total"] == 3, s


def test_submit_to_done_matches_generate(store, workers, group, rclient):
    n, seed = 10_000, "club night"
    res = _invoke(group, ["submit", str(EXAMPLES / "strong-nt.json"), "-n", str(n), "--seed", seed])
    assert res.exit_code == 0, res.output
    job_id = res.stdout.strip()
    assert len(job_id) == 32
    s = _wait(store, job_id, timeout=60)
    assert s["state"] == "done", s
    assert s["error"] is None
    assert s["seed"] == seed and not s["seed_generated"]
    assert s["progress"]["drawing"] == {"done": 3, "total": 3, "deals_done": n, "deals_total": n}
    assert s["progress"]["enumeration"]["done"] == s["progress"]["enumeration"]["total"] == 8  # 28 cells, 8 parts

    # partial totals: one exact entry per partition, adding up to the exact count
    plan = Plan.build(load_spec(STRONG_NT))
    partials = store.partials(job_id)
    assert sorted(partials) == list(range(8))
    assert sum(p.total for p in partials.values()) == plan.listing.total
    assert sum(p.cases for p in partials.values()) == count_cases(plan.listing)
    assert sum(p.entries for p in partials.values()) == len(plan.listing.e_weight)
    assert s["count"]["slices"] == 8
    assert s["count"]["deals"] == plan.deals_total == plan.summary().to_json()["deals"]
    assert s["count"]["cases"] == count_cases(plan.listing)

    # the deals: n of them, valid, satisfying the spec, equal to Plan.chunk for the seed
    batches = list(store.iter_deals(job_id))
    owners = np.concatenate([o for o, _ in batches])
    assert owners.shape == (n, 52)
    assert valid(owners).all()
    assert satisfies(owners, load_spec(STRONG_NT).constraints()).all()
    got = b"".join(store.iter_chunk_bytes(job_id))
    want = b"".join(_expected_bytes(STRONG_NT, n, seed).values())
    assert len(got) == 12 * n and got == want

    # ... and identical to `truedeal generate --seed` in every format checked
    for fmt in ("numbers", "pbn"):
        fetched = _invoke(group, ["fetch", job_id, "--format", fmt])
        assert fetched.exit_code == 0, fetched.output
        generated = CliRunner().invoke(truedeal_cli, ["generate", str(EXAMPLES / "strong-nt.json"), "-n", str(n),
                                                      "--seed", seed, "--format", fmt])
        assert generated.exit_code == 0
        assert fetched.stdout == generated.stdout

    # offset/limit slice the same stream
    part = _invoke(group, ["fetch", job_id, "--format", "numbers", "--offset", "4090", "--limit", "10"])
    full = _invoke(group, ["fetch", job_id, "--format", "numbers"]).stdout.splitlines()
    assert part.stdout.splitlines() == full[4090:4100]

    # status, as text and JSON
    txt = _invoke(group, ["status", job_id])
    assert txt.exit_code == 0 and "state:        done" in txt.stdout and "3/3 chunks" in txt.stdout
    js = json.loads(_invoke(group, ["status", job_id, "--json"]).stdout)
    # the API's words (GET /api/jobs/<id>), not the store's
    assert js["state"] == "done" and js["count"] == n and js["result"]["deals"] == plan.deals_total
    assert js["constraints"] == load_spec(STRONG_NT).canonical()
    assert not {"n", "spec"} & set(js)
    assert js["progress"]["fraction"] == 1.0 and js["note"] is None
    assert res.stderr == ""  # workers are running: no "no worker" note at submit


def test_generated_seed_is_stored_and_reproduces(store, dispatcher, workers):
    job = jobs.submit(store, dispatcher, NINE_SPADES, 5000)
    assert job.seed_generated and len(job.seed) == 32
    s = _wait(store, job.id)
    assert s["state"] == "done"
    got = b"".join(store.iter_chunk_bytes(job.id))
    assert got == b"".join(_expected_bytes(NINE_SPADES, 5000, job.seed).values())


# --------------------------------------------------------------------------- errors


def test_unknown_job_id(store, group, rclient):
    missing = uuid.uuid4().hex
    for call in (store.get, store.status, store.cancel, lambda j: list(store.iter_deals(j))):
        with pytest.raises(jobs.JobNotFound, match="unknown job id"):
            call(missing)
    with pytest.raises(jobs.JobNotFound, match="32 hex digits"):
        store.get("../etc")
    for cmd in ("status", "fetch", "cancel"):
        res = _invoke(group, [cmd, missing])
        assert res.exit_code == 2
        assert res.stdout == ""
        assert len(res.stderr.strip().splitlines()) == 1 and "unknown job id" in res.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (['{"north": {"hcp": [17, 15]}}', "-n", "5"], "north.hcp: range [17, 15] is reversed"),
        (['{"north": {"shape": "44"}}', "-n", "5"], "north.shape"),
        (["/no/such/spec.json", "-n", "5"], "cannot read spec file"),
        ([STRONG_NT, "-n", "0"], "at least 1"),
        ([STRONG_NT, "-n", "-3"], "at least 1"),
        ([STRONG_NT, "-n", str(WORKER_MAX_DEALS + 1)], f"at most {WORKER_MAX_DEALS:,} deals per job"),
        ([STRONG_NT, "-n", "5", "--first-board", "0"], "first board"),
        ([STRONG_NT, "-n", "5", "--first-board", "9" * 4300], "first board"),
        ([STRONG_NT, "-n", "5", "--seed", "\udcff\udcfe"], "seed must be text"),
        ([IMPOSSIBLE, "-n", "5"], "no deal satisfies this spec"),
        ([STRONG_NT], "-n: give the number of deals"),
        (["produce 0\nhcp(north) >= 12"], "at least 1"),
    ],
)
def test_submit_rejects_bad_input(group, rclient, args, message):
    before = _job_keys(rclient)
    res = _invoke(group, ["submit", *args])
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.stderr
    assert _job_keys(rclient) == before  # nothing was recorded


def test_submit_without_a_worker_says_so(group, rclient):
    """No worker heartbeat under this prefix: submit, status and status --json
    say that nobody will run the job (the watchdog lives in the workers)."""
    prefix = f"tdtest-{SESSION}-noworker:"
    env = _env(TRUEDEAL_KEY_PREFIX=prefix, TRUEDEAL_QUEUE=f"noworker-{SESSION}")
    try:
        res = CliRunner().invoke(group, ["submit", STRONG_NT, "-n", "5"], env=env, catch_exceptions=False)
        assert res.exit_code == 0, res.output
        job_id = res.stdout.strip()
        assert "no worker has been seen" in res.stderr
        txt = CliRunner().invoke(group, ["status", job_id], env=env).stdout
        assert "state:        queued" in txt and "no worker has been seen" in txt
        js = json.loads(CliRunner().invoke(group, ["status", job_id, "--json"], env=env).stdout)
        assert js["state"] == "queued" and "no worker" in js["note"]
        # a heartbeat (what a worker's timer writes) makes the note go away
        jobs.JobStore(jobs.connect(REDIS_URL), jobs.JobSettings(prefix=prefix)).worker_heartbeat("w@test", 30)
        js = json.loads(CliRunner().invoke(group, ["status", job_id, "--json"], env=env).stdout)
        assert js["note"] is None
    finally:
        for key in list(rclient.scan_iter(match=prefix + "*", count=1000)):
            rclient.delete(key)


def test_unreachable_redis_is_one_line(group):
    env = _env(TRUEDEAL_REDIS_URL="redis://127.0.0.1:1/0")
    for args in (["submit", STRONG_NT, "-n", "5"], ["status", uuid.uuid4().hex], ["worker"]):
        res = CliRunner().invoke(group, args, env=env)
        assert res.exit_code == 2, res.output
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and "cannot reach Redis at redis://127.0.0.1:1/0" in lines[0], res.stderr


def test_fetch_before_done_is_an_error(store, group):
    job = store.create(STRONG_NT, 10)  # recorded but never queued
    try:
        res = _invoke(group, ["fetch", job.id])
        assert res.exit_code == 2 and "is queued" in res.stderr and res.stdout == ""
    finally:
        store.delete(job.id)


@pytest.mark.parametrize(
    "spec, n, reason",
    [
        (IMPOSSIBLE, 10, "no deal satisfies this spec"),
        ({"script": "rnd(10) > 20 && hcp(north) > 10"}, 10, "no deal satisfies this spec"),  # (an IndexError until 2026-11-28)
        (STRONG_NT, WORKER_MAX_DEALS + 1, f"this worker takes at most {WORKER_MAX_DEALS:,} deals per job"),
    ],
)
def test_job_a_worker_cannot_run_fails_with_reason(store, dispatcher, workers, group, spec, n, reason):
    job = jobs.submit(store, dispatcher, spec, n, seed="x")
    s = _wait(store, job.id, timeout=30)
    assert s["state"] == "failed"
    assert reason in s["error"]
    txt = _invoke(group, ["status", job.id]).stdout
    assert "state:        failed" in txt and reason in txt
    res = _invoke(group, ["fetch", job.id])
    assert res.exit_code == 2 and reason in res.stderr


# --------------------------------------------------------------------------- cancel


def test_cancel_mid_job_stops_within_seconds(store, dispatcher, workers, group, rclient):
    job = jobs.submit(store, dispatcher, STRONG_NT, 2_000_000, seed="cancel me")  # 489 chunks, ~10 s
    deadline = time.monotonic() + 60
    while store.status(job.id)["progress"]["drawing"]["done"] < 20:
        assert time.monotonic() < deadline, store.status(job.id)
        time.sleep(0.05)
    t0 = time.monotonic()
    res = _invoke(group, ["cancel", job.id])
    assert res.exit_code == 0 and "cancelled" in res.stdout
    s = store.status(job.id)
    assert s["state"] == "cancelled" and s["progress"]["drawing"]["done"] < s["progress"]["drawing"]["total"]
    queue = f"{PREFIX}celery:truedeal-{SESSION}"
    while rclient.llen(queue):  # revoked chunks are discarded, the others skip at once
        assert time.monotonic() - t0 < 5, f"{rclient.llen(queue)} tasks still queued 5 s after cancel"
        time.sleep(0.05)
    done_after = store.status(job.id)["progress"]["drawing"]["done"]
    time.sleep(1.0)
    assert store.status(job.id)["progress"]["drawing"]["done"] == done_after  # nothing more is written
    assert store.get(job.id).state == "cancelled"
    assert not list(rclient.scan_iter(match=store.key(job.id, "chunk:*")))
    # the workers are free again: a small job finishes promptly
    small = jobs.submit(store, dispatcher, NINE_SPADES, 100, seed="after cancel")
    assert _wait(store, small.id, timeout=10)["state"] == "done"
    assert time.monotonic() - t0 < 15
    # cancelling again is harmless
    again = _invoke(group, ["cancel", job.id])
    assert again.exit_code == 0 and "already ended: cancelled" in again.stdout
    # ... and quiet: the revoke of ~470 queued chunks logs nothing about a
    # result backend (there is none, on purpose), and no superuser essay
    for w in workers:
        log = w.log.read_text(errors="replace")
        assert log.count("as revoked in backend") == 0, log[-2000:]
        assert "superuser privileges" not in log
        assert log.count("runs as root") <= (1 if os.geteuid() == 0 else 0)


# --------------------------------------------------------------------------- worker loss


def test_sigkill_worker_mid_job_completes_identically(store, dispatcher, workers, tmp_path):
    n, seed = 2_400_000, "kill -9"  # 586 chunks: on a fast machine 293 were done within 0.5 s of the kill
    victim = Worker("victim", _env(), tmp_path, concurrency=2)
    try:
        victim.wait_ready()
        job = jobs.submit(store, dispatcher, NINE_SPADES, n, seed=seed)
        deadline = time.monotonic() + 60
        while store.status(job.id)["progress"]["drawing"]["done"] < 30:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        os.kill(victim.busy_child(), signal.SIGKILL)  # one pool process dies mid-chunk
        time.sleep(0.1)
        victim.kill()  # then the whole worker, with whatever it had reserved
        s = store.status(job.id)
        assert s["state"] == "drawing", s  # the kills really land mid-job
    finally:
        victim.stop()
    # every chunk as Plan.chunk deals it (what an undisturbed run stores), made while the watchdog waits out its stale period
    want = b"".join(_expected_bytes(NINE_SPADES, n, seed).values())
    s = _wait(store, job.id, timeout=90)
    assert s["state"] == "done", s
    got = b"".join(store.iter_chunk_bytes(job.id))
    assert len(got) == 12 * n
    assert got == want  # nothing missing, duplicated or changed
    assert store.done_chunks(job.id) == set(range(s["progress"]["drawing"]["total"]))
    # evidence that work was really redone: a chunk started twice, or a watchdog re-queue
    attempts = store.attempts(job.id)
    print("redone:", {k: v for k, v in attempts.items() if v > 1}, "watchdog rounds:", s["requeues"])
    assert max(attempts.values()) >= 2 or s["requeues"] >= 1, (attempts, s)


# --------------------------------------------------------------------------- job logic, in process


class RecordingDispatcher:
    """Records what job logic queues (in-process tests of jobs.py; no Celery)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.lanes: set[str] = set()  # lanes the job logic queued on
        self.longest: list[int | None] = []  # each draw_chunks call's run length

    def enumerate_partitions(self, job_id, ks, lane="fast"):
        self.lanes.add(lane)
        self.calls += [("p", job_id, k) for k in ks]
        return [f"p{k}" for k in ks]

    def reduce(self, job_id, lane="fast"):
        self.lanes.add(lane)
        self.calls.append(("reduce", job_id))
        return "r"

    def draw_chunks(self, job_id, indices, lane="fast", longest=None):
        self.lanes.add(lane)
        self.longest.append(longest)
        self.calls += [("c", job_id, i) for i in indices]
        return [f"c{i}" for i in indices]

    def revoke(self, task_ids):
        self.calls.append(("revoke", tuple(task_ids)))

    def backlog(self):
        return 0


@pytest.fixture()
def unit_store(rclient):
    return jobs.JobStore(jobs.connect(REDIS_URL), jobs.JobSettings(prefix=UNIT_PREFIX, stale_after=0.2, max_requeues=2))


def _enumerate(st, disp, plans, job) -> str:
    """Run every partition of ``job`` in process (each must end ok), then its reduce; the reduce's outcome."""
    for k in range(job.parts):
        assert jobs.run_partition(st, disp, job.id, k, plans) == "ok"
    return jobs.run_reduce(st, disp, job.id, plans)


def _draw_all(st, disp, plans, job) -> bytes:
    """Draw every chunk of ``job`` in process; its stored bytes, once it is done."""
    for i in range(job.chunks):
        jobs.run_chunk(st, disp, job.id, i, plans)
    assert st.get(job.id).state == "done"
    return b"".join(st.iter_chunk_bytes(job.id))


def test_job_logic_idempotent_and_checked(unit_store):
    st, disp, plans = unit_store, RecordingDispatcher(), jobs.PlanCache()
    job = jobs.submit(st, disp, STRONG_NT, 9000, seed="s")
    assert [c for c in disp.calls if c[0] == "p"] == [("p", job.id, k) for k in range(8)]
    assert jobs.run_partition(st, disp, job.id, 0, plans) == "ok"
    first = st.partials(job.id)[0]
    # a re-delivered partition neither recounts nor double-counts
    assert jobs.run_partition(st, disp, job.id, 0, plans) == "duplicate"
    st.r.hdel(st.key(job.id, "partials"), 0)
    assert jobs.run_partition(st, disp, job.id, 0, plans) == "ok"
    assert st.partials(job.id) == {0: first}
    assert st.attempts(job.id)["p:0"] == 2
    assert jobs.run_reduce(st, disp, job.id, plans) == "waiting"
    for k in range(1, 8):
        assert jobs.run_partition(st, disp, job.id, k, plans) == "ok"
    assert ("reduce", job.id) in disp.calls
    assert jobs.run_reduce(st, disp, job.id, plans) == "ok"
    assert jobs.run_reduce(st, disp, job.id, plans) == "skipped"  # guarded: once only
    assert [c for c in disp.calls if c[0] == "c"] == [("c", job.id, i) for i in range(3)]
    for i in (2, 0, 2, 1):  # any order, with a duplicate
        jobs.run_chunk(st, disp, job.id, i, plans)
    assert st.get(job.id).state == "done"
    assert b"".join(st.iter_chunk_bytes(job.id)) == b"".join(_expected_bytes(STRONG_NT, 9000, "s").values())
    st.delete(job.id)


def test_chunk_runs_cover_every_chunk_once_in_consecutive_runs():
    from truedeal_jobs.models import LONGEST_RUN, chunk_runs

    def covered(runs):
        return [first + k for first, count in runs for k in range(count)]

    assert chunk_runs(range(10)) == [(i, 1) for i in range(10)]  # a short job: a chunk a task, as before
    runs = chunk_runs(range(1000))
    assert covered(runs) == list(range(1000)) and len(runs) >= 32 and max(c for _, c in runs) == 1000 // 32
    runs = chunk_runs(range(40 * LONGEST_RUN))
    assert covered(runs) == list(range(40 * LONGEST_RUN)) and max(c for _, c in runs) == LONGEST_RUN
    holes = [i for i in range(3000) if i % 100 != 50]  # runs never bridge a chunk that is not asked for
    assert covered(chunk_runs(holes)) == holes
    assert chunk_runs([7, 3, 4, 4, 5, 9]) == [(3, 1), (4, 1), (5, 1), (7, 1), (9, 1)]  # sorted, once each


def test_run_length_keeps_32_tasks_and_the_time_budget():
    from truedeal_jobs.models import LONGEST_RUN, run_length

    assert run_length(10) == 1 and run_length(320) == 10 and run_length(10**6) == LONGEST_RUN
    assert run_length(10**6, chunk_seconds=100.0, budget=450.0) == 4  # double dummy: 4 chunks a task
    assert run_length(10**6, chunk_seconds=1000.0, budget=450.0) == 1


def test_a_run_of_chunks_draws_each_chunk_once(unit_store):
    st, disp, plans = unit_store, RecordingDispatcher(), jobs.PlanCache()
    job = jobs.submit(st, disp, STRONG_NT, 9000, seed="run")
    for k in range(8):
        jobs.run_partition(st, disp, job.id, k, plans)
    jobs.run_reduce(st, disp, job.id, plans)
    assert jobs.run_chunks(st, disp, job.id, 1, 1, plans) == "ok"
    assert jobs.run_chunks(st, disp, job.id, 0, 3, plans) == "ok"  # chunk 1 again: a duplicate, not redrawn
    assert st.get(job.id).state == "done" and st.attempts(job.id)["c:1"] == 1
    assert b"".join(st.iter_chunk_bytes(job.id)) == b"".join(_expected_bytes(STRONG_NT, 9000, "run").values())
    assert jobs.run_chunks(st, disp, job.id, 0, 3, plans) == "skipped"  # done: nothing to do
    st.delete(job.id)


@pytest.mark.parametrize("encode_behind", [True, False])
def test_a_run_longer_than_a_write_stores_every_chunk_once_in_order(unit_store, encode_behind):
    from truedeal_jobs.runner import WRITTEN_TOGETHER

    st, disp, plans = unit_store, RecordingDispatcher(), jobs.PlanCache()
    n = CHUNK_DEALS * (2 * WRITTEN_TOGETHER + 2) + 100  # two full writes, then a short one with the short last chunk
    job = jobs.submit(st, disp, STRONG_NT, n, seed="writes")
    _enumerate(st, disp, plans, job)
    assert jobs.run_chunks(st, disp, job.id, 0, job.chunks, plans, encode_behind=encode_behind) == "ok"
    assert st.get(job.id).state == "done" and st.chunks_done(job.id, list(range(job.chunks))) == [True] * job.chunks
    assert b"".join(st.iter_chunk_bytes(job.id)) == b"".join(_expected_bytes(STRONG_NT, n, "writes").values())
    assert st.write_chunks(job.id, [(0, b"x" * 12), (1, b"y" * 12)]) == -1  # done: no chunk is overwritten
    assert b"".join(st.iter_chunk_bytes(job.id))[:12] != b"x" * 12
    st.delete(job.id)


def test_a_worker_encodes_behind_its_draws_only_with_a_core_to_spare():
    from types import SimpleNamespace

    from truedeal_worker import app as worker_app

    usable = len(os.sched_getaffinity(0))
    try:
        cases = [(usable, False), (usable + 1, False), (None, False)] + ([(usable - 1, True)] if usable > 1 else [])
        for processes, behind in cases:
            worker_app._encodes_behind(sender=SimpleNamespace(concurrency=processes))
            assert worker_app.ENCODE_BEHIND is behind, processes
    finally:
        worker_app.ENCODE_BEHIND = True


def test_a_slow_lane_job_queues_all_its_work_on_the_slow_lane(unit_store):
    assert jobs.lane_for(None) == jobs.SLOW_LANE  # the count did not finish before queueing
    counted = Plan.build(load_spec(STRONG_NT)).summary()
    took = {t: replace(counted, sizes=replace(counted.sizes, build_seconds=t)) for t in (5.0, 0.02)}
    assert jobs.lane_for(took[5.0]) == jobs.SLOW_LANE
    assert jobs.lane_for(took[0.02]) == jobs.FAST_LANE
    st, disp, plans = unit_store, RecordingDispatcher(), jobs.PlanCache()
    job = jobs.submit(st, disp, STRONG_NT, 10, seed="s", lane=jobs.SLOW_LANE)
    assert st.get(job.id).lane == jobs.SLOW_LANE
    for k in range(job.parts):
        jobs.run_partition(st, disp, job.id, k, plans)
    jobs.run_reduce(st, disp, job.id, plans)
    assert disp.lanes == {jobs.SLOW_LANE} and ("c", job.id, 0) in disp.calls
    st.delete(job.id)


def test_reduce_mismatch_fails_the_job(unit_store):
    st, disp, plans = unit_store, RecordingDispatcher(), jobs.PlanCache()
    job = jobs.submit(st, disp, STRONG_NT, 10, seed="s")
    for k in range(job.parts):
        jobs.run_partition(st, disp, job.id, k, plans)
    st.r.hset(st.key(job.id, "partials"), 3, f"{2**70}:1:1")  # a corrupted partial
    assert jobs.run_reduce(st, disp, job.id, plans) == "failed"
    s = st.status(job.id)
    assert s["state"] == "failed" and "partition totals do not add up" in s["error"]
    assert s["count"] is None
    st.delete(job.id)


def test_attempts_are_bounded(unit_store):
    st, disp, plans = unit_store, RecordingDispatcher(), jobs.PlanCache()
    job = jobs.submit(st, disp, STRONG_NT, 10, seed="s")
    st.r.hset(st.key(job.id, "attempts"), "p:1", st.settings.max_attempts)  # as if it killed its worker each time
    assert jobs.run_partition(st, disp, job.id, 1, plans) == "failed"
    assert "partition 1 was started 5 times without finishing" in st.get(job.id).error
    assert disp.calls[-1] == ("revoke", tuple(f"p{k}" for k in range(job.parts)))
    st.delete(job.id)
    # a run of chunks counts a start for each of its chunks, in one round trip
    job = jobs.submit(st, disp, STRONG_NT, 5 * CHUNK_DEALS, seed="s")
    for k in range(job.parts):
        jobs.run_partition(st, disp, job.id, k, plans)
    jobs.run_reduce(st, disp, job.id, plans)
    st.r.hset(st.key(job.id, "attempts"), "c:3", st.settings.max_attempts)
    assert jobs.run_chunks(st, disp, job.id, 0, 2, plans) == "ok"
    assert st.attempts(job.id) == {**{f"p:{k}": 1 for k in range(job.parts)}, "c:0": 1, "c:1": 1, "c:3": 5}
    assert jobs.run_chunks(st, disp, job.id, 2, 3, plans) == "failed"
    assert "draw chunks 2-4 started 5 times without finishing" in st.get(job.id).error
    assert st.done_chunks(job.id) == {0, 1}  # nothing of the failed run was drawn
    st.delete(job.id)


def test_watchdog_requeues_then_gives_up(unit_store):
    st, disp, plans = unit_store, RecordingDispatcher(), jobs.PlanCache()
    job = jobs.submit(st, disp, STRONG_NT, 9000, seed="s")
    for k in range(job.parts):
        jobs.run_partition(st, disp, job.id, k, plans)
    jobs.run_reduce(st, disp, job.id, plans)
    jobs.run_chunk(st, disp, job.id, 1, plans)  # chunks 0 and 2 "lost"
    disp.calls.clear()
    assert jobs.watchdog_scan(st, disp).requeued == {}  # not stale yet
    time.sleep(0.25)
    rep = jobs.watchdog_scan(st, disp)
    assert rep.requeued == {job.id: ["c:0", "c:2"]}
    assert disp.calls == [("c", job.id, 0), ("c", job.id, 2)]
    assert jobs.watchdog_scan(st, disp).requeued == {}  # once per stale period
    time.sleep(0.25)
    assert jobs.watchdog_scan(st, disp).requeued == {job.id: ["c:0", "c:2"]}  # round 2 of max_requeues=2
    time.sleep(0.25)
    rep = jobs.watchdog_scan(st, disp)
    assert rep.failed == [job.id]
    assert "no progress" in st.get(job.id).error
    st.delete(job.id)


def test_the_watchdog_resends_whole_runs_a_batch_of_tasks_at_a_time(rclient):
    """TRUEDEAL_WATCHDOG_BATCH counts tasks: a round re-sends the first
    ``batch`` runs of missing chunks (each as long as the job's draw tasks),
    or of a routed job's pieces, so the runs a dead worker held come back
    in one stale period, not a few chunks a period."""
    settings = jobs.JobSettings(prefix=UNIT_PREFIX, stale_after=0.2, requeue_batch=3)
    st, disp, plans = jobs.JobStore(jobs.connect(REDIS_URL), settings), RecordingDispatcher(), jobs.PlanCache()
    job = jobs.submit(st, disp, STRONG_NT, 128 * CHUNK_DEALS, seed="runs")
    assert _enumerate(st, disp, plans, job) == "ok" and st.get(job.id).run == 4
    assert jobs.run_chunk(st, disp, job.id, 5, plans) == "ok"
    disp.calls.clear()
    time.sleep(0.25)
    want = [0, 1, 2, 3, 4, 6, 7, 8, 9]  # runs 0-3, 4 (chunk 5 is in), 6-9
    assert jobs.watchdog_scan(st, disp).requeued[job.id] == [f"c:{i}" for i in want]
    assert [c[2] for c in disp.calls if c[0] == "c"] == want and disp.longest[-1] == 4
    st.delete(job.id)
    st = jobs.JobStore(jobs.connect(REDIS_URL), replace(settings, partitions=2, requeue_batch=1))
    job = jobs.submit(st, disp, NT_INVITE, 3 * CHUNK_DEALS, seed="runs", stream="v3")
    assert _enumerate(st, disp, plans, job) == "ok" and st.get(job.id).routed
    time.sleep(0.25)
    assert jobs.watchdog_scan(st, disp).requeued[job.id] == ["c:0", "c:1", "c:2"]  # partition 0's run, not 1's
    st.delete(job.id)


def test_plan_cache_is_bounded_by_memory():
    """Past its memory bound a worker keeps only the plan in use (a worker that
    built an 800 MB plan must not also keep the ones before it, nor keep it
    once another spec comes)."""
    roomy = jobs.PlanCache(maxsize=4, max_rss=1 << 50)
    for spec in (STRONG_NT, NINE_SPADES):
        roomy.get(load_spec(spec).canonical_json())
    assert len(roomy) == 2
    tight = jobs.PlanCache(maxsize=4, max_rss=1)  # every process is over 1 byte
    a = tight.get(load_spec(STRONG_NT).canonical_json())
    assert tight.get(load_spec(STRONG_NT).canonical_json()) is a  # the plan in use stays
    tight.get(load_spec(NINE_SPADES).canonical_json())
    assert len(tight) == 1


def test_a_dealer_script_job_matches_generate(store, workers, group):
    """A script goes where a JSON spec goes: the job's deals are the CLI's, and
    so are its files with a fixed dealer."""
    script = str(Path(__file__).parent / "scripts" / "12_1nt_north_or_south.dlr")
    n, seed = 3_000, "script job"
    res = _invoke(group, ["submit", script, "-n", str(n), "--seed", seed, "--dealer", "east"])
    assert res.exit_code == 0, res.output
    job_id = res.stdout.strip()
    s = _wait(store, job_id, timeout=120)
    assert s["state"] == "done", s
    for fmt in ("numbers", "pbn"):
        fetched = _invoke(group, ["fetch", job_id, "--format", fmt])
        generated = CliRunner().invoke(truedeal_cli, ["generate", script, "-n", str(n), "--seed", seed,
                                                      "--format", fmt, "--dealer", "E"])
        assert generated.exit_code == 0, generated.output
        assert fetched.stdout == generated.stdout
    assert fetched.stdout.count('[Dealer "E"]') == n


def test_a_stream_v2_job_stores_the_streams_own_words_and_matches_generate(store, workers, group):
    """Stream v2 of a spec every deal fits: the job's stored 12-byte numbers
    are the kept words of the stream itself, and its files are the CLI's."""
    n, seed = 6_000, "v2 job"
    res = _invoke(group, ["submit", "{}", "-n", str(n), "--seed", seed, "--stream", "v2"])
    assert res.exit_code == 0, res.output
    job_id = res.stdout.strip()
    s = _wait(store, job_id, timeout=120)
    assert s["state"] == "done" and s["stream"] == "v2", s
    got = b"".join(store.iter_chunk_bytes(job_id))
    plan = Plan.build(load_spec("{}"))
    assert got == b"".join(limbs_to_bytes(lm) for _, lm in plan.numbered_deals(n, seed, "v2", cards=False))
    for fmt in ("numbers", "pbn"):
        fetched = _invoke(group, ["fetch", job_id, "--format", fmt])
        generated = CliRunner().invoke(truedeal_cli, ["generate", "{}", "-n", str(n), "--seed", seed, "--stream", "v2",
                                                      "--format", fmt])
        assert generated.exit_code == 0, generated.output
        assert fetched.stdout == generated.stdout
    assert "stream v2" in _invoke(group, ["status", job_id]).stdout


def test_plan_cache_memory_bound_is_a_setting():
    assert jobs.JobSettings.from_env({}).plan_cache_mb == 512
    assert jobs.JobSettings.from_env({"TRUEDEAL_PLAN_CACHE_MB": "64"}).plan_cache_mb == 64
    with pytest.raises(jobs.SettingsError, match="TRUEDEAL_PLAN_CACHE_MB must be an integer"):
        jobs.JobSettings.from_env({"TRUEDEAL_PLAN_CACHE_MB": "lots"})


def test_submitting_lists_nothing(unit_store, monkeypatch):
    """The web request's part of a job (JobStore.create) parses and compiles
    the spec but builds no listing and enumerates no cells, however wide the
    spec: the partitions do that on the workers."""
    def refuse(*_a, **_k):
        raise AssertionError("a listing was built while submitting")

    # where the listing's steps are looked up when they run
    for name in ("cells.enumerate_cells", "build.listing_tables", "build.suit_options", "build.fill_level0"):
        monkeypatch.setattr(f"truedeal.listing.{name}", refuse)
    four = json.loads((Path(__file__).parent.parent / "bench" / "specs" / "four.json").read_text())
    specs = [STRONG_NT, four, {"north": {"hcp": [20, 22]}},
             {"condition": "hcp(north) >= 15 || hcp(south) >= 15"}]
    parts = []
    for spec in specs:
        job = jobs.submit(unit_store, RecordingDispatcher(), spec, 10, seed="s")
        parts.append(job.parts)
        unit_store.delete(job.id)
    assert parts == [8, 8, 1, 1]  # one cell, and an either/or across seats, are not cut


@pytest.mark.parametrize("spec", [
    {"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}, "south": {"spades": [5, 13]},
     "condition": "hcp(north) >= 16 || hcp(south) >= 10"},
    str(Path(__file__).parent / "scripts" / "11_levelling_coin.dlr"),  # split by who holds the club deuce
    str(Path(__file__).parent / "scripts" / "65_calm_opponents_beside_1nt.dlr"),  # honours suit by suit, no patterns
    {"condition": CALM_EVERYWHERE},  # calm opponents with no shape: pooled seats' filters
    # an either/or beside rnd, its support listed (rejection keeps half: rnd not weighed): the job's plan and generate's (790 MB in process)
    pytest.param({"condition": f"(({NT_N}) and rnd(4) == 0) or ({NT_S})"}, marks=pytest.mark.memory_mb(900)),
    str(Path(__file__).parent / "scripts" / "69_leveled_by_rnd.dlr"),  # rnd weighed: a class picked, then its listing
    # E+W's fit read on North and South: the plan of the spec read on the other side
    {"condition": "spades(north) + spades(south) >= 8 && hearts(east) + hearts(west) >= 8"},
    # East read by its hearts alone beside West: split by North's and South's hearts, East's hand weighed
    {"condition": "spades(north) + spades(south) >= 9 && hcp(north) >= 16 && hearts(east) >= 7"},
    # broad shapes left to rejection, the count exact by the patterns they exclude (the job's plan and generate's)
    pytest.param(str(Path(__file__).parent / "scripts" / "71_overcall_beside_broad_shapes.dlr"), marks=pytest.mark.memory_mb(800)),
], ids=["either-or", "card-split", "honours-by-suit", "pool-filters", "opaque-support", "rnd-weighed", "other-side",
        "one-suit-seat", "broad-shapes"])
def test_a_plan_that_cannot_be_cut_is_built_whole_with_the_same_deals(unit_store, spec):
    _assert_built_whole_with_the_same_deals(unit_store, spec)


def test_a_split_listed_one_class_at_a_time_is_built_whole_with_the_same_deals(unit_store, monkeypatch):
    from test_class_split import LADDER
    from truedeal.class_split import ClassSplit
    from truedeal.constraints import card_owner

    monkeypatch.setattr(card_owner, "MAX_SPLIT_ENTRIES", 1)  # no room to keep script 59's split whole
    plan = Plan.build(load_constraints(str(LADDER)))
    assert isinstance(plan.union, ClassSplit)
    expected = b"".join(_expected_bytes(str(LADDER), 5000, "whole", plan).values())  # generate's plan: the one just checked
    del plan
    _assert_built_whole_with_the_same_deals(unit_store, str(LADDER), expected)


def _assert_built_whole_with_the_same_deals(st, spec: str | dict, expected: bytes | None = None) -> None:
    disp, plans = RecordingDispatcher(), jobs.PlanCache()
    if expected is None:  # made before the job's plan: one plan at a time
        expected = b"".join(_expected_bytes(spec, 5000, "whole").values())
    job = jobs.submit(st, disp, load_constraints(spec) if isinstance(spec, str) else spec, 5000, seed="whole")
    assert _enumerate(st, disp, plans, job) == "ok"
    assert all(p.whole for p in st.partials(job.id).values()) and not st.slices(job.id)
    assert not st.get(job.id).sliced
    assert _draw_all(st, disp, plans, job) == expected
    st.delete(job.id)


def test_a_plan_split_by_a_seats_patterns_deals_in_a_job_as_generate_does(unit_store, monkeypatch, tmp_path):
    """A calm opponent's plan, split by East's patterns because one listing
    is too wide (here: past limits lowered for the test), is built whole by
    the job's reduce, which stores the deals that generate draws."""
    from test_pattern_split import CALM
    from truedeal.listing import build as listing_build
    from truedeal.listing import paired as paired_listing
    from truedeal_jobs import runner

    for module in (listing_build, runner):  # the whole lists 139,575 entries, its branches fewer
        monkeypatch.setattr(module, "MAX_ENTRIES", 100_000)
    monkeypatch.setattr(paired_listing, "MAX_PAIR_STATES", 16)
    path = tmp_path / "calm.dlr"
    path.write_text(CALM)
    plan = Plan.build(load_constraints(str(path)))
    assert plan.union.patterns_of == 1
    st, disp, plans = unit_store, RecordingDispatcher(), jobs.PlanCache()
    expected = b"".join(_expected_bytes(str(path), 5000, "calm", plan).values())  # generate's plan: the one just checked
    del plan
    job = jobs.submit(st, disp, load_constraints(str(path)), 5000, seed="calm")
    assert _enumerate(st, disp, plans, job) == "ok"
    assert not st.get(job.id).sliced  # the slices add up past the limit: the reduce built the plan whole
    assert _draw_all(st, disp, plans, job) == expected
    st.delete(job.id)


def test_a_rejection_job_cut_short_stores_the_chunks_prefix(unit_store, no_weighing):
    """By rejection, a job's short last chunk stops drawing once it has its
    deals (a double-dummy script's small job takes seconds, not minutes):
    its bytes are still the first deals of the full seeded chunk."""
    program = load_constraints(str(Path(__file__).parent / "scripts" / "52_rnd.dlr"))
    n, seed = CHUNK_DEALS + 700, "cut short"
    plan = Plan.build(program)
    assert not plan.exact
    expected = b"".join(limbs_to_bytes(encode_batch(plan.chunk(i, seed)[:size]))
                        for i, size in enumerate((CHUNK_DEALS, 700)))
    st, disp, plans = unit_store, RecordingDispatcher(), jobs.PlanCache()
    job = jobs.submit(st, disp, program, n, seed=seed)
    assert _enumerate(st, disp, plans, job) == "ok"
    assert _draw_all(st, disp, plans, job) == expected
    st.delete(job.id)


def test_a_long_jobs_draw_tasks_are_runs_sized_by_the_whole_job(rclient):
    """The reduce queues a long job's chunks 500 at a time, each batch in runs
    of the whole job's length (LONGEST_RUN here), not a 500-chunk batch's;
    the job records it for the watchdog's re-sends."""
    from truedeal_jobs.models import LONGEST_RUN

    chunks = 40 * LONGEST_RUN
    n = chunks * CHUNK_DEALS
    st = jobs.JobStore(jobs.connect(REDIS_URL), jobs.JobSettings(prefix=UNIT_PREFIX, max_deals=n))
    disp, plans = RecordingDispatcher(), jobs.PlanCache()
    job = jobs.submit(st, disp, STRONG_NT, n, seed="runs")
    assert _enumerate(st, disp, plans, job) == "ok"
    assert st.get(job.id).run == LONGEST_RUN and set(disp.longest) == {LONGEST_RUN}
    assert len(disp.longest) == -(-chunks // 500)  # one call per 500-chunk batch
    st.delete(job.id)


def test_a_rare_job_past_the_task_limit_fails_at_its_reduce(rclient, no_weighing):
    """A plan that keeps 1 listed deal in 20,000 (measured on the long
    pilot) would draw about 80 million deals a chunk: with a 60 s task limit
    the job fails at once, saying so; a job of a few deals runs."""
    program = load_constraints("condition hcp(north) >= 10 && rnd(20000) == 0\n")
    st = jobs.JobStore(jobs.connect(REDIS_URL), jobs.JobSettings(prefix=UNIT_PREFIX, task_seconds=60))
    disp, plans = RecordingDispatcher(), jobs.PlanCache()
    big = jobs.submit(st, disp, program, CHUNK_DEALS, seed="rare")
    assert _enumerate(st, disp, plans, big) == "failed"
    error = st.get(big.id).error
    assert "a chunk of 4,096 deals would take about" in error and "the plan keeps 0.00" in error, error
    small = jobs.submit(st, disp, program, 3, seed="rare")
    assert _enumerate(st, disp, plans, small) == "ok"
    assert len(_draw_all(st, disp, plans, small)) == 3 * 12
    for job in (big, small):
        st.delete(job.id)


def test_a_double_dummy_job_past_the_task_limit_fails_at_its_reduce(rclient, monkeypatch):
    """A script whose chunk would outlast the workers' task limit fails at
    once with the estimate (not after max_attempts killed tasks); a job small
    enough for one task runs."""
    # the CLI's dealing-bar test runs the real pilot; 16 deals (seeded: the same each run) still put a chunk at over
    # ten minutes (12 here), far past the limit; the small job draws 8 deals a batch, not 80 (a DDS solve each)
    monkeypatch.setattr("truedeal.engine.DD_PILOT_DRAWS", 16)
    monkeypatch.setattr("truedeal.engine.DD_BATCH_DRAWS", 8)
    program = load_constraints(str(Path(__file__).parent / "scripts" / "50_tricks_dd.dlr"))
    st = jobs.JobStore(jobs.connect(REDIS_URL), jobs.JobSettings(prefix=UNIT_PREFIX, task_seconds=60))
    disp, plans = RecordingDispatcher(), jobs.PlanCache()
    big = jobs.submit(st, disp, program, CHUNK_DEALS + 1, seed="dd")
    assert _enumerate(st, disp, plans, big) == "failed"
    failed = st.get(big.id)
    assert failed.state == "failed" and "a chunk of 4,096 deals would take about" in failed.error
    assert "ask for at most" in failed.error and "task may take 60 s" in failed.error
    small = jobs.submit(st, disp, program, 2, seed="dd")  # the same plan, cached: no second pilot
    assert _enumerate(st, disp, plans, small) == "ok"
    assert len(_draw_all(st, disp, plans, small)) == 2 * 12
    for job in (big, small):
        st.delete(job.id)


@pytest.mark.memory_mb(1000)  # four.json's stated budget (its whole build)
@pytest.mark.parametrize("name", ["four.json", "nt-invite-pool.json"])
def test_a_paired_listing_job_is_listed_in_slices_with_the_same_deals(unit_store, name):
    """four.json is listed by spades+hearts pair (nt-invite-pool.json too, with
    East and West weighed by rank counts): its partitions each list a slice of
    the groups, the reduce adds their totals, and the merged plan deals the
    bytes of ``truedeal generate``."""
    # three partitions (a first, a middle and a last slice, as test_paired_slices cuts it), not the default
    # eight: each of four.json's slices costs 0.6 s of a core, and the job's steps loop alike over any number
    parts = 3
    four = (Path(__file__).parent.parent / "bench" / "specs" / name).read_text()
    n, seed = CHUNK_DEALS + 300, "paired slices"
    whole = Plan.build(load_spec(four))
    expected = b"".join(limbs_to_bytes(encode_batch(whole.chunk(i, seed)[:size]))
                        for i, size in enumerate((CHUNK_DEALS, 300)))
    want_count, want_cases = whole.summary().deals, whole.listing.cases
    del whole
    gc.collect()  # a plan holds reference cycles: free it before the job's own plan is built
    st = jobs.JobStore(unit_store.r, replace(unit_store.settings, partitions=parts))
    disp, plans = RecordingDispatcher(), jobs.PlanCache()
    job = jobs.submit(st, disp, load_spec(four), n, seed=seed)
    assert job.parts == parts
    assert _enumerate(st, disp, plans, job) == "ok"
    partials = st.partials(job.id)
    assert not any(p.whole for p in partials.values()) and all(p.entries for p in partials.values())
    counted = st.get(job.id)
    assert counted.sliced and counted.summary.deals == want_count and counted.summary.cases == want_cases
    assert _draw_all(st, disp, plans, job) == expected
    st.delete(job.id)


# --------------------------------------------------------------------------- routed jobs (stream v3)

NT_INVITE = '{"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}, "south": {"hcp": [8, 9], "hearts": [5, 13]}}'


@pytest.fixture(scope="module")
def v3_bytes():
    """``v3_bytes(n, seed)``: what ``truedeal generate --stream v3 --seed`` deals of NT_INVITE, as 12-byte
    numbers.  One plan for the module's routed tests: its build and samplers take a second or more each time."""
    plan = [Plan.build(load_constraints(NT_INVITE), stream="v3")]

    def v3_bytes(n: int, seed: str) -> bytes:
        return b"".join(limbs_to_bytes(limbs) for _, limbs in plan[0].numbered_deals(n, seed, "v3", cards=False))

    yield v3_bytes
    plan.clear()
    gc.collect()  # a plan holds reference cycles: its samplers' memory goes back after the routed tests


@pytest.fixture(scope="module")
def whole_counts() -> tuple[int, int, int]:
    """NT_INVITE's plan listed whole (not routed): its deals, cases and listing total, which a routed job's count
    must equal.  Counted once for the module (a build of 0.7 s and more); the plan itself is not kept."""
    whole = Plan.build(load_constraints(NT_INVITE))
    return whole.deals_total, count_cases(whole.listing), whole.listing.total


def _routed_job(rclient, parts: int, n: int, seed: str):
    st = jobs.JobStore(jobs.connect(REDIS_URL), jobs.JobSettings(prefix=UNIT_PREFIX, partitions=parts, stale_after=0.2))
    disp = RecordingDispatcher()
    job = jobs.submit(st, disp, NT_INVITE, n, seed=seed, stream="v3")
    return st, disp, job


@pytest.mark.memory_mb(900)  # the CLI's v3 plan holds all sixteen shards' samplers beside the partitions'
@pytest.mark.parametrize("parts", [3, 16])
def test_a_routed_job_s_partitions_hold_only_their_shards_and_deal_the_cli_s_bytes(rclient, v3_bytes, whole_counts, parts):
    """Each partition is drawn in a process of its own (a PlanCache each) that
    holds only its shards; the chunks they put together are the CLI's."""
    from truedeal.shards import shards_of_part

    n, seed = 2 * CHUNK_DEALS + 700, "routed"
    st, disp, job = _routed_job(rclient, parts, n, seed)
    assert job.parts == parts
    assert _enumerate(st, disp, jobs.PlanCache(), job) == "ok"
    counted = st.get(job.id)
    deals, cases, listed = whole_counts
    assert counted.routed and not counted.sliced
    assert counted.summary.deals == deals and counted.summary.cases == cases
    assert sum(counted.shard_totals) == listed
    items = sorted(c[2] for c in disp.calls if c[0] == "c")
    assert items == list(range(parts * job.chunks))  # every partition's piece of every chunk
    for k in reversed(range(parts)):
        plans = jobs.PlanCache()  # this partition's own worker process
        for item in range(k * job.chunks, (k + 1) * job.chunks):
            assert jobs.run_chunk(st, disp, job.id, item, plans) == "ok"
        (plan,) = plans._plans.values()
        assert plan.listing.part.built == tuple(shards_of_part(k, parts))
    assert st.get(job.id).state == "done"
    assert b"".join(st.iter_chunk_bytes(job.id)) == v3_bytes(n, seed)
    assert not list(rclient.scan_iter(match=st.key(job.id, "piece:*")))  # put together and deleted
    st.delete(job.id)


@pytest.mark.memory_mb(900)
def test_a_routed_job_s_pieces_are_idempotent_and_the_watchdog_resends_the_missing_ones(rclient, v3_bytes):
    n, seed = CHUNK_DEALS + 5, "routed twice"
    st, disp, job = _routed_job(rclient, 2, n, seed)
    assert _enumerate(st, disp, jobs.PlanCache(), job) == "ok"
    plans = jobs.PlanCache()
    assert jobs.run_chunks(st, disp, job.id, 0, 2, plans) == "ok"  # partition 0's pieces of both chunks
    assert jobs.run_chunks(st, disp, job.id, 0, 2, plans) == "duplicate"
    assert st.pieces_present(job.id, [0, 1]) == [{0}, {0}]
    disp.calls.clear()
    time.sleep(0.3)
    report = jobs.watchdog_scan(st, disp)
    assert report.requeued[job.id] == ["c:2", "c:3"]  # partition 1's pieces of chunks 0 and 1
    assert [c[2] for c in disp.calls if c[0] == "c"] == [2, 3]
    assert jobs.run_chunks(st, disp, job.id, 2, 2, jobs.PlanCache()) == "ok"
    assert st.get(job.id).state == "done"
    assert b"".join(st.iter_chunk_bytes(job.id)) == v3_bytes(n, seed)
    assert jobs.run_chunks(st, disp, job.id, 2, 2, plans) == "skipped"  # done: nothing is drawn again
    st.delete(job.id)


def test_a_weighed_job_on_real_workers_matches_generate(store, workers, group):
    """A script whose rnd is weighed (tests/scripts/69) as a job on the
    Celery workers: its count is the exact expected count, and its deals
    are generate's, byte for byte."""
    script = str(Path(__file__).parent / "scripts" / "69_leveled_by_rnd.dlr")
    n, seed = 2 * CHUNK_DEALS + 7, "weighed workers"
    res = _invoke(group, ["submit", script, "-n", str(n), "--seed", seed])
    assert res.exit_code == 0, res.output
    # the references are made while the workers run the job
    deals_expected = Plan.build(load_constraints(script)).summary().deals_expected
    generated = CliRunner().invoke(truedeal_cli, ["generate", script, "-n", str(n), "--seed", seed])
    s = _wait(store, res.stdout.strip(), timeout=90)
    assert s["state"] == "done", s
    assert s["count"]["deals"] is None and s["count"]["deals_expected"] == deals_expected
    fetched = _invoke(group, ["fetch", s["id"], "--format", "pbn"])
    assert fetched.exit_code == 0 and generated.exit_code == 0
    assert fetched.stdout == generated.stdout


@pytest.mark.memory_mb(900)  # the CLI's v3 plan (v3_bytes) holds all sixteen shards' samplers, when this test builds it
def test_a_routed_job_on_real_workers_matches_generate(store, workers, group, v3_bytes):
    n, seed = 3 * CHUNK_DEALS + 11, "routed workers"
    res = _invoke(group, ["submit", NT_INVITE, "-n", str(n), "--seed", seed, "--stream", "v3"])
    assert res.exit_code == 0, res.output
    # the references are made while the workers run the job
    want = v3_bytes(n, seed)
    generated = CliRunner().invoke(truedeal_cli, ["generate", NT_INVITE, "-n", str(n), "--seed", seed, "--stream", "v3"])
    s = _wait(store, res.stdout.strip(), timeout=90)
    assert s["state"] == "done", s
    assert s["progress"]["enumeration"]["total"] == 8
    assert b"".join(store.iter_chunk_bytes(s["id"])) == want
    fetched = _invoke(group, ["fetch", s["id"], "--format", "pbn"])
    assert fetched.exit_code == 0 and generated.exit_code == 0
    assert fetched.stdout == generated.stdout


@pytest.mark.memory_mb(900)  # the CLI's v3 plan for the reference bytes holds all sixteen shards' samplers
def test_a_routed_job_survives_a_killed_worker_with_the_cli_s_bytes(store, dispatcher, workers, v3_bytes, tmp_path):
    """A worker drawing a routed job's pieces is killed (SIGKILL, no clean-up):
    the watchdog re-sends its partition's missing pieces, another worker
    builds that partition's shards, and the job ends with the CLI's bytes,
    nothing missing or twice."""
    n, seed = 200 * CHUNK_DEALS, "routed kill -9"  # a second of draws: the kill lands as the first pieces are stored
    victim = Worker("routed-victim", _env(), tmp_path, concurrency=2)
    try:
        victim.wait_ready()
        job = jobs.submit(store, dispatcher, NT_INVITE, n, seed=seed, stream="v3")
        deadline = time.monotonic() + 90
        while store.status(job.id)["state"] != "drawing" or not any(store.pieces_present(job.id, range(8))):
            assert time.monotonic() < deadline, store.status(job.id)
            time.sleep(0.01)
        os.kill(victim.busy_child(), signal.SIGKILL)  # a pool process dies mid-run of pieces
        victim.kill()
        assert store.status(job.id)["state"] == "drawing"  # the kill really lands mid-job
    finally:
        victim.stop()
    want = v3_bytes(n, seed)  # made while the watchdog waits out its stale period
    s = _wait(store, job.id, timeout=120)
    assert s["state"] == "done", s
    assert b"".join(store.iter_chunk_bytes(job.id)) == want
    attempts = store.attempts(job.id)
    print("pieces started twice:", sum(v > 1 for v in attempts.values()), "watchdog rounds:", s["requeues"])
    assert max(attempts.values()) >= 2 or s["requeues"] >= 1, (attempts, s)  # work was really redone
