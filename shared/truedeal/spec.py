"""The constraint spec: one JSON object of per-seat constraints.

Example::

    {"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"},
     "south": {"hcp": [0, 7], "shape": "5xxx + x5xx"},
     "west":  {"spades": 9},
     "east":  {"diamonds": [6, 13], "clubs": 6}}

Seats are ``north east south west``; ``N E S W`` and ``n e s w`` are accepted
as aliases (a seat given twice under different names is an error).  Every
field of a seat is optional and all given fields must hold:

* ``hcp`` -- 0..37; ``spades`` ``hearts`` ``diamonds`` ``clubs`` -- 0..13.
  Each is an integer ``n`` (meaning ``[n, n]``) or ``[min, max]`` with
  ``min <= max``.  Booleans and floats are not integers.
* ``shape`` -- a shape expression (see :mod:`truedeal.shapes`).

A seat given as ``{}`` or ``null`` constrains nothing and is dropped.

Three forms of a spec:

* :class:`Spec` -- the validated pydantic model (also the OpenAPI schema).
  Ranges are stored as ``(min, max)`` tuples and shapes in normalised
  spelling, so equal specs compare equal however they were written.
* :meth:`Spec.canonical` -- a JSON-able dict with a fixed key order, usable
  as a cache / job key; ``load_spec(spec.canonical()) == spec``.
* :meth:`Spec.constraints` -- the engine form, a list of
  :class:`SeatConstraint` (pattern mask + HCP range per constrained seat).

Every problem is reported as a :class:`SpecError` whose message is a single
line naming the place, e.g. ``north.hcp: range [17, 15] is reversed``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias

import numpy as np
from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from .cards import MAX_HCP, SEAT_NAMES, SEATS, SUIT_NAMES
from .errors import SpecError
from .patterns import N_PATTERNS, PATTERNS
from .shapes import ShapeError, normalize_shape, parse_shape

__all__ = ["SpecError", "SeatSpec", "Spec", "SeatConstraint", "load_spec", "FIELD_NAMES"]

#: Seat fields, in canonical order.
FIELD_NAMES: tuple[str, ...] = ("hcp", *SUIT_NAMES, "shape", "controls", "losers", "top2", "top3", "top4", "top5", "cccc",
                                "points", "holds", "any_of", "not")
#: The fields of the first JSON language, which need nothing but patterns and HCP.
SIMPLE_FIELDS: tuple[str, ...] = ("hcp", *SUIT_NAMES, "shape")
#: Fields of a suit given as an object, e.g. ``"spades": {"length": [5, 6], "top3": [2, 3]}``.
SUIT_FIELDS: tuple[str, ...] = ("length", "hcp", "controls", "losers", "points", "top2", "top3", "top4", "top5", "quality")
#: Spec keys besides the seats.
SPEC_KEYS: tuple[str, ...] = ("condition", "script", "any_of")

#: Accepted spellings of each seat -> full seat name.
_SEAT_KEYS: dict[str, str] = {}
for _name, _letter in zip(SEAT_NAMES, SEATS):
    _SEAT_KEYS[_name] = _name
    _SEAT_KEYS[_letter] = _name
    _SEAT_KEYS[_letter.lower()] = _name

_SEAT_HINT = "keys are north, east, south, west (or N, E, S, W), condition, script and any_of"
_FIELD_HINT = "fields are " + ", ".join(FIELD_NAMES)
_SUIT_FIELD_HINT = "fields of a suit are " + ", ".join(SUIT_FIELDS)


# --------------------------------------------------------------------------- helpers


def _show(value: Any, limit: int = 40) -> str:
    """A short one-line JSON-ish rendering of a user value for error messages."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short(key: Any, limit: int = 40) -> Any:
    """A key for ``!r`` display: strings trimmed to one short line, other keys unchanged."""
    if not isinstance(key, str):
        return key
    text = " ".join(key.split()) if key.strip() else key
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json_type(value: Any) -> str:
    """The JSON name of a value's type (``object``, ``array``, ``string``, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _fail(message: str) -> PydanticCustomError:
    # The message goes through the context so braces in user values are never
    # taken as format placeholders.
    return PydanticCustomError("truedeal_spec", "{message}", {"message": message})


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _range_validator(lo: int, hi: int):
    def check(value: Any) -> tuple[int, int]:
        if _is_int(value):
            n = int(value)
            if not lo <= n <= hi:
                raise _fail(f"{n} is out of range ({lo}..{hi})")
            return (n, n)
        if isinstance(value, (list, tuple)):
            if len(value) != 2:
                raise _fail(f"expected [min, max], got an array of {len(value)} items: {_show(value)}")
            for v in value:
                if not _is_int(v):
                    raise _fail(f"range bounds must be integers, got {_show(v)} in {_show(value)}")
            a, b = int(value[0]), int(value[1])
            for v in (a, b):
                if not lo <= v <= hi:
                    raise _fail(f"{v} in [{a}, {b}] is out of range ({lo}..{hi})")
            if a > b:
                raise _fail(f"range [{a}, {b}] is reversed")
            return (a, b)
        raise _fail(f"expected an integer or [min, max], got {_json_type(value)} {_show(value)}")

    return check


def _range_type(lo: int, hi: int):
    """``(min, max)`` tuple field accepting ``n`` or ``[min, max]`` within lo..hi."""
    bound = {"type": "integer", "minimum": lo, "maximum": hi}
    schema = {
        "anyOf": [
            bound,
            {"type": "array", "items": bound, "minItems": 2, "maxItems": 2},
        ]
    }
    return Annotated[
        tuple[int, int],
        BeforeValidator(_range_validator(lo, hi)),
        WithJsonSchema(schema),
    ]


def _check_shape(value: Any) -> str:
    if not isinstance(value, str):
        raise _fail(f"expected a shape expression string, got {_json_type(value)} {_show(value)}")
    try:
        return normalize_shape(value)
    except ShapeError as e:
        raise _fail(str(e)) from None


if TYPE_CHECKING:  # to a type checker, each is the (min, max) tuple that its validator returns
    HcpRange: TypeAlias = tuple[int, int]
    SuitRange: TypeAlias = tuple[int, int]
    PointRange: TypeAlias = tuple[int, int]
    Upto2: TypeAlias = tuple[int, int]
    Upto3: TypeAlias = tuple[int, int]
    Upto4: TypeAlias = tuple[int, int]
    Upto5: TypeAlias = tuple[int, int]
    Upto10: TypeAlias = tuple[int, int]
    Upto12: TypeAlias = tuple[int, int]
    Upto8: TypeAlias = tuple[int, int]
    Upto16: TypeAlias = tuple[int, int]
    Upto20: TypeAlias = tuple[int, int]
    CcccRange: TypeAlias = tuple[int, int]
    QualityRange: TypeAlias = tuple[int, int]
else:
    HcpRange = _range_type(0, MAX_HCP)
    SuitRange = _range_type(0, 13)
    PointRange = _range_type(0, 10**6)
    Upto2, Upto3, Upto4, Upto5, Upto8, Upto10, Upto12, Upto16, Upto20 = (_range_type(0, n) for n in (2, 3, 4, 5, 8, 10, 12, 16, 20))
    # dealer's Kaplan-Rubens values, in hundredths: a Yarborough 4333 is -50, AKQJ of 13 cards 1300 and 3560
    CcccRange, QualityRange = _range_type(-50, 3560), _range_type(0, 1300)


class PointsSpec(BaseModel):
    """A point scale over A K Q J T 9 ... 2 (dealer's ``pointcount``) and its range."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scale: list[Annotated[int, Field(ge=0, le=100)]] = Field(min_length=1, max_length=13,
                                                             description="Points of A, K, Q, ... (missing ranks 0).")
    range: PointRange = Field(description="Inclusive [min, max] of the total (the hand's, or the suit's).")

    def canonical(self) -> dict[str, Any]:
        return {"scale": list(self.scale), "range": list(self.range)}


class SuitSpec(BaseModel):
    """Constraints on one suit of a hand: its length and what it holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    length: SuitRange | None = Field(default=None, description="Number of cards in the suit, 0..13.")
    hcp: Upto10 | None = Field(default=None, description="HCP in the suit, 0..10.")
    controls: Upto3 | None = Field(default=None, description="Controls in the suit (A=2, K=1), 0..3.")
    losers: Upto3 | None = Field(default=None, description="Losers in the suit (dealer's count), 0..3.")
    # Left out of the JSON schema (the suit field's description names it): written
    # there, schemathesis could not negate the suit's anyOf to fuzz the API with.
    points: SkipJsonSchema[PointsSpec | None] = Field(
        default=None, description="A point scale of your own over the suit's cards and its range, as a seat's points.")
    top2: Upto2 | None = Field(default=None, description="How many of A K the seat holds.")
    top3: Upto3 | None = Field(default=None, description="How many of A K Q the seat holds.")
    top4: Upto4 | None = Field(default=None, description="How many of A K Q J the seat holds.")
    top5: Upto5 | None = Field(default=None, description="How many of A K Q J T the seat holds.")
    quality: QualityRange | None = Field(
        default=None, description="The suit's Kaplan-Rubens quality in hundredths, as dealer's quality(): 0..1300.")

    def canonical(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in SUIT_FIELDS:
            v = getattr(self, f)
            if v is not None:
                out[f] = v.canonical() if isinstance(v, PointsSpec) else list(v)
        return out


def _suit_value(value: Any) -> Any:
    if isinstance(value, dict):
        return SuitSpec.model_validate(value)
    return _range_validator(0, 13)(value)


_RANK_CHARS = "AKQJT98765432"


def _card_text(value: Any) -> str:
    """A card as suit then rank (``SA``); ``AS`` and ``10`` for the ten are accepted."""
    if not isinstance(value, str):
        raise _fail(f"a card is a string such as SA or AS, got {_json_type(value)} {_show(value)}")
    text = value.strip().upper().replace("10", "T")
    if len(text) == 2 and text[0] in "SHDC" and text[1] in _RANK_CHARS:
        return text
    if len(text) == 2 and text[1] in "SHDC" and text[0] in _RANK_CHARS:
        return text[1] + text[0]
    raise _fail(f"not a card: {_show(value)} (write suit and rank, e.g. SA or HT)")


def _cards_value(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    if not isinstance(value, (list, tuple)):
        raise _fail(f"expected a list of cards, got {_json_type(value)} {_show(value)}")
    given: dict[str, None] = {}
    for card in map(_card_text, value):
        if card in given:
            raise _fail(f"card {card} is given twice")
        given[card] = None
    cards = tuple(sorted(given, key=lambda c: ("SHDC".index(c[0]), _RANK_CHARS.index(c[1]))))
    if len(cards) > 13:
        raise _fail(f"a hand holds 13 cards, {len(cards)} given")
    return cards


SuitField = Annotated[
    tuple[int, int] | SuitSpec,
    BeforeValidator(_suit_value),
    WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 0, "maximum": 13},
                              {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 13}, "minItems": 2, "maxItems": 2},
                              SuitSpec.model_json_schema()]}),
]
Cards = Annotated[tuple[str, ...], BeforeValidator(_cards_value), WithJsonSchema({"type": "array", "items": {"type": "string"}})]
ShapeExpr = Annotated[
    str,
    BeforeValidator(_check_shape),
    WithJsonSchema({"type": "string"}),
]


# --------------------------------------------------------------------------- models


def _suit_field(suit: str) -> Any:
    return Field(
        default=None,
        description=f"Number of {suit} (0..13): an integer or an inclusive [min, max] range; or an object of "
        "length, hcp, controls, losers, top2..top5 ranges and points for the suit.",
        examples=[5, [4, 6]],
    )


class SeatSpec(BaseModel):
    """Constraints on one seat's hand; every given field must hold."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    hcp: HcpRange | None = Field(
        default=None,
        description="High-card points (A=4 K=3 Q=2 J=1), 0..37: an integer or an inclusive [min, max] range.",
        examples=[[15, 17], 12],
    )
    spades: SuitField | None = _suit_field("spades")
    hearts: SuitField | None = _suit_field("hearts")
    diamonds: SuitField | None = _suit_field("diamonds")
    clubs: SuitField | None = _suit_field("clubs")
    shape: ShapeExpr | None = Field(
        default=None,
        description=(
            "Shape expression in dealer syntax: terms of four characters (S H D C order), "
            "each a digit or x; 'any' before a term allows every suit order; terms are "
            "joined with + (union) and - (difference), left to right."
        ),
        examples=["any 4333 + any 4432 + any 5332", "5xxx + x5xx", "any 5xxx - 5xxx"],
    )
    controls: Upto12 | None = Field(default=None, description="Controls (A=2, K=1), 0..12.")
    losers: Upto12 | None = Field(default=None, description="Losers, dealer's count per suit, 0..12.")
    top2: Upto8 | None = Field(default=None, description="How many aces and kings, 0..8 (dealer's top2 over the hand).")
    top3: Upto12 | None = Field(default=None, description="How many of the A K Q of each suit, 0..12.")
    top4: Upto16 | None = Field(default=None, description="How many of the A K Q J of each suit, 0..16.")
    top5: Upto20 | None = Field(default=None, description="How many of the A K Q J T of each suit, 0..20.")
    cccc: CcccRange | None = Field(
        default=None, description="Kaplan-Rubens hand value in hundredths, as dealer's cccc(): -50..3560 (an opening is about 1200).")
    points: PointsSpec | None = Field(default=None, description="A point scale of your own and its range.")
    holds: Cards | None = Field(default=None, description="Cards the seat holds (predealt), e.g. [\"SA\", \"SK\"].")
    any_of: list[SeatSpec] | None = Field(default=None, min_length=1, description="Either/or: the hand fits at least one of these.")
    not_: SeatSpec | None = Field(default=None, alias="not", description="The hand does not fit this.")

    @model_validator(mode="before")
    @classmethod
    def _check_keys(cls, data: Any) -> Any:
        if isinstance(data, BaseModel):
            return data
        if not isinstance(data, dict):
            raise _fail(
                f"expected an object ({_FIELD_HINT}), got {_json_type(data)} {_show(data)}"
            )
        for key in data:
            if key not in FIELD_NAMES:
                # Reported by _to_spec_error as "<seat>.<key>: unknown field (...)".
                raise PydanticCustomError("truedeal_unknown_field", "{key}", {"key": str(key)})
        return data

    def field(self, name: str) -> Any:
        """A field by its JSON name (``not`` included)."""
        return getattr(self, "not_" if name == "not" else name)

    def is_empty(self) -> bool:
        """True when no field is given (the seat constrains nothing)."""
        return all(self.field(f) is None for f in FIELD_NAMES)

    def is_simple(self) -> bool:
        """True when only HCP, plain suit lengths and shape are given."""
        given = [f for f in FIELD_NAMES if self.field(f) is not None]
        return all(f in SIMPLE_FIELDS for f in given) and not any(isinstance(self.field(s), SuitSpec) for s in SUIT_NAMES)

    def suit_ranges(self) -> list[tuple[int, int] | None]:
        """The four suit-length ranges in S H D C order (None = unconstrained)."""
        out = []
        for s in SUIT_NAMES:
            v = getattr(self, s)
            out.append(v.length if isinstance(v, SuitSpec) else v)
        return out

    def pattern_mask(self) -> np.ndarray | None:
        """Bool mask ``(560,)`` of the patterns allowed by ``shape`` and the suit ranges.

        None when the seat constrains neither shape nor suit lengths.  The mask
        may be all False (contradictory constraints).
        """
        ranges = self.suit_ranges()
        if self.shape is None and all(r is None for r in ranges):
            return None
        mask = parse_shape(self.shape) if self.shape is not None else np.ones(N_PATTERNS, dtype=bool)
        for suit, r in enumerate(ranges):
            if r is not None:
                mask &= (PATTERNS[:, suit] >= r[0]) & (PATTERNS[:, suit] <= r[1])
        return mask

    def canonical(self) -> dict[str, Any]:
        """Given fields in the order hcp, spades, hearts, diamonds, clubs, shape; ranges as [min, max]."""
        out: dict[str, Any] = {}
        for f in FIELD_NAMES:
            v = self.field(f)
            if v is None:
                continue
            if f == "shape":
                out[f] = v
            elif f == "holds":
                out[f] = list(v)
            elif f == "any_of":
                out[f] = [x.canonical() for x in v]
            elif isinstance(v, BaseModel):
                out[f] = v.canonical()  # type: ignore[attr-defined]
            else:
                out[f] = [v[0], v[1]]
        return out


def _seat_field(index: int) -> Any:
    name, letter = SEAT_NAMES[index], SEATS[index]
    return Field(
        default=None,
        validation_alias=AliasChoices(name, letter, letter.lower()),
        description=f"Constraints on {name}'s hand (key '{name}', '{letter}' or '{letter.lower()}').",
        examples=[{"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}],
    )


class Spec(BaseModel):
    """A constraint spec: per-seat constraints, all of which a deal must satisfy."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={
            "examples": [
                {
                    "north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"},
                    "south": {"hcp": [0, 7], "shape": "5xxx + x5xx"},
                    "west": {"spades": 9},
                    "east": {"diamonds": [6, 13], "clubs": 6},
                }
            ]
        },
    )

    north: SeatSpec | None = _seat_field(0)
    east: SeatSpec | None = _seat_field(1)
    south: SeatSpec | None = _seat_field(2)
    west: SeatSpec | None = _seat_field(3)
    condition: str | None = Field(
        default=None,
        max_length=20_000,
        description="A condition in the dealer language, e.g. 'hcp(north) + hcp(south) >= 25'; it must hold too.",
        examples=["hcp(north) + hcp(south) >= 25 && spades(north) + spades(south) >= 8"],
    )
    script: str | None = Field(
        default=None,
        max_length=200_000,
        description="A dealer script (the classic dealer language, BBO's dialect too); its condition and predeal apply.",
        examples=["hcp(north) >= 15 && hcp(north) <= 17 && shape(north, any 4333 + any 4432 + any 5332)"],
    )
    any_of: list[Spec] | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="Either/or across seats: a deal fits when it fits at least one of these specs (and the seats above).",
    )

    @field_validator("condition", "script")
    @classmethod
    def _check_dealer_text(cls, text: str | None, info: Any) -> str | None:
        """A dealer condition or script, parsed now so that a bad one is refused at once."""
        if text is not None:
            from .constraints import dealer

            parse = dealer.parse_condition if info.field_name == "condition" else dealer.parse_program
            try:
                parse(text)
            except dealer.ScriptError as exc:
                raise _fail(str(exc)) from None
        return text

    @model_validator(mode="before")
    @classmethod
    def _normalise_seats(cls, data: Any) -> Any:
        """Map N/E/S/W aliases to full names, reject unknown and repeated seats, drop empty seats."""
        if isinstance(data, BaseModel):
            return data
        if not isinstance(data, dict):
            raise _fail(f"a spec must be a JSON object, got {_json_type(data)} {_show(data)}")
        out: dict[str, Any] = {}
        given_as: dict[str, Any] = {}
        for key, value in data.items():
            if key in SPEC_KEYS:
                out[key] = value
                continue
            seat = _SEAT_KEYS.get(key) if isinstance(key, str) else None
            if seat is None:
                raise _fail(f"unknown key {_short(key)!r} ({_SEAT_HINT})")
            if seat in given_as:
                raise _fail(f"seat {seat} is given twice (as {given_as[seat]!r} and {key!r})")
            given_as[seat] = key
            if value is None or (
                isinstance(value, dict) and all(k in FIELD_NAMES and v is None for k, v in value.items())
            ):
                continue
            if isinstance(value, SeatSpec) and value.is_empty():
                continue
            out[seat] = value
        return out

    @model_validator(mode="after")
    def _check_held_once(self) -> Spec:
        """A card that two seats hold is a mistake (as a card predealt twice in a script)."""
        owner: dict[str, str] = {}
        held = [(SEAT_NAMES[i], c) for i, seat in self.seats() for c in seat.holds or ()]
        if self.script is not None:
            from .constraints.dealer import parse_program

            held += [(f"{SEAT_NAMES[i]} (the script's predeal)", "SHDC"[c % 4] + _RANK_CHARS[c // 4])
                     for i, cards in parse_program(self.script).predeal for c in cards]
        for seat, c in held:
            if c in owner:
                raise _fail(f"card {c} is held by {owner[c]} and by {seat}")
            owner[c] = seat
        return self

    def seats(self) -> list[tuple[int, SeatSpec]]:
        """``(seat index, SeatSpec)`` for the constrained seats, in order N E S W."""
        out = []
        for i, name in enumerate(SEAT_NAMES):
            s = getattr(self, name)
            if s is not None and not s.is_empty():
                out.append((i, s))
        return out

    def is_simple(self) -> bool:
        """True when every seat uses only HCP, suit lengths and shape (the
        first spec language), so that :meth:`constraints` describes it."""
        return self.condition is None and self.script is None and self.any_of is None and all(s.is_simple() for _, s in self.seats())

    def program(self):
        """The internal form (:class:`truedeal.constraints.ir.Program`)."""
        from .constraints.from_spec import spec_program

        return spec_program(self)

    def constraints(self) -> list[SeatConstraint]:
        """The engine form: one :class:`SeatConstraint` per constrained seat, in order N E S W.

        A seat whose pattern mask is all False is kept (no deal can satisfy the
        spec; reporting that is the engine's job).
        """
        return [SeatConstraint(i, s.pattern_mask(), s.hcp) for i, s in self.seats()]

    def canonical(self) -> dict[str, Any]:
        """Canonical JSON-able form, a stable cache / job key.

        Full seat names in order north, east, south, west; only constrained
        seats; fields in order hcp, spades, hearts, diamonds, clubs, shape;
        every range as ``[min, max]``; shape in normalised spelling.
        ``load_spec(spec.canonical()) == spec`` and
        ``json.dumps(spec.canonical())`` is identical for equal specs.
        """
        out: dict[str, Any] = {SEAT_NAMES[i]: s.canonical() for i, s in self.seats()}
        if self.condition is not None:
            out["condition"] = self.condition
        if self.script is not None:
            out["script"] = self.script
        if self.any_of is not None:
            out["any_of"] = [x.canonical() for x in self.any_of]
        return out

    def canonical_json(self) -> str:
        """``canonical()`` as compact JSON text (key order preserved)."""
        return json.dumps(self.canonical(), separators=(",", ":"))


# --------------------------------------------------------------------------- engine form


@dataclass(frozen=True, eq=False)
class SeatConstraint:
    """Normalised constraint on one seat, as used by the enumeration engine.

    ``seat``: 0..3 for N E S W.
    ``patterns``: read-only bool mask ``(560,)`` over :data:`PATTERNS` of the
    allowed suit-length patterns (shape expression intersected with every
    suit-length range), or None when the seat constrains neither shape nor
    suit lengths.  It may be all False.
    ``hcp``: inclusive ``(min, max)`` HCP range, or None when unconstrained.
    """

    seat: int
    patterns: np.ndarray | None
    hcp: tuple[int, int] | None

    def __post_init__(self) -> None:
        if not (isinstance(self.seat, int) and 0 <= self.seat < 4):
            raise ValueError(f"seat must be 0..3, got {self.seat!r}")
        if self.patterns is not None:
            mask = np.array(self.patterns, dtype=bool)  # private copy
            if mask.shape != (N_PATTERNS,):
                raise ValueError(f"patterns must have shape ({N_PATTERNS},), got {mask.shape}")
            mask.setflags(write=False)
            object.__setattr__(self, "patterns", mask)
        if self.hcp is not None:
            lo, hi = self.hcp
            if not 0 <= lo <= hi <= MAX_HCP:
                raise ValueError(f"bad hcp range {self.hcp!r}")
            object.__setattr__(self, "hcp", (int(lo), int(hi)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SeatConstraint):
            return NotImplemented
        if self.seat != other.seat or self.hcp != other.hcp:
            return False
        if self.patterns is None or other.patterns is None:
            return self.patterns is None and other.patterns is None
        return bool(np.array_equal(self.patterns, other.patterns))

    def __hash__(self) -> int:
        key = None if self.patterns is None else self.patterns.tobytes()
        return hash((self.seat, key, self.hcp))


# --------------------------------------------------------------------------- loading


def _format_loc(loc: tuple) -> str:
    return ".".join(str(p) for p in loc)


def _hint_of(parent: Any) -> str:
    """The fields an object takes, named by its key: a suit's (``north.spades.foo``),
    a points scale's (``north.points.foo``) or a seat's."""
    if parent in SUIT_NAMES:
        return _SUIT_FIELD_HINT
    if parent == "points":
        return "fields of points are scale, range"
    return _FIELD_HINT


def _to_spec_error(err: ValidationError) -> SpecError:
    errors = err.errors(include_url=False)
    lines = []
    for e in errors:
        loc = tuple(e.get("loc", ()))
        kind = e.get("type")
        if kind == "truedeal_unknown_field":
            key = _short(e["ctx"]["key"])
            lines.append(f"{_format_loc((*loc, key))}: unknown field ({_FIELD_HINT})")
            continue
        if kind == "extra_forbidden":  # a suit's unknown field, or a seat's if its before-validator is bypassed
            if len(loc) <= 1:
                lines.append(f"unknown key {str(loc[-1]) if loc else ''!r} ({_SEAT_HINT})")
            else:
                lines.append(f"{_format_loc(loc)}: unknown field ({_hint_of(loc[-2])})")
            continue
        msg = e["ctx"]["message"] if kind == "truedeal_spec" else e.get("msg", "invalid value")
        lines.append(f"{_format_loc(loc)}: {msg}" if loc else msg)
    message = lines[0] if lines else "invalid spec"
    if len(lines) > 1:
        more = len(lines) - 1
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    return SpecError(message)


class DuplicateKey(ValueError):
    """A key repeated inside one JSON object (json.loads would silently keep the last)."""


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise DuplicateKey(k)
        out[k] = v
    return out


def strict_json(text: str, **kwargs: Any) -> Any:
    """``json.loads`` that raises :class:`DuplicateKey` for a key given twice in one object."""
    return json.loads(text, object_pairs_hook=_reject_duplicate_keys, **kwargs)


def _parse_json(text: str, name: str) -> Any:
    try:
        return strict_json(text)
    except json.JSONDecodeError as e:
        raise SpecError(f"{name}: not valid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except DuplicateKey as e:
        raise SpecError(f"{name}: key {e.args[0]!r} appears twice in the same JSON object") from None


def load_spec(source: Spec | dict | str | bytes | os.PathLike) -> Spec:
    """Load and validate a spec.

    ``source`` is a :class:`Spec` (returned as is), a dict, JSON text, or a
    path to a JSON file.  A ``str`` is JSON text when its first non-blank
    character is ``{`` or ``[``, otherwise a path; ``bytes`` are JSON text;
    :class:`os.PathLike` is always a path.  A key repeated inside one JSON
    object is an error.

    Every failure -- unreadable file, invalid JSON, invalid spec -- raises
    :class:`SpecError` with a one-line message.
    """
    if isinstance(source, Spec):
        return source
    if isinstance(source, (bytes, bytearray)):
        try:
            source = bytes(source).decode("utf-8")
        except UnicodeDecodeError:
            raise SpecError("spec: not UTF-8 text") from None
        data = _parse_json(source, "spec")
    elif isinstance(source, str) and source.lstrip()[:1] in ("{", "["):
        data = _parse_json(source, "spec")
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise SpecError(f"cannot read spec file {path}: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise SpecError(f"cannot read spec file {path}: not UTF-8 text") from None
        data = _parse_json(text, str(path))
    elif isinstance(source, dict):
        data = source
    else:
        raise SpecError(
            f"a spec must be a dict, JSON text or a path to a JSON file, not {type(source).__name__}"
        )
    try:
        return Spec.model_validate(data)
    except ValidationError as e:
        raise _to_spec_error(e) from None


SeatSpec.model_rebuild()
Spec.model_rebuild()
