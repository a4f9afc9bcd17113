"""Celery tasks for tournament sets (see :mod:`truedeal_jobs.sets`).

``truedeal.set_deal`` deals a set and queues one ``truedeal.set_solve`` per
chunk of boards; solving is the CPU-heavy phase and spreads over the
workers.  Both tasks are idempotent and acknowledged late, so a worker
killed mid-solve has its chunk re-delivered and the results are identical.
"""

from __future__ import annotations

import logging

from truedeal_jobs import sets as setjobs

from .app import app
from .tasks import _TASK_OPTIONS, RETRY_ON, context

logger = logging.getLogger("truedeal.worker")


def _send(name: str, args: tuple) -> None:
    app.send_task(name, args=list(args), ignore_result=True)


def _fail(set_id: str, exc: Exception) -> str:
    logger.exception("set %s failed", set_id)
    setjobs.fail_set(context().store.set_store(), set_id, f"{type(exc).__name__}: {exc}")
    return "failed"


@app.task(name=setjobs.DEAL_TASK, **_TASK_OPTIONS)
def set_deal(self, set_id: str) -> str:
    """Deal every session of the set and queue its solve chunks."""
    try:
        n = setjobs.run_deal(context().store.set_store(), set_id, _send)
    except RETRY_ON:
        raise
    except Exception as exc:  # a bad set reaches here only through a bug
        return _fail(set_id, exc)
    return f"dealt, {n} chunks"


@app.task(name=setjobs.SOLVE_TASK, **_TASK_OPTIONS)
def set_solve(self, set_id: str, chunk: int) -> str:
    """Solve one chunk of the set's boards (double dummy and par)."""
    try:
        return setjobs.run_solve(context().store.set_store(), set_id, int(chunk))
    except RETRY_ON:
        raise
    except Exception as exc:
        return _fail(set_id, exc)
