"""Commit-reveal: the public manifest, the secret keys, and verification.

``manifest.json`` (public, published before the event) holds the event, the
sessions and their board ranges and quotas, the specs (canonical JSON or
script text), dealer/vulnerability/rotation settings, the public value mixed
in (or null) and the SHA-256 commitment of each session key.  It never says
which spec made which board.  ``keys.json`` (secret until after the event)
maps each session to its key in hex.

A public value may also be announced before it exists (a lottery draw to
come): the first manifest then holds ``public_value_to_come`` (what it will
be) and the commitments, and no board is dealt.  Once the value is known the
boards are dealt from the committed keys (:func:`read_keys`), and
:func:`check_announced` makes sure nothing but the value changed.

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
from .derive import DOMAIN, KEY_BYTES, commitment
from .run import session_plans, settings_of
from .setfile import SetError, SetFile
from .specs import SpecSource, resolve

MANIFEST_FORMAT = "truedeal-set-manifest/1"
KEYS_FORMAT = "truedeal-set-keys/1"


def manifest(sf: SetFile, base: Path, keys: dict[str, bytes], public: str | None,
             to_come: str | None = None) -> dict:
    """The public manifest of a set dealt (or to be dealt) from ``keys``;
    ``to_come`` describes a public value announced but not known yet."""
    sources = [resolve(ref, i, base) for i, ref in enumerate(sf.spec_refs())]
    return manifest_of(sf, [s.to_json() for s in sources], keys, public, to_come)


def manifest_of(sf: SetFile, specs: list[dict], keys: dict[str, bytes], public: str | None,
                to_come: str | None = None) -> dict:
    """:func:`manifest` from the specs' canonical JSON, already resolved (a
    set job keeps them in its record): the one builder of a manifest."""
    announced = {"public_value_to_come": to_come} if to_come is not None else {}
    return {
        "format": MANIFEST_FORMAT,
        "derivation": DOMAIN,
        "generator": f"truedeal {__version__}",
        "event": sf.event, "site": sf.site, "date": sf.date,
        **settings_of(sf),
        "double_dummy": sf.double_dummy,
        "public_value": public,
        **announced,
        "specs": specs,
        "sessions": [
            {"name": s.name, "boards": list(s.boards), "quotas": sf.quotas(s),
             "commitment": commitment(keys[s.name])}
            for s in sf.sessions
        ],
    }


def keys_json(keys: dict[str, bytes]) -> dict:
    return {"format": KEYS_FORMAT, "keys": {name: key.hex() for name, key in keys.items()}}


def read_keys(path: Path, sf: SetFile) -> dict[str, bytes]:
    """The committed key of every session of ``sf``, from a keys.json;
    :class:`SetError` when one is missing, extra or not 32 bytes of hex."""
    data = _load(path, "keys")
    keys = data.get("keys")
    if data.get("format") != KEYS_FORMAT or not isinstance(keys, dict):
        raise SetError(f"keys: not a {KEYS_FORMAT} file")
    names = [s.name for s in sf.sessions]
    for name in [k for k in keys if k not in names] + [n for n in names if n not in keys]:
        raise SetError(f"keys: session {name!r} is in {'the keys' if name in keys else 'the set file'} only")
    try:
        out = {name: bytes.fromhex(keys[name]) for name in names}
    except (TypeError, ValueError):
        raise SetError("keys: a key is not hex") from None
    if any(len(k) != KEY_BYTES for k in out.values()):
        raise SetError(f"keys: every key has {KEY_BYTES} bytes")
    return out


def announced(path: Path) -> str | None:
    """What the manifest at ``path`` says its public value will be, when it
    announced one still to come; else None (no such manifest, or dealt)."""
    if not path.exists():
        return None
    early = _load(path, "manifest")
    return early.get("public_value_to_come") if early.get("public_value") is None else None


def check_announced(path: Path, final: dict) -> dict:
    """``final`` with the announcement of the manifest at ``path`` kept, when
    that manifest announced a public value to come; :class:`SetError` when
    anything but the value differs from it (the set file or keys changed
    since the commitments were published)."""
    to_come = announced(path)
    if to_come is None:
        return final
    early = _load(path, "manifest")
    if final.get("public_value") is None:
        raise SetError(f"{path} announces a public value to come ({to_come}): give it with --public-value")
    final = {**final, "public_value_to_come": to_come}
    changed = [k for k in sorted(set(early) | set(final))
               if k not in ("public_value", "generator") and early.get(k) != final.get(k)]
    if changed:
        raise SetError(f"{path}: {', '.join(changed)} changed since the manifest was announced "
                       "(deal from the same set file and keys)")
    return final


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


def public_value_of(man: dict, given: str | None) -> tuple[str, list[str]]:
    """The public value to derive with, and a difference line when ``given``
    contradicts the manifest.  :class:`SetError` when the manifest announced
    a value to come and none is given."""
    stated, to_come = man.get("public_value"), man.get("public_value_to_come")
    if stated is None and to_come is not None:
        if given is None:
            raise SetError(f"manifest: the public value is still to come ({to_come}); give it with --public-value")
        return given, []
    if given is not None and given != (stated or ""):
        return stated or "", [f"manifest: the public value is {stated!r}, not the given {given!r}"]
    return stated or "", []


def verify(manifest_path: Path, keys_path: Path, boards_dir: Path, public_value: str | None = None,
           progress=lambda _m: None) -> list[str]:
    """Differences between the files in ``boards_dir`` and the boards that
    manifest + keys (+ the public value, when the manifest only announced it)
    regenerate (see module doc).  :class:`SetError` when the manifest or keys
    cannot be read at all."""
    man = _load(manifest_path, "manifest")
    keys = _load(keys_path, "keys").get("keys", {})
    if man.get("format") != MANIFEST_FORMAT or man.get("derivation") != DOMAIN:
        raise SetError(f"manifest: not a {MANIFEST_FORMAT} manifest with derivation {DOMAIN}")
    sources = [SpecSource.from_json(s) for s in man["specs"]]
    plans = [s.plan() for s in sources]
    public, lines = public_value_of(man, public_value)
    lines += [f"keys.json: session {k!r} is not in the manifest" for k in keys if k not in {s["name"] for s in man["sessions"]}]
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
