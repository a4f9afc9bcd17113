"""The internal form as text a dealer-script reader can follow (``truedeal explain``)."""

from __future__ import annotations

from ..cards import SEAT_NAMES, SUIT_NAMES
from . import ir, kaplan_rubens

_NAMED = {ir.HCP: "hcp", ir.CONTROLS: "controls", ir.LOSERS: "losers", ir.LENGTH: "length",
          ir.top(2): "top2", ir.top(3): "top3", ir.top(4): "top4", ir.top(5): "top5"}
_RANKS = "AKQJT98765432"
#: Tables of dealer's Kaplan-Rubens values, which hold fifths (:mod:`.kaplan_rubens`).
_FIFTHS = {kaplan_rubens.QUALITY: "quality", kaplan_rubens.CCCC_BY_SUIT: "cccc_share"}


def feature(f: ir.Feature) -> str:
    """e.g. ``hcp(north)``, ``spades(south)``, ``top3(north, spades)``, ``hascard(west, SA)``."""
    seat = SEAT_NAMES[f.seat]
    if f.fn == ir.LENGTH and len(f.suits) == 1:
        return f"{SUIT_NAMES[f.suits[0]]}({seat})"
    if f.fn.kind == "table":
        suits = "" if f.suits == ir.ALL_SUITS else " in " + ", ".join(SUIT_NAMES[k] for k in f.suits)
        return f"each suit of {seat}'s [{f.fn.label}]{suits}"
    ranks = [r for r, w in enumerate(f.fn.weights) if w] if f.fn.kind == "weights" else []
    if len(f.suits) == 1 and len(ranks) == 1 and f.fn.weights[ranks[0]] == 1 and f.fn not in _NAMED:
        return f"hascard({seat}, {'SHDC'[f.suits[0]]}{_RANKS[ranks[0]]})"
    name = _NAMED.get(f.fn) or "points[" + " ".join(str(w) for w in f.fn.weights).rstrip(" 0") + "]"
    if f.suits == ir.ALL_SUITS:
        return f"{name}({seat})"
    return f"{name}({seat}, {', '.join(SUIT_NAMES[k] for k in f.suits)})"


def num(x) -> str:
    if isinstance(x, ir.IfElse) and isinstance(x.cond, ir.ShapeIn) and x == kaplan_rubens.cccc(x.cond.seat):
        return f"cccc({SEAT_NAMES[x.cond.seat]})"
    if isinstance(x, ir.Linear):
        parts = []
        for c, f in x.terms:
            shown = feature(f)
            if f.fn in _FIFTHS and c % kaplan_rubens.STEP == 0:  # 5 * fifths: the value itself
                c //= kaplan_rubens.STEP
                shown = _FIFTHS[f.fn] + feature(ir.Feature(f.seat, f.suits, ir.HCP))[3:]
            sign = "-" if c < 0 else "+"
            parts.append(f"{sign} {'' if abs(c) == 1 else f'{abs(c)}*'}{shown}")
        if x.const or not parts:
            parts.append(f"{'-' if x.const < 0 else '+'} {abs(x.const)}")
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]
    if isinstance(x, ir.IfElse):
        return f"({cond(x.cond)} ? {num(x.then)} : {num(x.other)})"
    if isinstance(x, ir.Arith):
        return f"({num(x.left)} {x.op} {num(x.right)})"
    return opaque(x)


_STRAINS = (*SUIT_NAMES, "notrump")


def opaque(x: ir.OpaqueNum) -> str:
    """A function only a real deal answers, as a script writes it:
    ``tricks(south, notrump)``, ``score(vul, x3N, tricks(south, notrump))``,
    ``rnd(2)``.  Its arguments
    are stored parsed (seat and suit numbers, IR numbers), so each is
    written back in the script's words, never as a Python repr."""
    args = x.args
    if x.name == "tricks":
        seat, strain = args
        words = [SEAT_NAMES[seat], _STRAINS[strain]]
    elif x.name == "score":
        vul, (level, strain), tricks = args
        words = ["vul" if vul else "nv", f"x{level}{'SHDCN'[strain]}", num(tricks)]
    else:  # imps, rnd
        words = [num(args[0])]
    return f"{x.name}({', '.join(words)})"


def cond(c) -> str:
    """A condition in dealer syntax (shapes as their pattern count)."""
    if isinstance(c, ir.Truth):
        return "true" if c.value else "false"
    if isinstance(c, ir.And):
        return " && ".join(_wrap(x, ir.Or) for x in c.items) if c.items else "true"
    if isinstance(c, ir.Or):
        return " || ".join(_wrap(x, ir.And) for x in c.items) if c.items else "false"
    if isinstance(c, ir.Not):
        return "!" + _wrap(c.item, (ir.And, ir.Or, ir.Compare))
    if isinstance(c, ir.ShapeIn):
        return f"shape({SEAT_NAMES[c.seat]}, one of {len(c.patterns)} patterns)"
    return f"{num(c.left)} {c.op} {num(c.right)}"


def opaque_parts(c: ir.Cond, most: int = 3) -> str:
    """The comparisons of ``c`` that read a function only a real deal answers
    (``tricks``, ``score``, ``rnd``...), in the script's words and in its
    order: at most ``most`` of them, then how many more."""
    parts = list(dict.fromkeys(cond(x) for x in ir.nodes(c)
                               if isinstance(x, ir.Compare) and ir.opaque_names(x) - {"relaxed"}))
    more = f" and {len(parts) - most} more" if len(parts) > most else ""
    return "; ".join(parts[:most]) + more


def _wrap(c, kinds) -> str:
    text = cond(c)
    return f"({text})" if isinstance(c, kinds) else text
