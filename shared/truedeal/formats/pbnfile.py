"""PBN 2.1 export (streaming writer for ``generate`` and jobs)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .. import __version__
from ..cards import SEATS
from .deal import _holdings, _pbn_deal
from .rotation import _check_board, vulnerability_of_board
from .stream import Batch, _boards, _chunked


def pbn(
    batches: Iterable[Batch],
    first_board: int = 1,
    *,
    crlf: bool = False,
    generator: bool = True,
    event: str = "?",
) -> Iterator[str]:
    """PBN 2.1 in export style.

    Output: the header ``% PBN 2.1`` / ``% EXPORT`` / ``%``, then (if
    ``generator``) ``[Generator "truedeal <version>"]`` once, directly before
    the first game as BigDeal does.  Each board is the 15-tag mandatory tag set
    in order Event, Site, Date, Board, West, North, East, South, Dealer,
    Vulnerable, Deal, Scoring, Declarer, Contract, Result, with ``"?"`` for
    unknowns (``event`` may set the Event value); Dealer and Vulnerable follow
    :func:`dealer_of_board` / :func:`vulnerability_of_board`; the Deal value
    starts with the dealer (export rule).  When the deal number is known it
    follows as the supplemental tag ``[DealNumber "<decimal>"]``.  Each game
    is terminated by an empty line.

    Line ends are ``"\\n"``; ``crlf=True`` gives the ``"\\r\\n"`` that the
    PBN export format formally prescribes.
    """
    _check_board(first_board)
    nl = "\r\n" if crlf else "\n"
    if '"' in event or "\n" in event or "\r" in event:
        raise ValueError("event must not contain quotes or line breaks")

    def records() -> Iterator[str]:
        yield f"% PBN 2.1{nl}% EXPORT{nl}%{nl}"
        if generator:
            yield f'[Generator "truedeal {__version__}"]{nl}'
        for b, seats, num in _boards(batches, first_board):
            dealer = (b - 1) % 4
            tags = [
                ("Event", event),
                ("Site", "?"),
                ("Date", "?"),
                ("Board", str(b)),
                ("West", "?"),
                ("North", "?"),
                ("East", "?"),
                ("South", "?"),
                ("Dealer", SEATS[dealer]),
                ("Vulnerable", vulnerability_of_board(b)),
                ("Deal", _pbn_deal(_holdings(seats), dealer)),
                ("Scoring", "?"),
                ("Declarer", "?"),
                ("Contract", "?"),
                ("Result", "?"),
            ]
            if num is not None:
                tags.append(("DealNumber", str(num)))
            yield "".join(f'[{k} "{v}"]{nl}' for k, v in tags) + nl

    return _chunked(records())
