"""A set's specs: resolved once into self-contained sources.

A :class:`SpecSource` holds everything needed to rebuild a spec's plan
without the set file's folder: a JSON spec as its canonical JSON, a dealer
script as its text.  The manifest of a committed set stores these, so
``truedeal verify`` rebuilds exactly the same plans.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..engine import Plan, TooWide
from ..formats.rotation import seat_index
from ..spec import SpecError, load_spec
from .setfile import SetError, SpecRef


@dataclass(frozen=True)
class SpecSource:
    """One spec of a set: ``kind`` is ``"json"`` or ``"dealer"``; ``text`` the
    canonical JSON or the script; ``label`` names it in the CSV and records."""

    label: str
    kind: str
    text: str

    def to_json(self) -> dict:
        return {"label": self.label, "kind": self.kind, "text": self.text}

    @classmethod
    def from_json(cls, d: dict) -> SpecSource:
        return cls(str(d["label"]), str(d["kind"]), str(d["text"]))

    def plan(self) -> Plan:
        """The built plan; :class:`SetError` when it cannot be built or is empty."""
        try:
            target = _dealer_program(self.text) if self.kind == "dealer" else load_spec(self.text)
            plan = Plan.build(target)
        except (SpecError, TooWide) as exc:
            raise SetError(f"spec {self.label}: {exc}") from None
        if not plan.possible:
            raise SetError(f"spec {self.label}: no deal satisfies it")
        return plan

    def constrained_seat(self) -> int | None:
        """The one seat a JSON spec constrains, or None when that is not
        exactly one seat (or the spec is a script): rotation to the dealer
        is only well defined for such specs unless the seat is named."""
        if self.kind != "json":
            return None
        spec = load_spec(self.text)
        if spec.condition is not None or spec.any_of is not None:
            return None
        seats = spec.seats()
        return seats[0][0] if len(seats) == 1 else None


def _dealer_program(text: str):
    try:
        from ..constraints.dealer import ScriptError, load_program
    except ImportError:
        raise SetError("dealer scripts (.dlr) need truedeal.constraints.dealer, which this build lacks") from None
    try:  # a newline keeps a one-line script from being read as a path
        return load_program(text if "\n" in text else text + "\n")
    except ScriptError as exc:
        raise SetError(f"dealer script: {exc}") from None


def resolve(ref: SpecRef, index: int, base: Path) -> SpecSource:
    """A set file's spec reference (object or path) -> :class:`SpecSource`."""
    if isinstance(ref, dict):
        return SpecSource(f"spec{index + 1}", "json", _canonical(ref, f"spec{index + 1}"))
    path = (base / ref) if not Path(ref).is_absolute() else Path(ref)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise SetError(f"spec {ref!r}: cannot read {str(path)!r}") from None
    if path.suffix.lower() == ".dlr":
        return SpecSource(path.stem, "dealer", text)
    return SpecSource(path.stem, "json", _canonical(text, ref))


def _canonical(source, label: str) -> str:
    try:
        return json.dumps(load_spec(source).canonical(), sort_keys=False, separators=(",", ":"))
    except SpecError as exc:
        raise SetError(f"spec {label}: {exc}") from None


def rotation_seat(setting, source: SpecSource) -> int | None:
    """Seat to rotate to each board's dealer, or None for no rotation.

    ``setting`` is the set's ``rotate_to_dealer``: False, True (the spec's one
    constrained seat; :class:`SetError` if not well defined) or a seat."""
    if setting is False:
        return None
    if isinstance(setting, str):
        return seat_index(setting)
    seat = source.constrained_seat()
    if seat is None:
        raise SetError(
            f"spec {source.label}: rotate_to_dealer needs a spec that constrains exactly one seat; "
            "name the seat instead (e.g. \"rotate_to_dealer\": \"north\")"
        )
    return seat
