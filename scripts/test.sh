#!/usr/bin/env bash
# Install what the tests need and run them.  Used by .ci/run.
#   - a virtual environment in .venv with the project and its test extra;
#   - a Redis server on 127.0.0.1:6379 (started, and installed if missing);
#   - Debian's chromium and chromedriver for the browser test (installed if missing);
#   - poppler-utils (pdftoppm, pdftotext) for the hand-record PDF test (installed if missing);
#   - ruff and mypy over the tree (config in pyproject.toml), then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

say() { echo "test.sh: $*" >&2; }

apt_install() {  # apt_install PACKAGE... (needs root; says so otherwise)
    if [ "$(id -u)" != 0 ]; then say "cannot install $* (not root)"; return 1; fi
    if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq >/dev/null && APT_UPDATED=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

redis_up() { "$PY" - <<'PY'
import socket, sys
s = socket.socket()
s.settimeout(1)
try:
    s.connect(("127.0.0.1", 6379)); s.sendall(b"PING\r\n"); sys.exit(0 if s.recv(16).startswith(b"+PONG") else 1)
except OSError:
    sys.exit(1)
PY
}

if ! redis_up; then
    command -v redis-server >/dev/null || apt_install redis-server || true
    if command -v redis-server >/dev/null; then
        say "starting redis-server on 127.0.0.1:6379"
        mkdir -p /tmp/truedeal-redis
        redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
            --dir /tmp/truedeal-redis --logfile /tmp/truedeal-redis/redis.log
        for _ in $(seq 50); do redis_up && break; sleep 0.1; done
    fi
    redis_up || say "no Redis on 127.0.0.1:6379: the job tests will fail"
fi

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    apt_install chromium chromium-driver || say "no chromium: the browser test will be skipped"
fi

if ! command -v pdftoppm >/dev/null || ! command -v pdftotext >/dev/null; then
    apt_install poppler-utils || say "no poppler-utils: the hand-record PDF test will be skipped"
fi

if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# Byte-compile the project's own modules: an editable install leaves them as source, and where
# PYTHONDONTWRITEBYTECODE is set (as on these machines) every CLI and worker process the tests
# start compiled them again (~0.15 s a start on a slow machine; hundreds of starts).
.venv/bin/python -m compileall -q -j 0 shared worker web serve >/dev/null

# One test module per process (--dist loadfile: a module's Redis namespace, workers and server stay
# in one process), as many processes as cores up to TRUEDEAL_TEST_PROCESSES (default 2); 0 runs serially.
procs=${TRUEDEAL_TEST_PROCESSES:-2}
parallel=()
if [ "$procs" != 0 ]; then parallel=(-n "$procs" --dist loadfile); fi
# The plugins the suite uses, named: autoloaded, each plugin's whole distribution is marked for
# assertion rewriting, and where bytecode is not written (PYTHONDONTWRITEBYTECODE) every process
# rewrote schemathesis's, hypothesis's and anyio's ~350 modules again (3 s of each one's collection).
export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
plugins=(-p xdist.plugin -p _hypothesis_pytestplugin -p schemathesis.pytest.plugin)

# Lint first (a second), and type-check beside the tests (mypy takes ~25 s from a clean clone, on
# a core the tests leave idle part of the time); the tests run either way, so one report shows everything.
set +e
say "ruff check"
.venv/bin/ruff check --quiet .
lint=$?
say "mypy, beside the tests (its report follows theirs)"
types_log=$(mktemp)
.venv/bin/mypy >"$types_log" 2>&1 &
types_pid=$!
.venv/bin/python -m pytest "${plugins[@]}" "${parallel[@]}" "$@"
rc=$?
wait "$types_pid"
types=$?
say "mypy (exit $types):"
cat "$types_log" >&2
rm -f "$types_log"
set -e
if [ "$rc" -eq 5 ]; then
    say "no tests were collected"
fi
if [ "$lint" -ne 0 ] || [ "$types" -ne 0 ]; then
    say "ruff (exit $lint) or mypy (exit $types) failed"
    [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
