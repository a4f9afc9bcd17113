"""Worker processes per lane: small jobs never wait behind slow ones.

A job whose spec counted slowly before it was queued runs in the slow lane
(:func:`truedeal_jobs.lane_for`), on its own queue.  ``truedeal worker``
(``--lanes split``, the default, and what ``truedeal serve`` runs) serves
the fast lane with its ``-c`` processes and starts a second Celery worker,
a child process, for the slow lane: however many slow builds run, the fast
lane's processes stay free for small jobs.  A cluster may instead run
dedicated nodes (``--lanes fast`` / ``--lanes slow``), or one node for both
(``--lanes shared``, no reservation; also a plain ``celery worker``).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading

LANES = ("split", "fast", "slow", "shared")
#: Set in the slow-lane child: the pid of the worker that started it.
PARENT_ENV = "TRUEDEAL_WORKER_PARENT"
#: How often a split worker checks that its slow lane's worker still runs.
RESTART_SECONDS = 2.0

logger = logging.getLogger("truedeal.worker")


def queue_args(lanes: str, queue: str) -> list[str]:
    """Celery ``--queues`` for a node serving ``lanes`` (none: the app's both queues)."""
    from truedeal_jobs.dispatch import slow_queue  # Celery: not for `truedeal worker --help`

    if lanes in ("split", "fast"):
        return [f"--queues={queue}"]
    if lanes == "slow":
        return [f"--queues={slow_queue(queue)}"]
    return []


class SlowLane:
    """The slow lane's worker of a split worker: a child in this process
    group (so a group signal reaches it) that dies with this process
    (:func:`follow_parent`), and is started again if it dies on its own (a
    slow build can be killed for its memory)."""

    def __init__(self, processes: int, loglevel: str) -> None:
        self.argv = [sys.executable, "-P", "-m", "truedeal.cli", "worker", "--lanes", "slow",
                     "-c", str(processes), "-l", loglevel]
        self.proc = self._start()
        self._stopping = threading.Event()
        threading.Thread(target=self._watch, name="slow-lane-watch", daemon=True).start()

    def _start(self) -> subprocess.Popen:
        return subprocess.Popen(self.argv, env={**os.environ, PARENT_ENV: str(os.getpid())}, stdin=subprocess.DEVNULL)

    def _watch(self) -> None:
        while not self._stopping.wait(RESTART_SECONDS):
            if self.proc.poll() is not None and not self._stopping.is_set():
                logger.warning("the slow lane's worker exited (code %s); starting it again", self.proc.returncode)
                self.proc = self._start()

    def begin_stop(self, **_signal_kw: object) -> None:
        """Start its warm shutdown (SIGTERM) and return; connected to Celery's
        ``worker_shutting_down``, so both lanes stop at once, not one after the other."""
        self._stopping.set()
        if self.proc.poll() is None:
            self.proc.terminate()

    def stop(self, grace: float = 60.0) -> None:
        """Warm shutdown (its running tasks finish), then a kill."""
        self.begin_stop()
        try:
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


_LANE_CHILD = False


def lane_child() -> bool:
    """Whether this process is the slow lane that a split worker started (see :func:`follow_parent`)."""
    return _LANE_CHILD


def follow_parent() -> None:
    """In the slow-lane child: get SIGTERM (a warm shutdown) when the worker
    that started it dies, however it dies (Linux; elsewhere a no-op)."""
    global _LANE_CHILD
    parent = os.environ.pop(PARENT_ENV, "")
    _LANE_CHILD = bool(parent)
    if not parent or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != int(parent):  # it died before prctl
        os.kill(os.getpid(), signal.SIGTERM)
