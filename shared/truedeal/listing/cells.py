"""The cells of a listing (one pattern per patterned seat), their suit
columns, the width check made before any table is built, and the cut of
the cells into slices."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from ..arrays import distinct, unique_inverse
from ..patterns import PATTERN_BY_SHD, PATTERNS
from .layout import MAX_CELLS, MAX_FEATURE_CELLS, Layout, TooWide, make_layout
from .options import suit_profile


def enumerate_cells(spec_like, layout: Layout) -> np.ndarray:
    """All pattern tuples (one pattern index per patterned seat) whose suit
    lengths fit in 13 cards per suit and for which the condition can hold.
    Shape ``(n_cells, n_patterned)``."""
    masks = tuple(layout.comp.pattern_masks[seat].tobytes() for seat in layout.patterned)
    if masks in _REFUSED:
        raise TooWide(_REFUSED[masks])
    try:
        cells = _fitting_tuples(masks).astype(np.int64)
    except TooWide as exc:
        if len(_REFUSED) >= 64:
            _REFUSED.clear()
        _REFUSED[masks] = str(exc)
        raise
    return cells[layout.comp.cell_possible(cells)]


#: Why the tuples of these seats' masks were refused: relaxed plans of one
#: script ask again for the same seats (Help Suit Game Try: 18 times, 12 of
#: them too many, 0.3-0.9 s each to find out).  Small: kept apart from the
#: tuples themselves (up to 16 MB each).
_REFUSED: dict[tuple[bytes, ...], str] = {}


@functools.lru_cache(maxsize=8)
def _fitting_tuples(masks: tuple[bytes, ...]) -> np.ndarray:
    """The pattern tuples of seats allowed ``masks`` (each seat's bool mask
    over PATTERNS, as bytes) that fit in 13 cards per suit (TooWide past
    :data:`MAX_CELLS`), as int16 (pattern indices: 16 MB at most).  Kept:
    relaxed plans of one script ask again and again for the same seats'
    tuples, from several sets of seats in turn (Open In Fourth Seat asked 19
    times for 9 sets, 5 times for one: two kept, each was made again)."""
    cells = np.zeros((1, 0), dtype=np.int64)
    sums = np.zeros((1, 4), dtype=np.int64)
    for k, mask in enumerate(masks):
        allowed = np.frombuffer(mask, dtype=bool)
        if len(masks) == 4 and k == 3:
            cells = _complete_cells(cells, sums, allowed)
            break
        choices = np.nonzero(allowed)[0]
        if len(cells) * len(choices) > 50 * MAX_CELLS:
            raise TooWide(f"too many pattern combinations ({len(cells) * len(choices):,}) to list exactly")
        i, j = _fitting_pairs(sums, PATTERNS[choices])
        cells = np.concatenate([cells[i], choices[j][:, None]], axis=1)
        sums = sums[i] + PATTERNS[choices[j]]
    cells = cells.astype(np.int16)
    cells.setflags(write=False)
    return cells


def count_fitting_tuples(masks: Sequence[np.ndarray]) -> int:
    """How many pattern tuples :func:`_fitting_tuples` would make of seats
    allowed ``masks`` (bool over PATTERNS), counted without making them: a
    DP over the seats whose state is the spade, heart and diamond sums so
    far (the clubs are what is left).  Milliseconds where the tuples take a
    second: four seats of any 5xxx have 513,288 tuples of 592,240,896 in
    the product of their patterns."""
    ways = np.zeros((14, 14, 14), np.int64)
    ways[0, 0, 0] = 1
    placed = np.add.outer(np.add.outer(_LENGTHS, _LENGTHS), _LENGTHS)  # spades + hearts + diamonds placed
    for k, allowed in enumerate(masks):
        if k == 3:  # the last seat holds the rest of each suit
            rest = PATTERN_BY_SHD[13 - _LENGTHS[:, None, None], 13 - _LENGTHS[None, :, None], 13 - _LENGTHS[None, None, :]]
            return int(ways[(rest >= 0) & allowed[rest]].sum())
        more = np.zeros_like(ways)
        for s, h, d, _ in PATTERNS[np.nonzero(allowed)[0]]:
            more[s:, h:, d:] += ways[:14 - s, :14 - h, :14 - d]
        ways = np.where(placed >= 13 * k, more, 0)  # the clubs placed, 13 (k + 1) - placed, fit in 13
    return int(ways.sum())


_LENGTHS = np.arange(14)


def _fitting_pairs(sums: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(i, j)`` for every row ``i`` of ``sums`` and ``j`` of ``lengths``
    whose suit sums stay within 13, in row-major order (``np.nonzero`` of
    the fit matrix); TooWide past :data:`MAX_CELLS` pairs, before they are
    made.  Rows share a few thousand distinct sums at most: the fit is
    tested once per distinct sum, and the pairs cost their number (the
    whole matrix took most of a four-seat plan's time)."""
    key = ((sums[:, 0] * 14 + sums[:, 1]) * 14 + sums[:, 2]) * 14 + sums[:, 3]
    present = np.zeros(14**4, bool)
    present[key] = True
    found = np.nonzero(present)[0]
    rank = np.zeros(14**4, np.int64)
    rank[found] = np.arange(len(found))
    group = rank[key]
    fits = ((sums[np.unique(group, return_index=True)[1]][:, None, :] + lengths[None]) <= 13).all(axis=2)
    per_group = fits.sum(axis=1)
    g_start = np.concatenate([[0], np.cumsum(per_group)])
    fitting = np.nonzero(fits)[1]  # each group's fitting j, group after group
    count = per_group[group]
    if count.sum() > MAX_CELLS:  # refused before the pairs are made
        raise TooWide(f"too many pattern combinations ({count.sum():,}) to list exactly")
    i = np.repeat(np.arange(len(sums)), count)
    within = np.arange(len(i)) - np.repeat(np.cumsum(count) - count, count)
    return i, fitting[g_start[group[i]] + within]


def _complete_cells(cells: np.ndarray, sums: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Cells of four patterned seats from the first three's: the last seat
    holds the rest of each suit, so its pattern is forced (no cross product);
    ``allowed``: its mask over PATTERNS."""
    rest = 13 - sums.astype(np.int64)
    last = PATTERN_BY_SHD[rest[:, 0], rest[:, 1], rest[:, 2]]
    ok = allowed[last]
    return np.concatenate([cells[ok], last[ok][:, None]], axis=1)


def suit_columns(cells: np.ndarray, layout: Layout):
    """Distinct suit columns ``(profile suit, patterned lengths...)`` and each
    cell's column per suit.  Suits of one profile (:func:`suit_profile`) share
    columns, named by the first suit of that profile."""
    n = len(cells)
    if n == 0:
        return [], np.zeros((0, 4), np.int64)
    profiles = [suit_profile(layout, k) for k in range(4)]
    first = np.array([profiles.index(p) for p in profiles], dtype=np.int64)
    # A column (profile, lengths...) as base-16 digits: keys sort as the
    # tuples do, and a table of 16**(seats + 1) flags finds the distinct ones
    # in one pass, where a sort of millions of keys took most of the time.
    digits = len(layout.patterned) + 1
    keys = np.broadcast_to(first << 4 * (digits - 1), (n, 4)).copy()
    for i in range(len(layout.patterned)):
        keys += PATTERNS[cells[:, i]] << 4 * (digits - 2 - i)
    present = np.zeros(16**digits, bool)
    present[keys] = True
    found = np.nonzero(present)[0]
    rank = np.zeros(16**digits, np.int64)
    rank[found] = np.arange(len(found))
    shifts = 4 * np.arange(digits - 1, -1, -1)
    return [tuple(int(x) for x in (k >> shifts) & 15) for k in found], rank[keys]


def pair_keys(cell_cols: np.ndarray, n_columns: int) -> np.ndarray:
    """Each cell's (S,H) and (D,C) column pairs as one key, (2, n_cells)."""
    return np.stack([cell_cols[:, 0] * n_columns + cell_cols[:, 1], cell_cols[:, 2] * n_columns + cell_cols[:, 3]])


def check_width(layout: Layout, n_columns: int, cell_cols: np.ndarray, max_width: int = MAX_FEATURE_CELLS) -> None:
    """Refuse, before any option is built, tables past ``max_width`` entries."""
    if n_columns * layout.zsize > max_width:
        raise TooWide(f"feature tables too large ({n_columns:,} suit columns x {layout.zsize:,} feature states)")
    n_pairs = len(distinct(pair_keys(cell_cols, n_columns)))
    if n_pairs * layout.zsize > max_width:
        raise TooWide(f"suit-pair tables too large ({n_pairs:,} pairs x {layout.zsize:,} feature states)")


def checked_cells(spec_like, max_width: int = MAX_FEATURE_CELLS) -> tuple[Layout, np.ndarray, list, np.ndarray]:
    """The layout, the cells, their suit columns and each cell's column per
    suit, once the whole listing passes the width limits (else TooWide)."""
    layout = make_layout(spec_like)
    if layout.zsize > max_width:  # too wide for any number of columns: refuse before the cells
        raise TooWide(f"feature tables too large (at least 1 suit column x {layout.zsize:,} feature states)")
    cells = enumerate_cells(layout.comp, layout)
    columns, cell_cols = suit_columns(cells, layout)
    check_width(layout, len(columns), cell_cols, max_width)
    return layout, cells, columns, cell_cols


def slice_of_cells(layout: Layout, cells: np.ndarray, cell_cols: np.ndarray, n_columns: int, parts: int) -> np.ndarray:
    """The slice (0 to ``parts - 1``) of each cell.

    The level-0 fill makes one vectorised pass per (D,C) suit pair and cell
    signature, so a slice takes whole groups of cells that share both
    (contiguous cell ranges would split every group and cost twice as much):
    groups in key order, cut where the running cell count crosses each
    ``n * j / parts``.
    """
    if parts < 1:
        raise ValueError(f"at least one slice, got {parts}")
    if not len(cells):
        return np.zeros(0, np.int64)
    sig, _ = layout.comp.cell_signatures(cells)
    dc = pair_keys(cell_cols, n_columns)[1]
    _, group = unique_inverse(dc * (int(sig.max()) + 1) + sig)
    group = group.reshape(-1)
    sizes = np.bincount(group)
    before = np.cumsum(sizes) - sizes
    return (before * parts // len(cells))[group]
