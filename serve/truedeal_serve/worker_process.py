"""The Celery worker of ``truedeal serve``: ``truedeal worker -c N`` as a child
process group, stopped warm, then cold, then killed."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .processes import group_alive, send_signal, spawn, wait_exit, warn


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
            self.proc = spawn(self.argv(), env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=None,
                               pass_fds=keep_fds)

    def stop(self, grace: float, hurry: Callable[[], int]) -> None:
        """Warm shutdown (SIGTERM to the main process: running tasks finish);
        after ``grace`` s, or when ``hurry() >= 2``, a cold shutdown (SIGQUIT:
        Celery's soft shutdown re-queues unfinished tasks); then SIGKILL."""
        if self.proc is None:
            return
        pid = self.proc.pid
        if self.proc.poll() is None:
            send_signal(pid, signal.SIGTERM)
            if not wait_exit(self.proc, grace, lambda: hurry() >= 2):
                if hurry() < 2:
                    warn(f"the worker is still busy after {grace:.0f} s; cold shutdown "
                          "(unfinished tasks go back to the queue)")
                send_signal(pid, signal.SIGQUIT)
                if not wait_exit(self.proc, 45.0, lambda: hurry() >= 3):
                    warn("killing the worker")
                    send_signal(pid, signal.SIGKILL, group=True)
                    self.proc.wait(10)
        # pool processes are in the worker's group: none may outlive it
        deadline = time.monotonic() + 10
        while group_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if group_alive(pid):
            send_signal(pid, signal.SIGKILL, group=True)
