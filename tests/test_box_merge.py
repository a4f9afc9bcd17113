"""``compile._merge_boxes`` merges in the order of the plain pair loop.

The box list feeds the seeded draws, so a faster merge must give the same
boxes in the same order: checked against the loop written out plainly, on
random grids of accepted cells in one to four dimensions."""

from __future__ import annotations

import itertools
import random

import pytest

from truedeal.constraints.compile import _merge_boxes


def _plain(boxes: list) -> list:
    """The first mergeable pair in list order, both dropped, the merge appended; until none."""
    while True:
        for i, j in itertools.combinations(range(len(boxes)), 2):
            (lo1, hi1), (lo2, hi2) = boxes[i], boxes[j]
            diff = [d for d in range(len(lo1)) if (lo1[d], hi1[d]) != (lo2[d], hi2[d])]
            if len(diff) == 1 and (hi1[diff[0]] + 1 == lo2[diff[0]] or hi2[diff[0]] + 1 == lo1[diff[0]]):
                d = diff[0]
                lo = tuple(min(a, b) if k == d else a for k, (a, b) in enumerate(zip(lo1, lo2)))
                hi = tuple(max(a, b) if k == d else a for k, (a, b) in enumerate(zip(hi1, hi2)))
                boxes = [b for k, b in enumerate(boxes) if k not in (i, j)] + [(lo, hi)]
                break
        else:
            return sorted(boxes)


@pytest.mark.parametrize("seed", range(3))
def test_merges_are_those_of_the_plain_loop(seed):
    rng = random.Random(seed)
    for _ in range(25):
        dims = rng.randint(1, 4)
        cuts = [[0, *sorted(rng.sample(range(1, 20), rng.randint(1, 4))), 25] for _ in range(dims)]
        cells = [c for c in itertools.product(*[range(len(c) - 1) for c in cuts]) if rng.random() < rng.choice([0.3, 0.6, 0.9])]
        if rng.random() < 0.5:
            rng.shuffle(cells)
        boxes = [(tuple(cuts[d][c[d]] for d in range(dims)), tuple(cuts[d][c[d] + 1] - 1 for d in range(dims))) for c in cells]
        assert _merge_boxes(list(boxes)) == _plain(list(boxes))
