"""Random bits and exactly uniform integers, vectorised.

One bit source, :class:`SeededBits`: block ``b`` of chunk ``j`` is
``SHAKE-256(b"truedeal/v1" || len(seed) || seed || j || b)`` squeezed to
64 KiB (stream v2: ``b"truedeal/v2"``, 16 KiB; v3: ``b"truedeal/v3"``, 2 KiB;
see :data:`STREAMS`).  With a seed it is a reproducible stream; without one (the default:
unpredictable) the seed is 32 fresh bytes from ``os.urandom`` per chunk, so
both draw at SHAKE's speed, which the compiled SHAKE makes ~4x hashlib's on
AVX-512 (eight blocks a pass) and ~2.7x on AVX2 (four); the OS's generator
is no faster than hashlib here.  Deals are
generated in fixed chunks of :data:`CHUNK_DEALS`, each with its own stream,
so the same seed and spec give the same deals whatever the batch sizes, the
number of deals asked for (the first ``n`` deals never change) or the number
of workers.

On top of the bits, :class:`Rng` draws integers below a bound with no modulo
bias: Lemire's multiply-shift with rejection on 16- or 32-bit words for small
bounds, bit-mask rejection for 64-bit bounds and Python integers of any size.
The compiled sampler (:func:`truedeal.kernel.sampler`) makes the same draws
from the same bytes; the numpy code here is the reference and the fallback.
"""

from __future__ import annotations

import os

import numpy as np

from .choices import DEFAULT_STREAM, STREAMS
from .kernel import sampler as _compiled
from .kernel import shake as _shake

#: Deals per reproducible chunk.  Changing it changes every seeded stream.
CHUNK_DEALS = 4096
# The published seeded streams (STREAMS and DEFAULT_STREAM, named in
# truedeal.choices).  v1 draws every spec through the listing.
# v2 draws a spec that every deal fits as deal numbers read straight off
# its bytes (:mod:`truedeal.every_deal`), and every other spec as v1 does,
# from v1's bytes: the same deals.  v3 routes the draws of a listing that is
# cut into shards (:mod:`truedeal.routing`): each chunk picks every deal's
# shard, then each shard draws its deals from a stream of its own, so workers
# that hold only some shards draw their part of a chunk; every other spec as
# v2, from v2's bytes.  A seed's deals never change within a stream.
#: Bytes per block, by stream: v2's chunk reads ~73 KB, so 8 blocks of 16 KiB
#: (one pass of the compiled SHAKE on AVX-512, two on AVX2) cover it where 8 of
#: 64 KiB would waste 86%.
#: v3 reads 17 streams a chunk, most of them a few KB: 2 KiB blocks.
_BLOCK_BYTES = {"v1": 1 << 16, "v2": 1 << 14, "v3": 1 << 11}
#: The longest prefix the compiled SHAKE takes.
_FAST_PREFIX_MAX = 4096
#: Bytes of the OS's CSPRNG that key an unseeded chunk's stream.
_FRESH_KEY_BYTES = 32


class SeededBits:
    """The documented reproducible stream for one (seed, chunk)."""

    def __init__(self, seed: str | int | bytes, chunk: int = 0, stream: str = DEFAULT_STREAM) -> None:
        key = seed_bytes(seed)
        self._prefix = b"truedeal/" + check_stream(stream).encode() + len(key).to_bytes(4, "big") + key + chunk.to_bytes(8, "big")
        self._block_bytes = _BLOCK_BYTES[stream]
        self._block = 0
        self._buf: bytes | bytearray = b""
        self._pos = 0
        fast = _shake()
        if fast is not None and len(self._prefix) <= _FAST_PREFIX_MAX:
            # the compiled stream: the same bytes (eight blocks a pass on AVX-512, four on AVX2) without
            # the Python loop below, which the kernel's many small reads would pay for each time
            compiled = fast.Stream(self._prefix, self._block_bytes)
            self.readinto = compiled.readinto  # type: ignore[method-assign]
            self.read = compiled.read  # type: ignore[method-assign]

    def read(self, nbytes: int) -> bytes:
        out = bytearray(nbytes)
        self.readinto(out)
        return bytes(out)

    def readinto(self, out) -> int:
        """Fill the writable buffer ``out`` with the next ``len(out)`` bytes of
        the stream (what :meth:`read` would return), without a new bytes object."""
        view = memoryview(out).cast("B")
        at, nbytes = 0, len(view)
        while at < nbytes:
            if self._pos == len(self._buf):
                self._squeeze()
            take = min(nbytes - at, len(self._buf) - self._pos)
            view[at : at + take] = self._buf[self._pos : self._pos + take]
            self._pos += take
            at += take
        return nbytes

    def _squeeze(self) -> None:
        """The next block of the stream, from hashlib (where the compiled stream does not run)."""
        import hashlib  # only here: ~8 ms of start-up that the compiled SHAKE does without

        self._buf = hashlib.shake_256(self._prefix + self._block.to_bytes(8, "big")).digest(self._block_bytes)
        self._block += 1
        self._pos = 0


def check_stream(stream: str) -> str:
    """``stream`` if it is a published stream's name, else ValueError."""
    if stream not in STREAMS:
        raise ValueError(f"unknown stream {stream!r} (streams: {', '.join(STREAMS)})")
    return stream


def seed_bytes(seed: str | int | bytes) -> bytes:
    """The bytes a seed stands for: UTF-8 of its decimal or text form."""
    if isinstance(seed, bytes):
        return seed
    return str(seed).encode("utf-8")


class Rng:
    """Exactly uniform integers drawn from a bit source."""

    def __init__(self, bits: SeededBits) -> None:
        self.bits = bits

    def words64(self, n: int) -> np.ndarray:
        return np.frombuffer(self.bits.read(8 * n), dtype="<u8").copy()

    def below(self, bounds: np.ndarray) -> np.ndarray:
        """One uniform integer in ``[0, b)`` for each ``b`` in ``bounds`` (all ``b >= 1``).

        Returns int64.  Bounds below 2**32 use Lemire's method, larger ones
        bit-mask rejection; both reject rather than reduce modulo b.
        """
        k = _compiled()
        if k is not None:
            b = np.ascontiguousarray(bounds, dtype=np.int64)
            out = np.empty(b.shape, dtype=np.int64)
            k.below(self.bits, b, out)
            return out
        return self.below_numpy(bounds)

    def below_numpy(self, bounds: np.ndarray) -> np.ndarray:
        """:meth:`below` on numpy alone: the reference implementation."""
        bounds = np.asarray(bounds, dtype=np.int64)
        out = np.empty(bounds.shape, dtype=np.int64)
        flat_b = bounds.reshape(-1)
        flat_o = out.reshape(-1)
        if flat_b.size and flat_b.min() < 1:
            raise ValueError("bounds must be >= 1")
        if flat_b.size and flat_b.max() < (1 << 16):
            flat_o[:] = self._lemire(flat_b, 16)
            return out
        small = flat_b < (1 << 32)
        if small.all():
            flat_o[:] = self._lemire(flat_b, 32)
        else:
            idx = np.nonzero(small)[0]
            flat_o[idx] = self._lemire(flat_b[idx], 32)
            idx = np.nonzero(~small)[0]
            flat_o[idx] = self._below64(flat_b[idx])
        return out

    def _lemire(self, b: np.ndarray, bits: int) -> np.ndarray:
        """Lemire's multiply-shift on ``bits``-bit words (16 or 32), for bounds below 2**bits."""
        word, wide = (np.uint16, np.uint32) if bits == 16 else (np.uint32, np.uint64)
        b = b.astype(wide)
        m = np.frombuffer(self.bits.read(bits // 8 * b.size), dtype=np.dtype(word).newbyteorder("<")).astype(wide) * b
        out = (m >> wide(bits)).astype(np.int64)
        low = m & wide((1 << bits) - 1)
        # A low part below 2**bits mod b means this word must be redrawn.  That
        # threshold is < b, so only low parts below b need the (slow) modulo.
        maybe = np.nonzero(low < b)[0]
        if maybe.size:
            bm = b[maybe]
            bad = maybe[low[maybe] < (wide(1 << bits) - bm) % bm]
            if bad.size:
                out[bad] = self._lemire(b[bad], bits)
        return out

    def _below64(self, b: np.ndarray) -> np.ndarray:
        out = np.empty(b.shape, dtype=np.int64)
        values, inverse = np.unique(b, return_inverse=True)
        bits = np.array([int(x - 1).bit_length() for x in values.tolist()], dtype=np.uint64)[inverse.reshape(-1)]
        masks = (np.uint64(1) << bits) - np.uint64(1)
        todo = np.arange(b.size)
        while todo.size:
            r = self.words64(todo.size) & masks[todo]
            ok = r < b[todo].astype(np.uint64)
            out[todo[ok]] = r[ok].astype(np.int64)
            todo = todo[~ok]
        return out

    def below_int(self, bound: int) -> int:
        """One uniform Python int in ``[0, bound)``, any size."""
        if bound < 1:
            raise ValueError("bound must be >= 1")
        k = (bound - 1).bit_length()
        nbytes = (k + 7) // 8
        while True:
            r = int.from_bytes(self.bits.read(nbytes), "big") >> (8 * nbytes - k)
            if r < bound:
                return r

    def below_wide(self, bound: int, n: int, shift: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` uniform integers ``r < bound`` (a Python int up to 2**126), split
        as ``(r >> shift, r & (2**shift - 1))`` into int64 and uint64 arrays.

        ``shift`` must leave the high part below 2**63 and be at most 64.
        """
        top = (bound - 1) >> shift
        low_max = (bound - 1) & ((1 << shift) - 1)
        if top >= 1 << 63 or shift > 64:
            raise ValueError("bound too wide for this shift")
        hi = np.empty(n, dtype=np.int64)
        lo = np.empty(n, dtype=np.uint64)
        k = _compiled()
        if k is not None and top + 1 < 1 << 63:
            k.below_wide(self.bits, top, low_max, shift, hi, lo)
            return hi, lo
        todo = np.arange(n)
        top_b = np.full(1, top + 1, dtype=np.int64)
        low_mask = np.uint64((1 << shift) - 1) if shift < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
        while todo.size:
            h = self.below(np.broadcast_to(top_b, (todo.size,)))
            if shift:
                low = self.words64(todo.size) & low_mask
            else:
                low = np.zeros(todo.size, dtype=np.uint64)
            # Draw (h, low) uniformly over the bounding box, keep those below bound.
            ok = (h < top) | (low <= np.uint64(low_max))
            hi[todo[ok]] = h[ok]
            lo[todo[ok]] = low[ok]
            todo = todo[~ok]
        return hi, lo


def chunk_rng(seed: str | int | bytes | None, chunk: int, stream: str = DEFAULT_STREAM) -> Rng:
    """The generator for deal chunk ``chunk``: the seeded stream, or with no
    seed a stream keyed by 256 bits from the OS's CSPRNG (unpredictable)."""
    return Rng(SeededBits(os.urandom(_FRESH_KEY_BYTES) if seed is None else seed, chunk, stream))
