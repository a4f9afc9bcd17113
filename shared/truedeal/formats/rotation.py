"""Board rotation: the dealer and vulnerability of a board number.

The standard cycle: dealer N E S W repeating; vulnerability repeating every
16 boards (see :func:`vulnerability_of_board`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cards import SEAT_NAMES, SEATS

#: Vulnerability names in PBN export spelling.
VULNERABILITIES = ("None", "NS", "EW", "All")

_SEAT_WORDS = {**{s.lower(): i for i, s in enumerate(SEATS)}, **{n.lower(): i for i, n in enumerate(SEAT_NAMES)}}


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



#: Words for a fixed vulnerability (set files, dealer scripts, the CLI) -> PBN spelling.
VULNERABILITY_WORDS = {"none": "None", "ns": "NS", "ew": "EW", "all": "All", "both": "All"}


class RotationError(ValueError):
    """A dealer or vulnerability word that means nothing; ``field`` is ``"dealer"`` or ``"vulnerability"``."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Rotation:
    """Who deals each board and who is vulnerable.

    ``dealer`` is a fixed seat (0..3) or None for :func:`dealer_of_board`;
    ``vulnerability`` a fixed PBN spelling (``"None"``, ``"NS"``, ``"EW"``,
    ``"All"``) or None for :func:`vulnerability_of_board`.  Either way both
    repeat every 16 boards, which the writers rely on.
    """

    dealer: int | None = None
    vulnerability: str | None = None

    def __post_init__(self) -> None:
        if self.dealer is not None and self.dealer not in range(4):
            raise ValueError(f"dealer must be a seat 0..3, got {self.dealer!r}")
        if self.vulnerability is not None and self.vulnerability not in VULNERABILITIES:
            raise ValueError(f"vulnerability must be one of {', '.join(VULNERABILITIES)}, got {self.vulnerability!r}")

    @classmethod
    def from_words(cls, dealer: str | None, vulnerability: str | None, default: Rotation | None = None) -> Rotation:
        """From the words users write: ``"rotate"`` or a seat (``N``, ``north``);
        ``"rotate"`` or ``none ns ew all both`` (any case).  A word left out
        (None) keeps ``default``'s value (the standard cycle when there is none).
        :class:`RotationError` on any other word."""
        base = default or STANDARD
        return cls(_word("dealer", dealer, base.dealer, seat_index),
                   _word("vulnerability", vulnerability, base.vulnerability, vulnerability_word))

    def words(self) -> tuple[str, str]:
        """The words :meth:`from_words` reads back: ``("rotate" | "N".."W", "rotate" | "none" | "ns" | "ew" | "all")``."""
        return ("rotate" if self.dealer is None else SEATS[self.dealer],
                "rotate" if self.vulnerability is None else self.vulnerability.lower())

    def dealer_of(self, b: int) -> int:
        """The seat that deals board ``b``."""
        return dealer_of_board(b) if self.dealer is None else self.dealer

    def vulnerability_of(self, b: int) -> str:
        """The vulnerability of board ``b`` in PBN spelling."""
        return vulnerability_of_board(b) if self.vulnerability is None else self.vulnerability


#: The standard cycle.
STANDARD = Rotation()


def _word(field: str, word: str | None, kept, read):
    if word is None:
        return kept
    if word == "rotate":
        return None
    try:
        return read(word)
    except ValueError as exc:
        raise RotationError(field, str(exc)) from None


def seat_index(word: str) -> int:
    """Seat 0..3 of ``"N"``/``"north"`` (any case); ``ValueError`` otherwise."""
    key = word.strip()
    i = _SEAT_WORDS.get(key.lower())
    if i is None:
        raise ValueError(f"not a seat: {word!r} (north, east, south, west or N E S W)")
    return i


def vulnerability_word(word: str) -> str:
    """PBN spelling of ``none ns ew all both`` (any case); ``ValueError`` otherwise."""
    v = VULNERABILITY_WORDS.get(word.strip().lower())
    if v is None:
        raise ValueError(f"not a vulnerability: {word!r} (none, ns, ew or all)")
    return v
