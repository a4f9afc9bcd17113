"""Helper process for :mod:`truedeal_web.counting`: reads one request per
line on stdin, answers one JSON line per request on stdout.  Requests::

    {"op": "count", "spec": <canonical spec>[, "budget": <seconds>]}
    {"op": "distribution", "spec": <canonical spec>, "of": "<expression>"}

With a ``budget``, a spec whose listing is estimated to take longer
(:func:`truedeal.cost.estimate_build_seconds`) is not built: the answer is
``{"kind": "over_budget", "value": <estimated seconds>}``, at once.

Answers::

    {"kind": "ok", "value": <Plan.summary()> | <distribution JSON>, "rss": <bytes>}
    {"kind": "too_wide" | "invalid" | "impossible" | "error", "value": "<one line>", "rss": <bytes>}

It first writes ``{"kind": "ready"}`` once its imports are done (so that a
count's time limit does not include the interpreter's start), and it exits
when stdin closes or, on Linux, as soon as its web process dies
(``PR_SET_PDEATHSIG``): a helper busy with a slow count must not run on
alone after ``serve`` is killed.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from truedeal.errors import Impossible
from truedeal.output import whole_stdout
from truedeal.resources import resident_bytes


def _die_with_parent() -> None:
    """SIGKILL this helper when its parent dies (Linux; a no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent was already gone before prctl
        os._exit(1)


class OverBudget(Exception):
    """The spec's estimated build time (``args[0]``, seconds) is over the request's budget."""


def answer(request: dict) -> dict:
    """The value of one request (see the module doc); engine and input errors propagate."""
    from truedeal.engine import Plan
    from truedeal.spec import load_spec

    spec = load_spec(request["spec"])
    if request["op"] == "count":
        budget = request.get("budget")
        if budget is not None:
            from truedeal.cost import estimate_build_seconds

            estimate = estimate_build_seconds(spec)
            if estimate > budget:
                raise OverBudget(estimate)
        return Plan.build_to_count(spec).summary().to_json()
    from truedeal.analysis.laws import distribution_of

    out = distribution_of(spec, request["of"]).to_json()  # (an estimate of a spec no deal fits: Impossible)
    if out.get("deals") == 0:
        raise Impossible("no deal satisfies this spec (it counts 0 deals)")
    return out


def main() -> None:
    # Ctrl-C in a terminal goes to the whole process group: let the web
    # process decide when this helper ends (it closes stdin or kills it).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    from truedeal.analysis.conditioning import NotExact
    from truedeal.analysis.distribution import UnsupportedFeature
    from truedeal.engine import TooWide
    from truedeal.spec import SpecError

    whole_stdout()  # a reply is whole even if the helper is stopped mid-write
    out = sys.stdout.buffer
    out.write(b'{"kind": "ready"}\n')
    out.flush()
    for line in sys.stdin.buffer:
        line = line.strip()
        if not line:
            continue
        try:
            try:
                reply: dict[str, Any] = {"kind": "ok", "value": answer(json.loads(line))}
            except TooWide as exc:
                reply = {"kind": "too_wide", "value": " ".join(str(exc).split())}
            except OverBudget as exc:
                reply = {"kind": "over_budget", "value": min(exc.args[0], 1e300)}
            except Impossible as exc:
                reply = {"kind": "impossible", "value": str(exc)}
            except (SpecError, UnsupportedFeature, NotExact) as exc:
                reply = {"kind": "invalid", "value": str(exc)}
            except MemoryError:
                reply = {"kind": "too_wide", "value": "counting this spec needs more memory than this server has"}
        except Exception as exc:  # reported to the web process, which logs it
            reply = {"kind": "error", "value": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}
        reply["rss"] = resident_bytes()
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
