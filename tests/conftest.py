"""Test markers, so a contributor can run the fast tests alone.

``pytest -m "not redis and not browser"`` runs everything that needs neither
a Redis server (with Celery workers, the web app's job routes, ``serve``) nor
Chromium; ``pytest -m "not slow"`` also leaves out the few tests that take
several seconds each.  The full suite (no ``-m``) is what ``.ci/run`` runs.

Modules are marked here, by name, rather than test by test: a module that
needs Redis starts its fixtures (workers, namespaces) for all its tests.

Every test is held to :data:`MAX_TEST_RSS_MB` (or its own ``memory_mb`` mark) of resident memory
(``TRUEDEAL_TEST_MAX_RSS_MB``, default 500): see :func:`_memory_bound`.
"""

from __future__ import annotations

import gc
import os
import resource
import subprocess
import sys

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
    config.addinivalue_line("markers", "memory_mb(n): this test's own memory bound, for a spec whose stated budget is larger")


#: The modules with the most test time (--durations on a 2-core machine), run first: with one
#: module per process (scripts/test.sh), a long one started last kept one process busy alone.
HEAVY_FIRST = ("test_jobs.py", "test_web_e2e.py", "test_scripts_vs_endplay.py", "test_web.py", "test_script_deals.py",
               "test_negation_partitions.py", "test_constraints_exact.py", "test_rnd_weighed.py", "test_cli.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _own_node_ids(items)
    rank = {name: k for k, name in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(HEAVY_FIRST)))  # stable: the rest as collected
    for item in items:
        name = item.path.name
        if name in REDIS_MODULES:
            item.add_marker(pytest.mark.redis)
        if name in BROWSER_MODULES:
            item.add_marker(pytest.mark.browser)
        if name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


def _own_node_ids(items: list[pytest.Item]) -> None:
    """Give each API operation's fuzz test its own node id.  Under pytest 9,
    schemathesis names its items ``test[POST /api/count]`` but ids them all
    as ``test``; pytest-xdist keeps one item per id, so ``-n 2`` ran 1 of the
    14 operations."""
    for item in items:
        last = item.nodeid.rpartition("::")[2]
        if hasattr(item, "_id") and item.name.startswith(last + "[") and item.name.endswith("]") and "[" not in last:
            item._id = item.id.with_params(item.name[len(last) + 1:-1])  # pytest 9's structured node id


# ---------------------------------------------------------------- memory bound

#: No test may need more than this (MB of resident memory), in the test
#: process or in any child it waited for (helpers, CLI runs, workers).
MAX_TEST_RSS_MB = int(os.environ.get("TRUEDEAL_TEST_MAX_RSS_MB", "500"))


def _reset_peak() -> bool:
    """Restart this process's peak resident memory (VmHWM) from its current
    size (Linux >= 4.0); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _status_mb(field: str) -> float:
    """``VmHWM`` (peak since the last reset) or ``VmRSS`` of this process, in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


#: What any test of the core needs before it does anything: a fresh
#: interpreter with the core, numpy, scipy and endplay's DDS imported.  (This
#: process holds more -- pytest, and every test module's imports, which a
#: test does not need -- so its own size is not charged to each test.)
_IMPORTS = "import numpy, scipy.stats, endplay.dds, truedeal.cli, truedeal.engine"
# VmHWM, not ru_maxrss: a forked child's ru_maxrss counts this process's pages from before its exec
_PROBE = f"{_IMPORTS}; print(next(ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM')))"
_probe: list[subprocess.Popen] = []
_base: list[float] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    """Start the probe of :func:`_base_mb` while the tests are collected
    (seconds of imports, which the first test waited for); not in xdist's
    controller, which runs no test."""
    if getattr(session.config.option, "numprocesses", None) and not hasattr(session.config, "workerinput"):
        return
    _probe.append(subprocess.Popen([sys.executable, "-c", _PROBE], stdout=subprocess.PIPE, text=True))


def _base_mb() -> float:
    if not _base:
        probe = _probe.pop() if _probe else subprocess.Popen([sys.executable, "-c", _PROBE], stdout=subprocess.PIPE, text=True)
        out, _ = probe.communicate()
        if probe.returncode:
            raise subprocess.CalledProcessError(probe.returncode, probe.args)
        _base.append(int(out) / 1024)
    return _base[0]


def _children_peak_mb() -> float:
    """The largest peak (MB) of any child this process has waited for (Linux: ru_maxrss in KB)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


@pytest.fixture(autouse=True)
def _memory_bound(request: pytest.FixtureRequest):
    """Fail a test that needs more than :data:`MAX_TEST_RSS_MB` of resident
    memory in this process, or in a child it waited for.

    A test's need in this process is what any test needs (:func:`_base_mb`)
    plus how far its peak rose above the resident size it started from.  The
    peak is restarted before each test, so what earlier tests left behind
    (caches, the allocator's free lists) is not charged to later ones.  A
    forked child's peak includes the pages it shared with this process, so
    a child counts only above this process's own peak; only the children of
    tests without Redis (CLI processes) are checked."""
    marker = request.node.get_closest_marker("memory_mb")
    bound = marker.args[0] if marker else MAX_TEST_RSS_MB
    base = _base_mb()
    measured = _reset_peak()
    start = _status_mb("VmRSS")
    child_before = _children_peak_mb()
    yield
    peak, child = _status_mb("VmHWM"), _children_peak_mb()
    need = base + max(0.0, peak - start)
    if measured and need > bound:
        pytest.fail(f"the test needed {need:.0f} MB of resident memory ({base:.0f} MB of imports, "
                    f"{peak - start:.0f} MB of its own; the bound is {bound} MB)", pytrace=False)
    # Server-side children (count helpers, workers) outlive the test that
    # started them and are reaped under later tests, so they are not charged here.
    if child > max(MAX_TEST_RSS_MB, peak, child_before) and request.node.get_closest_marker("redis") is None:
        pytest.fail(f"a child process reached {child:.0f} MB of resident memory (the bound is {MAX_TEST_RSS_MB} MB)",
                    pytrace=False)


@pytest.fixture
def no_weighing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plans as where a script's ``rnd`` cannot be weighed exactly (compared
    with a feature of the deal, or with too many classes: truedeal.constraints.rnd_levels):
    checked by rejection, as ``tricks`` is.  For the tests of rejection that use ``rnd``."""
    from truedeal.constraints import rnd_levels

    monkeypatch.setattr(rnd_levels, "levels", lambda program: None)


@pytest.fixture
def always_weighing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plans that weigh a script's ``rnd`` wherever they can, whatever
    rejection would keep (truedeal.engine.WEIGH_BELOW): for the tests of
    weighing itself, on scripts small enough to list fast."""
    monkeypatch.setattr("truedeal.engine.WEIGH_BELOW", 1.01)


# ---------------------------------------------------------------- garbage collector


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection made (every test module, numpy, endplay, the core)
    out of the cyclic collector's reach: a full collection then looks only
    at what the tests make.  The collector took 6% of the tests' time
    (py-spy), walking those objects again at every full collection."""
    gc.collect()
    gc.freeze()
