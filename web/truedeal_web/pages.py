"""The page at ``/``: server-rendered, with a little vanilla JavaScript (``static/app.js``)."""

from __future__ import annotations

import logging

import redis
from flask import Blueprint, Response, current_app, jsonify, render_template

from truedeal.cards import SEAT_NAMES, SUIT_NAMES
from truedeal.formats import FORMATS
from truedeal.help_text import language_help

from .problems import Problem

bp = Blueprint("pages", __name__)
logger = logging.getLogger("truedeal.web")


@bp.get("/")
def index():
    st = current_app.extensions["truedeal"]
    cfg = st.config
    return render_template(
        "index.html",
        seats=SEAT_NAMES,
        suits=SUIT_NAMES,
        formats=FORMATS,
        max_job_deals=cfg.max_job_deals,
        preview_deals=cfg.preview_deals,
        keys_required=st.api_keys.required,
        jobs_available=st.jobs is not None,
    )


@bp.get("/language")
def language():
    """The spec language with examples, as plain text: what ``truedeal help``
    prints (JSON specs, then dealer scripts), so the page and the CLI say the same."""
    return Response(language_help(), mimetype="text/plain")


@bp.get("/healthz")
def healthz():
    """Liveness for load balancers and compose health checks: 200 when the
    job store answers, 503 problem otherwise.  Never needs an API key."""
    st = current_app.extensions["truedeal"]
    if st.jobs is None:
        return jsonify(status="ok", redis="not used (no job system)")
    try:
        st.jobs.store.ping()
    except redis.exceptions.RedisError as exc:
        logger.warning("health check: Redis unreachable: %s", exc)
        raise Problem(503, "the job store (Redis) cannot be reached", kind="store-unavailable") from None
    return jsonify(status="ok", redis="ok")
