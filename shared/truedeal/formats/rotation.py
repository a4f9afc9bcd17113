"""Board rotation: the dealer and vulnerability of a board number.

The standard cycle: dealer N E S W repeating; vulnerability repeating every
16 boards (see :func:`vulnerability_of_board`).
"""

from __future__ import annotations

import numpy as np

#: Vulnerability names in PBN export spelling.
VULNERABILITIES = ("None", "NS", "EW", "All")


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

