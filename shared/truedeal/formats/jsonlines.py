"""JSON Lines, one object per deal."""

from __future__ import annotations

import json as _json
from collections.abc import Iterable, Iterator

from ..cards import SEATS
from .deal import _holdings, _pbn_deal
from .rotation import STANDARD, Rotation, _check_board
from .stream import Batch, _boards, _chunked


def json(batches: Iterable[Batch], first_board: int = 1, *, rotation: Rotation = STANDARD) -> Iterator[str]:
    """JSON Lines, one object per deal::

        {"board": 1, "number": "123...", "deal": "N:...", "dealer": "N", "vulnerable": "None"}

    ``number`` is a decimal *string* (deal numbers exceed 2**53, so JSON
    numbers would lose precision in many consumers); it is omitted when the
    batch has no numbers.  ``deal`` always starts with North, so the hands sit
    at fixed positions; ``dealer`` / ``vulnerable`` follow ``rotation``.
    """
    _check_board(first_board)

    def records() -> Iterator[str]:
        for b, seats, num in _boards(batches, first_board):
            obj: dict[str, object] = {"board": b}
            if num is not None:
                obj["number"] = str(num)
            obj["deal"] = _pbn_deal(_holdings(seats), 0)
            obj["dealer"] = SEATS[rotation.dealer_of(b)]
            obj["vulnerable"] = rotation.vulnerability_of(b)
            yield _json.dumps(obj, separators=(", ", ": ")) + "\n"

    return _chunked(records())
