"""Sending job work to the Celery workers by task name, without their code.

The web app and ``truedeal submit`` queue tasks through :class:`CeleryDispatcher`
on a *sending* Celery app (:func:`sending_app`): the broker settings the
workers use (:func:`celery_conf`), and no task code, so neither imports
the worker package.  This is the only module of the job system that imports
Celery.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from celery import Celery

from .models import FAST_LANE, chunk_runs
from .settings import DispatchSettings

#: Task names (stable: they are what queued messages refer to).
ENUMERATE = "truedeal.enumerate_partition"
REDUCE = "truedeal.reduce"
DRAW = "truedeal.draw_chunk"
WATCHDOG = "truedeal.watchdog"


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


def slow_queue(queue: str) -> str:
    """The queue of slow-lane jobs (:data:`truedeal_jobs.SLOW_LANE`) beside ``queue``."""
    return f"{queue}.slow"


def lane_queue(queue: str, lane: str) -> str:
    return queue if lane == FAST_LANE else slow_queue(queue)


def celery_conf(settings: DispatchSettings) -> dict[str, Any]:
    """The Celery settings that senders and workers share (see ``truedeal_worker.app`` for why each)."""
    from kombu import Queue

    vt = settings.visibility_timeout
    return dict(
        broker_url=broker_url(settings.redis_url),
        broker_transport_options={
            "visibility_timeout": vt,
            "global_keyprefix": f"{settings.prefix}celery:",
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
        task_default_queue=settings.queue,
        # both lanes: a plain `celery worker` (no -Q) serves both; `truedeal worker` gives each its own processes
        task_queues=(Queue(settings.queue), Queue(slow_queue(settings.queue))),
        broker_connection_retry_on_startup=True,
        enable_utc=True,
    )


def sending_app(settings: DispatchSettings) -> Celery:
    """A Celery app that only sends: the workers' broker settings, no tasks."""
    app = Celery("truedeal-sender")
    app.conf.update(celery_conf(settings))
    return app


def dispatcher_for(settings: DispatchSettings) -> CeleryDispatcher:
    """A dispatcher for the workers that ``settings`` point at."""
    return CeleryDispatcher(sending_app(settings), settings.queue)


def dispatcher_from_env(env: Mapping[str, str] | None = None) -> CeleryDispatcher:
    """A dispatcher for the workers that the environment (``TRUEDEAL_*``) points at."""
    return dispatcher_for(DispatchSettings.from_env(env))


class CeleryDispatcher:
    """:class:`truedeal_jobs.Dispatcher` on a Celery app (by task name, so
    the caller does not need the tasks imported)."""

    def __init__(self, app: Celery, queue: str | None = None) -> None:
        self.app = app
        self.queue = queue or app.conf.task_default_queue

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

    def draw_chunks(self, job_id: str, indices: Sequence[int], lane: str = FAST_LANE, longest: int | None = None) -> list[str]:
        return self._send_many(DRAW, [(job_id, first, count) for first, count in chunk_runs(indices, longest)], lane)

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
