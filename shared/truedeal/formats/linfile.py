"""BBO LIN: BigDeal's one-line-per-board form (streaming writer)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..cards import SUITS
from .deal import _check_row, _holdings
from .rotation import STANDARD, Rotation, _check_board
from .stream import Batch, _boards, _chunked

# LIN encodings (BigDeal ``print_lin``, see the notes): dealer digit
# 1=S 2=W 3=N 4=E, indexed here by seat N E S W; vulnerability 0/n/e/b.
_LIN_DEALER_DIGIT = ("3", "4", "1", "2")
_LIN_VUL = {"None": "0", "NS": "n", "EW": "e", "All": "b"}


def _lin_hand(hand: list[str]) -> str:
    return "".join(SUITS[s] + hand[s] for s in range(4))


def lin_line(owners_row, board: int, *, none_vul: str = "0", names: Sequence[str] | None = None) -> str:
    """One BBO LIN line (without line end) for ``owners_row`` as board ``board``.

    ``qx|o<B>|md|<D><South>,<West>,<North>|rh||ah|Board <B>|sv|<V>|pg||`` as
    written by BigDeal: ``<D>`` is the dealer digit 1=S 2=W 3=N 4=E, hands are
    South, West, North (East is implied), each ``S..H..D..C..`` with every suit
    letter present even when void, and ``<V>`` is ``0``/``n``/``e``/``b`` for
    None/NS/EW/All.  ``none_vul="o"`` writes BBO's other spelling of "none"
    (some readers, e.g. endplay 0.5, accept only ``o``).  With ``names`` =
    (south, west, north, east), a ``pn|S,W,N,E|`` field follows ``qx``.
    """
    pn = _lin_names(none_vul, names)
    return _lin_record(_check_row(owners_row), _check_board(board), none_vul, pn)


def _lin_names(none_vul: str, names: Sequence[str] | None) -> str:
    if none_vul not in ("0", "o"):
        raise ValueError(f"none_vul must be '0' or 'o', got {none_vul!r}")
    if names is None:
        return ""
    names = list(names)
    if len(names) != 4 or any(not isinstance(x, str) or set(x) & set("|,\r\n") for x in names):
        raise ValueError("names must be 4 strings (south, west, north, east) without '|' or ','")
    return "pn|" + ",".join(names) + "|"


def _lin_record(seats: list[int], b: int, none_vul: str, pn: str, rotation: Rotation = STANDARD) -> str:
    h = _holdings(seats)
    vul = rotation.vulnerability_of(b)
    sv = none_vul if vul == "None" else _LIN_VUL[vul]
    md = _LIN_DEALER_DIGIT[rotation.dealer_of(b)] + ",".join(_lin_hand(h[seat]) for seat in (2, 3, 0))
    return f"qx|o{b}|{pn}md|{md}|rh||ah|Board {b}|sv|{sv}|pg||"


def lin(
    batches: Iterable[Batch],
    first_board: int = 1,
    *,
    none_vul: str = "0",
    names: Sequence[str] | None = None,
    rotation: Rotation = STANDARD,
) -> Iterator[str]:
    """BBO LIN, one board per ``"\\n"``-terminated line (see :func:`lin_line`).

    Deal numbers are not written (LIN has no place for them).  ``none_vul``
    and ``names`` are passed to :func:`lin_line`; dealer and vulnerability follow ``rotation``.
    """
    _check_board(first_board)
    pn = _lin_names(none_vul, names)

    def records() -> Iterator[str]:
        for b, seats, _num in _boards(batches, first_board):
            yield _lin_record(seats, b, none_vul, pn, rotation) + "\n"

    return _chunked(records())

