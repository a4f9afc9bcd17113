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
  one hour is > 20x the longest task; ``task_time_limit`` is half of it, so
  a task can never still run when its message is re-delivered.  Lost work
  is normally recovered much sooner by the watchdog.
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
(:func:`truedeal.jobs.watchdog_scan`) is idempotent.  As long as one worker
is alive the watchdog runs, which a self-rescheduling task cannot promise
(its pending countdown message dies with the worker that holds it).
"""

from __future__ import annotations

import logging
import os
import uuid
import warnings
from dataclasses import dataclass
from typing import Mapping, Sequence
from urllib.parse import parse_qs, quote, unquote, urlsplit

from celery import Celery, bootsteps, signals
from celery.exceptions import SecurityWarning
from kombu import Queue
from truedeal.jobs import FAST_LANE, JobSettings, JobStore, connect, redis_url

logger = logging.getLogger("truedeal.worker")

#: Seconds between kicks at most, so that a Redis outage is noticed soon after it ends
#: (the watchdog task itself still scans at most once per TRUEDEAL_WATCHDOG_INTERVAL).
OUTAGE_KICK_SECONDS = 5.0

#: Task names (stable: they are what queued messages refer to).
ENUMERATE = "truedeal.enumerate_partition"
REDUCE = "truedeal.reduce"
DRAW = "truedeal.draw_chunk"
WATCHDOG = "truedeal.watchdog"


@dataclass(frozen=True)
class WorkerConfig:
    """Celery-side settings (see the module doc)."""

    redis_url: str
    queue: str
    visibility_timeout: int
    watchdog_interval: float
    jobs: JobSettings

    @property
    def broker_prefix(self) -> str:
        return f"{self.jobs.prefix}celery:"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "WorkerConfig":
        env = os.environ if env is None else env

        def number(name: str, default: int) -> int:
            raw = env.get(name, "").strip()
            try:
                value = int(raw) if raw else default
            except ValueError:
                raise ValueError(f"{name} must be an integer, got {raw!r}") from None
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
            return value

        return cls(
            redis_url=redis_url(env),
            queue=env.get("TRUEDEAL_QUEUE") or "truedeal",
            visibility_timeout=number("TRUEDEAL_VISIBILITY_TIMEOUT", 3600),
            watchdog_interval=float(number("TRUEDEAL_WATCHDOG_INTERVAL", 15)),
            jobs=JobSettings.from_env(env),
        )


def broker_url(url: str) -> str:
    """The kombu broker URL for a redis-py URL.

    redis-py (the job store) and kombu (the broker) agree on ``redis://``
    and ``rediss://``, but kombu has no ``unix://`` transport: it spells a
    Unix socket ``redis+socket:///path`` and takes the database as
    ``virtual_host``.  So ``unix://[[user]:password@]/path?db=N[&password=P]``
    becomes ``redis+socket://[[user]:password@]/path?virtual_host=N``; other
    URLs are returned unchanged.
    """
    parts = urlsplit(url)
    if parts.scheme != "unix":
        return url
    query = parse_qs(parts.query)
    db = (query.get("db") or ["0"])[0]
    user = unquote(parts.username or "") or (query.get("username") or [""])[0]
    password = unquote(parts.password or "") or (query.get("password") or [""])[0]
    auth = ""
    if user or password:
        auth = quote(user, safe="") + (":" + quote(password, safe="") if password else "") + "@"
    return f"redis+socket://{auth}{parts.path}?virtual_host={int(db)}"


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
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        logger.warning("the worker runs as root; it works, but an unprivileged user is safer "
                       "(tasks accept JSON only, never pickle)")


def slow_queue(queue: str) -> str:
    """The queue of slow-lane jobs (:data:`truedeal.jobs.SLOW_LANE`) beside ``queue``."""
    return f"{queue}.slow"


def lane_queue(queue: str, lane: str) -> str:
    return queue if lane == FAST_LANE else slow_queue(queue)


def create_app(config: WorkerConfig | None = None) -> Celery:
    """A Celery app for ``config`` (default: from the environment)."""
    config = config or WorkerConfig.from_env()
    vt = config.visibility_timeout
    app = Celery("truedeal", broker=broker_url(config.redis_url), include=["truedeal_worker.tasks", "truedeal_worker.settasks"])
    app.conf.update(
        broker_transport_options={
            "visibility_timeout": vt,
            "global_keyprefix": config.broker_prefix,
            "socket_timeout": 60,
            "socket_connect_timeout": 10,
            "health_check_interval": 25,
        },
        result_backend_transport_options={"visibility_timeout": vt},
        visibility_timeout=vt,
        result_backend=None,
        task_ignore_result=True,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_time_limit=max(60, vt // 2),
        task_default_queue=config.queue,
        # both lanes: a plain `celery worker` (no -Q) serves both; `truedeal worker` gives each its own processes
        task_queues=(Queue(config.queue), Queue(slow_queue(config.queue))),
        broker_connection_retry_on_startup=True,
        worker_soft_shutdown_timeout=30.0,
        worker_hijack_root_logger=True,
        enable_utc=True,
    )
    app.truedeal_config = config  # type: ignore[attr-defined]
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
        after Redis was down asks for an outage scan (:func:`truedeal.jobs.watchdog_scan`)."""
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


class CeleryDispatcher:
    """:class:`truedeal.jobs.Dispatcher` on a Celery app (by task name, so
    the caller does not need the tasks imported)."""

    def __init__(self, app: Celery) -> None:
        self.app = app
        self.queue = app.truedeal_config.queue

    def _send_many(self, name: str, arglists: Sequence[tuple], lane: str) -> list[str]:
        ids = []
        queue = lane_queue(self.queue, lane)
        with self.app.producer_or_acquire() as producer:
            for args in arglists:
                tid = uuid.uuid4().hex
                self.app.send_task(name, args=list(args), task_id=tid, producer=producer, queue=queue,
                                   add_to_parent=False, ignore_result=True)
                ids.append(tid)
        return ids

    def enumerate_partitions(self, job_id: str, ks: Sequence[int], lane: str = FAST_LANE) -> list[str]:
        return self._send_many(ENUMERATE, [(job_id, int(k)) for k in ks], lane)

    def reduce(self, job_id: str, lane: str = FAST_LANE) -> str:
        return self._send_many(REDUCE, [(job_id,)], lane)[0]

    def draw_chunks(self, job_id: str, indices: Sequence[int], lane: str = FAST_LANE) -> list[str]:
        return self._send_many(DRAW, [(job_id, int(i)) for i in indices], lane)

    def revoke(self, task_ids: Sequence[str]) -> None:
        if task_ids:
            self.app.control.revoke(list(task_ids))

    def backlog(self) -> int | None:
        """Messages waiting in both lanes' queues, or None if unknown."""
        try:
            with self.app.connection_for_read() as conn:
                return sum(_waiting(conn, q) for q in (self.queue, slow_queue(self.queue)))
        except Exception:
            return None


def _waiting(conn, queue: str) -> int:
    from kombu.exceptions import ChannelError

    try:
        return int(conn.default_channel.queue_declare(queue=queue, passive=True).message_count)
    except ChannelError:  # Redis drops empty lists: no queue = no backlog
        return 0


#: The app every worker runs (configured from the environment at import).
app = create_app()
