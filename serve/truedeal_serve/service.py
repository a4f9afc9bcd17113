"""Redis, the worker and the web server of ``truedeal serve``, started and
stopped in order."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from .embedded_redis import EmbeddedRedis, find_redis_server
from .processes import MAX_SOCKET_PATH, ServeError, log_tail, say, started, warn
from .web import Switch, load_web_app
from .worker_process import WorkerProcess

if TYPE_CHECKING:  # werkzeug is imported when the server starts
    from .webserver import BoundedWSGIServer


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
        self.server: BoundedWSGIServer | None = None
        self.server_thread: threading.Thread | None = None
        self.signals = 0
        self.stop_event = threading.Event()

    # ------------------------------------------------------------ signals

    def _on_signal(self, signum, _frame) -> None:
        self.signals += 1
        if self.signals == 1:
            warn(f"{signal.Signals(signum).name}: shutting down (again to hurry, a third time to kill)")
        elif self.signals == 2:
            warn("hurrying: cold shutdown of the worker")
        else:
            warn("killing what is left")
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
        if len(str(data_dir / "redis.sock")) <= MAX_SOCKET_PATH:
            return data_dir
        short = Path(tempfile.mkdtemp(prefix="td-"))
        self.temp_dirs.append(short)
        return short

    def start(self) -> None:
        binary, origin = find_redis_server(self.redis_binary)
        data_dir = self._data_dir()
        switch = Switch()
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
            server = self.server = make_web_server(self.host, self.port, switch, fd=sock.fileno(),
                                                   max_threads=self.max_threads, timeout=self.request_timeout)
        except OSError as exc:
            raise ServeError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from None
        finally:
            sock.close()  # the server holds its own duplicate

        redis = self.redis = EmbeddedRedis(binary, data_dir, self._socket_dir(data_dir), self.appendfsync)
        # children inherit the data-dir lock: a new serve cannot take the
        # directory while an old worker or Redis still runs (e.g. after a SIGKILL)
        keep = (self.lock_fd,) if self.lock_fd is not None else ()
        redis.start(keep_fds=keep)
        url = redis.url
        os.environ["TRUEDEAL_REDIS_URL"] = url  # the web app (in this process) and the worker read it
        where = "deleted at exit" if not self.keep_data else "kept"
        say(f"redis    {url}  (redis-server {redis.version} from {origin}, AOF on, "
             f"appendfsync {self.appendfsync}; data in {data_dir}, {where})")

        worker = self.worker = WorkerProcess(self.workers, dict(os.environ), data_dir / "worker.log", self.loglevel)
        worker.start(keep_fds=keep)
        say(f"workers  {self.workers} process{'es' if self.workers != 1 else ''} "
             f"(truedeal worker -c {self.workers}, pid {started(worker.proc).pid}; banner in {worker.log})")

        try:
            app, why = load_web_app(url)
        except Exception as exc:
            raise ServeError(f"the web app failed to start: {type(exc).__name__}: {exc}") from None
        switch.app = app
        self.server_thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                                              name="truedeal-web", daemon=True)
        self.server_thread.start()
        web = self.web_url()
        if why:
            say(f"web      {web}healthz only: {why}")
        else:
            say(f"web      {web}")
        info = {"web": web, "redis_url": url, "data_dir": str(data_dir), "pid": os.getpid(),
                "redis_pid": started(redis.proc).pid, "worker_pid": started(worker.proc).pid, "workers": self.workers,
                "web_app": "truedeal_web" if not why else "healthz"}
        (data_dir / "serve.json").write_text(json.dumps(info, indent=2) + "\n")
        say(f"job commands: export TRUEDEAL_REDIS_URL={url}")
        say("ready; press Ctrl-C to stop")

    def web_url(self) -> str:
        host = self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/"

    # ------------------------------------------------------------ run

    def watch(self) -> int:
        """Block until a signal (0) or until Redis or the worker dies (1)."""
        redis, worker = self.redis, self.worker
        assert redis is not None and worker is not None  # watch() runs after start()
        while not self.stop_event.wait(0.25):
            for name, proc, log in (("redis-server", started(redis.proc), redis.log),
                                    ("the worker", started(worker.proc), worker.log)):
                if proc.poll() is not None:
                    warn(f"{name} exited with code {proc.returncode}; stopping everything. Its log ({log}):\n{log_tail(log)}")
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
            say("stopped")
        return code
