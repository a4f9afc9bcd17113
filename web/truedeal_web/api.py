"""The JSON API under ``/api``.

``POST /api/count``                 exact count of a spec, at once
``POST /api/jobs``                  submit a job: 202 + ``Location``
``GET /api/jobs/<id>``              state, progress, count, timestamps, error
``GET /api/jobs/<id>/deals``        the deals, streamed (``format``, ``offset``, ``limit``)
``DELETE /api/jobs/<id>``           cancel (idempotent)
``GET /api/openapi.json``           the OpenAPI 3.1 document
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import redis
from flask import Blueprint, Response, current_app, request
from pydantic import ValidationError

import truedeal_jobs as jobs_mod
from truedeal.constraints.load import deals_wanted, rotation_of
from truedeal.engine import MAX_DEALS
from truedeal.formats import WRITERS, Rotation
from truedeal.formats.rotation import RotationError
from truedeal.odds import odds_of_summary
from truedeal.spec import DuplicateKey, Spec, SpecError, load_spec, strict_json
from truedeal.summary import CountSummary
from truedeal_jobs.models import MAX_FIRST_BOARD

from .counting import Counter, CountFailed
from .models import DEAL_FORMATS, CountResult, JobRequest, JobStatus
from .problems import Problem

logger = logging.getLogger("truedeal.web")

bp = Blueprint("api", __name__, url_prefix="/api")

#: Content type of each deal format.
MEDIA_TYPES = {
    "numbers": "text/plain; charset=utf-8",
    "pbn": "application/x-pbn; charset=utf-8",
    "json": "application/x-ndjson; charset=utf-8",
    "text": "text/plain; charset=utf-8",
    "lin": "text/plain; charset=utf-8",
}
#: File name endings of downloads (numbers and text are both plain text: told apart by name).
EXTENSIONS = {"numbers": "numbers.txt", "pbn": "pbn", "json": "jsonl", "text": "txt", "lin": "lin"}
#: Values of ``download`` that mean yes / no.
_YES, _NO = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


# --------------------------------------------------------------------------- helpers


def state():
    """The app's :class:`~truedeal_web.app.WebState`."""
    return current_app.extensions["truedeal"]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _body_bytes() -> bytes:
    """The raw body, at most ``MAX_CONTENT_LENGTH`` bytes; 413 past it.

    A chunked body has no Content-Length, and werkzeug's limited stream then
    simply stops at the limit: one more read tells a body that fits from
    one that was cut."""
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    raw = request.get_data(cache=False)  # 413 at once when Content-Length is over the limit
    if limit is not None and len(raw) >= limit and request.content_length is None:
        # No Content-Length (chunked): the server's own stream ends where the
        # body ends, so one byte more from it means the body was cut.
        try:
            more = request.environ["wsgi.input"].read(1) if "wsgi.input_terminated" in request.environ else b"x"
        except Exception:
            more = b"x"
        if more:
            raise Problem(413, f"the request body is too large (at most {limit:,} bytes)")
    return raw


def _json_content_type() -> None:
    """415 when the body is declared as something other than JSON
    (application/json or a +json type; no Content-Type at all is read as
    JSON).  This refuses the types a browser form may send across sites
    (text/plain, form encodings) without a CORS preflight."""
    mime = (request.mimetype or "").lower()
    if mime and mime != "application/json" and not mime.endswith("+json"):
        shown = request.content_type or "none"
        raise Problem(415, f"send the body as application/json (Content-Type was {shown[:60]})",
                      kind="unsupported-media-type", title="Unsupported Media Type")


def json_body() -> Any:
    """The request body parsed as JSON; 415 unless it is declared as JSON,
    413 past the size limit, 400 if it is not JSON."""
    _json_content_type()
    raw = _body_bytes()
    if not raw.strip():
        raise Problem(400, "the request body is empty; send a JSON object", kind="invalid-json", title="Invalid JSON")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Problem(400, "the request body is not UTF-8 text", kind="invalid-json", title="Invalid JSON") from None
    try:
        return strict_json(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise Problem(400, f"the request body is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}",
                      kind="invalid-json", title="Invalid JSON") from None
    except DuplicateKey as e:
        raise Problem(400, f"the request body repeats the key {e.args[0]!r} in one object",
                      kind="invalid-json", title="Invalid JSON") from None
    except (ValueError, RecursionError) as e:
        raise Problem(400, f"the request body is not usable JSON: {str(e) or type(e).__name__}",
                      kind="invalid-json", title="Invalid JSON") from None


def parse_spec(data: Any, pointer: str = "") -> Spec:
    """Validate a spec given as parsed JSON; 422 with the SpecError line as detail.

    Never hands a string to :func:`load_spec` (which would read it as a path).
    """
    try:
        if not isinstance(data, dict):
            kind = "null" if data is None else type(data).__name__
            kind = {"str": "string", "list": "array", "int": "integer", "float": "number", "bool": "boolean"}.get(kind, kind)
            raise SpecError(f"a spec must be a JSON object, got {kind}")
        return load_spec(data)
    except SpecError as e:
        raise Problem(422, str(e), kind="invalid-spec", title="Invalid spec",
                      errors=[{"detail": str(e), "pointer": pointer + spec_pointer(str(e))}]) from None


def spec_pointer(message: str) -> str:
    """JSON Pointer (RFC 6901) of the field a SpecError line names:
    ``"north.hcp: range [17, 15] is reversed"`` -> ``"/north/hcp"``; ``""``
    when the line names no field."""
    head, sep, _ = message.partition(":")
    if unknown := re.match(r"unknown key '([^']*)'", message):  # the key itself is what is wrong
        return "/" + unknown[1].replace("~", "~0").replace("/", "~1")
    if not sep or not re.fullmatch(r"[A-Za-z_][\w]*(\.[\w]+)*", head.strip()):
        return ""
    return "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in head.strip().split("."))


def _humane(e: Mapping[str, Any]) -> str:
    """A pydantic error said as a person would ("ask for at least 1 deal")."""
    kind, ctx, loc = e.get("type", ""), e.get("ctx") or {}, tuple(e.get("loc", ()))
    field = str(loc[0]) if loc else ""
    if kind == "extra_forbidden":
        return "unknown field (fields are constraints, count, seed, stream, format, first_board, dealer, vulnerability)"
    if field == "count" and kind in ("greater_than_equal", "less_than_equal", "int_type"):
        return f"ask for a whole number of deals from 1 to {MAX_DEALS:,}"
    if field == "seed":
        return "give text (1 to 1000 characters) or a whole number, which is used as its decimal text"
    if field in ("stream", "format") and kind == "literal_error":
        return f"choose from {ctx.get('expected', '').replace(chr(39), '')}"
    if field == "first_board" and kind in ("greater_than_equal", "less_than_equal", "int_type"):
        return f"the first board is a whole number from 1 to {MAX_FIRST_BOARD:,}"
    if kind == "greater_than_equal":
        return f"must be at least {ctx.get('ge')}"
    if kind == "less_than_equal":
        return f"must be at most {ctx.get('le')}"
    if kind == "int_type":
        return "must be a whole number"
    if kind == "missing":
        return "this field is required"
    return str(e.get("msg", "invalid value")).removeprefix("Value error, ")


def _pydantic_problem(err: ValidationError) -> Problem:
    items, seen = [], set()
    for e in err.errors(include_url=False):
        loc = [str(x) for x in e.get("loc", ())]
        if loc[:1] == ["seed"]:
            loc = ["seed"]  # not pydantic's union branches (seed.str, seed.int)
        if tuple(loc) in seen:
            continue
        seen.add(tuple(loc))
        where = ".".join(loc)
        msg = _humane(e)
        items.append({"detail": f"{where}: {msg}" if where else msg, "pointer": "/" + "/".join(loc) if loc else ""})
    detail = items[0]["detail"] if items else "invalid request"
    if len(items) > 1:
        detail += f" (and {len(items) - 1} more problem{'s' if len(items) > 2 else ''})"
    return Problem(422, detail, kind="invalid-request", title="Invalid request", errors=items)


def count_result(spec: Spec, summary: CountSummary) -> dict[str, Any]:
    """A :class:`CountResult` dict of a count."""
    out = summary.to_json()
    deals = summary.deals
    out.update(spec=spec.canonical(), odds=odds_of_summary(summary), exact=deals is not None,
               deals_text=None if deals is None else str(deals))
    for k in ("probability", "one_in", "deals_estimate", "deals_estimate_stderr"):
        v = out.get(k)
        if isinstance(v, float) and not math.isfinite(v):
            out[k] = None
    return CountResult.model_validate(out).model_dump(mode="json")


def request_client() -> str:
    """Who is asking: the API key when keys are on, else the client address."""
    auth = request.headers.get("Authorization", "")
    if state().api_keys.required and auth:
        return "key:" + auth
    return "addr:" + (request.remote_addr or "?")


def _count(spec: Spec) -> CountSummary:
    counter: Counter = state().counter
    try:
        return counter.summary(spec, request_client())
    except CountFailed as e:
        raise api_problem_for(e) from None


def api_problem_for(e: CountFailed) -> Problem:
    """The problem document for a count (or distribution) that could not be given."""
    if e.kind == "client_busy":
        return Problem(429, str(e), kind="count-busy", title="Count already running", headers={"Retry-After": "2"})
    if e.kind == "too_wide":
        return Problem(422, f"this spec is too wide to count exactly: {e}", kind="spec-too-wide", title="Spec too wide")
    if e.kind == "timeout":
        return Problem(422, str(e), kind="count-timeout", title="Spec too slow to count")
    if e.kind == "invalid":
        return Problem(422, str(e), kind="invalid-spec", title="Invalid spec")
    if e.kind == "busy":
        return Problem(503, str(e), kind="busy", headers={"Retry-After": "5"})
    logger.error("count failed: %s", e)
    return Problem(500, "the count failed because of an internal error; it has been logged")


# --------------------------------------------------------------------------- hooks


@bp.before_request
def _guard() -> None:
    st = state()
    who = None
    if request.endpoint != "api.openapi":
        addr = request.remote_addr or "?"
        limiter = st.auth_failures
        if limiter is not None:
            limiter.check(addr)
        try:
            who = st.api_keys.authenticate()
        except Problem:
            if limiter is not None:
                limiter.failed(addr)
            raise
    if st.rate_limiter is not None:
        st.rate_limiter.hit("key:" + who if who else "addr:" + (request.remote_addr or "?"))


@bp.errorhandler(redis.exceptions.ConnectionError)
@bp.errorhandler(redis.exceptions.TimeoutError)
def _redis_down(exc: Exception) -> Response:
    logger.error("job store unreachable: %s", exc)
    return Problem(503, "the job store (Redis) cannot be reached; try again later", kind="store-unavailable",
                   headers={"Retry-After": "10"}).response()


# --------------------------------------------------------------------------- count


@bp.post("/count")
def count() -> Response:
    """Exact count, probability and whether the spec is possible, without a job."""
    spec = parse_spec(json_body())
    return current_app.response_class(json.dumps(count_result(spec, _count(spec))), mimetype="application/json")


# --------------------------------------------------------------------------- jobs


def _jobs():
    backend = state().jobs
    if backend is None:
        raise Problem(503, "the job system is not installed on this server", kind="jobs-unavailable")
    return backend


def _job_id_ok(job_id: str) -> None:
    # Cheap 404 before touching Redis; the store would say the same.
    if len(job_id) != 32 or any(c not in "0123456789abcdef" for c in job_id):
        raise Problem(404, f"unknown job id {job_id[:80]!r} (job ids are 32 hex digits)", kind="unknown-job",
                      title="Unknown job")


def _not_found(exc: Exception, job_id: str) -> Problem:
    return Problem(404, str(exc) or f"unknown job {job_id}", kind="unknown-job", title="Unknown job", job_id=job_id)


def job_view(status: dict[str, Any]) -> dict[str, Any]:
    """A :class:`JobStatus` dict from ``JobStore.status`` (the words of
    :func:`truedeal_jobs.public_status`, which ``truedeal status --json``
    prints too), with links and the count result in API form."""
    backend = _jobs()
    try:
        workers = backend.store.workers_alive()
    except redis.exceptions.RedisError:
        workers = None
    view = jobs_mod.public_status(status, workers)
    spec = load_spec(status["spec"])
    summary = CountSummary.from_json(status["count"]) if status.get("count") else state().counter.cached(spec)
    jid = status["id"]
    base = f"/api/jobs/{jid}"
    view.update(
        constraints=spec.canonical(),
        result=count_result(spec, summary) if summary else None,
        links={
            "self": base,
            "deals": f"{base}/deals",
            "pbn": f"{base}/deals?format=pbn",
            "numbers": f"{base}/deals?format=numbers",
        },
    )
    return JobStatus.model_validate(view).model_dump(mode="json")


def _status_response(status: dict[str, Any], code: int = 200, headers: dict[str, str] | None = None) -> Response:
    view = job_view(status)
    resp = current_app.response_class(json.dumps(view), status=code, mimetype="application/json")
    if view["state"] not in ("done", "failed", "cancelled"):
        resp.headers["Retry-After"] = "1"
    resp.headers["Cache-Control"] = "no-store"
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


#: Seconds ``POST /api/jobs`` waits for the spec's count before queueing anyway.
SUBMIT_COUNT_WAIT = 5.0


def _quick_summary(counter: Counter, spec: Spec, wait: float = SUBMIT_COUNT_WAIT) -> CountSummary | None:
    """The spec's summary if it counts within ``wait`` seconds, else None
    (the count goes on in a background thread); CountFailed as the count raises it."""
    cached = counter.cached(spec)
    if cached is not None:
        return cached
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["summary"] = counter.summary(spec)
        except CountFailed as exc:
            box["failed"] = exc
        except Exception:  # logged by the counter; the workers decide
            box["failed"] = None

    thread = threading.Thread(target=run, name="submit-count", daemon=True)
    thread.start()
    thread.join(wait)
    if box.get("failed") is not None:
        raise box["failed"]
    return box.get("summary")


@bp.post("/jobs")
def submit_job() -> Response:
    """Validate and queue a job; 202 with its status and ``Location``."""
    body = json_body()
    if not isinstance(body, dict):
        raise Problem(422, "the request body must be a JSON object with constraints and count",
                      kind="invalid-request", title="Invalid request")
    if "constraints" not in body:
        raise Problem(422, "constraints: field required (the spec)", kind="invalid-request", title="Invalid request",
                      errors=[{"detail": "field required", "pointer": "/constraints"}])
    spec = parse_spec(body["constraints"], "/constraints")
    if "count" not in body and (wanted := deals_wanted(spec)) is not None:
        body = {**body, "count": wanted[1]}  # a script's produce, else its generate, as the CLI's -n
    st = state()
    limit = st.config.max_job_deals
    n = body.get("count")
    if isinstance(n, int) and not isinstance(n, bool) and n > limit:
        raise Problem(413, f"at most {limit:,} deals per job on this server, got {n:,}",
                      kind="too-many-deals", title="Too many deals", max_count=limit)
    try:
        req = JobRequest.model_validate({**body, "constraints": spec})
    except ValidationError as e:
        raise _pydantic_problem(e) from None
    if req.count is None:
        raise Problem(422, "count: field required (the spec names no produce or generate)", kind="invalid-request",
                      title="Invalid request", errors=[{"detail": "field required", "pointer": "/count"}])
    rotation = _job_rotation(spec, req)
    backend = _jobs()
    # Refuse at once what the workers would only fail later -- when the count
    # is quick.  A slow one goes on in the background (its result is cached
    # for the job's status) and the workers decide.
    try:
        summary = _quick_summary(st.counter, spec)
    except CountFailed as e:
        if e.kind == "too_wide":
            raise Problem(422, f"this spec is too wide to generate: {e}", kind="spec-too-wide",
                          title="Spec too wide") from None
        summary = None  # slow or busy here: the workers decide
    if summary is not None and not summary.possible:
        raise Problem(422, "no deal satisfies this spec (it counts 0 deals)", kind="impossible-spec",
                      title="Impossible spec")
    try:
        seed = None if req.seed is None else str(req.seed)  # the model's validator made it text
        job = jobs_mod.submit(backend.store, backend.dispatcher, spec, req.count, seed, req.format, req.first_board,
                              jobs_mod.lane_for(summary), rotation, req.stream)  # a slow count: the slow lane's workers
    except jobs_mod.JobNotFound as e:  # pragma: no cover - expired between create and read
        raise _not_found(e, "?") from None
    except jobs_mod.JobInputError as e:
        raise Problem(422, str(e), kind="invalid-request", title="Invalid request") from None
    except SpecError as e:
        raise Problem(422, str(e), kind="invalid-spec", title="Invalid spec") from None
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
        raise
    except Exception as e:
        if type(e).__module__.startswith("kombu"):
            logger.error("could not queue job: %s", e)
            raise Problem(503, "the job queue cannot be reached; try again later", kind="queue-unavailable",
                          headers={"Retry-After": "10"}) from None
        raise
    status = backend.store.status(job.id)
    return _status_response(status, 202, {"Location": f"/api/jobs/{job.id}"})


def _job_rotation(spec: Spec, req: JobRequest) -> Rotation:
    """The job's dealer and vulnerability: the request's words, else the script's; 422 pointing at a bad word."""
    try:
        return rotation_of(spec, req.dealer, req.vulnerability)
    except RotationError as e:
        raise Problem(422, f"{e.field}: {e}", kind="invalid-request", title="Invalid request",
                      errors=[{"detail": str(e), "pointer": "/" + e.field}]) from None


@bp.get("/jobs/<job_id>")
def job_status(job_id: str) -> Response:
    _job_id_ok(job_id)
    backend = _jobs()
    try:
        status = backend.store.status(job_id)
    except jobs_mod.JobNotFound as e:
        raise _not_found(e, job_id) from None
    return _status_response(status)


@bp.delete("/jobs/<job_id>")
def cancel_job(job_id: str) -> Response:
    """Cancel the job (idempotent): its work stops and its deals are discarded."""
    _job_id_ok(job_id)
    backend = _jobs()
    try:
        backend.store.cancel(job_id, backend.dispatcher_or_none())
        status = backend.store.status(job_id)
    except jobs_mod.JobNotFound as e:
        raise _not_found(e, job_id) from None
    return _status_response(status)


def _nonneg(name: str, default: int | None, cap: int) -> int | None:
    """Query parameter ``name`` as an integer >= 0, capped at ``cap`` (any
    larger value means the same: past the end)."""
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    if not re.fullmatch(r"\+?[0-9]+", raw.strip()):
        raise Problem(400, f"{name} must be an integer >= 0, got {raw[:40]!r}", kind="invalid-parameter",
                      title="Invalid parameter")
    digits = raw.strip().lstrip("+").lstrip("0") or "0"
    return cap if len(digits) > len(str(cap)) else min(int(digits), cap)


def _download() -> bool:
    raw = request.args.get("download", "").strip().lower()
    if raw not in _YES + _NO:
        raise Problem(400, f"download must be 1 or 0 (true/false), got {raw[:40]!r}", kind="invalid-parameter",
                      title="Invalid parameter")
    return raw in _YES


@bp.get("/jobs/<job_id>/deals")
def job_deals(job_id: str) -> Response:
    """The deals of a finished job, streamed in constant memory."""
    _job_id_ok(job_id)
    fmt = request.args.get("format") or None
    if fmt is not None and fmt not in DEAL_FORMATS:
        raise Problem(400, f"unknown format {fmt[:40]!r} (choose from {', '.join(DEAL_FORMATS)})",
                      kind="invalid-parameter", title="Invalid parameter")
    offset = _nonneg("offset", 0, MAX_DEALS)
    limit = _nonneg("limit", None, MAX_DEALS)
    download = _download()
    backend = _jobs()
    store = backend.store
    job = None
    try:
        job = store.get(job_id)
        fmt = fmt or job.options.get("format") or "pbn"
        batches = store.iter_deals(job_id, offset, limit)  # checks the job is done, before any byte
    except jobs_mod.JobNotFound as e:
        raise _not_found(e, job_id) from None
    except jobs_mod.JobNotReady as e:
        if job is not None and job.state == jobs_mod.CANCELLED:
            raise Problem(410, "this job was cancelled: its deals were discarded and will never exist",
                          kind="job-cancelled", title="Job cancelled", job_id=job_id, state=job.state) from None
        if job is not None and job.state == jobs_mod.FAILED:
            raise Problem(410, f"this job failed, so it has no deals: {job.error or 'no reason recorded'}",
                          kind="job-failed", title="Job failed", job_id=job_id, state=job.state) from None
        raise Problem(409, str(e), kind="job-not-ready", title="Deals not ready", job_id=job_id,
                      state=None if job is None else job.state) from None
    except jobs_mod.JobInputError as e:
        raise Problem(400, str(e), kind="invalid-parameter", title="Invalid parameter") from None
    first = int(job.options.get("first_board", 1)) + (offset or 0)
    end = job.n if limit is None else min(job.n, (offset or 0) + limit)
    chunks = WRITERS[fmt](batches, first_board=first, rotation=job.rotation)

    def stream() -> Iterator[bytes]:
        try:
            for text in chunks:
                yield text.encode("utf-8")
        except GeneratorExit:
            raise
        except Exception:
            # Headers are gone: all we can do is break the transfer so the
            # client sees an incomplete response rather than a short file.
            logger.exception("streaming the deals of job %s failed", job_id)
            raise

    resp = Response(stream(), mimetype=None, content_type=MEDIA_TYPES[fmt])
    resp.headers["X-Deal-Count"] = str(max(0, end - (offset or 0)))
    resp.headers["X-Content-Type-Options"] = "nosniff"
    if download:
        resp.headers["Content-Disposition"] = f'attachment; filename="truedeal-{job_id[:8]}.{EXTENSIONS[fmt]}"'
    return resp


# --------------------------------------------------------------------------- schema


@bp.get("/openapi.json")
def openapi() -> Response:
    from .openapi import document

    resp = current_app.response_class(json.dumps(document(state().config)), mimetype="application/json")
    return resp
