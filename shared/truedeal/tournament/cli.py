"""``truedeal set`` and ``truedeal verify`` (loaded lazily by truedeal.cli).

Progress goes to stderr; bad input is one line and exit 2
(:class:`SetCommandError`).  ``verify`` exits 1 with one line per difference.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .setfile import SetError, load_set


class SetCommandError(click.ClickException):
    """A bad set file, spec, manifest or option: one line, exit code 2."""

    exit_code = 2


def _user_errors(fn):
    """Turn :class:`SetError` into :class:`SetCommandError`."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except SetError as exc:
            raise SetCommandError(str(exc)) from None

    return wrapper


def _progress(msg: str) -> None:
    click.echo(f"truedeal: {msg}", err=True)


@click.command(name="set")
@click.argument("setfile")
@click.option("--out", "out", required=True, help="Folder for the files (created if missing).")
@click.option("--seed", default=None, help="Reproducible set: same seed and set file, same boards.")
@click.option("--commit", "commit", is_flag=True, help="Secret key per session; write manifest.json and keys.json.")
@click.option("--public-value", default=None, help="A public value (e.g. a lottery result) mixed into every deal.")
@click.option("--lf", is_flag=True, help="PBN with LF line ends instead of the standard CRLF.")
@_user_errors
def set_command(setfile: str, out: str, seed: str | None, commit: bool, public_value: str | None, lf: bool) -> None:
    """Deal a tournament set (see docs/tournaments.md): for each session X,
    X.pbn X.lin X.dup X.dlm X.bri X.csv X.html X.pdf in --out."""
    from .commit import keys_json, manifest
    from .run import make_set

    if seed is not None and commit:
        raise SetError("--seed and --commit exclude each other (a committed set needs secret keys)")
    sf, base = load_set(setfile)
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise SetError(f"--out {out!r} is not a folder")
    try:
        result = make_set(sf, base, folder, seed=seed, public=public_value or "", progress=_progress, crlf=not lf)
    except OSError as exc:
        raise SetError(f"cannot write to --out {out!r}: {exc.strerror or exc}") from None
    for note in result.notes:
        _progress(note)
    if commit:
        (folder / "manifest.json").write_text(json.dumps(manifest(sf, base, result, public_value), indent=1) + "\n")
        (folder / "keys.json").write_text(json.dumps(keys_json(result), indent=1) + "\n")
    n = sum(result.boards.values())
    _progress(f"{n:,} boards in {len(result.boards)} session(s) written to {folder} "
              f"(dealing {result.deal_seconds:.2f} s, solving and files {result.solve_seconds:.2f} s)")


@click.command(name="verify")
@click.argument("manifest")
@click.argument("keys")
@click.option("--boards", "boards", required=True, help="Folder holding the session files.")
@_user_errors
def verify_command(manifest: str, keys: str, boards: str) -> None:
    """Regenerate every board from MANIFEST and KEYS and compare it with the
    files in --boards.  Exit 0 when all match, 1 with one line per difference."""
    from .commit import verify

    lines = verify(Path(manifest), Path(keys), Path(boards), progress=_progress)
    for line in lines:
        click.echo(line)
    if lines:
        # SystemExit, not click's Exit: truedeal.cli.main runs click with
        # standalone_mode=False, where click would swallow Exit's code.
        sys.exit(1)
    _progress("every board matches the keys")
