"""A JSON spec (:class:`truedeal.spec.Spec`) in the internal form.

A spec of the first language (HCP, suit lengths, shapes) becomes one shape
and one HCP range per seat, exactly as before, so its listing and its seeded
stream are unchanged.  Richer specs become a condition tree; cards a seat
``holds`` outside any either/or are predealt.
"""

from __future__ import annotations

from dataclasses import replace

from ..cards import SUIT_NAMES, card
from ..patterns import PATTERNS
from . import ir, kaplan_rubens
from .card_owner import predeal_folded
from .compile import rules_program

_RANKS = "AKQJT98765432"
_SUIT_FNS = {
    "length": ir.LENGTH,
    "hcp": ir.HCP,
    "controls": ir.CONTROLS,
    "losers": ir.LOSERS,
    "top2": ir.top(2),
    "top3": ir.top(3),
    "top4": ir.top(4),
    "top5": ir.top(5),
}


def spec_program(spec) -> ir.Program:
    """The Program of a validated spec."""
    if spec.is_simple():
        return rules_program(spec.constraints())
    predeal: dict[int, list[int]] = {}
    items = [seat_condition(seat, s, predeal) for seat, s in spec.seats()]
    items += _spec_extras(spec)
    script = ir.Program()
    if spec.script is not None:
        from .dealer import parse_program

        script = parse_program(spec.script)
        items.append(script.condition)
        for seat, cards in script.predeal:
            predeal.setdefault(seat, []).extend(cards)
    return predeal_folded(replace(
        script,
        condition=ir.And(tuple(items)),
        predeal=tuple((seat, tuple(cards)) for seat, cards in sorted(predeal.items())),
    ))


def _spec_extras(spec) -> list[ir.Cond]:
    out: list[ir.Cond] = []
    if spec.condition is not None:
        from .dealer import parse_condition

        out.append(parse_condition(spec.condition))
    if spec.any_of is not None:
        out.append(ir.Or(tuple(_nested(s) for s in spec.any_of)))
    return out


def _nested(spec) -> ir.Cond:
    """A whole spec inside an either/or: its cards (held, or predealt by its
    script) are conditions, not predeals."""
    items = [seat_condition(seat, s, None) for seat, s in spec.seats()]
    if spec.script is not None:
        from .dealer import parse_program

        script = parse_program(spec.script)
        items += [script.condition, *(_held(seat, c) for seat, cards in script.predeal for c in cards)]
    return ir.And(tuple(items + _spec_extras(spec)))


def seat_condition(seat: int, s, predeal: dict[int, list[int]] | None) -> ir.Cond:
    """One seat's fields as a condition; ``holds`` goes to ``predeal`` when given."""
    items: list[ir.Cond] = []
    if s.hcp is not None:
        items += _range(_feat(seat, ir.ALL_SUITS, ir.HCP), s.hcp)
    for k, name in enumerate(SUIT_NAMES):
        v = getattr(s, name)
        if v is None:
            continue
        if isinstance(v, tuple):
            items += _range(_feat(seat, (k,), ir.LENGTH), v)
            continue
        for field, fn in _SUIT_FNS.items():
            r = getattr(v, field)
            if r is not None:
                items += _range(_feat(seat, (k,), fn), r)
        if v.points is not None:  # the seat-level points, read on this suit alone
            items += _range(_feat(seat, (k,), ir.weights(*v.points.scale)), v.points.range)
        if v.quality is not None:
            items += _range(kaplan_rubens.quality(seat, k), v.quality)
    if s.shape is not None:
        items.append(_shape(seat, s.shape))
    for field in ("controls", "losers", "top2", "top3", "top4", "top5"):  # whole-hand sums of the suit functions
        if (r := getattr(s, field)) is not None:
            items += _range(_feat(seat, ir.ALL_SUITS, _SUIT_FNS[field]), r)
    if s.cccc is not None:
        items += _range(kaplan_rubens.cccc(seat), s.cccc)
    if s.points is not None:
        items += _range(_feat(seat, ir.ALL_SUITS, ir.weights(*s.points.scale)), s.points.range)
    if s.holds is not None:
        items += _holds(seat, s.holds, predeal)
    if s.any_of is not None:
        items.append(ir.Or(tuple(seat_condition(seat, x, None) for x in s.any_of)))
    if s.not_ is not None:
        items.append(ir.Not(seat_condition(seat, s.not_, None)))
    return ir.And(tuple(items))


def _feat(seat: int, suits: tuple[int, ...], fn: ir.LocalFn) -> ir.Linear:
    return ir.Linear(((1, ir.Feature(seat, suits, fn)),))


def _range(x: ir.Num, r: tuple[int, int]) -> list[ir.Cond]:
    return [ir.Compare(">=", x, ir.Linear((), r[0])), ir.Compare("<=", x, ir.Linear((), r[1]))]


def _shape(seat: int, expr: str) -> ir.ShapeIn:
    from ..shapes import parse_shape

    mask = parse_shape(expr)
    return ir.ShapeIn(seat, frozenset(tuple(int(x) for x in p) for p in PATTERNS[mask]))


def card_number(text: str) -> int:
    """The card number of ``SA``-style text (suit, then rank)."""
    return card(_RANKS.index(text[1]), "SHDC".index(text[0]))


def _holds(seat: int, cards: tuple[str, ...], predeal: dict[int, list[int]] | None) -> list[ir.Cond]:
    if predeal is not None:
        predeal.setdefault(seat, []).extend(card_number(c) for c in cards)
        return []
    return [_held(seat, card_number(c)) for c in cards]


def _held(seat: int, number: int) -> ir.Cond:
    """``seat`` holds the card ``number`` (:func:`truedeal.cards.card`)."""
    return ir.Compare("==", _feat(seat, (number % 4,), ir.one_rank(number // 4)), ir.Linear((), 1))
