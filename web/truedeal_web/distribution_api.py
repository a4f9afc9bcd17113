"""``POST /api/distribution``: the exact law of an expression over a spec's deals.

Body ``{"constraints": <spec: JSON object or {"script": "..."}>, "of": "EXPR"}``,
where EXPR is what ``truedeal distribution --of`` takes (any dealer number,
``shape class of SEAT``, ``... given COND``).  The answer is the JSON that
``truedeal distribution --json`` prints: ``exact`` true with exact deal
counts and fractions, or -- only where no exact answer exists -- ``exact``
false with a labelled sampled estimate (docs/analysis.md).  The work runs
in the count helpers (:mod:`.counting`), under the count time limit: no
request holds a web thread longer than that.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Response, current_app

from .api import api_problem_for, json_body, parse_spec, request_client, state
from .api import bp as api_bp
from .counting import CountFailed
from .problems import Problem

bp = Blueprint("distribution", __name__)

#: Longest expression accepted (dealer expressions are short; this bounds the work of parsing).
MAX_EXPRESSION = 500


def _expression(body: dict[str, Any]) -> str:
    expr = body.get("of")
    if not isinstance(expr, str) or not expr.strip():
        raise _invalid("of", "give the expression as text, e.g. \"hcp(north)+hcp(south)\"")
    if len(expr) > MAX_EXPRESSION:
        raise _invalid("of", f"the expression is longer than {MAX_EXPRESSION} characters")
    return expr


def _invalid(field: str, detail: str) -> Problem:
    return Problem(422, f"{field}: {detail}", kind="invalid-request", title="Invalid request",
                   errors=[{"detail": f"{field}: {detail}", "pointer": f"/{field}"}])


def _body() -> dict[str, Any]:
    body = json_body()
    if not isinstance(body, dict):
        raise Problem(422, "the body must be a JSON object {\"constraints\": ..., \"of\": ...}",
                      kind="invalid-request", title="Invalid request")
    unknown = sorted(set(body) - {"constraints", "of"})
    if unknown:
        raise _invalid(unknown[0], "unknown field (fields are constraints and of)")
    if "constraints" not in body:
        raise _invalid("constraints", "this field is required")
    return body


@bp.post("/distribution")
def distribution() -> Response:
    """Exact law of ``of`` over the deals of ``constraints`` (or a labelled estimate)."""
    body = _body()
    spec = parse_spec(body["constraints"], "/constraints")
    expr = _expression(body)
    try:
        out = state().counter.distribution(spec, expr, request_client())
    except CountFailed as exc:
        if exc.kind == "invalid":  # the expression (the constraints were read above)
            raise _invalid("of", str(exc)) from None
        if exc.kind == "impossible":
            raise Problem(422, str(exc), kind="impossible-spec", title="Impossible spec",
                          errors=[{"detail": str(exc), "pointer": "/constraints"}]) from None
        raise api_problem_for(exc) from None
    return current_app.response_class(json.dumps(_with_texts(out)), mimetype="application/json")


def _with_texts(out: dict[str, Any]) -> dict[str, Any]:
    """Deal counts also as decimal strings: they exceed 2**53, which JavaScript cannot hold."""
    if out.get("exact"):
        out["deals_text"] = str(out["deals"])
        for row in out["distribution"]:
            row["deals_text"] = str(row["deals"])
    return out


# Nested under the API blueprint, so that its guard (API keys, rate limits) applies here too.
api_bp.register_blueprint(bp)
