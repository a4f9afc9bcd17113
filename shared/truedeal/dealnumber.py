"""Deal numbers: Pavlicek's bijection between deals and integers 0 <= n < D (7Z68).

The number of a deal is the lexicographic rank of the 52-letter word
``owners[0] owners[1] ... owners[51]`` (cards in the order of
:mod:`truedeal.cards`, letters N < E < S < W) among all words with thirteen of
each letter.  Number 0 gives North the first 13 cards, East the next 13, South
the next 13; number D - 1 gives West the first 13, South the next 13, East the
next 13.

Two implementations:

* :func:`encode` / :func:`decode` are the plain big-integer loops, line for
  line as in the article (the reference; slow, one deal at a time).
* :func:`encode_batch_numpy` / :func:`decode_batch_numpy` are vectorised and
  table-driven (the reference for the compiled kernel).  A number is carried
  as two uint64 limbs ``[hi, lo]`` with ``number = hi * 2**64 + lo``
  (``hi < 2**32`` since D < 2**96).
* :func:`encode_batch` / :func:`decode_batch` run the compiled kernel
  (:mod:`truedeal.kernel`) when it is built, else the numpy forms; same
  contracts, same results.

Table-driven method.  The state before a card is the vector of remaining
counts r = (n, e, s, w), indexed ``r0 + 14 r1 + 196 r2 + 2744 r3`` (14**4
states).  K(r) = C! / (n! e! s! w!) is the number of ways to finish the deal
(the article's K) and the offset added when the card goes to seat j is
O(r, j) = sum_{i<j} K(r - e_i), the article's running sum of X values.

* encode: the offset of every card is looked up at once (the state before a
  card is a prefix sum over the earlier cards) as two 48-bit limbs; the limb
  sums (52 terms < 2**48 each) cannot overflow uint64 and carries are
  normalised at the end.
* decode, card by card in lock-step over a chunk of deals, in four phases:
  (0) the first ``_HEAD`` cards in one ``searchsorted`` over the 4**_HEAD
  prefix boundaries; (1) while K may exceed 2**64 (cards < 17) the remainder
  is held as A = I >> 32, B = I mod 2**32, the seat is found by comparing A
  with the high parts of the thresholds O(r, 1..3), and the (rare) overshoot
  when A equals a threshold's high part is detected by the borrow after
  subtraction and redone exactly; (2) once K < 2**64 the remainder is one
  uint64 and the seat is the number of thresholds <= I; (3) the last
  ``_TAIL`` cards come from a table of all 4**_TAIL tail words grouped by
  state, in lexicographic order within each state.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import product

import numpy as np

from .cards import N_CARDS, D, deal_seats
from .kernel import native as _native

__all__ = [
    "D",
    "encode",
    "decode",
    "encode_batch",
    "decode_batch",
    "encode_batch_numpy",
    "decode_batch_numpy",
    "limbs_to_bytes",
    "bytes_to_limbs",
    "limbs_to_ints",
    "ints_to_limbs",
]

_NSTATES = 14**4
_POW14 = (1, 14, 196, 2744)
_S0 = 13 * sum(_POW14)  # state index of (13, 13, 13, 13) = 38415
_M32 = (1 << 32) - 1
_M48 = (1 << 48) - 1
_D_HI = D >> 64
_D_LO = D & ((1 << 64) - 1)

# Deals per vectorised pass (measured: encode's (52, chunk) index array wants
# to stay in cache; decode's per-card loop wants long vectors).
_ENC_CHUNK = 4096
_DEC_CHUNK = 65536
_HEAD = 4  # decode: cards resolved by one searchsorted (4**_HEAD boundaries)
_TAIL = 10  # decode: cards resolved by the tail table (4**_TAIL entries)

_U32 = np.uint64(32)
_U48 = np.uint64(48)
_U63 = np.uint64(63)
_U16 = np.uint64(16)
_UM32 = np.uint64(_M32)
_UM48 = np.uint64(_M48)


# ---------------------------------------------------------------------------
# Plain big-integer loops (the article's algorithms)
# ---------------------------------------------------------------------------


_check_row = deal_seats  # one validator for every deal row


def _check_number(number) -> int:
    if isinstance(number, (bool, np.bool_)):
        raise ValueError(f"deal number must be an int in [0, D), got {number!r}")
    try:
        i = operator.index(number)
    except TypeError:
        raise ValueError(f"deal number must be an int in [0, D), got {number!r}") from None
    if not 0 <= i < D:
        raise ValueError(f"deal number {i} out of range [0, D) with D = {D}")
    return i


def encode(owners_row: Sequence[int] | np.ndarray) -> int:
    """Deal number of one deal: ``owners_row[card]`` is the seat (0..3) of ``card``.

    Contract: 52 entries, each seat 0..3 exactly 13 times, else ValueError.
    Returns an int in [0, D).  Article algorithm "Mapping a Deal to a Number".
    """
    row = _check_row(owners_row)
    cnt = [13, 13, 13, 13]  # N E S W vacant slots
    c = 52
    k = D
    i = 0
    for seat in row:
        for j in range(4):
            x = k * cnt[j] // c
            if j == seat:
                cnt[j] -= 1
                break
            i += x
        k = x
        c -= 1
    return i


def decode(number: int) -> np.ndarray:
    """Deal with the given number, as a (52,) uint8 owners row.

    Contract: ``number`` is an int with 0 <= number < D, else ValueError.
    Article algorithm "Mapping a Number to a Deal".
    """
    i = _check_number(number)
    cnt = [13, 13, 13, 13]
    c = 52
    k = D
    out = np.empty(N_CARDS, dtype=np.uint8)
    for card in range(N_CARDS):
        for j in range(4):
            x = k * cnt[j] // c
            if j == 3 or i < x:
                cnt[j] -= 1
                out[card] = j
                break
            i -= x
        k = x
        c -= 1
    return out


# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Tables:
    o_limbs: np.ndarray  # (3, 4 * _NSTATES) uint64: O(r, j) in 32-bit limbs, low first
    # encode: key = 4 * (consumed-count index after the card) + seat
    enc_lo: np.ndarray
    enc_hi: np.ndarray
    enc_hi_cards: int  # offsets of cards >= this are < 2**48
    # decode, all indexed by k = 4 * state + seat; O(r, j) for j = 1, 2, 3 are
    # also the thresholds of state r
    oa: np.ndarray  # O >> 32 (phase 1)
    ob: np.ndarray  # O mod 2**32 (phase 1)
    off4: np.ndarray  # O, for states with K < 2**64 (phase 2)
    next4: np.ndarray  # 4 * (state after the card)
    p1_end: int  # first card whose K < 2**64 for every state
    # decode head: prefix boundaries of the first _HEAD cards
    head_a: np.ndarray
    head_b: np.ndarray
    head_state4: np.ndarray  # 4 * state after the prefix
    head_seats: np.ndarray  # (_HEAD, 4**_HEAD) uint8

    def off(self, s: int) -> list[int]:
        """[O(r, 0), ..., O(r, 3)] of state s as Python ints."""
        l0, l1, l2 = (x[4 * s : 4 * s + 4].tolist() for x in self.o_limbs)
        return [c << 64 | b << 32 | a for a, b, c in zip(l0, l1, l2)]


def _carry(l0: np.ndarray, l1: np.ndarray, l2: np.ndarray) -> None:
    """Normalise 32-bit limbs in place (each limb holds a sum of a few < 2**34)."""
    l1 += l0 >> _U32
    l0 &= _UM32
    l2 += l1 >> _U32
    l1 &= _UM32


def _state_counts() -> np.ndarray:
    """(4, _NSTATES) remaining counts r_j of every state index."""
    s = np.arange(_NSTATES)
    return np.stack([s % 14, s // 14 % 14, s // 196 % 14, s // 2744])


def _k_limbs(r: np.ndarray) -> np.ndarray:
    """(3, _NSTATES) uint64: K(r) of every state in 32-bit limbs (K < 2**96).

    By the recurrence K(r) = sum_{j: r_j > 0} K(r - e_j), K(0) = 1, one level
    of card count at a time (exact integer additions, no products).
    """
    k = np.zeros((3, _NSTATES), np.uint64)
    k[0, 0] = 1
    total = r.sum(axis=0)
    pow14 = np.array(_POW14)
    for c in range(1, N_CARDS + 1):
        idx = np.flatnonzero(total == c)
        acc = np.zeros((3, idx.size), np.uint64)
        for j in range(4):
            has = r[j, idx] > 0
            acc[:, has] += k[:, idx[has] - pow14[j]]
        _carry(*acc)
        k[:, idx] = acc
    return k


def _offset_limbs(r: np.ndarray, k: np.ndarray) -> np.ndarray:
    """(3, 4 * _NSTATES) uint64: O(r, j) = sum_{i<j, r_i>0} K(r - e_i) at 4 s + j."""
    o = np.zeros((3, 4 * _NSTATES), np.uint64)
    acc = np.zeros((3, _NSTATES), np.uint64)
    s = np.arange(_NSTATES)
    for j in range(4):
        o[:, j::4] = acc
        has = r[j] > 0
        acc[:, has] += k[:, s[has] - _POW14[j]]
        _carry(*acc)
    return o


@cache
def _tables() -> _Tables:
    """The decode and encode tables, vectorised in 32-bit limbs (a few ms)."""
    r = _state_counts()
    k = _k_limbs(r)
    o = _offset_limbs(r, k)
    l0, l1, l2 = o
    total = r.sum(axis=0)

    # per number of cards left C: does some state have K > 2**48, K >= 2**64?
    # (card index 52 - C; K grows with C, so the first card index that is
    # clear of both is where the narrower arithmetic may start)
    over48 = (k[2] > 0) | (k[1] > np.uint64(1 << 16)) | ((k[1] == np.uint64(1 << 16)) & (k[0] > 0))
    big48 = np.bincount(total[over48], minlength=53)
    big64 = np.bincount(total[k[2] > 0], minlength=53)
    enc_hi_cards = next(c for c in range(53) if not big48[52 - c])
    p1_end = next(c for c in range(53) if not big64[52 - c])

    # encode: entry 4 q + j holds O(S0 - q + e_j, j), for every consumed-count
    # index q that has given seat j at least one card
    q = np.arange(_NSTATES)
    enc_lo = np.zeros(4 * _NSTATES, np.uint64)
    enc_hi = np.zeros(4 * _NSTATES, np.uint64)
    for j in range(4):
        ok = r[j] >= 1  # the counts of q, read as consumed counts
        src = 4 * (_S0 - q[ok] + _POW14[j]) + j
        enc_lo[4 * q[ok] + j] = (l1[src] & np.uint64(0xFFFF)) << _U32 | l0[src]
        enc_hi[4 * q[ok] + j] = l2[src] << _U16 | l1[src] >> _U16

    oa = l2 << _U32 | l1
    ob = l0.copy()
    small = np.repeat(k[2] == 0, 4)  # K(r) < 2**64
    off4 = np.where(small, l1 << _U32 | l0, np.uint64(0))
    next4 = np.zeros(4 * _NSTATES, np.intp)
    for j in range(4):
        has = r[j] > 0
        next4[4 * q[has] + j] = 4 * (q[has] - _POW14[j])

    n_head = 4**_HEAD
    head_a = np.empty(n_head, np.uint64)
    head_b = np.empty(n_head, np.uint64)
    head_state4 = np.empty(n_head, np.intp)
    head_seats = np.empty((_HEAD, n_head), np.uint8)
    rows: dict[int, list[int]] = {}
    for p, word in enumerate(product(range(4), repeat=_HEAD)):  # lexicographic
        s, start = _S0, 0
        for j in word:
            if s not in rows:
                rows[s] = [int(l2[4 * s + i]) << 64 | int(l1[4 * s + i]) << 32 | int(l0[4 * s + i]) for i in range(4)]
            start += rows[s][j]
            s -= _POW14[j]
        head_a[p] = start >> 32
        head_b[p] = start & _M32
        head_state4[p] = 4 * s
        head_seats[:, p] = word
    # phase 0 overshoots by at most one prefix only if no two boundaries share
    # their high part (prefix intervals are all far wider than 2**32)
    assert np.all(np.diff(head_a) > 0)
    return _Tables(
        o_limbs=o,
        enc_lo=enc_lo,
        enc_hi=enc_hi,
        enc_hi_cards=enc_hi_cards,
        oa=oa,
        ob=ob,
        off4=off4,
        next4=next4,
        p1_end=p1_end,
        head_a=head_a,
        head_b=head_b,
        head_state4=head_state4,
        head_seats=head_seats,
    )


@cache
def _tail_tables() -> tuple[np.ndarray, np.ndarray]:
    """(base, words): the tail words of state s (remaining counts, summing to
    _TAIL) are ``words[base[s] : base[s] + K(s)]`` in lexicographic order, each
    packed 2 bits per card, first card in the most significant bits."""
    m = _TAIL
    codes = np.arange(4**m, dtype=np.uint32)  # numeric order = lexicographic order
    state = np.zeros(4**m, np.intp)
    pow14 = np.array(_POW14, np.intp)
    for i in range(m):
        state += pow14[(codes >> np.uint32(2 * i)) & np.uint32(3)]
    order = np.argsort(state, kind="stable")
    words = codes[order]
    base = np.searchsorted(state[order], np.arange(_NSTATES, dtype=np.intp)).astype(np.intp)
    return base, words


_ENC_STEP = np.array([4 * p for p in _POW14], np.intp)  # 4 * 14**seat


# ---------------------------------------------------------------------------
# Batch encode
# ---------------------------------------------------------------------------


def _as_owners(owners) -> np.ndarray:
    a = np.asarray(owners)
    if a.ndim != 2 or a.shape[1] != N_CARDS:
        raise ValueError(f"owners must have shape (n, 52), got {a.shape}")
    if a.dtype != np.uint8:
        if a.dtype.kind not in "iu":
            raise ValueError(f"owners must be an integer array, got dtype {a.dtype}")
        if a.size and (a.min() < 0 or a.max() > 3):
            raise ValueError("owners entries must be seats 0..3")
        a = a.astype(np.uint8)
    elif a.size and a.max() > 3:
        raise ValueError("owners entries must be seats 0..3")
    return a


def encode_batch(owners: np.ndarray) -> np.ndarray:
    """Deal numbers of a batch: (n, 52) seats -> (n, 2) uint64 limbs [hi, lo].

    Contract: every row holds seats 0..3, 13 cards each (else ValueError);
    row d of the result is ``divmod(encode(owners[d]), 2**64)``.  Runs the
    compiled kernel when it is built, else :func:`encode_batch_numpy`.
    """
    k = _native()
    if k is None:
        return encode_batch_numpy(owners)
    a = np.ascontiguousarray(_as_owners(owners))
    out = np.empty((a.shape[0], 2), np.uint64)
    k.encode(a, out)  # checks the 13 cards a seat itself
    return out


def encode_batch_numpy(owners: np.ndarray) -> np.ndarray:
    """:func:`encode_batch` on the numpy path (the reference implementation)."""
    a = _as_owners(owners)
    tb = _tables()
    n = a.shape[0]
    out = np.empty((n, 2), np.uint64)
    hc = tb.enc_hi_cards
    full = 4 * _S0
    for lo_i in range(0, n, _ENC_CHUNK):
        o = np.ascontiguousarray(a[lo_i : lo_i + _ENC_CHUNK].T)  # (52, m)
        oi = o.astype(np.intp)
        key = _ENC_STEP.take(oi)
        for c in range(1, N_CARDS):  # prefix sums: consumed-count index * 4
            np.add(key[c], key[c - 1], out=key[c])
        # Every row has 52 seats in 0..3; the base-14 sum of its seat counts is
        # 13*(1+14+196+2744) only for counts (13,13,13,13) (checked exhaustively).
        bad = key[N_CARDS - 1] != full
        if bad.any():
            d = lo_i + int(np.flatnonzero(bad)[0])
            counts = np.bincount(a[d], minlength=4).tolist()
            raise ValueError(f"deal {d}: each seat must hold 13 cards, got counts N E S W = {counts}")
        key += oi
        lo = tb.enc_lo.take(key).sum(axis=0)
        hi = tb.enc_hi.take(key[:hc]).sum(axis=0)
        hi += lo >> _U48
        lo &= _UM48
        dst = out[lo_i : lo_i + _ENC_CHUNK]
        dst[:, 1] = lo | (hi << _U48)
        dst[:, 0] = hi >> _U16
    return out


# ---------------------------------------------------------------------------
# Batch decode
# ---------------------------------------------------------------------------


def _check_limbs(limbs) -> np.ndarray:
    a = np.asarray(limbs)
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"limbs must have shape (n, 2), got {a.shape}")
    if a.dtype != np.uint64:
        if a.dtype.kind not in "iu":
            raise ValueError(f"limbs must be an integer array, got dtype {a.dtype}")
        if a.size and a.min() < 0:
            raise ValueError("limbs must be non-negative")
        a = a.astype(np.uint64)
    hi, lo = a[:, 0], a[:, 1]
    bad = (hi > np.uint64(_D_HI)) | ((hi == np.uint64(_D_HI)) & (lo >= np.uint64(_D_LO)))
    if bad.any():
        d = int(np.flatnonzero(bad)[0])
        v = int(hi[d]) << 64 | int(lo[d])
        raise ValueError(f"deal number {v} (row {d}) out of range [0, D) with D = {D}")
    return a


def _fix_phase1(tb: _Tables, bad, a, b, s4, k, seat) -> None:
    """Rows where the high-part comparison overshot: redo the card exactly."""
    for d in np.flatnonzero(bad).tolist():
        kd = int(k[d])
        row = tb.off(int(s4[d]) >> 2)
        i = ((int(a[d]) << 32) + int(b[d]) + row[kd & 3]) % (1 << 96)
        j = max(jj for jj in range(4) if row[jj] <= i)  # thresholds are sorted
        i -= row[j]
        seat[d] = j
        k[d] = kd - (kd & 3) + j
        a[d] = i >> 32
        b[d] = i & _M32


def _decode_chunk(tb: _Tables, tail_base, tail_words, hi, lo, res) -> None:
    """Decode one chunk: hi, lo (m,) uint64 numbers < D -> res (m, 52) uint8.

    ``hi`` and ``lo`` are consumed (modified in place)."""
    # Split I into A = I >> 32 (< 2**64) and B = I mod 2**32.
    a0 = hi
    a0 <<= _U32
    a0 |= lo >> _U32
    b0 = lo
    b0 &= _UM32
    # Phase 0: the first _HEAD cards from the sorted prefix boundaries.  p is
    # the last prefix whose boundary's high part is <= A; it overshoots by one
    # exactly when A equals that high part and B is below the low part
    # (boundaries are more than 2**32 apart), seen as a borrow out of A.
    p = np.searchsorted(tb.head_a, a0, side="right")
    p -= 1
    b = b0 - tb.head_b.take(p)
    a = a0 - tb.head_a.take(p)
    a -= b >> _U63
    b &= _UM32
    bad = a >> _U63
    if bad.any():
        idx = np.flatnonzero(bad)
        p[idx] -= 1
        pi = p[idx]
        bb = b0[idx] - tb.head_b.take(pi)
        aa = a0[idx] - tb.head_a.take(pi)
        aa -= bb >> _U63
        b[idx] = bb & _UM32
        a[idx] = aa
    s4 = tb.head_state4.take(p)  # 4 * state index
    for c in range(_HEAD):
        res[:, c] = tb.head_seats[c].take(p)
    # Phase 1: two limbs while K may exceed 2**64.  The seat is first taken as
    # the number of thresholds whose high part is <= A; if that overshoots,
    # subtracting its offset borrows out of A and the row is redone exactly.
    oa, ob, nxt = tb.oa, tb.ob, tb.next4
    ta1, ta2, ta3 = oa[1:], oa[2:], oa[3:]  # ta_j.take(s4) = oa[s4 + j]
    for c in range(_HEAD, tb.p1_end):
        seat = (a >= ta1.take(s4)).view(np.uint8)
        seat += (a >= ta2.take(s4)).view(np.uint8)
        seat += (a >= ta3.take(s4)).view(np.uint8)
        k = s4 + seat
        b -= ob.take(k)
        a -= oa.take(k)
        a -= b >> _U63
        b &= _UM32
        if a.max() >> _U63:
            _fix_phase1(tb, a >> _U63, a, b, s4, k, seat)
        s4 = nxt.take(k)
        res[:, c] = seat
    # Phase 2: one limb; the seat is the number of thresholds <= I.
    i = a
    i <<= _U32
    i |= b
    off4 = tb.off4
    t1, t2, t3 = off4[1:], off4[2:], off4[3:]
    for c in range(tb.p1_end, N_CARDS - _TAIL):
        seat = (i >= t1.take(s4)).view(np.uint8)
        seat += (i >= t2.take(s4)).view(np.uint8)
        seat += (i >= t3.take(s4)).view(np.uint8)
        k = s4 + seat
        i -= off4.take(k)
        s4 = nxt.take(k)
        res[:, c] = seat
    # Phase 3: the remaining _TAIL cards from the tail table.
    s4 >>= 2
    idx = tail_base.take(s4)
    idx += i.astype(np.intp)
    w = tail_words.take(idx)
    three = np.uint32(3)
    for c in range(N_CARDS - _TAIL, N_CARDS):
        res[:, c] = (w >> np.uint32(2 * (N_CARDS - 1 - c))) & three


def decode_batch(limbs: np.ndarray) -> np.ndarray:
    """Deals of a batch of numbers: (n, 2) limbs [hi, lo] -> (n, 52) uint8 owners.

    Contract: every number hi * 2**64 + lo is in [0, D) (else ValueError);
    row d of the result equals ``decode(hi[d] * 2**64 + lo[d])``.  Runs the
    compiled kernel when it is built, else :func:`decode_batch_numpy`.
    """
    k = _native()
    if k is None:
        return decode_batch_numpy(limbs)
    a = np.ascontiguousarray(_check_limbs(limbs))
    res = np.empty((a.shape[0], N_CARDS), np.uint8)
    k.decode(a, res)
    return res


def decode_batch_numpy(limbs: np.ndarray) -> np.ndarray:
    """:func:`decode_batch` on the numpy path (the reference implementation)."""
    a = _check_limbs(limbs)
    tb = _tables()
    tail_base, tail_words = _tail_tables()
    n = a.shape[0]
    res = np.empty((n, N_CARDS), np.uint8)
    for lo_i in range(0, n, _DEC_CHUNK):
        hi_i = min(n, lo_i + _DEC_CHUNK)
        _decode_chunk(
            tb, tail_base, tail_words, a[lo_i:hi_i, 0].copy(), a[lo_i:hi_i, 1].copy(), res[lo_i:hi_i]
        )
    return res


# ---------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------


def limbs_to_bytes(limbs: np.ndarray) -> bytes:
    """12 big-endian bytes per number (4 from hi, 8 from lo), concatenated.

    Contract: limbs as for :func:`decode_batch` (numbers < D, else ValueError).
    Compiled when the kernel is built (a job writes every chunk through here).
    """
    k = _native()
    if k is not None and isinstance(limbs, np.ndarray) and limbs.dtype == np.uint64 and limbs.shape[1:] == (2,):
        try:  # the kernel checks the range itself; the numpy check below words its error
            return k.number_bytes(np.ascontiguousarray(limbs))
        except ValueError:
            pass
    return limbs_to_bytes_numpy(limbs)


def limbs_to_bytes_numpy(limbs: np.ndarray) -> bytes:
    """:func:`limbs_to_bytes` on numpy alone: the reference."""
    a = _check_limbs(limbs)
    n = a.shape[0]
    buf = np.empty((n, 12), np.uint8)
    buf[:, :4] = a[:, 0].astype(">u4").view(np.uint8).reshape(n, 4)
    buf[:, 4:] = a[:, 1].astype(">u8").view(np.uint8).reshape(n, 8)
    return buf.tobytes()


def bytes_to_limbs(data: bytes) -> np.ndarray:
    """Inverse of :func:`limbs_to_bytes`: 12 bytes per number -> (n, 2) uint64.

    Contract: ``len(data)`` is a multiple of 12 and every number is < D, else
    ValueError.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ValueError(f"data must be bytes-like, got {type(data).__name__}")
    raw = bytes(data)
    if len(raw) % 12:
        raise ValueError(f"byte length {len(raw)} is not a multiple of 12")
    buf = np.frombuffer(raw, np.uint8).reshape(-1, 12)
    n = buf.shape[0]
    out = np.empty((n, 2), np.uint64)
    out[:, 0] = np.ascontiguousarray(buf[:, :4]).view(">u4").reshape(n)
    out[:, 1] = np.ascontiguousarray(buf[:, 4:]).view(">u8").reshape(n)
    return _check_limbs(out)


def limbs_to_ints(limbs: np.ndarray) -> list[int]:
    """Python ints ``hi * 2**64 + lo``; numbers must be < D (else ValueError)."""
    a = _check_limbs(limbs)
    return [hi << 64 | lo for hi, lo in a.tolist()]


def ints_to_limbs(numbers: Iterable[int]) -> np.ndarray:
    """(n, 2) uint64 limbs [hi, lo] of ints in [0, D) (else ValueError)."""
    vals = [_check_number(x) for x in numbers]
    out = np.empty((len(vals), 2), np.uint64)
    if vals:
        out[:, 0] = [v >> 64 for v in vals]
        out[:, 1] = [v & 0xFFFFFFFFFFFFFFFF for v in vals]
    return out
