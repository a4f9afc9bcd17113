"""Count a spec before queueing it, within a time limit, so that ``truedeal
submit`` refuses an impossible spec at once (as ``POST /api/jobs`` does)
instead of queueing a job that can only fail.

The build runs in a child process (``python -P -m truedeal_jobs.precheck``,
the spec's canonical JSON on stdin, one JSON line out) because a listing
cannot be interrupted from inside: past the limit the child is killed and the
workers decide, as they would have anyway.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

from truedeal.output import whole_stdout
from truedeal.spec import Spec
from truedeal.summary import CountSummary

#: Seconds a pre-submit count may take before the job is queued unchecked.
PRECHECK_SECONDS = 10.0


@dataclass(frozen=True)
class Precheck:
    """``kind`` is ``ok`` (``summary`` set), ``too_wide`` (``message``) or
    ``unknown`` (too slow, or the child failed: let the workers decide)."""

    kind: str
    summary: CountSummary | None = None
    message: str = ""

    @property
    def impossible(self) -> bool:
        return self.kind == "ok" and self.summary is not None and not self.summary.possible


def precheck(spec: Spec, timeout: float = PRECHECK_SECONDS) -> Precheck:
    """Count ``spec`` in a child process, giving up after ``timeout`` s."""
    try:
        # -P: a folder named truedeal in the working directory must not shadow the package
        proc = subprocess.run([sys.executable, "-P", "-m", "truedeal_jobs.precheck"], input=spec.canonical_json().encode(),
                              capture_output=True, timeout=timeout, check=False)
        reply = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, OSError, ValueError, IndexError):
        return Precheck("unknown")
    if reply.get("kind") == "ok":
        return Precheck("ok", summary=CountSummary.from_json(reply["value"]))
    if reply.get("kind") == "too_wide":
        return Precheck("too_wide", message=reply["value"])
    return Precheck("unknown", message=str(reply.get("value", "")))


def main() -> None:
    whole_stdout()  # the reply is whole even if this process is stopped mid-write
    from truedeal.engine import Plan, TooWide
    from truedeal.spec import load_spec

    try:
        reply = {"kind": "ok", "value": Plan.build_to_count(load_spec(sys.stdin.buffer.read())).summary().to_json()}
    except TooWide as exc:
        reply = {"kind": "too_wide", "value": " ".join(str(exc).split())}
    except Exception as exc:  # reported; the caller lets the workers decide
        reply = {"kind": "error", "value": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(reply) + "\n")


if __name__ == "__main__":
    main()
