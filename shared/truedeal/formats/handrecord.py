"""What a printed hand record shows of one board, shared by HTML and PDF.

:func:`board_sheet` turns a :class:`~.records.HandRecord` into plain strings:
the title, each hand's four suit lines and HCP, the double-dummy rows and
the par line, so that both printers lay out the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cards import SEAT_NAMES, SEATS
from .records import STRAINS, HandRecord

#: Boards on one printed page.
BOARDS_PER_PAGE = 4


@dataclass(frozen=True)
class BoardSheet:
    title: str                         # "Board 5"
    subtitle: str                      # "Dealer N  Vul NS"
    hands: tuple[tuple[str, ...], ...]  # per seat N E S W: 4 suit lines
    hcp: tuple[int, int, int, int]
    dd_header: tuple[str, ...]         # ("", "NT", "S", "H", "D", "C")
    dd_rows: tuple[tuple[str, ...], ...]  # ("N", "7", ...), declarers N S E W
    par: str                           # "Par NS -100: S 3Sx-1; N 3Hx-1" or ""
    spec: str


def board_sheet(r: HandRecord, suit_labels: str = "SHDC") -> BoardSheet:
    """The printable facts of ``r`` (see module doc); a void shows as ``-``."""
    h = r.hands
    hands = tuple(tuple(f"{suit_labels[s]} {h[seat][s] or '-'}" for s in range(4)) for seat in range(4))
    rows: tuple = ()
    par = ""
    if r.dd is not None:
        rows = tuple((SEATS[s], *(str(r.dd.tricks[s][t]) for t in range(5))) for s in (0, 2, 1, 3))
        par = f"Par {r.dd.optimum_score()}: " + "; ".join(r.dd.par_contracts)
    return BoardSheet(
        title=f"Board {r.board}",
        subtitle=f"Dealer {SEATS[r.dealer]}  Vul {r.vulnerable}",
        hands=hands,
        hcp=r.hcp(),
        dd_header=("", *STRAINS),
        dd_rows=rows,
        par=par,
        spec=r.spec,
    )


def seat_name(seat: int) -> str:
    return SEAT_NAMES[seat].capitalize()


def pages(records, per_page: int = BOARDS_PER_PAGE):
    """``records`` cut into pages of ``per_page`` boards."""
    records = list(records)
    return [records[i:i + per_page] for i in range(0, len(records), per_page)]
