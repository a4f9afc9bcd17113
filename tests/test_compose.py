"""docker-compose.yml and the Dockerfile, checked without a Docker engine.

No Docker engine runs here, so these tests parse the compose file with
PyYAML and check what it promises: the three services, Redis with AOF and a
volume, every service on ``TRUEDEAL_REDIS_URL=redis://redis:6379/0``, a
worker service that can be scaled, and commands that exist in this project
(``truedeal worker`` resolves to a click command that accepts the given
options; gunicorn accepts its options and loads ``truedeal_web:create_app()``).
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import tomllib
from pathlib import Path

import click
import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
URL = "redis://redis:6379/0"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def _argv(command) -> list[str]:
    return shlex.split(command) if isinstance(command, str) else [str(a) for a in command]


def _env(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


def test_services(compose):
    assert set(compose["services"]) == {"redis", "web", "worker"}
    for name in ("web", "worker"):
        svc = compose["services"][name]
        assert _env(svc).get("TRUEDEAL_REDIS_URL") == URL, name
        deps = svc.get("depends_on")
        assert deps and "redis" in deps, f"{name} must start after redis"
        assert svc.get("build") or svc.get("image"), name


def test_redis_has_aof_and_a_volume(compose):
    redis = compose["services"]["redis"]
    assert str(redis["image"]).split(":")[0] == "redis" and str(redis["image"]).split(":")[1].startswith("7")
    argv = _argv(redis["command"])
    assert argv[0] == "redis-server"
    i = argv.index("--appendonly")
    assert argv[i + 1] == "yes"
    # the same persistence as `truedeal serve`: the AOF alone, no LZF on deal numbers
    assert argv[argv.index("--save") + 1] == "" and argv[argv.index("--rdbcompression") + 1] == "no"
    if "--maxmemory-policy" in argv:
        assert argv[argv.index("--maxmemory-policy") + 1] == "noeviction"
    mounts = [str(v) for v in redis.get("volumes", [])]
    named = [m.split(":")[0] for m in mounts if m.endswith(":/data")]
    assert named, f"no volume on /data (where redis:7 keeps its AOF): {mounts}"
    assert named[0] in (compose.get("volumes") or {}), "the Redis volume is not declared"


def test_worker_is_scalable_and_runs_truedeal_worker(compose):
    worker = compose["services"]["worker"]
    assert "container_name" not in worker and not worker.get("ports"), "--scale worker=N needs no fixed name or port"
    argv = _argv(worker["command"])
    assert argv[:2] == ["truedeal", "worker"]
    # `truedeal` is the project's console script ...
    assert PYPROJECT["project"]["scripts"]["truedeal"] == "truedeal.cli:run"
    from truedeal.cli import cli

    # ... and `worker` resolves to a click command that accepts the options given
    ctx = click.Context(cli, info_name="truedeal")
    command = cli.get_command(ctx, "worker")
    assert isinstance(command, click.Command)
    sub = command.make_context("worker", argv[2:], parent=ctx)
    assert sub.params["loglevel"].lower() == "info"
    # its stop signal is Celery's warm shutdown, with time for running tasks
    assert worker.get("stop_signal", "SIGTERM") == "SIGTERM"


def test_web_runs_gunicorn_with_threads(compose):
    web = compose["services"]["web"]
    argv = _argv(web["command"])
    assert argv[0] == "gunicorn"
    from gunicorn.config import Config

    ns = Config().parser().parse_args(argv[1:])  # exits on an unknown option
    assert ns.worker_class == "gthread", "the deals download streams: use gthread workers"
    assert (ns.threads or 1) > 1
    assert ns.args == ["truedeal_web:create_app()"]
    assert any(str(p).split(":")[-1] == "8000" for p in web.get("ports", []))
    assert any(b.endswith(":8000") for b in ns.bind)


def test_web_app_factory_loads(compose, monkeypatch):
    if importlib.util.find_spec("truedeal_web") is None:
        pytest.skip("truedeal_web is not importable yet (the web app is being built)")
    from gunicorn.util import import_app

    spec = _argv(compose["services"]["web"]["command"])[-1]
    monkeypatch.setenv("TRUEDEAL_REDIS_URL", URL)  # what the container sets (nothing connects at import)
    app = import_app(spec)  # exactly what gunicorn does with it
    assert callable(app)


def test_dockerfile_installs_the_project():
    text = DOCKERFILE.read_text()
    base = re.search(r"^FROM\s+python:(\d+)\.(\d+)", text, re.MULTILINE)
    assert base and (int(base.group(1)), int(base.group(2))) >= (3, 11)
    for folder in ("shared", "worker", "web", "serve"):
        assert re.search(rf"^COPY\s+{folder}\b", text, re.MULTILINE), f"{folder}/ is not copied"
    assert re.search(r"^RUN\s+pip install \"\.\[server\]\"", text, re.MULTILINE), "the job service's extra"
    assert re.search(r"^USER\s+(?!root)\S+", text, re.MULTILINE), "run as a non-root user"


def test_a_plain_install_carries_the_web_assets():
    """``pip install .`` (not editable) ships only what package-data lists:
    every template and static file of the web app must match it."""
    web = ROOT / "web" / "truedeal_web"
    files = [p.relative_to(web).as_posix() for sub in ("templates", "static") if (web / sub).is_dir()
             for p in (web / sub).rglob("*") if p.is_file()]
    if not files:
        pytest.skip("the web app has no templates or static files yet")
    globs = PYPROJECT["tool"]["setuptools"]["package-data"]["truedeal_web"]
    covered = {p.relative_to(web).as_posix() for g in globs for p in web.glob(g) if p.is_file()}  # setuptools' glob
    missing = sorted(set(files) - covered)
    assert not missing, f"not in [tool.setuptools.package-data] truedeal_web: {missing}"
