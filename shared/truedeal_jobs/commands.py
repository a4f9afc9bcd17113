"""``truedeal submit | status | fetch | cancel``: the job commands of a client
(they need Redis and Celery's sending side, never the worker's code).  They
reach the ``truedeal`` group through the ``truedeal.commands`` entry point.  Every failure the user can cause -- unknown
job id, bad spec, bad count, job not done, unreachable Redis -- raises
:class:`JobCommandError`, a :class:`click.ClickException` with exit code 2
and a one-line message (``truedeal.cli.main`` prints it as
``truedeal: error: ...``).

All commands read ``TRUEDEAL_REDIS_URL`` (default ``redis://localhost:6379/0``)
and the other ``TRUEDEAL_*`` settings (see :mod:`truedeal_jobs.settings`) when
they run.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

import truedeal_jobs as jobs
from truedeal.choices import DEFAULT_STREAM, FORMATS, STREAMS
from truedeal.errors import SpecError

# Redis, kombu, the spec's models and the writers are imported when a command
# runs: `truedeal --help` and `truedeal status --help` load none of them.  But
# without kombu (the server extra) a job command fails at import, at once,
# for `truedeal` to say what to install.
jobs.require("kombu")


class JobCommandError(click.ClickException):
    """A user-facing error of a job command: one line, exit code 2."""

    exit_code = 2


def _safe_url(url: str) -> str:
    return re.sub(r"//[^@/]*@", "//***@", url)


@contextmanager
def command_errors() -> Iterator[None]:
    """Turn the errors a user can cause into one-line JobCommandErrors."""
    url = jobs.redis_url()
    try:
        yield
    except Exception as exc:
        error = _command_error(exc, url)
        if error is None:
            raise
        raise error from None


def _command_error(exc: Exception, url: str) -> JobCommandError | None:
    """The one-line error for ``exc`` if the user can cause it, else None."""
    import redis
    from kombu.exceptions import OperationalError

    if isinstance(exc, (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OperationalError)):
        msg = " ".join(str(exc).split()) or type(exc).__name__
        return JobCommandError(f"cannot reach Redis at {_safe_url(url)} (TRUEDEAL_REDIS_URL): {msg}")
    if isinstance(exc, (jobs.JobError, SpecError, ValueError)):  # ValueError: a bad TRUEDEAL_* setting
        return JobCommandError(str(exc))
    return None


def open_store() -> jobs.JobStore:
    store = jobs.JobStore.from_env()
    store.ping()
    return store


def open_dispatcher():
    from .dispatch import dispatcher_from_env

    return dispatcher_from_env()


# --------------------------------------------------------------------------- submit


def _script_count(parsed) -> int | None:
    """A script's own count of deals (its produce, else its generate), or None."""
    from truedeal.constraints.load import deals_wanted

    wanted = deals_wanted(parsed)
    return None if wanted is None else wanted[1]


@click.command(name="submit")
@click.argument("spec")
@click.option("-n", "--count", "n", type=int, default=None,
              help="Number of deals; default: a script's produce, else its generate.")
@click.option("--seed", default=None, help="Reproducible stream (default: a random seed, stored with the job).")
@click.option("--stream", type=click.Choice(STREAMS), default=DEFAULT_STREAM, show_default=True,
              help="Seeded stream version, as `truedeal generate --stream`.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="pbn", show_default=True,
              help="Default format for fetch.")
@click.option("--first-board", type=int, default=1, show_default=True, help="Board number of the first deal.")
@click.option("--dealer", default=None, metavar="SEAT|rotate",
              help="Dealer of every board, or rotate by board number; default: a script's dealer, else rotate.")
@click.option("--vulnerability", default=None, metavar="none|ns|ew|all|rotate",
              help="Vulnerability of every board, or rotate by board number; default: a script's, else rotate.")
def submit_command(spec: str, n: int | None, seed: str | None, stream: str, fmt: str, first_board: int,
                   dealer: str | None, vulnerability: str | None) -> None:
    """Queue a job of N deals satisfying SPEC and print its id.

    A spec that no deal satisfies (or one too wide to list) is refused at
    once, as the web API does, when it counts within a few seconds.
    """
    from truedeal.constraints.load import load_constraints, rotation_of
    from truedeal.formats.rotation import RotationError

    from .precheck import precheck
    from .submission import check_submission

    with command_errors():
        source = sys.stdin.read() if spec == "-" else spec
        parsed = load_constraints(source)  # spec or script errors before touching Redis
        try:
            rotation = rotation_of(parsed, dealer, vulnerability)
        except RotationError as exc:
            raise JobCommandError(f"--{exc.field}: {exc}") from None
        if n is None and (n := _script_count(parsed)) is None:
            raise JobCommandError("-n: give the number of deals (the spec names none: no produce or generate)")
        store = open_store()
        # a bad count, seed or board gets its one line before a child process counts the spec
        check_submission(n, seed, fmt, first_board, store.settings.max_deals, stream)
        workers = store.workers_alive()
        check = precheck(parsed)
        if check.impossible:
            raise JobCommandError("no deal satisfies this spec (it counts 0 deals)")
        if check.kind == "too_wide":
            raise JobCommandError(f"spec too wide to generate: {check.message}")
        job = jobs.submit(store, open_dispatcher(), parsed, n, seed, fmt, first_board, jobs.lane_for(check.summary),
                          rotation, stream)
    click.echo(job.id)
    if not workers:
        click.echo(f"truedeal: note: {jobs.NO_WORKER_NOTE}", err=True)


# --------------------------------------------------------------------------- status


def _status_lines(s: dict, view: dict) -> list[str]:
    p = s["progress"]
    e, d = p["enumeration"], p["drawing"]
    lines = [
        f"job:          {s['id']}",
        f"state:        {s['state']}",
        f"enumeration:  {e['done']}/{e['total']} partitions",
        f"drawing:      {d['done']}/{d['total']} chunks ({d['deals_done']:,} of {d['deals_total']:,} deals)",
    ]
    count = s.get("count")
    if count:
        if count.get("deals") is not None:
            lines.append(f"deals:        {count['deals']:,} satisfy the spec ({view['result']['odds']}), {count['cases']:,} cases")
        elif count.get("deals_expected") is not None:
            lines.append(f"deals:        {count['deals_estimate']:,.6g} expected, exactly ({count['method']})")
        else:
            lines.append(f"deals:        about {count['deals_estimate']:,.6g} satisfy the spec ({count['method']})")
    lines.append(f"seed:         {s['seed']}" + ("  (generated)" if s["seed_generated"] else "")
                 + (f", stream {s['stream']}" if s.get("stream", "v1") != "v1" else ""))
    lines.append(f"created:      {s['created']}")
    if s.get("finished"):
        lines.append(f"finished:     {s['finished']}")
    if s.get("error"):
        lines.append(f"error:        {s['error']}")
    if view.get("note"):
        lines.append(f"note:         {view['note']}")
    return lines


@click.command(name="status")
@click.argument("job_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def status_command(job_id: str, as_json: bool) -> None:
    """State and progress of job ID (or of tournament set ID)."""
    if SET_ID.fullmatch(job_id):
        return _set_status(job_id, as_json)
    with command_errors():
        store = open_store()
        info = store.status(job_id)
        view = jobs.public_status(info, store.workers_alive())
    if as_json:  # the words of GET /api/jobs/<id>
        click.echo(json.dumps(view))
    else:
        click.echo("\n".join(_status_lines(info, view)))


#: Tournament set ids (``truedeal submit-set``): 16 hex digits; job ids have 32.
SET_ID = re.compile(r"[0-9a-f]{16}")


def _set_status(set_id: str, as_json: bool) -> None:
    from truedeal.tournament.setfile import SetError

    from . import sets as setjobs
    from .set_commands import set_status_lines

    with command_errors():
        store = open_store()
        try:
            status = setjobs.set_status(store.set_store(), set_id)
        except SetError as exc:
            raise JobCommandError(str(exc)) from None
    click.echo(json.dumps(status) if as_json else "\n".join(set_status_lines(status)))


def _cancel_set(set_id: str) -> None:
    from truedeal.tournament.setfile import SetError

    from . import sets as setjobs

    with command_errors():
        try:
            state = setjobs.cancel_set(open_store().set_store(), set_id)
        except SetError as exc:
            raise JobCommandError(str(exc)) from None
    click.echo(f"set {set_id} cancelled" if state == "cancelled" else f"set {set_id} had already ended: {state}")


# --------------------------------------------------------------------------- fetch


@click.command(name="fetch")
@click.argument("job_id", metavar="ID")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Output format (default: the one given at submit).")
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True, help="Skip this many deals.")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="Print at most this many deals.")
def fetch_command(job_id: str, fmt: str | None, offset: int, limit: int | None) -> None:
    """Stream the deals of finished job ID (constant memory)."""
    from truedeal.formats import WRITERS

    with command_errors():
        store = open_store()
        job = store.get(job_id)
        batches = store.iter_deals(job_id, offset, limit)  # checks the job is done
        fmt = fmt or job.options.get("format", "pbn")
        first = int(job.options.get("first_board", 1)) + offset
        out = sys.stdout
        for text in WRITERS[fmt](batches, first_board=first, rotation=job.rotation):
            out.write(text)
        out.flush()


# --------------------------------------------------------------------------- cancel


@click.command(name="cancel")
@click.argument("job_id", metavar="ID")
def cancel_command(job_id: str) -> None:
    """Cancel job or set ID: stop its work (a job's deals are discarded)."""
    if SET_ID.fullmatch(job_id):
        return _cancel_set(job_id)
    with command_errors():
        store = open_store()
        before = store.get(job_id)
        job = store.cancel(job_id, open_dispatcher())
    if before.state in jobs.FINAL_STATES:
        click.echo(f"job {job.id} had already ended: {job.state}")
    else:
        click.echo(f"job {job.id} cancelled")
