"""Deal strings and streaming file writers (PBN 2.1, LIN, JSON Lines, text).

Conventions are those of :mod:`truedeal.cards`: card = 4*rank + suit (ranks
A..2 = 0..12, suits S H D C = 0..3), seats N E S W = 0..3, and a deal is a
length-52 row ``owners`` with ``owners[card] = seat``.

Deal strings
    :func:`deal_string` writes a PBN ``Deal`` value (``"N:AKQ.JT9.. ..."``);
    :func:`parse_deal` reads one back (strictly validated, one-line errors).

Board rotation
    :func:`dealer_of_board` and :func:`vulnerability_of_board` follow the
    standard 16-board cycle (dealer N E S W; vulnerability None NS EW All /
    NS EW All None / EW All None NS / All None NS EW).

Streaming writers
    Each writer is a generator: it takes an iterable of *batches* and yields
    ``str`` chunks whose concatenation is the file.  A batch is a pair
    ``(owners, numbers)`` with ``owners`` a ``(k, 52)`` uint8 array and
    ``numbers`` a sequence of ``k`` Python ints (the deal numbers, already
    computed by the caller).  Boards are numbered consecutively from
    ``first_board`` across batches.  Only one chunk (at most
    :data:`CHUNK_BOARDS` boards) is held in memory at a time, so the output can
    be streamed to a file or an HTTP response of any length.  Formats that do
    not need deal numbers (``lin``) ignore them, and ``pbn``, ``json`` and
    ``text`` simply omit the number when a batch's ``numbers`` is ``None``;
    the ``numbers`` format requires them.

    ``WRITERS`` maps a format name to its writer; every writer accepts
    ``(batches, first_board=1)`` plus its own keyword-only options.
"""

from __future__ import annotations

import json as _json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Optional

import numpy as np

from . import __version__
from .cards import RANKS, SEAT_NAMES, SEATS, SUIT_NAMES, SUITS, deal_seats

# The writers (numbers, pbn, json, text, lin) are deliberately left out of
# __all__ so that ``import *`` cannot shadow the stdlib ``json``; use
# ``formats.pbn(...)`` or ``WRITERS["pbn"](...)``.
__all__ = [
    "CHUNK_BOARDS",
    "FORMATS",
    "VULNERABILITIES",
    "WRITERS",
    "Batch",
    "deal_string",
    "dealer_of_board",
    "lin_line",
    "parse_deal",
    "vulnerability_of_board",
]

#: One batch handed to a writer: ``(owners (k, 52) uint8, numbers)``.
Batch = tuple[np.ndarray, Optional[Sequence[int]]]

#: Most boards rendered into a single yielded chunk.
CHUNK_BOARDS = 256

#: Vulnerability names in PBN export spelling.
VULNERABILITIES = ("None", "NS", "EW", "All")

# LIN encodings (BigDeal ``print_lin``, see the notes): dealer digit
# 1=S 2=W 3=N 4=E, indexed here by seat N E S W; vulnerability 0/n/e/b.
_LIN_DEALER_DIGIT = ("3", "4", "1", "2")
_LIN_VUL = {"None": "0", "NS": "n", "EW": "e", "All": "b"}

_SUIT_SYMBOLS = "\u2660\u2665\u2666\u2663"  # ♠ ♥ ♦ ♣


# --------------------------------------------------------------------------
# Board rotation


def _check_board(b: int) -> int:
    if isinstance(b, bool) or not isinstance(b, (int, np.integer)):
        raise TypeError(f"board number must be an int, got {type(b).__name__}")
    b = int(b)
    if b < 1:
        raise ValueError(f"board number must be >= 1, got {b}")
    return b


def dealer_of_board(b: int) -> int:
    """Seat (N E S W = 0..3) that deals board ``b`` (>= 1): N, E, S, W, N, ...

    Raises ``ValueError`` for ``b < 1``.
    """
    return (_check_board(b) - 1) % 4


def vulnerability_of_board(b: int) -> str:
    """Vulnerability of board ``b`` (>= 1) as ``"None"``, ``"NS"``, ``"EW"`` or ``"All"``.

    The standard 16-board cycle: each group of four boards is the sequence
    None, NS, EW, All rotated left by one more step than the previous group
    (boards 1-4 None NS EW All, 5-8 NS EW All None, 9-12 EW All None NS,
    13-16 All None NS EW), repeating every 16 boards.
    Raises ``ValueError`` for ``b < 1``.
    """
    i = (_check_board(b) - 1) % 16
    return VULNERABILITIES[(i + i // 4) % 4]


# --------------------------------------------------------------------------
# Deal strings


_check_row = deal_seats  # one validator for every deal row


def _check_first(first: int) -> int:
    if isinstance(first, bool) or not isinstance(first, (int, np.integer)) or not 0 <= first <= 3:
        raise ValueError(f"first seat must be an int 0..3 (N E S W), got {first!r}")
    return int(first)


def _holdings(seats: list[int]) -> list[list[str]]:
    """``h[seat][suit]`` = ranks held, highest first (no validation)."""
    h = [[[], [], [], []] for _ in range(4)]
    for c, s in enumerate(seats):  # card order is rank-major, A first
        h[s][c & 3].append(RANKS[c >> 2])
    return [["".join(x) for x in hand] for hand in h]


def _pbn_deal(h: list[list[str]], first: int) -> str:
    return SEATS[first] + ":" + " ".join(
        ".".join(h[(first + i) % 4]) for i in range(4)
    )


def deal_string(owners_row, first: int = 0) -> str:
    """PBN ``Deal`` value of one deal, hands clockwise from seat ``first``.

    ``owners_row`` is a length-52 integer array (``owners_row[card] = seat``)
    in which every seat holds exactly 13 cards; ``first`` is 0..3 (N E S W).
    Each hand is written ``S.H.D.C`` with ranks ``AKQJT98765432`` in
    descending order, ``T`` for ten and an empty string for a void, e.g.
    ``"N:AKQJ.AKQ.AKQ.AKQ T98.... ..."``.  Raises ``ValueError`` on an invalid
    deal or seat.
    """
    first = _check_first(first)
    return _pbn_deal(_holdings(_check_row(owners_row)), first)


_DEAL_TAG = re.compile(r'^\[\s*deal\s+"(.*)"\s*\]$', re.IGNORECASE | re.DOTALL)
_RANK_INDEX = {r: i for i, r in enumerate(RANKS)}


def _card_name(c: int) -> str:
    return SUITS[c & 3] + RANKS[c >> 2]


def _short(text: str, limit: int = 80) -> str:
    r = repr(text)
    return r if len(r) <= limit else r[: limit - 4] + "...'"


def parse_deal(text: str) -> np.ndarray:
    """Parse a PBN deal string into a ``(52,)`` uint8 owners row.

    Accepted: ``"<first>:<h1> <h2> <h3> <h4>"`` with ``<first>`` one of
    N E S W (any case), hands clockwise from ``<first>`` separated by
    whitespace, each hand ``S.H.D.C`` (void = empty).  Ranks may be upper or
    lower case, in any order, with ``T`` or ``10`` for the ten.  The whole
    string may be wrapped as a PBN tag, ``[Deal "..."]``, and surrounding
    whitespace is ignored.  As in PBN, at most one hand may be ``-`` (unknown);
    it then receives the 13 cards not in the other three hands.

    The result is always a complete, valid deal.  Anything else raises
    ``ValueError`` with a one-line message naming the problem (wrong number of
    hands, a hand without exactly 4 suits, an unknown character, a duplicate
    card, a seat whose card count is not 13, missing cards).
    """
    if not isinstance(text, str):
        raise ValueError(f"deal must be a string, got {type(text).__name__}")
    s = text.strip()
    m = _DEAL_TAG.match(s)
    if m:
        s = m.group(1).strip()
    if len(s) < 2 or s[1] != ":" or s[0].upper() not in SEATS:
        raise ValueError(
            f"deal must start with a seat and a colon (N:, E:, S: or W:), got {_short(text)}"
        )
    first = SEATS.index(s[0].upper())
    hands = s[2:].split()
    if len(hands) != 4:
        raise ValueError(f"deal must have 4 hands separated by spaces, got {len(hands)}")

    owners = np.full(52, 255, dtype=np.uint8)
    unknown: list[int] = []
    counts = [0, 0, 0, 0]
    for i, hand in enumerate(hands):
        seat = (first + i) % 4
        name = SEAT_NAMES[seat]
        if hand == "-":
            unknown.append(seat)
            continue
        suits = hand.split(".")
        if len(suits) != 4:
            raise ValueError(
                f"{name} hand {hand!r} has {len(suits)} suit(s); expected 4 separated by '.' (S.H.D.C)"
            )
        for suit, holding in enumerate(suits):
            ranks = holding.upper().replace("10", "T")
            for ch in ranks:
                r = _RANK_INDEX.get(ch)
                if r is None:
                    raise ValueError(
                        f"unknown character {ch!r} in {name} {SUIT_NAMES[suit]} {holding!r}; "
                        "ranks are AKQJT98765432 (or 10)"
                    )
                c = 4 * r + suit
                if owners[c] != 255:
                    prev = SEAT_NAMES[owners[c]]
                    where = f"twice in {name}" if prev == name else f"in both {prev} and {name}"
                    raise ValueError(f"duplicate card {_card_name(c)} ({where})")
                owners[c] = seat
                counts[seat] += 1

    if len(unknown) > 1:
        raise ValueError(
            f"at most one hand may be unknown ('-'), got {len(unknown)}: "
            + ", ".join(SEAT_NAMES[u] for u in unknown)
        )
    bad = [
        f"{SEAT_NAMES[seat]} has {counts[seat]} cards"
        for seat in range(4)
        if seat not in unknown and counts[seat] != 13
    ]
    if bad:
        missing = [c for c in range(52) if owners[c] == 255]
        msg = ", ".join(bad) + " (expected 13 each)"
        if missing and not unknown:
            msg += "; cards not dealt: " + " ".join(_card_name(c) for c in missing)
        raise ValueError(msg)
    if unknown:  # the three known hands hold 39 distinct cards
        owners[owners == 255] = unknown[0]
    return owners


# --------------------------------------------------------------------------
# Streaming machinery


def _boards(batches: Iterable[Batch], first_board: int) -> Iterator[tuple[int, list[int], Optional[int]]]:
    """Yield ``(board, seats list, number or None)`` for every deal, validating batches."""
    b = _check_board(first_board)
    for bi, batch in enumerate(batches):
        try:
            owners, nums = batch
        except (TypeError, ValueError):
            raise ValueError(f"batch {bi}: expected a pair (owners, numbers)") from None
        owners = np.asarray(owners)
        if owners.ndim != 2 or owners.shape[1] != 52:
            raise ValueError(f"batch {bi}: owners must have shape (k, 52), got {owners.shape}")
        if owners.dtype.kind not in "iu":
            raise ValueError(f"batch {bi}: owners must be integer, got dtype {owners.dtype}")
        k = owners.shape[0]
        if nums is not None and len(nums) != k:
            raise ValueError(f"batch {bi}: {k} deals but {len(nums)} numbers")
        if k:
            if owners.min() < 0 or owners.max() > 3:
                raise ValueError(f"batch {bi}: seat values must be 0..3")
            counts = np.stack([(owners == s).sum(axis=1) for s in range(4)], axis=1)
            bad = np.flatnonzero((counts != 13).any(axis=1))
            if bad.size:
                d = int(bad[0])
                raise ValueError(
                    f"batch {bi}, deal {d} (board {b + d}): each seat must hold 13 cards, got "
                    + ", ".join(f"{SEATS[s]}={int(counts[d, s])}" for s in range(4))
                )
        for d, seats in enumerate(owners.tolist()):
            yield b, seats, (None if nums is None else int(nums[d]))
            b += 1


def _chunked(records: Iterator[str]) -> Iterator[str]:
    """Join records into chunks of at most CHUNK_BOARDS records."""
    buf: list[str] = []
    for r in records:
        buf.append(r)
        if len(buf) >= CHUNK_BOARDS:
            yield "".join(buf)
            buf = []
    if buf:
        yield "".join(buf)


# --------------------------------------------------------------------------
# Writers


def numbers(batches: Iterable[Batch], first_board: int = 1) -> Iterator[str]:
    """Deal numbers, one decimal integer per line (``"\\n"``-terminated).

    ``first_board`` is accepted for interface uniformity and validated but
    not written.  Every batch must carry its numbers.
    """
    _check_board(first_board)

    def records() -> Iterator[str]:
        for b, _seats, num in _boards(batches, first_board):
            if num is None:
                raise ValueError(f"board {b}: the numbers format needs deal numbers")
            yield f"{num}\n"

    return _chunked(records())


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


def json(batches: Iterable[Batch], first_board: int = 1) -> Iterator[str]:
    """JSON Lines, one object per deal::

        {"board": 1, "number": "123...", "deal": "N:...", "dealer": "N", "vulnerable": "None"}

    ``number`` is a decimal *string* (deal numbers exceed 2**53, so JSON
    numbers would lose precision in many consumers); it is omitted when the
    batch has no numbers.  ``deal`` always starts with North, so the hands sit
    at fixed positions; ``dealer`` / ``vulnerable`` follow the board rotation.
    """
    _check_board(first_board)

    def records() -> Iterator[str]:
        for b, seats, num in _boards(batches, first_board):
            obj: dict[str, object] = {"board": b}
            if num is not None:
                obj["number"] = str(num)
            obj["deal"] = _pbn_deal(_holdings(seats), 0)
            obj["dealer"] = SEATS[(b - 1) % 4]
            obj["vulnerable"] = vulnerability_of_board(b)
            yield _json.dumps(obj, separators=(", ", ": ")) + "\n"

    return _chunked(records())


def text(
    batches: Iterable[Batch], first_board: int = 1, *, symbols: bool = False
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
                f"Board {b}  Dealer {SEATS[(b - 1) % 4]}  Vul {vulnerability_of_board(b)}"
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


def _lin_hand(hand: list[str]) -> str:
    return "".join(SUITS[s] + hand[s] for s in range(4))


def lin_line(owners_row, board: int, *, none_vul: str = "0", names: Optional[Sequence[str]] = None) -> str:
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


def _lin_names(none_vul: str, names: Optional[Sequence[str]]) -> str:
    if none_vul not in ("0", "o"):
        raise ValueError(f"none_vul must be '0' or 'o', got {none_vul!r}")
    if names is None:
        return ""
    names = list(names)
    if len(names) != 4 or any(not isinstance(x, str) or set(x) & set("|,\r\n") for x in names):
        raise ValueError("names must be 4 strings (south, west, north, east) without '|' or ','")
    return "pn|" + ",".join(names) + "|"


def _lin_record(seats: list[int], b: int, none_vul: str, pn: str) -> str:
    h = _holdings(seats)
    vul = vulnerability_of_board(b)
    sv = none_vul if vul == "None" else _LIN_VUL[vul]
    md = _LIN_DEALER_DIGIT[(b - 1) % 4] + ",".join(_lin_hand(h[seat]) for seat in (2, 3, 0))
    return f"qx|o{b}|{pn}md|{md}|rh||ah|Board {b}|sv|{sv}|pg||"


def lin(
    batches: Iterable[Batch],
    first_board: int = 1,
    *,
    none_vul: str = "0",
    names: Optional[Sequence[str]] = None,
) -> Iterator[str]:
    """BBO LIN, one board per ``"\\n"``-terminated line (see :func:`lin_line`).

    Deal numbers are not written (LIN has no place for them).  ``none_vul``
    and ``names`` are passed to :func:`lin_line`.
    """
    _check_board(first_board)
    pn = _lin_names(none_vul, names)

    def records() -> Iterator[str]:
        for b, seats, _num in _boards(batches, first_board):
            yield _lin_record(seats, b, none_vul, pn) + "\n"

    return _chunked(records())


#: Format name -> streaming writer ``(batches, first_board=1, **options)``.
WRITERS: dict[str, Callable[..., Iterator[str]]] = {
    "numbers": numbers,
    "pbn": pbn,
    "json": json,
    "text": text,
    "lin": lin,
}

#: Names of the available output formats.
FORMATS: tuple[str, ...] = tuple(WRITERS)
