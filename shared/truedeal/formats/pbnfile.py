"""PBN 2.1 export (streaming writer for ``generate`` and jobs)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from .. import __version__, kernel
from ..cards import SEATS
from .rotation import STANDARD, Rotation, _check_board
from .stream import CHUNK_BOARDS, Batch, _batches, _is_limbs


def pbn(
    batches: Iterable[Batch],
    first_board: int = 1,
    *,
    crlf: bool = False,
    generator: bool = True,
    event: str = "?",
    rotation: Rotation = STANDARD,
) -> Iterator[str]:
    """PBN 2.1 in export style.

    Output: the header ``% PBN 2.1`` / ``% EXPORT`` / ``%``, then (if
    ``generator``) ``[Generator "truedeal <version>"]`` once, directly before
    the first game as BigDeal does.  Each board is the 15-tag mandatory tag set
    in order Event, Site, Date, Board, West, North, East, South, Dealer,
    Vulnerable, Deal, Scoring, Declarer, Contract, Result, with ``"?"`` for
    unknowns (``event`` may set the Event value); Dealer and Vulnerable follow
    ``rotation`` (by default the board numbers' standard cycle); the Deal value
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

    # The 15 tags in order, split around the four that change from board to board.
    head = f'[Event "{event}"]{nl}[Site "?"]{nl}[Date "?"]{nl}[Board "'
    players = f'"]{nl}[West "?"]{nl}[North "?"]{nl}[East "?"]{nl}[South "?"]{nl}[Dealer "'
    tail = f'"]{nl}[Scoring "?"]{nl}[Declarer "?"]{nl}[Contract "?"]{nl}[Result "?"]{nl}'

    # Dealer and vulnerability repeat every 16 boards: "<dealer>"] ... [Vulnerable "<v>"] ... [Deal "
    cycle = range(1, 17)
    dealers = bytes(rotation.dealer_of(b) for b in cycle)
    middle = [f'{SEATS[d]}"]{nl}[Vulnerable "{rotation.vulnerability_of(b)}"]{nl}[Deal "' for d, b in zip(dealers, cycle)]
    b_head, b_players, b_tail, b_nl = (x.encode("utf-8") for x in (head, players, tail, nl))
    b_middle = [m.encode() for m in middle]

    def records() -> Iterator[str]:
        yield f"% PBN 2.1{nl}% EXPORT{nl}%{nl}"
        if generator:
            yield f'[Generator "truedeal {__version__}"]{nl}'
        for b0, owners, nums in _batches(batches, first_board):
            for i in range(0, len(owners), CHUNK_BOARDS):  # chunks stay bounded
                part, num = owners[i : i + CHUNK_BOARDS], None if nums is None else nums[i : i + CHUNK_BOARDS]
                fast = None
                if (num is None or _is_limbs(num)) and b0 + i + len(part) < 1 << 63:  # the kernel's games
                    fast = kernel.pbn_games(part, b0 + i, num, b_head, b_players, b_middle, b_tail, b_nl, dealers)
                if fast is not None:
                    yield fast.decode("utf-8")
                else:
                    yield _games(b0 + i, part, _texts(nums, i), nl, (head, players, middle, tail), dealers)

    return records()


def _texts(nums, i: int) -> list[str] | None:
    """Decimal deal numbers of boards i.. of a batch (kernel-formatted limbs), or None."""
    if nums is None:
        return None
    part = nums[i : i + CHUNK_BOARDS]
    if _is_limbs(part):
        return kernel.format_numbers(part).decode("ascii").split("\n")
    return [str(int(x)) for x in part]


def _games(b0: int, owners, nums: list[str] | None, nl: str, pieces: tuple[str, str, list[str], str],
           dealers: bytes) -> str:
    """The games of consecutive boards b0.. (Deal values from :func:`truedeal.kernel.pbn_deal_strings`,
    each starting with its board's dealer, ``dealers[(board - 1) % 16]``)."""
    head, players, middle, tail = pieces
    n = len(owners)
    firsts = np.frombuffer(dealers, dtype=np.uint8)[np.arange(b0 - 1, b0 - 1 + n) % 16]
    text = kernel.pbn_deal_strings(owners, firsts).decode("ascii")
    deals = [text[kernel.PBN_LEN * d : kernel.PBN_LEN * (d + 1) - 1] for d in range(n)]
    boards = range(b0, b0 + n)
    if nums is None:
        return "".join([f"{head}{b}{players}{middle[(b - 1) % 16]}{deal}{tail}{nl}" for b, deal in zip(boards, deals)])
    return "".join([f'{head}{b}{players}{middle[(b - 1) % 16]}{deal}{tail}[DealNumber "{num}"]{nl}{nl}'
                    for b, deal, num in zip(boards, deals, nums)])
