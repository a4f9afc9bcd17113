"""A listing's cells and suit columns, against plain references: the
cross product of the seats' patterns filtered suit by suit, and np.unique
over the columns' rows."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from truedeal.constraints.compile import compile_program
from truedeal.listing import count_fitting_tuples, enumerate_cells, make_layout
from truedeal.listing.cells import suit_columns
from truedeal.listing.options import suit_profile
from truedeal.patterns import PATTERNS
from truedeal.spec import load_spec

SPECS = {
    "one seat": {"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}},
    "three seats": {"north": {"shape": "any 5431"}, "east": {"shape": "any 6331 + any 6322"}, "south": {"spades": [4, 5]}},
    "four seats": {"north": {"shape": "any 4333"}, "east": {"shape": "x5xx + xx5x"}, "south": {"shape": "any 5422"},
                   "west": {"hearts": [0, 3], "shape": "any 5xxx"}},
}


def _layout(spec):
    return make_layout(compile_program(load_spec(spec).program()))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_cells_are_the_fitting_pattern_tuples(name):
    layout = _layout(SPECS[name])
    masks = [np.nonzero(layout.comp.pattern_masks[s])[0] for s in layout.patterned]
    fitting = [t for t in itertools.product(*masks) if (PATTERNS[list(t)].sum(axis=0) <= 13).all()
               and (len(t) < 4 or (PATTERNS[list(t)].sum(axis=0) == 13).all())]
    want = [t for t, ok in zip(fitting, layout.comp.cell_possible(np.array(fitting).reshape(len(fitting), -1))) if ok]
    got = enumerate_cells(layout.comp, layout)
    assert list(map(tuple, got.tolist())) == want and len(want) > 1  # in order: seeded deals depend on it
    assert count_fitting_tuples([layout.comp.pattern_masks[s] for s in layout.patterned]) == len(fitting)


def test_the_refusal_counts_the_fitting_tuples():
    """Past MAX_CELLS the tuples are refused before they are made; the
    message gives their number, here counted by brute force over pairs."""
    from truedeal.listing import TooWide
    from truedeal.listing.cells import MAX_CELLS, _fitting_pairs

    rng = np.random.default_rng(5)
    sums = PATTERNS[rng.integers(0, len(PATTERNS), 4000)] + PATTERNS[rng.integers(0, len(PATTERNS), 4000)]
    sums = sums[(sums <= 13).all(axis=1)]
    lengths = PATTERNS[rng.integers(0, len(PATTERNS), 300)]
    fit = ((sums[:, None, :] + lengths[None]) <= 13).all(axis=2)
    i, j = _fitting_pairs(sums, lengths)
    assert np.array_equal(np.stack([i, j]), np.stack(np.nonzero(fit)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("truedeal.listing.cells.MAX_CELLS", int(fit.sum()) - 1)
        with pytest.raises(TooWide, match=f"\\({int(fit.sum()):,}\\)"):
            _fitting_pairs(sums, lengths)
    assert MAX_CELLS > fit.sum()


@pytest.mark.parametrize("name", sorted(SPECS))
def test_suit_columns_are_the_distinct_rows_in_sorted_order(name):
    layout = _layout(SPECS[name])
    cells = enumerate_cells(layout.comp, layout)
    columns, cell_cols = suit_columns(cells, layout)
    profiles = [suit_profile(layout, k) for k in range(4)]
    rows = [(profiles.index(profiles[s]), *(int(PATTERNS[p, s]) for p in cell)) for cell in cells.tolist() for s in range(4)]
    uniq, inv = np.unique(np.array(rows), axis=0, return_inverse=True)
    assert columns == [tuple(int(x) for x in r) for r in uniq]
    assert np.array_equal(cell_cols, inv.reshape(len(cells), 4))


def test_too_many_tuples_are_refused_every_time_and_found_out_once():
    """Relaxed plans of one script ask again for the same seats' tuples: a
    refusal is kept as well as a result (the same TooWide, not recomputed)."""
    from truedeal.listing import TooWide
    from truedeal.listing.cells import _REFUSED, _fitting_tuples

    wide = "any 4333 + any 4432 + any 5332 + any 5422 + any 5431 + any 6322 + any 6331 + any 6421 + any 5521 + any 4441"
    layout = _layout({seat: {"shape": wide + " + any 7222 + any 7321"} for seat in ("north", "east", "south")})
    _fitting_tuples.cache_clear()
    _REFUSED.clear()
    messages = []
    for _ in range(2):
        with pytest.raises(TooWide, match="too many pattern combinations") as exc:
            enumerate_cells(layout.comp, layout)
        messages.append(str(exc.value))
    assert messages[0] == messages[1]
    info = _fitting_tuples.cache_info()
    assert (info.misses, info.hits) == (1, 0)  # the second refusal came from _REFUSED
    assert list(_REFUSED.values()) == [messages[0]]
