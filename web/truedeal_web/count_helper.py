"""Helper process for :mod:`truedeal_web.counting`: reads one canonical spec
(JSON) per line on stdin, answers one JSON line per spec on stdout::

    {"kind": "ok", "value": <Plan.summary()>, "rss": <bytes>}
    {"kind": "too_wide" | "invalid" | "error", "value": "<one line>", "rss": <bytes>}

It exits when stdin closes (its web process is gone).
"""

from __future__ import annotations

import json
import os
import signal
import sys


def _rss() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def main() -> None:
    # Ctrl-C in a terminal goes to the whole process group: let the web
    # process decide when this helper ends (it closes stdin or kills it).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from truedeal.engine import Plan, TooWide
    from truedeal.spec import SpecError, load_spec

    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        line = line.strip()
        if not line:
            continue
        try:
            try:
                reply = {"kind": "ok", "value": Plan.build(load_spec(line)).summary()}
            except TooWide as exc:
                reply = {"kind": "too_wide", "value": " ".join(str(exc).split())}
            except SpecError as exc:
                reply = {"kind": "invalid", "value": str(exc)}
            except MemoryError:
                reply = {"kind": "too_wide", "value": "counting this spec needs more memory than this server has"}
        except Exception as exc:  # reported to the web process, which logs it
            reply = {"kind": "error", "value": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}
        reply["rss"] = _rss()
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
