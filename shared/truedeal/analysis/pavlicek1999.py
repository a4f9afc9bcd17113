"""Pavlicek's 1999 dealing method (article 7Z71, seed 001) -- a BIASED baseline.

Used only by ``truedeal stats --method pavlicek1999`` to show that the
statistics flag a sampler that is not uniform; never used for dealing.  The
article itself calls the method "theoretically flawed": it fixes each hand's
pattern first and its HCP second, from tables that ignore how the two
depend on each other.  Steps, as the article describes them:

1. **Patterns** of length-constrained hands, in a random order of hands.
   Each hand starts at its minimum lengths; its maxima are tightened by the
   13 cards of a hand and of a suit.  Forced slots are placed first (cards
   of a suit the later hands cannot absorb); each remaining "soft space" goes
   to a suit with relative probability ``RP = weight x available cards``,
   where ``weight`` is the suit's initial excess (max - min), kept constant
   while the hand has room in that suit.
2. **HCP goals**: each HCP range becomes one exact value, drawn with Telfer's
   one-hand table in rounded parts per million (0.0001 %), 31-37 weighted as
   one chance and split 4:1 from one value to the next.
3. **High cards**, all goal hands in tandem: a hand draws honours until it
   reaches its goal (a patterned hand picks the suit with ``RP = unfilled
   length x honours available``), returns random honours while above it,
   retries a few times, and if hands miss their goals each tosses back a few
   honours and the cycle repeats.
4. **Filling**, hands with HCP and shape first, then HCP, then shape, then
   none; HCP hands take spot cards only; a patterned hand fills suit by
   suit, others draw from every card still available (never from cards the
   later patterned hands need).

Where the article gives up ("they will exit with an error message") this
implementation redeals from step 1; that is noted, not hidden: it is one more
way the method differs from uniform dealing.
"""

from __future__ import annotations

import random
from functools import cache

import numpy as np

from ..cards import HCP_OF_RANK, SEAT_NAMES
from ..patterns import PATTERNS
from ..spec import Spec

#: Tandem cycles and per-hand attempts before a deal is started over.
CYCLES = 30
ATTEMPTS = 10
TOSS_BACK = 2
#: Consecutive failed deals after which the spec is declared too hard.
MAX_FAILURES = 10_000

_CARD_HCP = [HCP_OF_RANK[c // 4] if c < 16 else 0 for c in range(52)]


class CannotExpress(ValueError):
    """A spec outside what the 1999 method can express (one-line message)."""


@cache
def telfer_weights() -> tuple[int, ...]:
    """Telfer's one-hand HCP table in parts per million: 0..30, then 31-37 as one entry.

    Rounded from the exact law of one hand as the 1999 article's four-decimal
    percentages were; the 31-37 group counts as at least one part ("weighted as one chance").
    """
    from .distribution import hcp_table

    hands = hcp_table()
    total = int(sum(hands))
    weights = [round(int(hands[h]) * 1_000_000 / total) for h in range(31)]
    weights.append(max(1, round(int(sum(hands[31:])) * 1_000_000 / total)))
    return tuple(weights)


def _box(mask: np.ndarray, seat: int) -> tuple[list[int], list[int]]:
    """Min and max length per suit of a pattern mask, if the mask is exactly that box."""
    allowed = PATTERNS[mask]
    if not len(allowed):
        raise CannotExpress(f"{SEAT_NAMES[seat]}: no pattern fits")
    lo, hi = allowed.min(axis=0), allowed.max(axis=0)
    box = ((PATTERNS >= lo) & (PATTERNS <= hi)).all(axis=1)
    if not np.array_equal(box, mask):
        raise CannotExpress(
            f"the pavlicek1999 method takes suit-length ranges only; {SEAT_NAMES[seat]}'s shape is not a box of ranges"
        )
    return [int(x) for x in lo], [int(x) for x in hi]


class Pavlicek1999:
    """The 1999 sampler for one spec.  ``deals(n, seed)`` -> (n, 52) owners."""

    def __init__(self, spec: Spec) -> None:
        self.lo: dict[int, list[int]] = {}
        self.hi: dict[int, list[int]] = {}
        self.hcp: dict[int, tuple[int, int]] = {}
        for c in spec.constraints():
            if c.patterns is not None:
                self.lo[c.seat], self.hi[c.seat] = _box(c.patterns, c.seat)
            if c.hcp is not None:
                self.hcp[c.seat] = c.hcp
        self.failures = 0  # deals started over, over the sampler's life

    # ------------------------------------------------------------ step 1

    def _patterns(self, rng: random.Random) -> dict[int, list[int]] | None:
        seats = list(self.lo)
        cur = {s: list(self.lo[s]) for s in seats}
        hi = {}
        for s in seats:  # maxima forced by the 13 cards of a hand and of a suit
            hi[s] = [
                min(self.hi[s][u], 13 - (sum(self.lo[s]) - self.lo[s][u]), 13 - sum(self.lo[t][u] for t in seats if t != s))
                for u in range(4)
            ]
        weight = {s: [hi[s][u] - self.lo[s][u] for u in range(4)] for s in seats}
        rng.shuffle(seats)
        free_hands = 4 - len(seats)
        for k, s in enumerate(seats):
            avail = [13 - sum(cur[t][u] for t in cur) for u in range(4)]
            for u in range(4):  # forced slots: what the later hands cannot absorb
                room_later = sum(hi[t][u] - cur[t][u] for t in seats[k + 1 :]) + 13 * free_hands
                forced = max(0, avail[u] - room_later)
                if cur[s][u] + forced > hi[s][u]:
                    return None
                cur[s][u] += forced
                avail[u] -= forced
            soft = 13 - sum(cur[s])
            if soft < 0:
                return None
            while soft:
                rp = [
                    weight[s][u] * avail[u] if min(hi[s][u] - cur[s][u], soft, avail[u]) > 0 else 0
                    for u in range(4)
                ]
                if not sum(rp):
                    return None
                u = rng.choices(range(4), weights=rp)[0]
                cur[s][u] += 1
                avail[u] -= 1
                soft -= 1
        return cur

    # ------------------------------------------------------------ step 2

    def _goal(self, lo: int, hi: int, rng: random.Random) -> int | None:
        table = telfer_weights()
        values = list(range(lo, min(hi, 30) + 1))
        weights = [table[v] for v in values]
        if hi >= 31:
            values.append(-1)  # the 31-37 group
            weights.append(table[31])
        if not sum(weights):
            return None
        v = rng.choices(values, weights=weights)[0]
        if v >= 0:
            return v
        group = list(range(max(lo, 31), hi + 1))
        return rng.choices(group, weights=[4 ** (len(group) - i) for i in range(len(group))])[0]

    # ------------------------------------------------------------ step 3

    def _draw_honour(self, seat, pool, held, lengths, rng) -> int | None:
        if not pool:
            return None
        if lengths.get(seat) is None:
            return rng.choice(sorted(pool))
        in_suit = [[c for c in pool if c % 4 == u] for u in range(4)]
        unfilled = [lengths[seat][u] - sum(1 for c in held[seat] if c % 4 == u) for u in range(4)]
        rp = [max(unfilled[u], 0) * len(in_suit[u]) for u in range(4)]
        if not sum(rp):
            return None
        u = rng.choices(range(4), weights=rp)[0]
        return rng.choice(in_suit[u])

    def _reach(self, seat, goal, pool, held, lengths, rng) -> bool:
        """One hand's attempts at its goal: draw up to it, return random honours above it."""
        for _ in range(ATTEMPTS):
            while sum(_CARD_HCP[c] for c in held[seat]) < goal:
                c = self._draw_honour(seat, pool, held, lengths, rng)
                if c is None:
                    break
                pool.discard(c)
                held[seat].append(c)
            while sum(_CARD_HCP[c] for c in held[seat]) > goal:
                older = held[seat][:-1] or held[seat]  # the newest card is kept
                back = rng.choice(older)
                held[seat].remove(back)
                pool.add(back)
            if sum(_CARD_HCP[c] for c in held[seat]) == goal:
                return True
        return False

    def _honours(self, goals, lengths, rng) -> dict[int, list[int]] | None:
        pool = set(range(16))
        held: dict[int, list[int]] = {s: [] for s in range(4)}
        order = list(goals)
        rng.shuffle(order)
        for _ in range(CYCLES):
            hit = [self._reach(s, goals[s], pool, held, lengths, rng) for s in order]
            if all(hit):
                return held
            for s in order:  # the tandem cycle: everyone tosses a few back
                for c in rng.sample(held[s], min(TOSS_BACK, len(held[s]))):
                    held[s].remove(c)
                    pool.add(c)
        return None

    # ------------------------------------------------------------ step 4

    def _fill(self, held, lengths, rng) -> np.ndarray | None:
        owners = np.full(52, 255, dtype=np.uint8)
        rest = set(range(52))
        for s, cards in held.items():
            for c in cards:
                owners[c] = s
                rest.discard(c)
        group = lambda s: (s not in self.hcp) * 2 + (lengths.get(s) is None)  # noqa: E731
        order = sorted(range(4), key=group)
        for k, s in enumerate(order):
            spots_only = s in self.hcp
            have = [sum(1 for c in held[s] if c % 4 == u) for u in range(4)]
            if lengths.get(s) is not None:
                for u in range(4):
                    pool = [c for c in rest if c % 4 == u and not (spots_only and c < 16)]
                    need = lengths[s][u] - have[u]
                    if need < 0 or len(pool) < need:
                        return None
                    take = rng.sample(pool, need)
                    owners[take] = s
                    rest.difference_update(take)
                continue
            later = [t for t in order[k + 1 :] if lengths.get(t) is not None]
            reserve = [sum(lengths[t][u] - sum(1 for c in held[t] if c % 4 == u) for t in later) for u in range(4)]
            for _ in range(13 - len(held[s])):
                left = [sum(1 for c in rest if c % 4 == u) for u in range(4)]
                pool = [c for c in rest if left[c % 4] > reserve[c % 4] and not (spots_only and c < 16)]
                if not pool:
                    return None
                c = rng.choice(pool)
                owners[c] = s
                rest.discard(c)
        return owners if not rest else None

    # ------------------------------------------------------------ deals

    def deal(self, rng: random.Random) -> np.ndarray:
        """One deal; starts over when a step fails (see module doc)."""
        for _ in range(MAX_FAILURES):
            lengths = self._patterns(rng)
            if lengths is not None:
                goals = {s: self._goal(*r, rng) for s, r in self.hcp.items()}
                if None not in goals.values():
                    held = self._honours(goals, lengths, rng)
                    if held is not None:
                        owners = self._fill(held, lengths, rng)
                        if owners is not None:
                            return owners
            self.failures += 1
        raise CannotExpress(f"the pavlicek1999 method failed {MAX_FAILURES:,} times in a row on this spec")

    def deals(self, n: int, seed: str | None) -> np.ndarray:
        """``n`` deals as an (n, 52) owners array; ``seed`` makes them reproducible."""
        rng = random.Random(f"pavlicek1999/{seed}" if seed is not None else None)
        return np.stack([self.deal(rng) for _ in range(n)])

