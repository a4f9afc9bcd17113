"""Sets as jobs on real Celery workers with a real Redis (db 15).

Two ``celery -A truedeal_worker.app worker`` subprocesses deal and solve a
seeded set; the stored boards, DD tables and par must equal what
``truedeal.tournament.run.make_set`` gives in-process for the same seed, and
a worker SIGKILLed mid-solve must not change the result.

The in-process tests of the set logic use a key prefix of their own
(``UNIT_PREFIX``), and the kill test a prefix and queue of its own, so that
neither is seen by the two workers the other tests share.
"""

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

redis = pytest.importorskip("redis")

from cli_runner import run  # noqa: E402
from truedeal.tournament.run import make_set  # noqa: E402
from truedeal.tournament.setfile import parse_set  # noqa: E402
from truedeal_jobs import sets as setjobs  # noqa: E402
from truedeal_jobs.set_store import SetStore  # noqa: E402
from worker_harness import Worker, running  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REDIS_URL = "redis://127.0.0.1:6379/15"
SESSION = uuid.uuid4().hex[:10]
PREFIX = f"tdsets-{SESSION}:"
UNIT_PREFIX = f"{PREFIX}unit:"  # in-process tests: invisible to the shared workers' watchdog
KILL_PREFIX = f"{PREFIX}kill:"  # the kill test's own workers and sets


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(TRUEDEAL_REDIS_URL=REDIS_URL, TRUEDEAL_KEY_PREFIX=PREFIX, TRUEDEAL_QUEUE=f"sets-{SESSION}",
               TRUEDEAL_WATCHDOG_INTERVAL="1", TRUEDEAL_WATCHDOG_STALE="3", PYTHONUNBUFFERED="1",
               TRUEDEAL_DDS_THREADS="1")
    env.update(extra)
    return env


def _kill_env(**extra: str) -> dict[str, str]:
    return _env(TRUEDEAL_KEY_PREFIX=KILL_PREFIX, TRUEDEAL_QUEUE=f"sets-{SESSION}-kill", **extra)


@pytest.fixture(scope="module")
def rclient():
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2, socket_timeout=10)
    try:
        client.ping()
    except redis.exceptions.ConnectionError as exc:
        pytest.skip(f"Redis is not reachable: {exc}")
    yield client
    keys = list(client.scan_iter(match=PREFIX + "*", count=1000))
    if keys:
        client.delete(*keys)


def _sender(env):
    from truedeal_worker.app import WorkerConfig, create_app

    app = create_app(WorkerConfig.from_env(env))
    return lambda name, args: app.send_task(name, args=list(args), ignore_result=True)


@pytest.fixture(scope="module")
def workers(rclient, tmp_path_factory):
    """Two workers, shared by the tests that need workers running (a start costs a core a second or more)."""
    logdir = tmp_path_factory.mktemp("workers")
    with running([Worker(f"w{i}", _env(), logdir) for i in range(2)]) as ws:
        yield ws


# 9 boards, so 3 solve chunks of 4, 4 and 1 (the second holds boards of both sessions): work for two workers,
# and a chunk still queued when a killed worker dies holding another.  (The module solves it 3 times.)
SET = {"event": "Jobs", "site": "here", "date": "2025-03-14",
       "sessions": [{"name": "1", "boards": [1, 7]}, {"name": "2", "boards": [1, 2]}],
       "spec": {}, "dealer": "rotate", "vulnerability": "rotate", "double_dummy": True}
BOARDS = 9


def _wait(rclient, set_id, timeout=600, prefix=PREFIX, states=("done", "failed")):
    """The set's status once it is in one of ``states``, and its phases polled until then."""
    deadline = time.monotonic() + timeout
    phases = []
    while time.monotonic() < deadline:
        st = setjobs.set_status(SetStore(rclient, prefix), set_id)
        phases.append(st["phase"])
        if st["state"] in states:
            return st, phases
        time.sleep(0.05)
    raise AssertionError(f"set not {' or '.join(states)}: {phases[-1]}")


def _received(worker: Worker, task: str) -> int:
    """How many ``task`` messages the worker has taken (its log says so as each arrives)."""
    return sum(f"Task {task}[" in line and line.endswith("] received")
               for line in worker.log.read_text(errors="replace").splitlines())


@pytest.fixture(scope="module")
def expected(tmp_path_factory):
    out = tmp_path_factory.mktemp("ref")
    make_set(parse_set(SET), ROOT, out, seed="jobs")
    return out


def test_worker_killed_mid_solve_loses_nothing(rclient, expected, tmp_path):
    store = SetStore(rclient, KILL_PREFIX)  # its own prefix and queue: the shared workers take no part
    first = Worker("k1", _kill_env(), tmp_path)
    first.wait_ready()
    set_id = setjobs.submit_set(store, SET, ROOT, seed="jobs")
    _sender(_kill_env())(setjobs.DEAL_TASK, (set_id,))
    deadline = time.monotonic() + 120
    while setjobs.set_status(store, set_id)["solved"] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    # chunk 0 is solved; the worker (one process, one message reserved at a time) takes chunk 1 next and is
    # killed as soon as its log says so: it dies holding that chunk unsolved (its DDS takes a few hundred ms)
    while _received(first, setjobs.SOLVE_TASK) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    first.stop(signal.SIGKILL)
    at_kill = setjobs.set_status(store, set_id)
    assert at_kill["state"] == "solving"
    # stale after 1 s: this lone worker runs the watchdog only between its tasks, so it re-sends no chunk in progress
    second = Worker("k2", _kill_env(TRUEDEAL_WATCHDOG_STALE="1"), tmp_path)
    try:
        second.wait_ready()
        # nothing is re-sent by the test: the killed worker's unacknowledged chunk would come back only
        # after the visibility timeout (an hour); the watchdog re-sends it
        st, _ = _wait(rclient, set_id, prefix=KILL_PREFIX)
    finally:
        second.stop()
    assert st["state"] == "done", st
    # the lost chunk came back through the watchdog -- unless, on a fast
    # machine, the killed worker had solved every board before the kill
    log = second.log.read_text()
    resent = "watchdog: set " in log and "solve chunks re-sent" in log
    assert resent or at_kill["solved"] == BOARDS, (at_kill, log[-2000:])
    for name in ("1", "2"):
        assert setjobs.set_file(store, set_id, name, "pbn") == (expected / f"{name}.pbn").read_bytes()


def test_watchdog_resends_then_fails_a_set_that_makes_no_progress(rclient):
    """No worker at all: each round re-sends the deal; past the round limit the set fails with the reason."""
    set_id = setjobs.submit_set(SetStore(rclient, UNIT_PREFIX), {**SET, "double_dummy": False}, ROOT, seed="stuck")
    sent = []

    def round_now() -> list[str]:
        rclient.delete(f"{UNIT_PREFIX}set:{{{set_id}}}:watchdog")  # the per-period lock, as if a period had passed
        return setjobs.watchdog_sets(SetStore(rclient, UNIT_PREFIX), lambda name, args: sent.append((name, args)), 0.0, 2)

    assert round_now() == [f"{set_id}: deal re-sent"] and round_now() == [f"{set_id}: deal re-sent"]
    assert sent == [(setjobs.DEAL_TASK, (set_id,))] * 2
    assert round_now() == [f"{set_id}: failed"]
    st = setjobs.set_status(SetStore(rclient, UNIT_PREFIX), set_id)
    assert st["state"] == "failed" and "re-sent 2 times" in st["error"]
    assert round_now() == []  # no longer looked after


def test_a_cancelled_set_does_no_more_work(rclient):
    """Cancelled while queued, its deal task does nothing; cancelled while solving,
    its solve tasks do nothing and it never turns done; cancelling again, or a
    finished set, changes nothing.  The watchdog stops looking after it."""
    store = SetStore(rclient, UNIT_PREFIX)
    sent: list = []
    queued = setjobs.submit_set(store, SET, ROOT, seed="c1")
    assert setjobs.cancel_set(store, queued) == "cancelled"
    assert setjobs.run_deal(store, queued, lambda *a: sent.append(a)) == 0 and store.deals(queued, 0) is None
    solving = setjobs.submit_set(store, SET, ROOT, seed="c2")
    assert setjobs.run_deal(store, solving, lambda *a: sent.append(a)) == 3 and len(sent) == 3  # 9 boards in chunks of 4
    assert setjobs.run_solve(store, solving, 0) == "solved"
    assert setjobs.cancel_set(store, solving) == "cancelled"
    assert setjobs.run_solve(store, solving, 1) == "skipped: the set is cancelled"
    st = setjobs.set_status(store, solving)
    assert st["state"] == "cancelled" and store.solved_chunks(solving) == {0} and st["solved"] == 4
    assert setjobs.cancel_set(store, solving) == "cancelled"
    assert queued not in store.active() and solving not in store.active()
    assert setjobs.watchdog_sets(store, lambda *a: sent.append(a), 0.0, 5) == [] and len(sent) == 3


def _committed_set(cli, setfile: Path, folder: Path, meanwhile: Callable[[], None]) -> str:
    """Commit a set to a public value to come; check nothing is dealt and the manifest says so; deal it.
    ``meanwhile`` is done in the 2 s the workers are given to deal it wrongly."""
    sub = cli("submit-set", str(setfile), "--public-value-to-come", "Friday's lottery")
    assert sub.returncode == 0 and "committed" in sub.stderr, sub.stderr
    set_id = sub.stdout.strip()
    assert json.loads(cli("status", set_id, "--json").stdout)["state"] == "committed"
    shown_by = time.monotonic() + 2  # a worker that wrongly dealt it would have by then
    meanwhile()
    time.sleep(max(0.0, shown_by - time.monotonic()))
    assert json.loads(cli("status", set_id, "--json").stdout)["state"] == "committed"
    got = cli("fetch-set", set_id, "--out", str(folder))
    assert got.returncode == 0 and sorted(p.name for p in folder.iterdir()) == ["manifest.json"], got.stderr
    announced = json.loads((folder / "manifest.json").read_text())
    assert announced["public_value"] is None and announced["public_value_to_come"] == "Friday's lottery"
    (folder / "manifest.json").rename(folder.parent / "announced.json")
    dealt = cli("deal-set", set_id, "--public-value", "7 11 19 28 36 44")
    assert dealt.returncode == 0 and dealt.stdout.strip() == set_id, dealt.stderr
    return set_id


def test_the_watchdog_waits_on_no_committed_set_and_looks_after_a_revealed_one(rclient):
    """A committed set waits for its value, not for a worker: the watchdog leaves it alone.  Once the
    value is given it is queued and watched in one step, so a lost deal task is sent again."""
    store, sent = SetStore(rclient, UNIT_PREFIX), []
    set_id = setjobs.submit_set(store, SET, ROOT, to_come="the draw")
    assert set_id not in store.active()
    assert setjobs.watchdog_sets(store, lambda *a: sent.append(a), 0.0, 5) == [] and sent == []
    setjobs.reveal_set(store, set_id, "12 34")  # and the process dies before it sends the deal task
    assert set_id in store.active() and store.state(set_id) == "queued"
    assert setjobs.watchdog_sets(store, lambda *a: sent.append(a), 0.0, 5, now=time.time() + 1) == [
        f"{set_id}: deal re-sent"]
    assert sent == [(setjobs.DEAL_TASK, (set_id,))]
    assert setjobs.cancel_set(store, set_id) == "cancelled"


def test_solve_chunks_spread_a_set_over_the_workers():
    """At least 64 solve tasks when a set has 256 boards or more, 4 to 25 boards each."""
    sizes = {n: setjobs.chunk_size(n) for n in (1, 30, 81, 256, 300, 1600, 10_000)}
    assert sizes == {1: 4, 30: 4, 81: 4, 256: 4, 300: 5, 1600: 25, 10_000: 25}


def test_cli_submits_a_set_to_the_workers_and_fetches_its_files(rclient, expected, workers, tmp_path):
    """`truedeal submit-set`, `status`, `fetch-set`: the two workers solve the set (both of them, its
    progress shown in boards) and the files equal `truedeal set`'s (make_set) for the same seed.
    A set committed to a public value still to come waits, undealt, with its manifest published, until
    `deal-set` gives the value; then `truedeal verify` passes on its fetched manifest, keys and files.
    (One test for both: each DD set the workers solve is a few seconds of both cores.)"""
    setfile, plain = tmp_path / "set.json", tmp_path / "plain.json"
    setfile.write_text(json.dumps(SET))
    plain.write_text(json.dumps({**SET, "double_dummy": False}))  # the commitment needs no DD: spare a worker's solve

    def cli(*args: str) -> subprocess.CompletedProcess:
        """``truedeal ARGS`` in this process (a CLI start is half a second of a core); the first is a real one."""
        ran = run(*args, env=_env())
        return subprocess.CompletedProcess(args, ran.returncode, ran.out, ran.err)

    def done(set_id: str) -> None:
        # waited for in Redis: a `truedeal status` a second cost a core a third
        assert _wait(rclient, set_id)[0]["state"] == "done", "\n".join(w.tail() for w in workers)
        assert json.loads(cli("status", set_id, "--json").stdout)["state"] == "done"

    before = [w.log.stat().st_size for w in workers]  # the workers are shared: what they log from here on
    sub = subprocess.run([sys.executable, "-m", "truedeal.cli", "submit-set", str(setfile), "--seed", "jobs"],
                         env=_env(), capture_output=True, text=True, timeout=120)
    assert sub.returncode == 0, sub.stderr
    set_id = sub.stdout.strip()
    phases = _wait(rclient, set_id, 120, states=("solving", "done", "failed"))[1]
    assert phases[-1].startswith("solving ") and phases[-1].endswith(f" / {BOARDS} boards"), phases
    early = cli("fetch-set", set_id, "--out", str(tmp_path / "early"))
    assert early.returncode in (0, 2)  # 2 with one line while it is dealt or solved
    committed = _committed_set(cli, plain, tmp_path / "committed", meanwhile=lambda: done(set_id))
    done(committed)
    folder = tmp_path / "committed"
    assert cli("fetch-set", committed, "--out", str(folder)).returncode == 0
    final = json.loads((folder / "manifest.json").read_text())
    assert final == {**json.loads((tmp_path / "announced.json").read_text()), "public_value": "7 11 19 28 36 44"}
    verified = cli("verify", str(folder / "manifest.json"), str(folder / "keys.json"), "--boards", str(folder))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert cli("deal-set", committed, "--public-value", "1").returncode == 2  # dealt already
    got = cli("fetch-set", set_id, "--out", str(tmp_path / "files"))
    assert got.returncode == 0, got.stderr
    for name in ("1", "2"):
        for ext in ("pbn", "lin", "dup", "csv"):
            assert (tmp_path / "files" / f"{name}.{ext}").read_bytes() == (expected / f"{name}.{ext}").read_bytes()
    assert setjobs.set_status(SetStore(rclient, PREFIX), set_id)["solved"] == BOARDS
    logs = [w.log.read_bytes()[at:].decode(errors="replace") for w, at in zip(workers, before)]
    assert all("set_solve" in log for log in logs)  # both workers solved chunks
    status = cli("status", set_id)
    assert status.returncode == 0 and "state:        done" in status.stdout
    missing = cli("fetch-set", "0123456789abcdef", "--out", str(tmp_path / "none"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    late = cli("cancel", set_id)
    assert late.returncode == 0 and late.stdout == f"set {set_id} had already ended: done\n"
    unknown = cli("cancel", "0123456789abcdef")
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1 and "no set" in unknown.stderr
