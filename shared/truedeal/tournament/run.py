"""Making a whole set: specs -> plans -> session boards -> DD -> files.

:func:`make_set` is what ``truedeal set`` runs; the workers can run the same
steps split up (:func:`prepare`, :func:`.build.session_boards`,
:func:`.solve.solve_boards`, :func:`.files.write_session`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..formats.records import HandRecord
from ..formats.rotation import Rotation
from .build import SessionPlan, session_boards
from .derive import fresh_key, seeded_key
from .files import write_session
from .setfile import SetError, SetFile
from .solve import BATCH, solve_boards
from .specs import SpecSource, resolve, rotation_seat

Progress = Callable[[str], None]


@dataclass
class Prepared:
    """A set ready to deal: its sources, built plans and session plans."""

    sources: list[SpecSource]
    plans: list
    sessions: list[SessionPlan]


@dataclass
class SetResult:
    out: Path
    boards: dict[str, int]
    notes: list[str] = field(default_factory=list)
    deal_seconds: float = 0.0
    solve_seconds: float = 0.0
    keys: dict[str, bytes] = field(default_factory=dict)


def session_plans(settings: dict, sessions: list[dict], sources: list[SpecSource]) -> list[SessionPlan]:
    """Session plans from plain settings (a set file's or a manifest's):
    ``dealer``, ``vulnerability``, ``rotate_to_dealer``; sessions as
    ``{"name", "boards": [a, b], "quotas": [...]}``."""
    rotation = Rotation.from_words(settings["dealer"], settings["vulnerability"])
    rotate = tuple(rotation_seat(settings["rotate_to_dealer"], s) for s in sources)
    return [SessionPlan(s["name"], s["boards"][0], s["boards"][1], tuple(sources), tuple(s["quotas"]),
                        rotation, rotate) for s in sessions]


def settings_of(sf: SetFile) -> dict:
    return {"dealer": sf.dealer, "vulnerability": sf.vulnerability, "rotate_to_dealer": sf.rotate_to_dealer}


def prepare(sf: SetFile, base: Path) -> Prepared:
    """Resolve and build every spec; :class:`SetError` on a bad one."""
    sources = [resolve(ref, i, base) for i, ref in enumerate(sf.spec_refs())]
    sessions = [{"name": s.name, "boards": list(s.boards), "quotas": sf.quotas(s)} for s in sf.sessions]
    plans = session_plans(settings_of(sf), sessions, sources)  # checks rotation before the slow builds
    return Prepared(sources, [s.plan() for s in sources], plans)


def session_key(name: str, seed: str | None) -> bytes:
    return seeded_key(seed, name) if seed is not None else fresh_key()


def solve_with_progress(records: list[HandRecord], done: int, total: int, progress: Progress) -> list[HandRecord]:
    out: list[HandRecord] = []
    for i in range(0, len(records), BATCH):
        out += solve_boards(records[i:i + BATCH])
        progress(f"solving {done + len(out):,} / {total:,} boards")
    return out


def make_set(sf: SetFile, base: Path, out: Path, *, seed: str | None = None, public: str = "",
             keys: dict[str, bytes] | None = None, progress: Progress = lambda _m: None,
             crlf: bool = True) -> SetResult:
    """Deal, solve (when ``double_dummy``) and write every session of ``sf``
    into ``out``.  The session keys are ``keys`` when given (one per
    session, e.g. committed earlier), else fresh or from ``seed``; they are
    returned in the result (the caller publishes commitments and keeps the
    keys)."""
    prep = prepare(sf, base)
    out.mkdir(parents=True, exist_ok=True)
    result = SetResult(out, {})
    total = sum(sp.last - sp.first + 1 for sp in prep.sessions)
    sessions = []
    t0 = time.perf_counter()
    for sp in prep.sessions:
        key = keys[sp.name] if keys is not None else session_key(sp.name, seed)
        result.keys[sp.name] = key
        progress(f"dealing session {sp.name}")
        sessions.append((sp, session_boards(sp, key, public, prep.plans)))
    result.deal_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    done = 0
    for sp, records in sessions:
        if sf.double_dummy:
            records = solve_with_progress(records, done, total, progress)
        done += len(records)
        result.notes += write_session(out, sf, sp.name, records, crlf=crlf)
        result.boards[sp.name] = len(records)
    result.solve_seconds = time.perf_counter() - t0
    return result


__all__ = ["Prepared", "SetError", "SetResult", "make_set", "prepare", "session_plans"]
