"""An exact listing suit by suit, for seats that read honours and no lengths.

"North 15-17, South 8-9, and neither opponent holds two of the top four in
any suit": four seats read their honours, and the opponents read them suit
by suit.  Both other listings of seats without patterns are past their
reach: by rank counts (:mod:`truedeal.rank_counts`) the four aces are alike
only when every feature weighs them alike, and the factored listing carries
every seat's honour counts per suit pair (1.26e9 feature states here).

Here a DP over the suits carries, after each suit, every form's value
(capped as the compiler sized it: clamped, or dropped past its cap) and how
many tracked cards each constrained seat holds.  A suit's **step** gives each
of its tracked cards to a constrained seat, or to the unconstrained seats
when there are some.  The spot cards fill each constrained hand to 13 at the
end (:func:`~truedeal.rank_counts.spot_ways`), so a final state's weight,
its ways times its spot ways, is exact.

A draw picks a final state in proportion to its weight, then walks back
suit by suit: among the (state, step) pairs that lead to the state it holds,
one in proportion to the ways into that state.  Each sequence of steps that
ends in the final state is then equally likely; the tracked cards go as the
steps say and the spot cards uniformly, so every deal that fits is equally
likely.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from math import prod

import numpy as np

from .arrays import unique_inverse
from .cards import card
from .constraints.compile import Compiled, evaluate3
from .fill import deal_open
from .listing.layout import TooWide
from .randomness import Rng
from .rank_counts import _OPEN, _Layout, deal_free_seats, spot_ways

#: Numbers of one step's table made at a time (states x a suit's ways to
#: place its tracked cards x the state's length, int32): 8M is 32 MB.
CHUNK_NUMBERS = 8_000_000
#: (state, way) pairs that one step may keep, 24 bytes each; past it, too wide.
MAX_STEP_PAIRS = 3_000_000


def applicable(comp: Compiled) -> bool:
    """No patterns, every feature a non-negative point scale of one seat
    (HCP, controls, top-N, cards held; whole hand or some suits), and ways
    per suit whose product fits an int64.  A predealt card is a tracked card
    with one way to place it (its seat)."""
    if comp.patterned or comp.shapes or comp.dead or comp.filters or not comp.exact or not comp.rank_seats:
        return False
    if any(t.fn.kind != "weights" or t.coef <= 0 or min(t.fn.weights) < 0 for f in comp.forms for t in f.terms):
        return False
    parts = len(comp.rank_seats) + bool(comp.free)
    return prod(parts ** len(t) for t in comp.tracked) < 1 << 62


@dataclass
class _Step:
    """One suit's ways to place its tracked cards: ``part[i, j]`` takes the
    j-th tracked card (a constrained seat's index, or the unconstrained
    seats' after them), adding ``add[i]`` to the state."""

    cards: np.ndarray  # (t,) the suit's tracked cards
    part: np.ndarray  # (m, t)
    add: np.ndarray  # (m, forms + seats)


@dataclass
class _Level:
    """The (previous state, step) pairs into each state after one suit,
    grouped by that state, with the running sum of the previous states' ways."""

    prev: np.ndarray
    step: np.ndarray
    cum: np.ndarray  # running sum of ways over the pairs, in group order
    start: np.ndarray  # (states,) the running sum before each state's group
    ways: np.ndarray  # (states,) the ways into each state: its group's sum


class HonoursBySuitListing:
    """The exact listing of a :class:`Compiled` that :func:`applicable` accepts."""

    def __init__(self, comp: Compiled) -> None:
        self.comp = comp
        self.seats = comp.rank_seats
        self.layout = _Layout(comp.free)
        parts = len(self.seats) + bool(comp.free)
        self.steps = [_step(comp, k, parts) for k in range(4)]
        states, ways = np.zeros((1, len(comp.forms) + len(self.seats)), np.int32), np.ones(1, np.int64)
        self.levels: list[_Level] = []
        settled, radix = _settled(comp), np.array([f.dim for f in comp.forms] + [14] * len(self.seats), np.int64)
        if float(np.prod(radix.astype(float))) >= 2.0**62:
            raise TooWide(f"honours by suit: {float(np.prod(radix.astype(float))):.3g} states")
        for step in self.steps:
            states, ways, level = _advance(comp, states, ways, step, settled, radix)
            self.levels.append(level)
        counts = states[:, len(comp.forms):]  # at most 13 each: the steps drop more
        fits = self._fits(states)
        spots = 52 - sum(len(s.cards) for s in self.steps)
        need = np.insert(13 - counts, 0, spots, axis=1)
        weights = [w * g if f else 0 for w, g, f in zip(ways.tolist(), spot_ways(need, bool(comp.free)), fits.tolist())]
        self.final = np.flatnonzero(np.array([w > 0 for w in weights], bool))
        self.e_weight = [weights[i] for i in self.final.tolist()]
        self.counts = counts[self.final]
        self.total = sum(self.e_weight)
        self.cases = int(ways[self.final].sum())  # placements of the tracked cards
        self.cells = np.zeros((1, 0), np.int64)

    @property
    def deals(self) -> int:
        return self.total * self.layout.free_ways()

    def _fits(self, states: np.ndarray) -> np.ndarray:
        leaves = {("atom", i): atom.holds(states[:, atom.form] if atom.form is not None else 0, 0).astype(np.int8)
                  for i, atom in enumerate(self.comp.atoms)}
        return evaluate3(self.comp.tree, leaves, len(states)) == 1

    def make_sampler(self) -> HonoursBySuitSampler:
        return HonoursBySuitSampler(self)


def _step(comp: Compiled, suit: int, parts: int) -> _Step:
    ranks = comp.tracked[suit]
    seats = comp.rank_seats
    choices = [[seats.index(comp.forced[suit, r])] if (suit, r) in comp.forced else range(parts) for r in ranks]
    part = np.array(list(itertools.product(*choices)), np.int64).reshape(-1, len(ranks))
    add = np.zeros((len(part), len(comp.forms) + len(seats)), np.int32)
    for i, row in enumerate(part.tolist()):
        held = {s: frozenset(r for r, p in zip(ranks, row) if p == j) for j, s in enumerate(seats)}
        for f, form in enumerate(comp.forms):
            add[i, f] = sum(t.value(suit, 0, held[t.seat]) for t in form.terms)
        add[i, len(comp.forms):] = [row.count(j) for j in range(len(seats))]
    return _Step(np.array([card(r, suit) for r in ranks], np.int64), part, add)


def _settled(comp: Compiled) -> dict[int, np.ndarray]:
    """For each form of one suit, each value's stand-in: the least value at
    which its atoms hold as they do at that value.  Once its suit is placed
    such a form no longer changes, so the state keeps only what its atoms
    see (``top4(east, clubs) < 2``: 0 for 0 and 1; two calm opponents hold
    16x fewer states)."""
    out = {}
    for f, form in enumerate(comp.forms):
        suits = {t.suits for t in form.terms}
        if len(suits) == 1 and len(next(iter(suits))) == 1 and not form.clamp:
            atoms = [a for a in comp.atoms if a.form == f]
            seen: dict[tuple, int] = {}
            out[f] = np.array([seen.setdefault(tuple(bool(a.holds(v, 0)) for a in atoms), v) for v in range(form.dim)], np.int32)
    return out


def _advance(comp: Compiled, states: np.ndarray, ways: np.ndarray, step: _Step, settled: dict[int, np.ndarray],
             radix: np.ndarray) -> tuple[np.ndarray, np.ndarray, _Level]:
    """The states after one more suit, their ways, and the pairs into each
    (``settled``: the stand-ins of forms of one suit, see :func:`_settled`).
    A state is one number here, its coordinates in ``radix``; the table of
    states plus ways is made a slice of states at a time."""
    stride = np.append(np.cumprod(radix[::-1])[::-1][1:], 1)
    per = max(1, CHUNK_NUMBERS // (len(step.add) * states.shape[1]))
    keys, prev, chosen = [], [], []
    for lo in range(0, len(states), per):
        p, c, rows = _step_rows(comp, states[lo : lo + per], step, settled)
        keys.append(rows @ stride)
        prev.append(p + lo)
        chosen.append(c)
        if sum(map(len, prev)) > MAX_STEP_PAIRS:
            raise TooWide(f"honours by suit: more than {MAX_STEP_PAIRS:,} (state, way) pairs in a suit")
    none = [np.zeros(0, np.int64)]  # no state left (no deal fits): every list empty
    distinct, after = unique_inverse(np.concatenate(keys or none))
    pairs_prev, pairs_step = np.concatenate(prev or none), np.concatenate(chosen or none)
    order = np.argsort(after, kind="stable")
    cum = np.cumsum(ways[pairs_prev[order]])
    start = np.concatenate([[0], cum])[np.searchsorted(after[order], np.arange(len(distinct)), "left")]
    new_ways = np.diff(np.append(start, cum[-1])) if len(cum) else np.zeros(0, np.int64)
    new_states = (distinct[:, None] // stride % radix).astype(np.int32)
    return new_states, new_ways, _Level(pairs_prev[order], pairs_step[order], cum, start, new_ways)


def _step_rows(comp: Compiled, states: np.ndarray, step: _Step, settled: dict[int, np.ndarray]):
    """The (state, way) pairs that fit, as indices, and the states they make."""
    rows = states[:, None, :] + step.add[None, :, :]
    ok = (rows[:, :, len(comp.forms):] <= 13).all(axis=2)
    for f, form in enumerate(comp.forms):
        if form.clamp:
            np.minimum(rows[:, :, f], form.dim - 1, out=rows[:, :, f])
        else:
            ok &= rows[:, :, f] < form.dim
    for f, stand_in in settled.items():
        rows[:, :, f] = stand_in[np.minimum(rows[:, :, f], len(stand_in) - 1)]  # past the size: dropped above
    p, c = np.nonzero(ok)
    return p, c, rows[p, c]


class HonoursBySuitSampler:
    """Uniform deals from a :class:`HonoursBySuitListing`."""

    def __init__(self, listing: HonoursBySuitListing) -> None:
        from .sampling import WideCategorical

        self.listing = listing
        self.pick = WideCategorical(listing.e_weight)

    def draw(self, n: int, rng: Rng) -> np.ndarray:
        L = self.listing
        picked = self.pick.draw(n, rng)
        state = L.final[picked]
        owners = np.full((n, 52), _OPEN, dtype=np.uint8)
        dest = np.array([*L.seats, _OPEN], np.uint8)  # the unconstrained seats' tracked cards stay open for them
        for step, level in zip(reversed(L.steps), reversed(L.levels)):
            at = np.searchsorted(level.cum, level.start[state] + rng.below(level.ways[state]), "right")
            owners[:, step.cards] = dest[step.part[level.step[at]]]
            state = level.prev[at]
        spots = np.setdiff1d(np.arange(52), np.concatenate([s.cards for s in L.steps]))
        deal_open(owners, rng, spots, 13 - L.counts[picked], np.array(L.seats, np.uint8))
        deal_free_seats(owners, rng, L.comp.free)
        return owners

