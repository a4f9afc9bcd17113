"""The compiled kernel (``truedeal._kernel``) behind a numpy fallback.

Batch functions for the hot output path, each byte-identical on the compiled
and the numpy path (tests/test_kernel.py):

* :func:`format_numbers` - deal numbers as decimal lines (the ``numbers`` format);
* :func:`pbn_deal_strings` - PBN ``Deal`` values, one 70-byte line per deal;
* deal-number encode / decode live in :mod:`truedeal.dealnumber`
  (``encode_batch`` / ``decode_batch`` use the kernel when it is loaded);
* the sampler's hot path (``truedeal._sampler``, see :func:`sampler`): the
  integer draws of :class:`truedeal.randomness.Rng`, the categorical searches
  of :mod:`truedeal.sampling` and the deal of :mod:`truedeal.fill`, consuming
  the seeded stream byte for byte as their numpy forms do
  (tests/test_kernel_sampler.py);
* the seeded stream's SHAKE-256, eight blocks at once on AVX-512 or four
  on AVX2 (``truedeal._shake``, see :func:`shake`), the same bytes as hashlib's;
* the paired listing's draws (``truedeal._paired``, see :func:`paired`).

The kernel is built by ``pip install`` when a C compiler is present; it is
optional.  Without it (or with ``TRUEDEAL_NO_KERNEL=1`` in the environment,
which forces the numpy path, e.g. to test it) everything runs on numpy, and
:func:`note_if_missing` prints one line saying so.
"""

from __future__ import annotations

import importlib
import os
import sys
from contextlib import contextmanager
from functools import cache
from types import ModuleType

import numpy as np

from .cards import N_CARDS, RANKS, SEATS

__all__ = [
    "PBN_LEN",
    "native",
    "sampler",
    "shake",
    "paired",
    "numpy_only",
    "missing_reason",
    "note_if_missing",
    "format_numbers",
    "all_deals",
    "pbn_deal_strings",
    "pbn_games",
]

#: Bytes per deal in :func:`pbn_deal_strings`: "N:" + 4 x 16 + 3 spaces + "\n".
PBN_LEN = 70

_missing: str | None = None
_noted = False


@cache
def native() -> ModuleType | None:
    """The compiled module, or None (not built, or disabled by TRUEDEAL_NO_KERNEL)."""
    global _missing
    if os.environ.get("TRUEDEAL_NO_KERNEL", "") not in ("", "0"):
        _missing = "disabled by TRUEDEAL_NO_KERNEL"
        return None
    try:
        _kernel = importlib.import_module("truedeal._kernel")  # compiled: no type information
    except ImportError as exc:  # no compiler at install time, or a stale build
        _missing = f"not built ({exc})"
        return None
    return _kernel


_numpy_only = False


@cache
def _load_sampler() -> ModuleType | None:
    global _missing
    if native() is None:  # disabled, or the build has no compiler: the same reason
        return None
    try:
        _sampler = importlib.import_module("truedeal._sampler")
    except ImportError as exc:
        _missing = f"partly built (no sampler: {exc})"
        return None
    return _sampler


def sampler() -> ModuleType | None:
    """The compiled sampler module, or None: not built, disabled by
    TRUEDEAL_NO_KERNEL, or inside :func:`numpy_only`.  Callers then run their
    numpy reference code, which draws the same bytes into the same deals."""
    return None if _numpy_only else _load_sampler()


@cache
def _load_optional(name: str) -> ModuleType | None:
    """An optional compiled module beside the sampler (None when it is not built)."""
    if native() is None:
        return None
    try:
        return importlib.import_module(f"truedeal.{name}")
    except ImportError:  # the numpy or hashlib path gives the same results
        return None


def shake() -> ModuleType | None:
    """The compiled SHAKE-256 (``truedeal._shake``: eight blocks a pass on
    AVX-512F, else four on AVX2, chosen at run time; ``lanes()`` says which
    this CPU runs), or None: not built, neither AVX-512F nor AVX2 on this CPU
    (or not x86-64), or the numpy path forced as for :func:`sampler`.  Callers
    then use hashlib, which gives the same bytes."""
    module = None if _numpy_only else _load_optional("_shake")
    return module if module is not None and module.available() else None


def paired() -> ModuleType | None:
    """The compiled draws of :mod:`truedeal.paired_sampling` (``truedeal._paired``),
    or None as for :func:`sampler`; callers then run the same draws on numpy."""
    return None if _numpy_only else _load_optional("_paired")


@contextmanager
def numpy_only():
    """Run the block on the numpy reference path of the sampler (to compare
    the two in one process: tests and benchmarks).  Not thread-safe."""
    global _numpy_only
    saved, _numpy_only = _numpy_only, True
    try:
        yield
    finally:
        _numpy_only = saved


def missing_reason() -> str | None:
    """Why the kernel is not in use, or None when it is."""
    return None if native() is not None and _load_sampler() is not None else _missing


def note_if_missing() -> None:
    """Print one line on stderr, once per process, when the kernel is missing."""
    global _noted
    reason = missing_reason()
    if reason is not None and not _noted:
        _noted = True
        print(f"truedeal: note: compiled kernel {reason}; using the slower numpy path", file=sys.stderr)


# ---------------------------------------------------------------------------
# Deal numbers as text
# ---------------------------------------------------------------------------


def format_numbers(limbs) -> bytes:
    """Decimal deal numbers, one ``"\\n"``-terminated line each.

    ``limbs`` is an ``(n, 2)`` array of ``[hi, lo]`` (number = hi * 2**64 + lo),
    as returned by :func:`truedeal.dealnumber.encode_batch`.  Contract: every
    number < D, else ValueError.  Equal to
    ``"".join(f"{x}\\n" for x in limbs_to_ints(limbs)).encode()``.
    """
    from .dealnumber import _check_limbs, limbs_to_ints

    k = native()
    if k is not None and isinstance(limbs, np.ndarray) and limbs.dtype == np.uint64 and limbs.ndim == 2 and limbs.shape[1] == 2:
        try:  # the kernel checks the range itself; the numpy check below words its error
            return k.format_numbers(np.ascontiguousarray(limbs))
        except ValueError:
            pass
    a = np.ascontiguousarray(_check_limbs(limbs), dtype=np.uint64)
    if k is not None:
        return k.format_numbers(a)
    return "".join([f"{x}\n" for x in limbs_to_ints(a)]).encode("ascii")


def all_deals(owners: np.ndarray) -> bool:
    """Is every row of an (n, 52) uint8 array a deal (seats 0..3, 13 cards each)?"""
    k = native()
    if k is not None:
        return k.first_non_deal(np.ascontiguousarray(owners, dtype=np.uint8)) < 0
    counts = np.stack([(owners == s).sum(axis=1) for s in range(4)], axis=1)
    return bool((counts == 13).all())


# ---------------------------------------------------------------------------
# PBN deal values
# ---------------------------------------------------------------------------

_RANK_BYTES = np.frombuffer(RANKS.encode("ascii"), np.uint8)
_SEAT_BYTES = np.frombuffer(SEATS.encode("ascii"), np.uint8)
_CARD_SUIT = np.arange(N_CARDS, dtype=np.uint8) & 3
_CARD_RANK = np.arange(N_CARDS, dtype=np.uint8) >> 2


def _check_owners(owners) -> np.ndarray:
    from .dealnumber import _as_owners

    a = np.ascontiguousarray(_as_owners(owners))
    if a.shape[0]:
        counts = np.stack([(a == s).sum(axis=1) for s in range(4)], axis=1)
        bad = np.flatnonzero((counts != 13).any(axis=1))
        if bad.size:
            d = int(bad[0])
            raise ValueError(f"deal {d}: each seat must hold 13 cards, got counts N E S W = {counts[d].tolist()}")
    return a


def _check_firsts(first, n: int):
    """An int 0..3, or a contiguous (n,) uint8 array of seats 0..3."""
    if isinstance(first, (int, np.integer)) and not isinstance(first, (bool, np.bool_)):
        if not 0 <= first <= 3:
            raise ValueError(f"first seat must be 0..3 (N E S W), got {first}")
        return int(first)
    f = np.asarray(first)
    if f.shape != (n,) or f.dtype.kind not in "iu" or (n and (f.min() < 0 or f.max() > 3)):
        raise ValueError(f"first seats must be an int 0..3 or {n} ints 0..3")
    return np.ascontiguousarray(f, dtype=np.uint8)


def pbn_deal_strings(owners, first=0) -> bytes:
    """PBN ``Deal`` values of a batch, each followed by ``"\\n"``.

    ``owners`` is an ``(n, 52)`` array of seats (13 cards each, else
    ValueError); ``first`` is the seat (0..3 = N E S W) each value starts with,
    one int for the batch or one per deal (e.g. the boards' dealers).  Every
    line has exactly :data:`PBN_LEN` bytes, so line d is
    ``out[PBN_LEN * d : PBN_LEN * (d + 1)]``, and line d equals
    ``formats.deal_string(owners[d], first_d) + "\\n"``.
    """
    from .dealnumber import _as_owners

    k = native()
    if k is not None:  # the kernel checks the 13 cards a seat itself
        a = np.ascontiguousarray(_as_owners(owners))
        return k.pbn_deal_strings(a, _check_firsts(first, a.shape[0]))
    a = _check_owners(owners)
    return _pbn_numpy(a, _check_firsts(first, a.shape[0])).tobytes()


def pbn_games(owners, first_board: int, limbs, head: bytes, players: bytes, middles, tail: bytes, nl: bytes,
              dealers: bytes) -> bytes | None:
    """The PBN games of boards ``first_board``.. in one pass, or None without the kernel.

    Game d is ``head + board + players + middles[(board - 1) % 16] + Deal value
    (from the board's dealer, ``dealers[(board - 1) % 16]``) + tail``, then ``[DealNumber "<number>"] + nl`` if
    ``limbs`` (an (n, 2) uint64 array) is given, then ``nl``.  The PBN writer
    (:mod:`truedeal.formats.pbnfile`) supplies the pieces; its Python form is the reference.
    """
    k = native()
    if k is None:
        return None
    a = np.ascontiguousarray(owners, dtype=np.uint8)
    lim = None if limbs is None else np.ascontiguousarray(limbs, dtype=np.uint64)
    return k.pbn_games(a, first_board, lim, head, players, tuple(middles), tail, nl, dealers)


def _pbn_numpy(a: np.ndarray, first) -> np.ndarray:
    """The numpy path: (n, PBN_LEN) uint8 text.

    Each hand takes 16 bytes (13 ranks and 3 dots) at offset 2 + 17 p, p its
    position clockwise from ``first``.  Sorting the key (p, suit, rank) of the
    52 cards gives the order they are written in, and the t-th card in that
    order lands at 2 + 4 p + t + suit (t - 13 p cards and ``suit`` dots before
    it within its hand); the three bytes of a hand left over are its dots.
    """
    n = a.shape[0]
    per_deal = not isinstance(first, int)
    f = first.reshape(-1, 1) if per_deal else np.uint8(first)
    p = (a - f) & np.uint8(3)  # uint8 wrap-around, then mod 4
    key = np.sort(p * np.uint8(52) + _CARD_SUIT * np.uint8(13) + _CARD_RANK, axis=1)  # < 208
    kp, rem = np.divmod(key, np.uint8(52))
    ks, kr = np.divmod(rem, np.uint8(13))
    col = 2 + 4 * kp.astype(np.intp) + np.arange(N_CARDS) + ks
    out = np.full((n, PBN_LEN), ord("."), np.uint8)
    out[:, 1] = ord(":")
    out[:, [18, 35, 52]] = ord(" ")
    out[:, PBN_LEN - 1] = ord("\n")
    out[:, 0] = _SEAT_BYTES[first] if per_deal else _SEAT_BYTES[int(first)]
    np.put_along_axis(out, col, _RANK_BYTES[kr], axis=1)
    return out
