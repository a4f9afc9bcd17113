"""One public vocabulary for a job's status: what ``GET /api/jobs/<id>``
answers and what ``truedeal status --json`` prints.

:meth:`JobStore.status` is the store's own record (``n``, ``spec``); this
module renames it to the words of the API (``count``, ``constraints``),
adds a progress fraction for a bar, and a ``note`` when nobody will run the
job (no worker heartbeat), since the watchdog that would fail it runs inside
the workers.
"""

from __future__ import annotations

from typing import Any

from truedeal.odds import odds_of_summary
from truedeal.summary import CountSummary

from .models import ACTIVE_STATES, DONE

NO_WORKER_NOTE = ("no worker has been seen; the job waits until one starts "
                  "(truedeal worker, or truedeal serve)")


def progress_fraction(status: dict[str, Any]) -> float:
    """0..1 over both phases (partitions listed + chunks drawn)."""
    if status["state"] == DONE:
        return 1.0
    e, d = status["progress"]["enumeration"], status["progress"]["drawing"]
    units = e["total"] + d["total"]
    return round(min(1.0, max(0.0, (e["done"] + d["done"]) / units if units else 0.0)), 6)


def public_status(status: dict[str, Any], workers_alive: int | None = None) -> dict[str, Any]:
    """``status`` (from :meth:`JobStore.status`) in the API's words.

    ``result`` is the JSON of the spec's count (with ``odds``) once known;
    ``note`` is set when the job is active and ``workers_alive == 0``.
    """
    d = status["progress"]["drawing"]
    result = status.get("count")
    if result:
        result = {**result, "odds": odds_of_summary(CountSummary.from_json(result))}
    note = None
    if workers_alive == 0 and status["state"] in ACTIVE_STATES:
        note = NO_WORKER_NOTE
    return {
        "id": status["id"],
        "state": status["state"],
        "count": status["n"],
        "seed": status["seed"],
        "seed_generated": bool(status.get("seed_generated")),
        "stream": status.get("stream", "v1"),
        "format": status.get("format") or "pbn",
        "first_board": status.get("first_board") or 1,
        "dealer": status.get("dealer", "rotate"),
        "vulnerability": status.get("vulnerability", "rotate"),
        "constraints": status["spec"],
        "progress": {
            "done": d["deals_done"],
            "total": d["deals_total"],
            "fraction": progress_fraction(status),
            "enumeration": dict(status["progress"]["enumeration"]),
            "drawing": dict(d),
        },
        "result": result,
        "error": status.get("error"),
        "note": note,
        "created": status.get("created"),
        "started": status.get("started"),
        "updated": status.get("updated"),
        "finished": status.get("finished"),
    }


__all__ = ["NO_WORKER_NOTE", "progress_fraction", "public_status"]
