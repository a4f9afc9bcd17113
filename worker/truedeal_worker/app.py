"""The Celery app for truedeal jobs, configured from the environment.

``celery -A truedeal_worker.app worker``, ``python -m truedeal_worker worker``
and ``truedeal worker`` all run this app.  Settings (environment):

``TRUEDEAL_REDIS_URL``          broker, and the job store (default
                                ``redis://localhost:6379/0``; ``rediss://``
                                and ``unix:///path/redis.sock?db=N`` work
                                too, see :func:`broker_url`).  There is no
                                result backend: Celery results are not used
                                at all (jobs live in our own keys).
``TRUEDEAL_KEY_PREFIX``         job keys prefix (default ``td:``); the broker's
                                keys get ``<prefix>celery:`` (kombu
                                ``global_keyprefix``), so everything truedeal
                                writes in Redis shares one prefix.
``TRUEDEAL_QUEUE``              task queue name (default ``truedeal``).
``TRUEDEAL_VISIBILITY_TIMEOUT`` seconds before an unacknowledged task is
                                re-delivered (default 3600).
``TRUEDEAL_WATCHDOG_INTERVAL``  seconds between watchdog kicks (default 15).

Reliability settings (see the notes, section 1):

* ``task_acks_late`` + ``task_reject_on_worker_lost``: a task whose worker
  process dies (SIGKILL, OOM) goes back to the queue instead of being lost;
  every task is idempotent and each (job, item) counts its starts, so a task
  that kills its worker every time fails its job after ``max_attempts``
  instead of looping.
* ``worker_prefetch_multiplier = 1``: a process reserves one task at a time,
  so a dead worker strands at most one waiting task per process, and queued
  chunks do not age against the visibility timeout in a worker's buffer.
* visibility timeout 3600 s, set under all three names (broker transport
  options, result-backend transport options, ``visibility_timeout``): the
  longest task is a rejection-plan chunk (<= ~3 min at the engine's lowest
  acceptance rate) or a partition of a wide listing (tens of seconds), so
  one hour is > 20x the longest task; ``task_time_limit`` is half of it
  (``JobSettings.task_seconds``), so a task can never still run when its
  message is re-delivered.  A script whose chunks would take longer (double
  dummy at low acceptance) fails at its reduce, with the estimate.  Lost
  work is normally recovered much sooner by the watchdog.
* Retries: ``autoretry_for`` redis/kombu connection errors, exponential
  backoff (2 s doubling, max 60 s, jitter), at most 5 retries; past that the
  watchdog re-queues the work.
* JSON serializer; task results are ignored (tasks return a short word for
  the log only; deals are written to Redis by the tasks themselves).

Watchdog (a per-worker beat): every worker's main process publishes a
``truedeal.watchdog`` message every ``TRUEDEAL_WATCHDOG_INTERVAL`` seconds
from its event-loop timer (a worker bootstep; no thread, no ``celery beat``
process, no schedule file).  The message expires after one interval; the
task takes a Redis lock (``SET NX PX``) so the cluster runs at most one scan
per interval however many workers kick, and the scan itself
(:func:`truedeal_jobs.watchdog_scan`) is idempotent.  As long as one worker
is alive the watchdog runs, which a self-rescheduling task cannot promise
(its pending countdown message dies with the worker that holds it).
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

from celery import Celery, bootsteps, signals
from celery.exceptions import SecurityWarning

from truedeal_jobs import JobSettings, JobStore, connect
from truedeal_jobs.dispatch import (  # noqa: F401  (re-exported: the worker's public names)
    DRAW,
    ENUMERATE,
    REDUCE,
    WATCHDOG,
    CeleryDispatcher,
    broker_url,
    celery_conf,
    lane_queue,
    slow_queue,
)
from truedeal_jobs.settings import DispatchSettings, EnvReader

logger = logging.getLogger("truedeal.worker")

#: Seconds between kicks at most, so that a Redis outage is noticed soon after it ends
#: (the watchdog task itself still scans at most once per TRUEDEAL_WATCHDOG_INTERVAL).
OUTAGE_KICK_SECONDS = 5.0


@dataclass(frozen=True)
class WorkerConfig:
    """Celery-side settings (see the module doc): where work is queued
    (:class:`~truedeal_jobs.dispatch.DispatchSettings`, shared with the
    senders), the watchdog's interval, and the job settings."""

    dispatch: DispatchSettings
    watchdog_interval: float
    jobs: JobSettings

    @property
    def redis_url(self) -> str:
        return self.dispatch.redis_url

    @property
    def queue(self) -> str:
        return self.dispatch.queue

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WorkerConfig:
        env = os.environ if env is None else env
        return cls(
            dispatch=DispatchSettings.from_env(env),
            watchdog_interval=EnvReader.of(env).number("TRUEDEAL_WATCHDOG_INTERVAL", 15.0, 1.0),
            jobs=JobSettings.from_env(env),
        )


class _NoBackendRevokeFilter(logging.Filter):
    """Drop Celery's "Failed to mark task ... as revoked in backend" warning.

    truedeal has no result backend on purpose (jobs live in our own keys),
    so every revoked task id -- hundreds when a big job is cancelled -- made
    every worker log that it could not record the revocation there.  Other
    warnings of that logger still pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Failed to mark task %s as revoked in backend")


def quiet_celery() -> None:
    """Silence the Celery noise that says nothing to a truedeal user: the
    revoke warning above, and the 5-line superuser warning (replaced by one
    line of ours at worker start, see :func:`_say_if_root`)."""
    logger_ = logging.getLogger("celery.worker.control")
    if not any(isinstance(f, _NoBackendRevokeFilter) for f in logger_.filters):
        logger_.addFilter(_NoBackendRevokeFilter())
    warnings.filterwarnings("ignore", category=SecurityWarning)


@signals.worker_init.connect
def _say_if_root(**_kw) -> None:
    from .lanes import lane_child

    if hasattr(os, "geteuid") and os.geteuid() == 0 and not lane_child():  # its parent has said it
        logger.warning("the worker runs as root; it works, but an unprivileged user is safer "
                       "(tasks accept JSON only, never pickle)")


#: Whether a pool process encodes its chunks in the helper thread that stores
#: them (``run_chunks(encode_behind=...)``), set at worker start, before the fork.
ENCODE_BEHIND = True


@signals.worker_init.connect
def _encodes_behind(sender: object = None, **_kw) -> None:
    """Encode behind the draws only with fewer pool processes than usable
    CPUs, so that the helper thread has a core of its own.  Measured on 2
    cores, strong-nt: one process 2.46M deals/s encoding and storing
    behind, 2.14M doing both in turn; two processes 3.26-3.44M encoding
    behind, 3.41-3.49M encoding in the drawing thread."""
    global ENCODE_BEHIND
    processes = getattr(sender, "concurrency", None)
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    ENCODE_BEHIND = isinstance(processes, int) and processes < usable


@signals.worker_process_init.connect
def _one_blas_thread(**_kw) -> None:
    """Each pool process is one unit of parallelism (the pool has a process
    per core): BLAS threads on top of it oversubscribe the cores.  Measured on
    2 cores, listing four-wide.json in 8 slices took 1.64x one worker's time
    on 2 workers with OpenBLAS's own threads, 0.74x with one thread each."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def create_app(config: WorkerConfig | None = None) -> Celery:
    """A Celery app for ``config`` (default: from the environment): the
    senders' settings (:func:`~truedeal_jobs.dispatch.celery_conf`) and the
    workers' own (late acks, prefetch 1, time limit, soft shutdown)."""
    config = config or WorkerConfig.from_env()
    app = Celery("truedeal", include=["truedeal_worker.tasks", "truedeal_worker.settasks"])
    app.conf.update(
        celery_conf(config.dispatch),
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_time_limit=config.jobs.task_seconds,
        worker_soft_shutdown_timeout=30.0,
        worker_hijack_root_logger=True,
    )
    app.truedeal_config = config
    app.steps["worker"].add(WatchdogKick)
    app.steps["consumer"].add(OutageRecovery)
    quiet_celery()
    return app


class OutageRecovery(bootsteps.StartStopStep):
    """Ask for an outage scan each time the consumer starts again after its
    connection was lost (Celery restarts the consumer's steps on reconnection):
    a message delivered or acknowledged while Redis was down may be lost, and
    a job must not wait ``TRUEDEAL_WATCHDOG_STALE`` for it."""

    requires = {"celery.worker.consumer.connection:Connection"}

    def __init__(self, parent, **kwargs) -> None:
        super().__init__(parent, **kwargs)
        self.starts = 0

    def start(self, parent) -> None:
        self.starts += 1
        if self.starts == 1:  # the first connection: nothing was lost
            return
        try:
            parent.app.send_task(WATCHDOG, kwargs={"after_outage": True}, retry=False, ignore_result=True)
            logger.warning("Redis is back: re-queueing what active jobs miss (work lost in the outage)")
        except Exception as exc:  # down again: the next reconnection asks again
            logger.warning("outage scan not sent: %s: %s", type(exc).__name__, exc)


class WatchdogKick(bootsteps.StartStopStep):
    """Publish a ``truedeal.watchdog`` message every watchdog interval."""

    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker, **kwargs) -> None:
        super().__init__(worker, **kwargs)
        self.tref = None
        self.store: JobStore | None = None

    def start(self, worker) -> None:
        cfg = worker.app.truedeal_config
        interval = cfg.watchdog_interval
        self.store = JobStore(connect(cfg.redis_url), cfg.jobs)
        name = getattr(worker, "hostname", None) or f"worker-{os.getpid()}"
        self.beat(self.store, name, interval)  # seen at once, not one interval later
        seen = {"down": False}  # did a kick find Redis down since the last one that got through?
        self.tref = worker.timer.call_repeatedly(min(interval, OUTAGE_KICK_SECONDS), self.kick,
                                                 (worker.app, interval, self.store, name, seen), priority=10)

    def stop(self, worker) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None

    @staticmethod
    def beat(store: JobStore, name: str, interval: float) -> bool:
        """Heartbeat: submitters and job status can tell that a worker is
        alive (three missed kicks and it counts as gone).  False if Redis is down."""
        try:
            store.worker_heartbeat(name, 3 * interval + 5)
            return True
        except Exception as exc:  # Redis down: the next kick tries again
            logger.warning("worker heartbeat failed: %s: %s", type(exc).__name__, exc)
            return False

    @classmethod
    def kick(cls, app: Celery, interval: float, store: JobStore | None = None, name: str = "",
             seen: dict[str, bool] | None = None) -> None:
        """Heartbeat and a watchdog message; the first kick that gets through
        after Redis was down asks for an outage scan (:func:`truedeal_jobs.watchdog_scan`)."""
        seen = {"down": False} if seen is None else seen
        if store is not None and not cls.beat(store, name, interval):
            seen["down"] = True
            return
        try:
            app.send_task(WATCHDOG, kwargs={"after_outage": seen["down"]}, expires=interval, retry=False,
                          ignore_result=True)
            if seen["down"]:
                logger.warning("Redis is back: re-queueing what active jobs miss (work lost in the outage)")
            seen["down"] = False
        except Exception as exc:  # broker down: the next kick tries again
            seen["down"] = True
            logger.warning("watchdog kick failed: %s: %s", type(exc).__name__, exc)


#: The app every worker runs (configured from the environment at import).
app = create_app()
