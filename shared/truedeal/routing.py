"""Stream v3's draws through a :class:`~truedeal.shards.ShardedListing`.

A chunk's stream first draws, for each deal, its shard, as level 0 is drawn
(:class:`~truedeal.sampling.WideCategorical` over the shards' totals: an exact
integer below the listing's total, located in their cumulative sums).  It then
reads one 32-byte key per shard (all :data:`~truedeal.shards.SHARDS` of them,
whichever deals they get), and shard ``k`` draws its deals, in chunk order,
from the stream keyed by key ``k`` (``SeededBits(key, 0, "v3")``), through its
own listing.  Each deal is in shard ``k`` with probability ``T_k / T`` and then
uniform among the shard's deals, independently of the others: uniform.

So a process that holds some shards draws their deals of a chunk, and where
they go in it, from the chunk's stream and the shards' totals alone
(:meth:`RoutedSampler.draw_part`); the parts of a chunk put together are the
deals one process draws (:meth:`RoutedSampler.draw`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .listing import Listing
from .randomness import CHUNK_DEALS, Rng, SeededBits, chunk_rng
from .sampling import Sampler, WideCategorical
from .shards import SHARDS, ShardedListing

#: Bytes of each shard's key.
KEY_BYTES = 32


def route(totals: WideCategorical, n: int, rng: Rng) -> tuple[np.ndarray, bytes]:
    """The first draws of a chunk of ``n`` deals: each deal's shard, and the shards' keys."""
    return totals.draw(n, rng), rng.bits.read(KEY_BYTES * SHARDS)


def shard_stream(keys: bytes, k: int) -> Rng:
    """Shard ``k``'s stream in a chunk whose keys are ``keys``."""
    return Rng(SeededBits(keys[KEY_BYTES * k : KEY_BYTES * (k + 1)], 0, "v3"))


def chunk_shards(totals: list[int], seed: str, index: int, size: int) -> np.ndarray:
    """The shard of each of the first ``size`` deals of seeded chunk ``index``,
    from the shards' totals alone: the rows of a shard are those that a
    process holding it draws (:meth:`~truedeal.engine.Plan.numbered_part`)."""
    return WideCategorical(totals).draw(CHUNK_DEALS, chunk_rng(seed, index, "v3"))[:size]


class RoutedSampler:
    """Draws the deals of a chunk shard by shard.  Build once, draw many times."""

    def __init__(self, listing: ShardedListing) -> None:
        if listing.total == 0:
            raise ValueError("no deal satisfies this spec")
        self.listing = listing
        self.route = WideCategorical(listing.totals)
        self._samplers: dict[int, object] = {}

    def draw(self, n: int, rng: Rng) -> np.ndarray:
        """``n`` uniform deals as an ``(n, 52)`` uint8 owners array (every shard they fall in must be held)."""
        rows, owners = self.draw_part(n, rng, range(SHARDS))
        out = np.empty((n, 52), np.uint8)
        out[rows] = owners
        return out

    def draw_part(self, n: int, rng: Rng, shards: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
        """Of the ``n`` deals that :meth:`draw` makes from ``rng``, those in
        ``shards``: their rows (ascending) and their owners arrays."""
        shard, keys = route(self.route, n, rng)
        rows, parts = [], []
        for k in sorted(set(shards)):
            mine = np.nonzero(shard == k)[0]
            if len(mine):
                rows.append(mine)
                parts.append(self._sampler(k).draw(len(mine), shard_stream(keys, k)))
        if not rows:
            return np.zeros(0, np.int64), np.zeros((0, 52), np.uint8)
        rows_all = np.concatenate(rows)
        order = np.argsort(rows_all, kind="stable")
        return rows_all[order], np.concatenate(parts)[order]

    def _sampler(self, k: int):
        if k not in self._samplers:
            shard = self.listing.shards.get(k)
            if shard is None:
                raise ValueError(f"shard {k} is not held here (held: {sorted(self.listing.shards)})")
            self._samplers[k] = Sampler(shard) if isinstance(shard, Listing) else shard.make_sampler()
        return self._samplers[k]
