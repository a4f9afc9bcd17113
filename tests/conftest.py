"""Test markers, so a contributor can run the fast tests alone.

``pytest -m "not redis and not browser"`` runs everything that needs neither
a Redis server (with Celery workers, the web app's job routes, ``serve``) nor
Chromium; ``pytest -m "not slow"`` also leaves out the few tests that take
several seconds each.  The full suite (no ``-m``) is what ``.ci/run`` runs.

Modules are marked here, by name, rather than test by test: a module that
needs Redis starts its fixtures (workers, namespaces) for all its tests.
"""

from __future__ import annotations

import pytest

REDIS_MODULES = frozenset({
    "test_compose.py",
    "test_distribution_api.py",
    "test_jobs.py",
    "test_jobs_redis_restart.py",
    "test_lanes.py",
    "test_serve.py",
    "test_tournament_jobs.py",
    "test_tournament_web.py",
    "test_web.py",
    "test_web_e2e.py",
})
BROWSER_MODULES = frozenset({"test_web_e2e.py"})
# Tests measured at more than ~3 s each on a quiet 2-core machine (pytest --durations).
SLOW_MODULES = REDIS_MODULES | frozenset({"test_scripts_vs_endplay.py", "test_script_deals.py"})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "redis: needs a Redis server at 127.0.0.1:6379 (and starts Celery workers)")
    config.addinivalue_line("markers", "browser: drives Debian's chromium through selenium")
    config.addinivalue_line("markers", "slow: takes seconds per test; left out by -m 'not slow'")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = item.path.name
        if name in REDIS_MODULES:
            item.add_marker(pytest.mark.redis)
        if name in BROWSER_MODULES:
            item.add_marker(pytest.mark.browser)
        if name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
