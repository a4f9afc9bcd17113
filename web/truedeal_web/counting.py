"""Exact counts for the web app: an LRU of results per canonical spec, each
count built in a helper process with a time limit.

The web app never draws deals, so it only needs what
:meth:`truedeal.engine.Plan.summary` returns; that is what the cache keeps
(a few hundred bytes per spec, where a whole :class:`~truedeal.engine.Plan`
can hold megabytes of listing).

Most specs count in milliseconds, but a few (three or four seats constrained
by HCP alone, with wide ranges) take tens of seconds, and the engine's build
cannot be interrupted from inside the process.  So counts run in a small
pool of long-lived helper processes (``python -m truedeal_web.count_helper``,
one JSON line in, one JSON line out); a helper that overruns ``timeout`` is
killed and replaced.  So is one whose resident memory passes ``memory_mb``
(watched from here every 50 ms while it counts; a limit inside the helper,
such as ``RLIMIT_DATA``, made numpy crash instead of raising MemoryError):
that spec is too wide for this server.  At most ``processes`` counts run at
once; identical
specs asked for concurrently share one count.  Outcomes that will not change
-- a result, a too-wide spec, a timeout -- are cached.

Helpers are plain subprocesses rather than :mod:`multiprocessing` children,
so nothing depends on how the web app's main module was started (gunicorn,
``flask run``, a test runner, a script without a main guard) and no process
is ever forked from a threaded server.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import select
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from truedeal.resources import resident_bytes
from truedeal.spec import Spec
from truedeal.summary import CountSummary

logger = logging.getLogger("truedeal.web")

#: A count that finds every pool helper busy runs on the reserved fast-lane
#: helper, but only for this long: fast counts never wait behind slow ones.
FAST_LANE_SECONDS = 2.0
#: How long a count waits for a pool helper before it tries the fast lane.
POOL_WAIT_SECONDS = 0.2

#: A helper is replaced after this many counts, or when its memory grows past this.
HELPER_MAX_USES = 500
HELPER_MAX_RSS = 768 * 1024 * 1024
#: How often a counting helper's resident memory is checked against its limit.
MEMORY_POLL_SECONDS = 0.05


def request_line(op: str, spec: Spec, **args: str) -> str:
    """One line of the helper protocol (see :mod:`.count_helper`); also the cache key."""
    return json.dumps({"op": op, "spec": json.loads(spec.canonical_json()), **args}, sort_keys=True)


def with_budget(line: str, seconds: float) -> str:
    """A count request that the helper refuses at once when the spec's build
    is estimated to take over ``seconds`` (:mod:`truedeal.cost`)."""
    request = json.loads(line)
    if request["op"] != "count":
        return line
    return json.dumps({**request, "budget": seconds}, sort_keys=True)


class CountFailed(Exception):
    """A count that cannot be given; ``kind`` is ``too_wide``, ``timeout``,
    ``busy``, ``client_busy``, ``invalid``, ``impossible`` or ``error``; the message is one line."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _OverMemory(Exception):
    """A helper passed its memory limit and was killed."""


@dataclass
class _Outcome:
    kind: str  # ok | too_wide | timeout | busy | error
    value: Any
    seconds: float


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.outcome: _Outcome | None = None


class _Spawner:
    """Starts helper processes from one long-lived thread.

    A helper asks the kernel to kill it when its parent dies
    (``PR_SET_PDEATHSIG``), but Linux sends that signal when the *thread*
    that forked it exits -- and a request thread ends with its request.  So
    every helper is forked from this one daemon thread, which lives as long
    as the web process."""

    _lock = threading.Lock()
    _instance: _Spawner | None = None

    def __init__(self) -> None:
        self._jobs: queue.Queue = queue.Queue()
        threading.Thread(target=self._run, name="count-helper-spawner", daemon=True).start()

    @classmethod
    def get(cls) -> _Spawner:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def _run(self) -> None:
        while True:
            fn, box, done = self._jobs.get()
            try:
                box.append((True, fn()))
            except BaseException as exc:  # handed to the caller
                box.append((False, exc))
            done.set()

    def call(self, fn: Any) -> Any:
        """``fn()`` run on the spawner thread; its result or its exception."""
        box: list = []
        done = threading.Event()
        self._jobs.put((fn, box, done))
        done.wait()
        ok, value = box[0]
        if not ok:
            raise value
        return value


class _Helper:
    """One helper process."""

    def __init__(self, memory_mb: int = 0) -> None:
        self.memory_limit = memory_mb << 20  # resident bytes; 0 = no limit
        self.proc = _Spawner.get().call(lambda: subprocess.Popen(
            # -P: a folder named truedeal(_web) in the working directory must not shadow the package
            [sys.executable, "-P", "-m", "truedeal_web.count_helper"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            env=os.environ.copy(),
            close_fds=True,
        ))
        self.uses = 0
        self.rss = 0
        self._buf = b""
        self.ready = False

    def _line(self, deadline: float) -> bytes | None:
        """The next line from the helper; None past ``deadline``; b"" if it
        died; :class:`_OverMemory` (after killing it) past its memory limit."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], min(left, MEMORY_POLL_SECONDS) if self.memory_limit else left)
            if not ready:
                self._check_memory()
                continue
            data = os.read(fd, 65536)
            if not data:
                return b""
            self._buf += data
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def _check_memory(self) -> None:
        if self.memory_limit and resident_bytes(self.proc.pid) > self.memory_limit:
            self.proc.kill()
            self.proc.wait()  # reaped, so that alive() is False at once and no pool keeps it
            raise _OverMemory

    def alive(self) -> bool:
        return self.proc.poll() is None

    def ask(self, spec_json: str, timeout: float) -> tuple[str, Any]:
        """Send one spec; ``("timeout", None)`` past ``timeout`` seconds of
        counting (a new helper's start-up, up to a minute, is not counted)."""
        self.uses += 1
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if not self.ready:
            line = self._line(time.monotonic() + max(60.0, timeout))
            if not line:
                return "error", f"the counting process did not start (exit code {self.proc.poll()})"
            self.ready = True
        try:
            self.proc.stdin.write(spec_json.encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return "error", f"the counting process is gone (exit code {self.proc.poll()})"
        try:
            line = self._line(time.monotonic() + timeout)
        except _OverMemory:
            return "too_wide", (f"counting this spec needs more than the {self.memory_limit >> 20:,} MB "
                                "this server allows one count")
        if line is None:
            return "timeout", None
        if not line:
            return "error", f"the counting process died (exit code {self.proc.wait()})"
        reply = json.loads(line)
        self.rss = int(reply.get("rss", 0))
        return reply["kind"], reply.get("value")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass


class Counter:
    """Exact counts of specs, cached, each built in a time-limited helper process."""

    def __init__(self, timeout: float = 20.0, processes: int = 2, cache_size: int = 256,
                 per_client: int = 1, memory_mb: int = 0) -> None:
        self.timeout = float(timeout)
        self.memory_mb = int(memory_mb)  # per count, beyond a helper's imports; 0 = no limit
        self.processes = int(processes)
        self.cache_size = int(cache_size)
        self.per_client = int(per_client)
        self._running: dict[str, int] = {}  # counts being built, per client
        self._fast_lock = threading.Lock()
        self._fast: _Helper | None = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, _Outcome] = OrderedDict()
        self._pending: dict[str, _Pending] = {}
        self._pool_cv = threading.Condition()
        self._idle: list[_Helper] = []
        self._busy = 0
        self._counting: set[_Helper] = set()  # pool helpers handed out
        self.started = 0  # helper processes started (for tests and logs)
        self.builds = 0  # counts actually computed

    # -------------------------------------------------------------- public

    def busy_pids(self) -> list[int]:
        """Process ids of the pool helpers counting right now (for logs and tests)."""
        with self._pool_cv:
            return [h.proc.pid for h in self._counting]

    def cached(self, spec: Spec) -> CountSummary | None:
        """The summary of ``spec`` if it is cached (never counts)."""
        with self._lock:
            out = self._cache.get(request_line("count", spec))
        return CountSummary.from_json(out.value) if out is not None and out.kind == "ok" else None

    def summary(self, spec: Spec, client: str | None = None) -> CountSummary:
        """``Plan.build(spec).summary()``; raises :class:`CountFailed`.

        ``client`` (an API key or an address) may have at most
        ``per_client`` counts being built at once; past that the kind is
        ``client_busy``.  Cached results are always answered."""
        return CountSummary.from_json(self._answer(request_line("count", spec), client))

    def distribution(self, spec: Spec, expr: str, client: str | None = None) -> dict[str, Any]:
        """The JSON of :func:`truedeal.analysis.laws.distribution_of` (exact,
        else a labelled estimate), under the same limits as :meth:`summary`."""
        return self._answer(request_line("distribution", spec, of=expr), client)

    def _answer(self, key: str, client: str | None) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while True:
            with self._lock:
                hit = self._cache.get(key)
                if hit is not None:
                    self._cache.move_to_end(key)
                    return self._unwrap(hit)
                found = self._pending.get(key)
                owner = found is None
                pending = self._pending[key] = _Pending() if found is None else found
            if owner:
                if client is not None and self._running.get(client, 0) >= self.per_client:
                    with self._lock:
                        del self._pending[key]
                    pending.outcome = _Outcome("busy", "client busy", 0.0)
                    pending.done.set()
                    raise CountFailed("client_busy", "your previous count is still running; this one can start "
                                      "when it ends (slow specs are counted one at a time per client)")
                break
            # Someone else is counting this spec: wait for their outcome.
            if not pending.done.wait(max(0.0, deadline - time.monotonic()) + self.timeout + 1.0):
                raise CountFailed("timeout", self._timeout_message())
            if pending.outcome is not None and pending.outcome.kind not in ("busy", "error"):
                return self._unwrap(pending.outcome)
            if time.monotonic() >= deadline:
                raise CountFailed("busy", "the server is busy counting other specs; try again in a moment")
        outcome = _Outcome("error", "the count was interrupted", 0.0)
        if client is not None:
            with self._lock:
                self._running[client] = self._running.get(client, 0) + 1
        try:
            outcome = self._count(key, deadline)
        finally:
            with self._lock:
                if client is not None:
                    self._running[client] -= 1
                    if not self._running[client]:
                        del self._running[client]
                if outcome.kind in ("ok", "too_wide", "timeout"):
                    self._cache[key] = outcome
                    while len(self._cache) > self.cache_size:
                        self._cache.popitem(last=False)
                del self._pending[key]
            pending.outcome = outcome
            pending.done.set()
        return self._unwrap(outcome)

    def close(self) -> None:
        """Stop the idle helpers (busy ones stop when they are handed back)."""
        with self._pool_cv:
            idle, self._idle = self._idle, []
            self.processes = 0
        if self._fast_lock.acquire(timeout=FAST_LANE_SECONDS + 5):
            if self._fast is not None:
                idle.append(self._fast)
                self._fast = None
            self._fast_lock.release()
        for h in idle:
            h.close()

    # -------------------------------------------------------------- internals

    def _timeout_message(self) -> str:
        return (
            f"counting this spec takes more than {self.timeout:g} s, the limit of this server "
            "(wide HCP ranges on three or four seats without shapes are the usual cause)"
        )

    def _unwrap(self, outcome: _Outcome) -> dict[str, Any]:
        if outcome.kind == "ok":
            return dict(outcome.value)
        if outcome.kind == "timeout":
            raise CountFailed("timeout", self._timeout_message())
        raise CountFailed(outcome.kind, str(outcome.value))

    def _acquire(self, deadline: float) -> _Helper | None:
        with self._pool_cv:
            while True:
                while self._idle:
                    h = self._idle.pop()
                    if h.alive():
                        self._busy += 1
                        self._counting.add(h)
                        return h
                    h.close()
                if self._busy < self.processes:
                    self._busy += 1
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._pool_cv.wait(left)
        try:
            h = _Helper(self.memory_mb)
        except BaseException:
            with self._pool_cv:
                self._busy -= 1
                self._pool_cv.notify()
            raise
        self.started += 1
        with self._pool_cv:
            self._counting.add(h)
        return h

    def _release(self, h: _Helper, healthy: bool) -> None:
        keep = healthy and h.alive() and h.uses < HELPER_MAX_USES and h.rss < HELPER_MAX_RSS
        with self._pool_cv:
            self._busy -= 1
            self._counting.discard(h)
            if keep and self._busy + len(self._idle) < self.processes:
                self._idle.append(h)
                h = None  # type: ignore[assignment]
            self._pool_cv.notify()
        if h is not None:
            h.close()

    def _count_fast(self, key: str) -> _Outcome | None:
        """The count on the reserved fast-lane helper, given at most
        :data:`FAST_LANE_SECONDS`; None when the lane is taken."""
        if not self._fast_lock.acquire(blocking=False):
            return None
        try:
            h, self._fast = self._fast, None
            if h is None or not h.alive():
                h = _Helper(self.memory_mb)
                self.started += 1
            t0 = time.monotonic()
            kind, value = h.ask(with_budget(key, FAST_LANE_SECONDS), FAST_LANE_SECONDS)
            self.builds += kind != "over_budget"
            if (kind in ("ok", "too_wide", "invalid", "over_budget") and h.alive()
                    and h.uses < HELPER_MAX_USES and h.rss < HELPER_MAX_RSS):
                self._fast = h
            else:
                h.close()
            if kind in ("timeout", "over_budget"):  # slow: it must wait for a pool helper, not hold the fast lane
                return _Outcome("busy", "the server is busy counting slow specs, and this one is slow too; "
                                "try again in a moment", time.monotonic() - t0)
            return _Outcome(kind, value, time.monotonic() - t0)
        finally:
            self._fast_lock.release()

    def _count(self, key: str, deadline: float) -> _Outcome:
        h = self._acquire(min(deadline, time.monotonic() + POOL_WAIT_SECONDS))
        if h is None:  # every pool helper is busy: try the fast lane, else wait for the pool
            fast = self._count_fast(key)
            if fast is not None:
                return fast
            h = self._acquire(deadline)
        if h is None:
            return _Outcome("busy", "the server is busy counting other specs; try again in a moment", 0.0)
        t0 = time.monotonic()
        healthy = False
        try:
            # the count itself gets the full timeout, whatever time was spent waiting for a helper
            kind, value = h.ask(key, self.timeout)
            healthy = kind in ("ok", "too_wide", "invalid")
            self.builds += 1
        finally:
            self._release(h, healthy)
        if kind == "error":
            logger.error("count helper failed: %s", value)
        return _Outcome(kind, value, time.monotonic() - t0)
