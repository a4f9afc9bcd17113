"""Celery adapter for truedeal generation jobs.

The job logic lives in :mod:`truedeal_jobs` (redis-py only); this package
adds the Celery app (:mod:`.app`), the tasks (:mod:`.tasks`) and the
``truedeal worker|submit|status|fetch|cancel`` commands (:mod:`.commands`).
"""

__all__ = ["app", "tasks", "commands"]
