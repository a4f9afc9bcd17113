"""A session's boards: deals from the derivation, dealer, vulnerability,
rotation and deal numbers, as :class:`~truedeal.formats.records.HandRecord`.

Board ``first + t`` of a session is made by spec ``order[t]``
(:func:`.derive.board_order`); it takes the next unused deal of that spec's
stream (``Plan.deals(q, seed=stream_seed(M, "spec/<i>"))``, deals in stream
order).  So each spec's boards are exactly uniform over that spec, and the
board number does not tell which spec made it.  Nothing depends on worker
count, retries or timing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dealnumber import encode_batch, limbs_to_ints
from ..formats.records import HandRecord
from ..formats.rotation import Rotation
from .derive import board_order, session_master, stream_seed
from .specs import SpecSource


@dataclass(frozen=True)
class SessionPlan:
    """What :func:`session_boards` needs besides the key (all from the set)."""

    name: str
    first: int
    last: int
    sources: tuple[SpecSource, ...]
    quotas: tuple[int, ...]
    rotation: Rotation
    rotate_seats: tuple[int | None, ...]  # per spec: seat moved to the dealer, or None


def _spec_deals(plan, n: int, seed: bytes) -> np.ndarray:
    return np.concatenate(list(plan.deals(n, seed=seed)))


def session_boards(sp: SessionPlan, key: bytes, public: str, plans: list) -> list[HandRecord]:
    """The boards of one session (no double dummy yet).  ``plans[i]`` is the
    built plan of ``sp.sources[i]``."""
    master = session_master(key, public, sp.name, sp.first, sp.last)
    order = board_order(master, list(sp.quotas))
    deals = [_spec_deals(plans[i], q, stream_seed(master, f"spec/{i}")) for i, q in enumerate(sp.quotas)]
    used = [0] * len(sp.quotas)
    rows, meta = [], []
    for t, i in enumerate(order):
        board = sp.first + t
        dealer = sp.rotation.dealer_of(board)
        owners = deals[i][used[i]]
        used[i] += 1
        rotated = sp.rotate_seats[i]
        if rotated is not None:  # seat s's hand goes to seat s + shift
            owners = ((owners.astype(np.int16) + (dealer - rotated)) % 4).astype(np.uint8)
        rows.append(owners)
        vul = sp.rotation.vulnerability_of(board)
        meta.append((board, dealer, vul, sp.sources[i].label))
    numbers = limbs_to_ints(encode_batch(np.stack(rows)))
    return [HandRecord(b, d, v, tuple(int(x) for x in row), int(num), label)
            for (b, d, v, label), row, num in zip(meta, rows, numbers)]
