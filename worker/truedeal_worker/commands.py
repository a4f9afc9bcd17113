"""``truedeal worker``: a Celery worker for generation jobs, with its lanes.
It reaches the ``truedeal`` group through the ``truedeal.commands`` entry point."""

from __future__ import annotations

import os

import click

from truedeal_jobs import require
from truedeal_jobs.commands import command_errors, open_store

from .lanes import LANES, SlowLane, follow_parent, queue_args

# Celery is imported when the worker starts (.app), not for --help; but without
# it this command fails to load, at once, for `truedeal` to say what to install.
require("celery")


@click.command(name="worker")
@click.option("-c", "--concurrency", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: the number of CPUs); with --lanes split, those of the fast lane.")
@click.option("-l", "--loglevel", type=click.Choice(["debug", "info", "warning", "error", "critical"], case_sensitive=False),
              default="info", show_default=True)
@click.option("--lanes", type=click.Choice(LANES), default="split", show_default=True,
              help="split: serve the fast lane here and start a second worker for slow jobs, so that small jobs "
                   "never wait behind slow ones; fast or slow: that lane only (a cluster's dedicated nodes); "
                   "shared: one worker for both lanes.")
@click.option("--slow-workers", type=click.IntRange(min=1), default=None,
              help="Processes of the slow lane with --lanes split (default: half of -c, at least 1).")
def worker_command(concurrency: int | None, loglevel: str, lanes: str, slow_workers: int | None) -> None:
    """Run a Celery worker for generation jobs (reads TRUEDEAL_REDIS_URL)."""
    if lanes == "slow":
        follow_parent()  # the slow lane of a split worker ends with it
    with command_errors():
        open_store()  # fail with one line now rather than retry forever
    from celery.signals import worker_shutting_down

    from .app import app

    name = "truedeal-slow" if lanes == "slow" else "truedeal"
    argv = ["worker", f"--loglevel={loglevel.upper()}", f"--hostname={name}-{os.getpid()}@%h",
            *queue_args(lanes, app.truedeal_config.queue)]
    if concurrency:
        argv.append(f"--concurrency={concurrency}")
    slow = None
    if lanes == "split":
        fast = concurrency or os.cpu_count() or 1
        slow = SlowLane(slow_workers or max(1, fast // 2), loglevel)
        worker_shutting_down.connect(slow.begin_stop, weak=False)
    try:
        app.worker_main(argv=argv)
    finally:
        if slow is not None:
            slow.stop()
