"""Human-readable compass diagrams."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..cards import SEATS, SUITS
from .deal import _holdings
from .rotation import STANDARD, Rotation, _check_board
from .stream import Batch, _boards, _chunked

_SUIT_SYMBOLS = "\u2660\u2665\u2666\u2663"  # ♠ ♥ ♦ ♣


def text(
    batches: Iterable[Batch], first_board: int = 1, *, symbols: bool = False, rotation: Rotation = STANDARD
) -> Iterator[str]:
    """Human-readable compass diagrams, one block per board, blank line between.

    Each block: a title line ``Board <b>  Dealer <N|E|S|W>  Vul <None|NS|EW|All>``,
    a ``Deal number <n>`` line when known, then North on top, West and East
    side by side, South below.  Suits are labelled S H D C (``symbols=True``:
    ♠ ♥ ♦ ♣), ranks highest first with T for ten, and a void is shown as ``-``.
    Lines carry no trailing spaces.
    """
    _check_board(first_board)
    labels = _SUIT_SYMBOLS if symbols else SUITS
    col = 20  # North/South indent; East starts at 2*col

    def hand_lines(hand: list[str]) -> list[str]:
        return [f"{labels[s]} {hand[s] or '-'}" for s in range(4)]

    def records() -> Iterator[str]:
        sep = ""
        for b, seats, num in _boards(batches, first_board):
            h = _holdings(seats)
            n, e, s, w = (hand_lines(h[i]) for i in range(4))
            lines = [
                f"Board {b}  Dealer {SEATS[rotation.dealer_of(b)]}  Vul {rotation.vulnerability_of(b)}"
            ]
            if num is not None:
                lines.append(f"Deal number {num}")
            lines += [" " * col + x for x in n]
            mid = ["", "", "", ""]
            mid[1] = " " * (col + 7) + "N"
            mid[2] = " " * (col + 5) + "W   E"
            mid[3] = " " * (col + 7) + "S"
            for i in range(4):
                left = w[i].ljust(col) + mid[i][col:].ljust(col)
                lines.append((left + e[i]).rstrip())
            lines += [" " * col + x for x in s]
            yield sep + "\n".join(lines) + "\n"
            sep = "\n"

    return _chunked(records())
