"""Tournament sets over HTTP (see docs/tournaments.md).

``POST /api/sets`` with ``{"set": {...set file...}, "seed": "...",
"public_value": "..."}`` answers 202 with the set's id and links; the
workers deal and solve it.  With ``"public_value_to_come": "..."`` instead
the set is only committed: its manifest can be published, and ``POST
/api/sets/ID/public-value`` with ``{"public_value": "..."}`` deals it once
the value is drawn.  ``GET /api/sets/ID`` is its status (the phase
reads ``"solving 1,200 / 3,000 boards"``), ``GET /api/sets/ID/manifest`` the
public manifest, ``GET /api/sets/ID/keys`` the keys once it is done,
``GET /api/sets/ID/files/X.ext`` a session file (pbn, lin,
dup, dlm, bri, csv, html, pdf).  Specs must be given inline: a string would
name a file on the server, which the API never reads.  Errors are RFC 9457
problem documents.
"""

from __future__ import annotations

import re

from flask import Blueprint, Response, current_app, jsonify, url_for

from truedeal.tournament.files import EXTENSIONS
from truedeal.tournament.setfile import SetError
from truedeal_jobs import sets as setjobs
from truedeal_jobs.set_store import SetStore, UnknownSet

from .api import _jobs, json_body
from .api import bp as api_bp
from .problems import Problem

bp = Blueprint("sets", __name__, url_prefix="/sets")

#: Most boards one set may hold over HTTP.
MAX_SET_BOARDS = 20_000
#: Longest seed or public value over HTTP.
MAX_VALUE_CHARS = 1000
_SUBMIT_FIELDS = ("seed", "public_value", "public_value_to_come")
_MIME = {"pbn": "text/plain; charset=utf-8", "lin": "text/plain; charset=utf-8", "csv": "text/csv; charset=utf-8",
         "html": "text/html; charset=utf-8", "pdf": "application/pdf", "dup": "application/octet-stream",
         "dlm": "text/plain; charset=us-ascii", "bri": "application/octet-stream"}


def _sets() -> SetStore:
    return _jobs().store.set_store()


def _inline_specs(body: dict) -> None:
    data = body["set"]
    refs = [data.get("spec")] if "spec" in data else [m.get("spec") for m in data.get("mix") or [] if isinstance(m, dict)]
    if any(isinstance(ref, str) for ref in refs):
        raise Problem(422, "give every spec inline as a JSON object (the API does not read files)",
                      kind="invalid-set", title="Invalid set")


def _links(set_id: str) -> dict:
    return {"self": url_for(".status", set_id=set_id), "manifest": url_for(".manifest", set_id=set_id),
            "keys": url_for(".keys", set_id=set_id)}


def _text(body: dict, k: str) -> None:
    if body.get(k) is not None and (not isinstance(body[k], str) or not 1 <= len(body[k]) <= MAX_VALUE_CHARS):
        raise Problem(422, f"{k} must be text of 1 to {MAX_VALUE_CHARS:,} characters", kind="invalid-set",
                      title="Invalid set", errors=[{"detail": "not text of the right length", "pointer": "/" + k}])


@bp.post("")
def submit():
    """Queue a set (202 with its id), or commit it when its public value is still to come."""
    body = json_body()
    if not isinstance(body, dict) or not isinstance(body.get("set"), dict) or set(body) - {"set", *_SUBMIT_FIELDS}:
        raise Problem(422, "send {\"set\": {...}} with optional text \"seed\", \"public_value\" or "
                      "\"public_value_to_come\"", kind="invalid-set", title="Invalid set")
    for k in _SUBMIT_FIELDS:
        _text(body, k)
    _inline_specs(body)
    backend = _jobs()
    try:
        sessions = body["set"].get("sessions") or []
        total = sum(s["boards"][1] - s["boards"][0] + 1 for s in sessions)
    except (TypeError, KeyError, IndexError):
        total = 0  # the set file check below names the problem
    if total > MAX_SET_BOARDS:
        raise Problem(422, f"a set holds at most {MAX_SET_BOARDS:,} boards here, this one {total:,}",
                      kind="invalid-set", title="Invalid set")
    try:
        set_id = setjobs.submit_set(backend.store.set_store(), body["set"], current_app.root_path,
                                    seed=body.get("seed"), public=body.get("public_value"),
                                    to_come=body.get("public_value_to_come"))
    except SetError as exc:
        raise Problem(422, str(exc), kind="invalid-set", title="Invalid set") from None
    if body.get("public_value_to_come") is None:
        backend.dispatcher.app.send_task(setjobs.DEAL_TASK, args=[set_id], ignore_result=True)
    return _accepted(set_id)


def _accepted(set_id: str) -> Response:
    resp = _status_json(setjobs.set_status(_sets(), set_id))
    resp.status_code = 202
    resp.headers["Location"] = _links(set_id)["self"]
    return resp


@bp.post("/<set_id>/public-value")
def public_value(set_id: str):
    """Deal a committed set with its public value, now drawn: 202 with its status."""
    _known(set_id)
    body = json_body()
    if not isinstance(body, dict) or set(body) != {"public_value"}:
        raise Problem(422, "send {\"public_value\": \"...\"}", kind="invalid-request", title="Invalid request")
    _text(body, "public_value")
    try:
        setjobs.reveal_set(_sets(), set_id, body["public_value"])
    except UnknownSet:
        raise _unknown(set_id) from None
    except SetError as exc:
        raise Problem(409, str(exc), kind="set-not-committed", title="Not waiting for a public value") from None
    _jobs().dispatcher.app.send_task(setjobs.DEAL_TASK, args=[set_id], ignore_result=True)
    return _accepted(set_id)


def _known(set_id: str) -> None:
    if not re.fullmatch(r"[0-9a-f]{16}", set_id):
        raise Problem(404, f"unknown set id {set_id[:40]!r}", kind="unknown-set", title="Unknown set")


@bp.get("/<set_id>")
def status(set_id: str):
    _known(set_id)
    try:
        st = setjobs.set_status(_sets(), set_id)
    except SetError:
        raise _unknown(set_id) from None
    return _status_json(st)


@bp.delete("/<set_id>")
def cancel(set_id: str):
    """Cancel the set (idempotent): its queued work does nothing; 200 with its status."""
    _known(set_id)
    try:
        setjobs.cancel_set(_sets(), set_id)
        return _status_json(setjobs.set_status(_sets(), set_id))
    except SetError:
        raise _unknown(set_id) from None


def _unknown(set_id: str) -> Problem:
    return Problem(404, f"unknown set id {set_id!r}", kind="unknown-set", title="Unknown set")


def _status_json(st: dict) -> Response:
    set_id = st["id"]
    st["links"] = _links(set_id)
    if st["state"] == "done":
        st["files"] = {name: {ext: url_for(".file", set_id=set_id, name=f"{name}.{ext}") for ext in EXTENSIONS}
                       for name in st["sessions"]}
    return jsonify(st)


@bp.get("/<set_id>/manifest")
def manifest(set_id: str):
    _known(set_id)
    try:
        return jsonify(setjobs.set_manifest(_sets(), set_id))
    except SetError:
        raise _unknown(set_id) from None


@bp.get("/<set_id>/keys")
def keys(set_id: str):
    """The session keys (keys.json) of a finished set, for `truedeal verify`; 409 before."""
    _known(set_id)
    try:
        return jsonify(setjobs.set_keys(_sets(), set_id))
    except UnknownSet:
        raise _unknown(set_id) from None
    except SetError as exc:
        raise Problem(409, str(exc), kind="set-not-ready", title="Set not finished") from None


@bp.get("/<set_id>/files/<name>")
def file(set_id: str, name: str):
    _known(set_id)
    session, _, ext = name.rpartition(".")
    if ext not in EXTENSIONS or not session:
        raise Problem(404, f"no file {name!r}: names are SESSION.{{{','.join(EXTENSIONS)}}}", kind="unknown-file")
    try:
        data = setjobs.set_file(_sets(), set_id, session, ext)
    except SetError as exc:
        status_code = 409 if "not finished" in str(exc) else 404
        raise Problem(status_code, str(exc), kind="set-not-ready" if status_code == 409 else "unknown-file") from None
    return Response(data, mimetype=_MIME[ext].split(";")[0], content_type=_MIME[ext],
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


# Nested under the API blueprint, so that its guard (API keys, rate limits) applies to sets too.
api_bp.register_blueprint(bp)
