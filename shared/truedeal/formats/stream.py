"""Streaming machinery shared by the writers: batches in, board records out.

A batch is a pair ``(owners, numbers)`` with ``owners`` a ``(k, 52)`` uint8
array and ``numbers`` a sequence of ``k`` Python ints, a ``(k, 2)`` uint64
array of deal-number limbs ``[hi, lo]`` (as :func:`truedeal.dealnumber.encode_batch`
returns them; writers that print numbers format these in the compiled kernel)
or ``None``.  ``owners`` may be ``None`` when ``numbers`` are limbs: the
deals known only by their numbers (stream v2's), for the writers that print
numbers alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeGuard

import numpy as np

from ..cards import SEATS
from .rotation import _check_board

#: One batch handed to a writer: ``(owners (k, 52) uint8 or None, numbers)``.
Batch = tuple[np.ndarray | None, Sequence[int] | None]

#: Most boards rendered into a single yielded chunk.
CHUNK_BOARDS = 256


def _boards(batches: Iterable[Batch], first_board: int) -> Iterator[tuple[int, list[int], int | None]]:
    """Yield ``(board, seats list, number or None)`` for every deal, validating batches."""
    for b, owners, nums in _batches(batches, first_board):
        if _is_limbs(nums):
            from ..dealnumber import limbs_to_ints

            nums = limbs_to_ints(nums)
        for d, seats in enumerate(owners.tolist()):
            yield b + d, seats, (None if nums is None else int(nums[d]))


def _is_limbs(nums) -> TypeGuard[np.ndarray]:
    """Are these numbers a (k, 2) limbs array (rather than ints or None)?"""
    return isinstance(nums, np.ndarray) and nums.ndim == 2


def _batches(batches: Iterable[Batch], first_board: int, numbers_only: bool = False) -> Iterator[tuple[int, Any, Any]]:
    """Yield ``(first board, owners, numbers)`` for every batch, validated as
    :func:`_boards` validates them (for writers that format a batch at once).
    A writer of ``numbers_only`` takes batches whose owners are None."""
    b = _check_board(first_board)
    for bi, batch in enumerate(batches):
        try:
            owners, nums = batch
        except (TypeError, ValueError):
            raise ValueError(f"batch {bi}: expected a pair (owners, numbers)") from None
        if owners is None:
            if not (numbers_only and _is_limbs(nums)):
                raise ValueError(f"batch {bi}: this format needs the deals' cards, not only their numbers")
            yield b, None, nums  # the limbs are checked when formatted
            b += len(nums)
            continue
        owners = np.asarray(owners)
        if owners.ndim != 2 or owners.shape[1] != 52:
            raise ValueError(f"batch {bi}: owners must have shape (k, 52), got {owners.shape}")
        if owners.dtype.kind not in "iu":
            raise ValueError(f"batch {bi}: owners must be integer, got dtype {owners.dtype}")
        k = owners.shape[0]
        if nums is not None and len(nums) != k:
            raise ValueError(f"batch {bi}: {k} deals but {len(nums)} numbers")
        if k and not _all_deals(owners):  # the detailed checks, for the message
            if owners.min() < 0 or owners.max() > 3:
                raise ValueError(f"batch {bi}: seat values must be 0..3")
            counts = np.stack([(owners == s).sum(axis=1) for s in range(4)], axis=1)
            bad = np.flatnonzero((counts != 13).any(axis=1))
            if bad.size:
                d = int(bad[0])
                raise ValueError(
                    f"batch {bi}, deal {d} (board {b + d}): each seat must hold 13 cards, got "
                    + ", ".join(f"{SEATS[s]}={int(counts[d, s])}" for s in range(4))
                )
        yield b, owners, nums
        b += k


def _all_deals(owners: np.ndarray) -> bool:
    """Quick check (compiled) that every row of a uint8 batch is a deal (seats
    0..3, 13 each); False also for other dtypes (then the caller checks in detail)."""
    from .. import kernel

    return owners.dtype == np.uint8 and kernel.all_deals(owners)


def _chunked(records: Iterator[str]) -> Iterator[str]:
    """Join records into chunks of at most CHUNK_BOARDS records."""
    buf: list[str] = []
    for r in records:
        buf.append(r)
        if len(buf) >= CHUNK_BOARDS:
            yield "".join(buf)
            buf = []
    if buf:
        yield "".join(buf)
