"""The classic dealer program's text layouts of a deal, byte for byte.

A *hand* here is its PBN form ``"S.H.D.C"`` (ranks highest first, ``T`` for
ten, a void empty), and a deal is its four hands N E S W.  What dealer prints
(facts of its manual and its reference outputs, ``Examples/Refer.*``):

* hands side by side: one line per suit, spades first; each card is its rank
  and a space, a void is ``"- "``; every hand but the last is padded with
  spaces to :data:`COLUMN` characters (a suit of more than ten cards is not
  cut, so it pushes the next hand right).  Lines keep their trailing space;
* ``printall``: ``"%4d."`` and the deal's number, then N E S W side by side,
  then an empty line;
* ``printew``: W and E side by side, then an empty line (no number);
* ``printcompact``: four lines ``"n S.H.D.C"`` (seat letters ``n e s w``);
* ``printoneline``: the same four items on one line, each followed by a space;
* ``print(SEATS)``: per seat, the page title ``"\\n\\n<Seat> hands:\\n\\n\\n\\n"``,
  then that seat's hands four deals to a row, each row headed by
  ``"%4d."`` plus 15 spaces per deal, rows followed by an empty line; the
  seat's pages end with a form feed.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Width of a hand's column: ten cards of two characters.
COLUMN = 20
#: Seat letters of printcompact and printoneline, N E S W.
LETTERS = "nesw"
#: Seat names of print's page titles, N E S W.
NAMES = ("North", "East", "South", "West")
#: Deals per row of ``print``'s pages.
ROW = 4
#: What ends one seat's pages.
SEAT_END = "\f"


def suit_cell(holding: str) -> str:
    """One suit of a hand in a column: every rank followed by a space, ``"- "`` for a void."""
    return "".join(rank + " " for rank in holding) or "- "


def side_by_side(hands: Sequence[str]) -> str:
    """Four lines (spades to clubs) of ``hands`` in columns, as dealer aligns them."""
    suits = [hand.split(".") for hand in hands]
    lines = []
    for s in range(4):
        cells = [suit_cell(h[s]) for h in suits]
        lines.append("".join(c.ljust(COLUMN) for c in cells[:-1]) + cells[-1] + "\n")
    return "".join(lines)


def printall(number: int, deal: Sequence[str]) -> str:
    """``printall``: the number, the four hands N E S W side by side, an empty line."""
    return f"{number:4d}.\n" + side_by_side(deal) + "\n"


def printew(deal: Sequence[str]) -> str:
    """``printew``: West then East side by side, an empty line."""
    return side_by_side((deal[3], deal[1])) + "\n"


def compact(deal: Sequence[str]) -> str:
    """``printcompact`` without its expression: one line per seat, ``n S.H.D.C``."""
    return "".join(f"{LETTERS[p]} {deal[p]}\n" for p in range(4))


def oneline(deal: Sequence[str]) -> str:
    """``printoneline`` without its expression or line end: ``n S.H.D.C e ... w S.H.D.C `` (trailing space)."""
    return "".join(f"{LETTERS[p]} {deal[p]} " for p in range(4))


def seat_title(seat: int) -> str:
    """The title of ``print``'s pages of one seat."""
    return f"\n\n{NAMES[seat]} hands:\n\n\n\n"


def seat_row(numbers: Sequence[int], hands: Sequence[str]) -> str:
    """One row of ``print``'s pages: up to four deals' hands of one seat, with their numbers."""
    head = "".join(f"{n:4d}." + " " * 15 for n in numbers)
    return head + "\n" + side_by_side(hands) + "\n"

