"""``truedeal submit-set`` and ``truedeal fetch-set``: tournament sets on the workers.

``truedeal set`` makes a set in one process; these queue it to the workers
instead (dealt once, solved double dummy in chunks across them) and write
its files once it is done.  ``truedeal status ID`` shows a set's phase too
(set ids have 16 hex digits, job ids 32).  Errors are one line, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from truedeal.tournament.setfile import SetError

from . import sets as setjobs
from .commands import JobCommandError, command_errors, open_dispatcher, open_store
from .view import NO_WORKER_NOTE


def _read_set(path: str) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise JobCommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise JobCommandError(f"{path}: not a JSON set file: {exc}") from None
    if not isinstance(data, dict):
        raise JobCommandError(f"{path}: a set file is a JSON object")
    return data


@click.command(name="submit-set")
@click.argument("setfile", type=click.Path(dir_okay=False))
@click.option("--seed", default=None, help="Derive the session keys from this seed (default: the OS's randomness).")
@click.option("--public-value", default=None, help="A public value mixed into every deal (e.g. a lottery result).")
def submit_set_command(setfile: str, seed: str | None, public_value: str | None) -> None:
    """Queue the tournament set SETFILE to the workers and print its id."""
    data = _read_set(setfile)
    with command_errors():
        store = open_store()
        try:
            set_id = setjobs.submit_set(store.set_store(), data, Path(setfile).resolve().parent, seed=seed, public=public_value)
        except SetError as exc:
            raise JobCommandError(str(exc)) from None
        open_dispatcher().app.send_task(setjobs.DEAL_TASK, args=[set_id], ignore_result=True)
        workers = store.workers_alive()
    click.echo(set_id)
    if not workers:
        click.echo(f"truedeal: note: {NO_WORKER_NOTE}", err=True)


@click.command(name="fetch-set")
@click.argument("set_id", metavar="ID")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Folder for the files.")
def fetch_set_command(set_id: str, out_dir: str) -> None:
    """Write the files of finished set ID into --out: X.pbn to X.pdf for each session X."""
    with command_errors():
        store = open_store()
        try:
            status = setjobs.set_status(store.set_store(), set_id)
            if status["state"] != "done":
                raise JobCommandError(f"set {set_id} is not finished: {status['phase']}"
                                      + (f" ({status['error']})" if status.get("error") else ""))
            out = Path(out_dir)
            out.mkdir(parents=True, exist_ok=True)
            written = 0
            for session, ext, data in setjobs.set_files(store.set_store(), set_id):
                if isinstance(data, Exception):  # a format's own limit, e.g. boards per machine file
                    click.echo(f"truedeal: note: no {session}.{ext}: {data}", err=True)
                    continue
                (out / f"{session}.{ext}").write_bytes(data)
                written += 1
        except SetError as exc:
            raise JobCommandError(str(exc)) from None
        except OSError as exc:
            raise JobCommandError(f"cannot write into {out_dir}: {exc.strerror or exc}") from None
    click.echo(f"{written} files written to {out_dir}")


def set_status_lines(status: dict) -> list[str]:
    """``truedeal status`` for a set."""
    lines = [f"set:          {status['id']}", f"state:        {status['state']}", f"phase:        {status['phase']}",
             f"sessions:     {', '.join(status['sessions'])}"]
    if status.get("error"):
        lines.append(f"error:        {status['error']}")
    return lines
