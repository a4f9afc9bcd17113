"""Layers point one way: the core (``truedeal``) imports no Redis, Celery or
Flask; the job system (``truedeal_jobs``) no Celery or Flask; the worker and
the web app never import each other.

Each check imports every module of a package in a fresh interpreter and looks
at ``sys.modules``, so an import hidden in any module, at any depth, shows.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SERVER_LIBS = ("redis", "celery", "kombu", "flask", "werkzeug")

_PROBE = """
import importlib, json, pkgutil, sys
pkg = importlib.import_module(sys.argv[1])
skip = set(sys.argv[2].split(",")) if sys.argv[2] else set()
for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
    if info.name.rsplit(".", 1)[-1] not in skip:
        importlib.import_module(info.name)
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
"""


def _top_level_imports(package: str, skip: tuple[str, ...] = ()) -> set[str]:
    out = subprocess.run([sys.executable, "-c", _PROBE, package, ",".join(skip)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return set(json.loads(out.stdout))


def test_the_core_imports_no_server_library():
    assert not _top_level_imports("truedeal") & {*SERVER_LIBS, "truedeal_jobs", "truedeal_worker", "truedeal_web"}


def test_the_job_system_imports_neither_celery_nor_flask():
    seen = _top_level_imports("truedeal_jobs", skip=("dispatch",))
    assert "redis" in seen  # it is the Redis layer
    assert not seen & {"celery", "flask", "werkzeug", "truedeal_worker", "truedeal_web"}
    # dispatch.py sends tasks by name: Celery's client, and still no worker code
    assert not _top_level_imports("truedeal_jobs") & {"flask", "werkzeug", "truedeal_worker", "truedeal_web"}


def test_the_web_app_queues_jobs_without_the_worker_package():
    probe = ("import sys\n"
             "from truedeal_web import WebConfig, create_app\n"
             "app = create_app(WebConfig.from_env({}, redis_url='redis://127.0.0.1:1/0'))\n"
             "backend = app.extensions['truedeal'].jobs\n"
             "print(type(backend.dispatcher).__module__, 'truedeal_worker' in sys.modules)\n"
             "app.extensions['truedeal'].counter.close()\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["truedeal_jobs.dispatch", "False"]


@pytest.mark.parametrize("package, other", [("truedeal_worker", "truedeal_web"), ("truedeal_web", "truedeal_worker")])
def test_worker_and_web_never_import_each_other(package, other):
    # serve composes both (worker/truedeal_worker/serve.py and webserver.py): it is the one allowed meeting point
    assert other not in _top_level_imports(package, skip=("serve", "webserver", "__main__"))
