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
    ``(batches, first_board=1, *, rotation=STANDARD)`` plus its own
    keyword-only options.  A :class:`Rotation` fixes the dealer or the
    vulnerability instead of the board numbers' cycle.

One module per format (as endplay's parsers): :mod:`.deal` (deal strings),
:mod:`.rotation`, :mod:`.stream` (batch machinery), and the writers
:mod:`.numbersfile`, :mod:`.pbnfile`, :mod:`.jsonlines`, :mod:`.textfile`,
:mod:`.linfile`.  The files of a tournament set (hand records with double
dummy and par) are written from :class:`~.records.HandRecord` lists by
:mod:`.pbnfile`, :mod:`.linfile`, :mod:`.dup`, :mod:`.dlm`, :mod:`.bri`,
:mod:`.csvfile`, :mod:`.html` and :mod:`.pdf`.  :mod:`.dealer_actions` runs a dealer
script's print actions on a stream of deals, in dealer's layouts (:mod:`.dealer_layout`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..choices import FORMATS
from .deal import deal_string, parse_deal
from .jsonlines import json
from .linfile import lin, lin_line
from .numbersfile import numbers
from .pbnfile import pbn
from .rotation import STANDARD, VULNERABILITIES, Rotation, dealer_of_board, vulnerability_of_board
from .stream import CHUNK_BOARDS, Batch
from .textfile import text

# The writers (numbers, pbn, json, text, lin) are deliberately left out of
# __all__ so that ``import *`` cannot shadow the stdlib ``json``; use
# ``formats.pbn(...)`` or ``WRITERS["pbn"](...)``.
__all__ = [
    "CHUNK_BOARDS",
    "FORMATS",
    "STANDARD",
    "VULNERABILITIES",
    "WRITERS",
    "Batch",
    "Rotation",
    "deal_string",
    "dealer_of_board",
    "lin_line",
    "parse_deal",
    "vulnerability_of_board",
]

#: Format name (each of :data:`FORMATS`, in its order) -> streaming writer ``(batches, first_board=1, **options)``.
WRITERS: dict[str, Callable[..., Iterator[str]]] = {
    "numbers": numbers,
    "pbn": pbn,
    "json": json,
    "text": text,
    "lin": lin,
}
