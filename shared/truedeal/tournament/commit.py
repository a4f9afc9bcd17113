"""Commit-reveal: the public manifest, the secret keys, and verification.

``manifest.json`` (public, published before the event) holds the event, the
sessions and their board ranges and quotas, the specs (canonical JSON or
script text), dealer/vulnerability/rotation settings, the public value mixed
in (or null) and the SHA-256 commitment of each session key.  It never says
which spec made which board.  ``keys.json`` (secret until after the event)
maps each session to its key in hex.

:func:`verify` regenerates every board from manifest + keys and compares it
with each file a session has (PBN, LIN, DUP, DLM, BRI, CSV), returning one
line per difference; an empty list means everything matches.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import __version__
from ..formats.bri import read_bri
from ..formats.csvfile import read_csv_deals
from ..formats.dlm import read_dlm
from ..formats.dup import read_dup
from ..formats.linset import read_lin_deals
from ..formats.machine import MAX_MACHINE_BOARD
from ..formats.pbnset import read_pbn_deals
from .build import session_boards
from .derive import DOMAIN, commitment
from .run import SetResult, session_plans, settings_of
from .setfile import SetError, SetFile
from .specs import SpecSource, resolve

MANIFEST_FORMAT = "truedeal-set-manifest/1"
KEYS_FORMAT = "truedeal-set-keys/1"


def manifest(sf: SetFile, base: Path, result: SetResult, public: str | None) -> dict:
    """The public manifest of a set made by :func:`.run.make_set`."""
    sources = [resolve(ref, i, base) for i, ref in enumerate(sf.spec_refs())]
    return {
        "format": MANIFEST_FORMAT,
        "derivation": DOMAIN,
        "generator": f"truedeal {__version__}",
        "event": sf.event, "site": sf.site, "date": sf.date,
        **settings_of(sf),
        "double_dummy": sf.double_dummy,
        "public_value": public,
        "specs": [s.to_json() for s in sources],
        "sessions": [
            {"name": s.name, "boards": list(s.boards), "quotas": sf.quotas(s),
             "commitment": commitment(result.keys[s.name])}
            for s in sf.sessions
        ],
    }


def keys_json(result: SetResult) -> dict:
    return {"format": KEYS_FORMAT, "keys": {name: key.hex() for name, key in result.keys.items()}}


def _load(path: Path, what: str) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SetError(f"{what}: cannot read {str(path)!r}: {exc}") from None
    if not isinstance(data, dict):
        raise SetError(f"{what}: not a JSON object")
    return data


def _readers(name: str, first: int):
    return {
        "pbn": lambda b: read_pbn_deals(b.decode("utf-8")),
        "lin": lambda b: read_lin_deals(b.decode("utf-8")),
        "dup": read_dup,
        "dlm": lambda b: read_dlm(b.decode("ascii")),
        "bri": lambda b: read_bri(b, first),
        "csv": lambda b: read_csv_deals(b.decode("utf-8")),
    }


def _compare(label: str, got: dict, want: dict) -> list[str]:
    lines = [f"{label}: board {b} missing" for b in want if b not in got]
    lines += [f"{label}: board {b} differs from the keys" for b in want if b in got and got[b] != want[b]]
    lines += [f"{label}: board {b} is not in the session" for b in got if b not in want]
    return lines


def _check_files(folder: Path, name: str, first: int, last: int, want: dict) -> list[str]:
    lines = []
    for ext, read in _readers(name, first).items():
        path = folder / f"{name}.{ext}"
        if ext in ("dup", "dlm", "bri") and last > MAX_MACHINE_BOARD:
            continue  # never written for boards beyond 99
        if not path.exists():
            lines.append(f"{path.name}: missing")
            continue
        try:
            got = read(path.read_bytes())
        except (ValueError, KeyError, UnicodeDecodeError) as exc:
            lines.append(f"{path.name}: unreadable ({exc})")
            continue
        lines += _compare(path.name, got, want)
    return lines


def verify(manifest_path: Path, keys_path: Path, boards_dir: Path, progress=lambda _m: None) -> list[str]:
    """Differences between the files in ``boards_dir`` and the boards that
    manifest + keys regenerate (see module doc).  :class:`SetError` when the
    manifest or keys cannot be read at all."""
    man = _load(manifest_path, "manifest")
    keys = _load(keys_path, "keys").get("keys", {})
    if man.get("format") != MANIFEST_FORMAT or man.get("derivation") != DOMAIN:
        raise SetError(f"manifest: not a {MANIFEST_FORMAT} manifest with derivation {DOMAIN}")
    sources = [SpecSource.from_json(s) for s in man["specs"]]
    plans = [s.plan() for s in sources]
    public = man.get("public_value") or ""
    lines = [f"keys.json: session {k!r} is not in the manifest" for k in keys if k not in {s["name"] for s in man["sessions"]}]
    for sess, sp in zip(man["sessions"], session_plans(man, man["sessions"], sources)):
        name = sess["name"]
        if name not in keys:
            lines.append(f"session {name}: no key in keys.json")
            continue
        try:
            key = bytes.fromhex(keys[name])
        except (TypeError, ValueError):
            lines.append(f"session {name}: key is not hex")
            continue
        if commitment(key) != sess["commitment"]:
            lines.append(f"session {name}: key does not match its commitment")
            continue
        progress(f"verifying session {name}")
        want = {r.board: r.owners for r in session_boards(sp, key, public, plans)}
        lines += _check_files(Path(boards_dir), name, sp.first, sp.last, want)
    return lines
