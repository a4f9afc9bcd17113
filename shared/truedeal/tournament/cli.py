"""``truedeal set`` and ``truedeal verify`` (loaded lazily by truedeal.cli).

Progress goes to stderr; bad input is one line and exit 2
(:class:`SetCommandError`).  ``verify`` exits 1 with one line per difference.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import SetError


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
@click.option("--public-value-to-come", "to_come", default=None,
              help="Commit now to a public value not known yet (say which, e.g. 'lottery of 5 Dec'): "
                   "write manifest.json and keys.json only; deal later with --keys and --public-value.")
@click.option("--keys", "keys_path", default=None,
              help="Deal from the keys committed earlier (a keys.json) instead of fresh ones; implies --commit.")
@click.option("--lf", is_flag=True, help="PBN with LF line ends instead of the standard CRLF.")
@_user_errors
def set_command(setfile: str, out: str, seed: str | None, commit: bool, public_value: str | None,
                to_come: str | None, keys_path: str | None, lf: bool) -> None:
    """Deal a tournament set (see docs/tournaments.md): for each session X,
    X.pbn X.lin X.dup X.dlm X.bri X.csv X.html X.pdf in --out."""
    from .setfile import load_set  # pydantic: not for `truedeal --help`

    _check_options(seed, commit, public_value, to_come, keys_path)
    sf, base = load_set(setfile)
    folder = _out_folder(out)
    if to_come is not None:
        return _announce(sf, base, folder, to_come)
    keys, final = _committed_keys(sf, base, folder, keys_path, public_value, commit)
    result = _deal(sf, base, folder, seed=seed, public=public_value or "", keys=keys, crlf=not lf)
    if commit or keys is not None:
        _write_commitment(folder, result.keys, final or _manifest(sf, base, result.keys, public_value))


def _check_options(seed, commit, public_value, to_come, keys_path) -> None:
    if seed is not None and (commit or to_come is not None or keys_path):
        raise SetError("--seed excludes --commit, --keys and --public-value-to-come (a committed set needs secret keys)")
    if to_come is not None and (public_value is not None or keys_path):
        raise SetError("--public-value-to-come excludes --public-value and --keys "
                       "(the value and the keys are given when the boards are dealt)")


def _out_folder(out: str) -> Path:
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise SetError(f"--out {out!r} is not a folder")
    return folder


def _write_json(folder: Path, name: str, data: dict) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps(data, indent=1) + "\n")
    except OSError as exc:
        raise SetError(f"cannot write to --out {str(folder)!r}: {exc.strerror or exc}") from None


def _announce(sf, base: Path, folder: Path, to_come: str) -> None:
    """Step 1 of a commitment to a public value to come: keys and manifest, no boards."""
    from .commit import keys_json, manifest
    from .derive import fresh_key
    from .run import prepare

    prepare(sf, base)  # every spec must build before anyone commits to it
    keys = {s.name: fresh_key() for s in sf.sessions}
    _write_json(folder, "manifest.json", manifest(sf, base, keys, None, to_come))
    _write_json(folder, "keys.json", keys_json(keys))
    _progress(f"commitments written to {folder / 'manifest.json'} (publish it; keep keys.json secret). "
              f"Once the public value is known: truedeal set SETFILE --out {folder} "
              f"--keys {folder / 'keys.json'} --public-value VALUE")


def _manifest(sf, base: Path, keys: dict, public_value: str | None) -> dict:
    from .commit import manifest

    return manifest(sf, base, keys, public_value)


def _committed_keys(sf, base: Path, folder: Path, keys_path: str | None, public_value: str | None, commit: bool):
    """``(keys, manifest)`` given with --keys, the manifest checked against an
    announced one in the folder before any dealing; ``(None, None)`` for
    fresh keys."""
    from .commit import announced, check_announced, read_keys

    if keys_path is None:
        if commit and announced(folder / "manifest.json") is not None:
            raise SetError(f"{folder / 'manifest.json'} announces a public value to come: "
                           "deal from its keys with --keys and --public-value")
        return None, None
    keys = read_keys(Path(keys_path), sf)
    return keys, check_announced(folder / "manifest.json", _manifest(sf, base, keys, public_value))


def _deal(sf, base: Path, folder: Path, **options):
    from .run import make_set

    try:
        result = make_set(sf, base, folder, progress=_progress, **options)
    except OSError as exc:
        raise SetError(f"cannot write to --out {str(folder)!r}: {exc.strerror or exc}") from None
    for note in result.notes:
        _progress(note)
    n = sum(result.boards.values())
    _progress(f"{n:,} boards in {len(result.boards)} session(s) written to {folder} "
              f"(dealing {result.deal_seconds:.2f} s, solving and files {result.solve_seconds:.2f} s)")
    return result


def _write_commitment(folder: Path, keys: dict, final: dict) -> None:
    from .commit import keys_json

    _write_json(folder, "manifest.json", final)
    _write_json(folder, "keys.json", keys_json(keys))


@click.command(name="verify")
@click.argument("manifest")
@click.argument("keys")
@click.option("--boards", "boards", required=True, help="Folder holding the session files.")
@click.option("--public-value", default=None,
              help="The public value, when MANIFEST announced it as still to come (checked against it otherwise).")
@_user_errors
def verify_command(manifest: str, keys: str, boards: str, public_value: str | None) -> None:
    """Regenerate every board from MANIFEST and KEYS and compare it with the
    files in --boards.  Exit 0 when all match, 1 with one line per difference."""
    from .commit import verify

    lines = verify(Path(manifest), Path(keys), Path(boards), public_value, progress=_progress)
    for line in lines:
        click.echo(line)
    if lines:
        raise click.exceptions.Exit(1)  # truedeal.cli.main returns its code
    _progress("every board matches the keys")
