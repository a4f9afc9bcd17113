"""Double-dummy tricks and contract scores for the rejection evaluator, by endplay.

endplay (its DDS binding) is an optional dependency: these functions import it
when first called and raise :class:`NotImplementedError` with one line if it
is missing.  They are slow (a DDS solve per deal) and exist for the rare
script that asks for ``tricks()`` or ``score()``.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..formats.deal import deal_string
from . import ir

#: Deals per ``calc_all_tables`` call: endplay refuses more than 40 deals at once ("Too many DD tables requested").
DDS_BATCH = 40
#: The script functions that need a double-dummy solve (``score`` usually takes ``tricks``).
DOUBLE_DUMMY = frozenset({"tricks", "score"})


def needs_double_dummy(node: object) -> bool:
    """Whether evaluating ``node`` (an IR tree, or a tuple of them) solves deals double dummy."""
    return bool(ir.opaque_names(node) & DOUBLE_DUMMY)


def _endplay():
    try:
        import endplay.dds as dds
        import endplay.types as types
    except ImportError:  # pragma: no cover - endplay is installed with the test extra
        raise NotImplementedError("tricks() and score() need endplay (pip install endplay)") from None
    return dds, types


def dd_tables(owners: np.ndarray, strains: tuple[int, ...] = (0, 1, 2, 3, 4)) -> np.ndarray:
    """``(n, len(strains), 4)`` double-dummy tricks: ``[deal, strain, declarer]``,
    strains numbered S H D C NT = 0..4, declarers N E S W (endplay's
    ``calc_all_tables``).  DDS solves only ``strains``: each costs about as
    much as another (one strain 39 ms a deal here, all five 206 ms)."""
    dds, types = _endplay()
    skip = [types.Denom(st) for st in range(5) if st not in strains]
    deals = [types.Deal(deal_string(row)) for row in owners]
    out = np.empty((len(owners), len(strains), 4), dtype=np.int64)
    for start in range(0, len(deals), DDS_BATCH):
        for d, table in enumerate(dds.calc_all_tables(deals[start:start + DDS_BATCH], exclude=skip), start):
            out[d] = [[table[types.Denom(st), types.Player(seat)] for seat in range(4)] for st in strains]
    return out


@cache
def contract_scores(level: int, strain: int, vul: bool) -> np.ndarray:
    """Declarer's undoubled score of ``level``/``strain`` by tricks taken (0..13)."""
    _, types = _endplay()
    vul_kind = types.Vul.both if vul else types.Vul.none
    scores = []
    for taken in range(14):
        c = types.Contract(level=level, denom=types.Denom(strain), declarer=types.Player.north)
        c.result = taken - 6 - level
        scores.append(c.score(vul_kind))
    table = np.array(scores, dtype=np.int64)
    table.setflags(write=False)
    return table
