"""The one harness for real Celery worker processes in the tests.

A :class:`Worker` is ``python -m celery -A truedeal_worker.app worker`` in
its own process group (so that stopping it stops its pool children too),
pointed at Redis by the ``TRUEDEAL_*`` variables of ``env``, logging to a
file that failures quote.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path


class Worker:
    """A real worker subprocess: ``concurrency`` pool processes, log in ``logdir/<name>.log``."""

    def __init__(self, name: str, env: Mapping[str, str], logdir: Path, concurrency: int = 1) -> None:
        self.name = name
        self.log = Path(logdir) / f"{name}.log"
        cmd = [sys.executable, "-m", "celery", "-A", "truedeal_worker.app", "worker", "-c", str(concurrency),
               "-n", f"{name}-{uuid.uuid4().hex[:8]}@%h", "-l", "info", "--without-mingle", "--without-gossip"]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(cmd, env=dict(env), stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True, cwd=logdir)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_ready(self, timeout: float = 60) -> Worker:
        """Wait until Celery logs that the worker is ready; RuntimeError with
        the log's tail if it exits or takes longer than ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while b" ready." not in self.log.read_bytes():
            if not self.alive():
                raise RuntimeError(f"worker {self.name} exited: {self.tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"worker {self.name} not ready after {timeout} s: {self.tail()}")
            time.sleep(0.1)
        return self

    def children(self) -> list[int]:
        """Process ids of its pool processes."""
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.proc.pid)], capture_output=True, text=True).stdout
        return [int(x) for x in out.split()]

    def busy_child(self, timeout: float = 10) -> int:
        """A pool process that is running (state R: busy with a task, as the
        pool's processes only compute while they run one), waited for up to
        ``timeout`` s; else any pool process."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for pid in self.children():
                try:
                    stat = Path(f"/proc/{pid}/stat").read_text()
                except OSError:
                    continue
                if stat.rpartition(")")[2].split()[0] == "R":
                    return pid
            time.sleep(0.005)
        children = self.children()
        assert children, "the worker has no pool processes"
        return children[0]

    def kill(self) -> None:
        """SIGKILL the whole worker, main process and pool children."""
        self._signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> None:
        """Stop it with ``sig`` (a warm shutdown by default), SIGKILL after ``timeout`` s."""
        if not self.alive():
            return
        self._signal(sig)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def tail(self, n: int = 40) -> str:
        if not self.log.exists():
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])


def stop_all(workers: Iterable[Worker], sig: int = signal.SIGTERM, timeout: float = 20) -> None:
    """:meth:`Worker.stop` for several workers at once: all are signalled
    before any is waited for, so that their shutdowns (a second or more
    each) overlap."""
    running = [w for w in workers if w.alive()]
    for w in running:
        w._signal(sig)
    deadline = time.monotonic() + timeout
    for w in running:
        try:
            w.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            w.kill()


@contextlib.contextmanager
def running(workers: list[Worker]) -> Iterator[list[Worker]]:
    """``workers``, each once it is ready; all stopped together (:func:`stop_all`) on the way out."""
    try:
        for w in workers:
            w.wait_ready()
        yield workers
    finally:
        stop_all(workers)
