"""``truedeal submit-set``, ``deal-set`` and ``fetch-set``: tournament sets on the workers.

``truedeal set`` makes a set in one process; these queue it to the workers
instead (dealt once, solved double dummy in chunks across them) and write
its files, manifest and keys once it is done.  A set whose public value is
still to come is committed by ``submit-set --public-value-to-come`` and dealt
by ``deal-set ID --public-value V`` once the value is drawn.  ``truedeal status ID`` shows a set's phase too
(set ids have 16 hex digits, job ids 32).  Errors are one line, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from truedeal.errors import SetError

# the sets' module (numpy, pydantic, the tournament code) is imported when a command runs, not for --help
from .commands import JobCommandError, command_errors, open_dispatcher, open_store


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
@click.option("--public-value-to-come", "to_come", default=None, metavar="TEXT",
              help="Commit now to a public value drawn later (say which): no board is dealt until deal-set gives it.")
def submit_set_command(setfile: str, seed: str | None, public_value: str | None, to_come: str | None) -> None:
    """Queue the tournament set SETFILE to the workers and print its id."""
    from . import sets as setjobs
    from .view import NO_WORKER_NOTE

    data = _read_set(setfile)
    with command_errors():
        store = open_store()
        try:
            set_id = setjobs.submit_set(store.set_store(), data, Path(setfile).resolve().parent, seed=seed,
                                        public=public_value, to_come=to_come)
        except SetError as exc:
            raise JobCommandError(str(exc)) from None
        if to_come is None:
            open_dispatcher().app.send_task(setjobs.DEAL_TASK, args=[set_id], ignore_result=True)
        workers = store.workers_alive()
    click.echo(set_id)
    if to_come is not None:
        click.echo(f"truedeal: note: committed, no board dealt: `truedeal fetch-set {set_id} --out DIR` writes the "
                   f"manifest to publish; `truedeal deal-set {set_id} --public-value V` deals once it is drawn", err=True)
    elif not workers:
        click.echo(f"truedeal: note: {NO_WORKER_NOTE}", err=True)


@click.command(name="deal-set")
@click.argument("set_id", metavar="ID")
@click.option("--public-value", required=True, help="The public value, as drawn.")
def deal_set_command(set_id: str, public_value: str) -> None:
    """Deal committed set ID with its public value, now drawn (see submit-set --public-value-to-come)."""
    from . import sets as setjobs

    with command_errors():
        store = open_store()
        try:
            setjobs.reveal_set(store.set_store(), set_id, public_value)
        except SetError as exc:
            raise JobCommandError(str(exc)) from None
        open_dispatcher().app.send_task(setjobs.DEAL_TASK, args=[set_id], ignore_result=True)
    click.echo(set_id)


@click.command(name="fetch-set")
@click.argument("set_id", metavar="ID")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Folder for the files.")
def fetch_set_command(set_id: str, out_dir: str) -> None:
    """Write the files of finished set ID into --out: X.pbn to X.pdf for each
    session X, manifest.json and keys.json (for `truedeal verify`)."""
    from . import sets as setjobs

    with command_errors():
        store = open_store()
        try:
            status = setjobs.set_status(store.set_store(), set_id)
            if status["state"] == "committed":
                _write_manifest(store, set_id, Path(out_dir))
                click.echo(f"manifest.json written to {out_dir}: the set is committed, its boards are dealt "
                           "once deal-set gives the public value")
                return
            if status["state"] != "done":
                raise JobCommandError(f"set {set_id} is not finished: {status['phase']}"
                                      + (f" ({status['error']})" if status.get("error") else ""))
            out = Path(out_dir)
            _write_manifest(store, set_id, out)
            (out / "keys.json").write_text(json.dumps(setjobs.set_keys(store.set_store(), set_id), indent=2) + "\n")
            written = 2
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


def _write_manifest(store, set_id: str, out: Path) -> None:
    from . import sets as setjobs

    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text(json.dumps(setjobs.set_manifest(store.set_store(), set_id), indent=2) + "\n")


def set_status_lines(status: dict) -> list[str]:
    """``truedeal status`` for a set."""
    lines = [f"set:          {status['id']}", f"state:        {status['state']}", f"phase:        {status['phase']}",
             f"sessions:     {', '.join(status['sessions'])}"]
    if status.get("error"):
        lines.append(f"error:        {status['error']}")
    return lines
