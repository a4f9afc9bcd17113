"""The documented derivation (key, public value, session, board) -> deals.

Everything here is specified byte for byte in docs/tournaments.md so that a
second implementation can regenerate a set.  ``lp(x)`` is ``len(x)`` as 4
big-endian bytes followed by ``x``; text is UTF-8.

* Session key ``K`` (32 bytes): from the OS CSPRNG (``secrets``), or with
  ``--seed S``: ``SHA-256(lp("truedeal/set/v1/seed") || lp(S) || lp(name))``.
* Commitment: ``SHA-256(K)``, in hex.
* Session master ``M = SHA-256(lp("truedeal/set/v1/session") || lp(K) ||
  lp(P) || lp(name) || lp(first board as 4 bytes) || lp(last board as 4 bytes))``
  with ``P`` the public value (empty when none).
* Stream seed for purpose ``u`` (``"order"`` or ``"spec/<i>"``):
  ``SHA-256(lp("truedeal/set/v1/" + u) || M)``; it keys the seeded stream of
  :mod:`truedeal.randomness` (SHAKE-256 in counter mode) exactly as
  ``--seed`` does, with these 32 bytes as the seed.
"""

from __future__ import annotations

import hashlib
import secrets

from ..randomness import Rng, SeededBits

DOMAIN = "truedeal/set/v1"
KEY_BYTES = 32


def lp(x: bytes | str) -> bytes:
    """Length-prefixed bytes: 4-byte big-endian length, then the bytes."""
    b = x.encode("utf-8") if isinstance(x, str) else x
    return len(b).to_bytes(4, "big") + b


def sha256(*parts: bytes) -> bytes:
    return hashlib.sha256(b"".join(parts)).digest()


def fresh_key() -> bytes:
    """A session key from the OS CSPRNG (256 bits)."""
    return secrets.token_bytes(KEY_BYTES)


def seeded_key(seed: str, session: str) -> bytes:
    """The session key of a reproducible (``--seed``) set."""
    return sha256(lp(f"{DOMAIN}/seed"), lp(seed), lp(session))


def commitment(key: bytes) -> str:
    """The published commitment of a session key: SHA-256, hex."""
    return hashlib.sha256(key).hexdigest()


def session_master(key: bytes, public: str, session: str, first: int, last: int) -> bytes:
    """``M`` of the module doc: binds key, public value, session and its boards."""
    return sha256(lp(f"{DOMAIN}/session"), lp(key), lp(public), lp(session),
                  lp(first.to_bytes(4, "big")), lp(last.to_bytes(4, "big")))


def stream_seed(master: bytes, purpose: str) -> bytes:
    """The 32-byte seed of one stream (``"order"``, ``"spec/0"``, ...)."""
    return sha256(lp(f"{DOMAIN}/{purpose}"), master)


def board_order(master: bytes, quotas: list[int]) -> list[int]:
    """Which spec makes each board of the session, interleaved at random.

    Start from ``[0]*q0 + [1]*q1 + ...`` and shuffle it with Fisher-Yates:
    for ``i`` from ``n-1`` down to 1, swap entry ``i`` with entry
    ``j = below(i + 1)``, where ``below`` is :meth:`Rng.below_int` on the
    ``"order"`` stream (chunk 0): read ``ceil(k/8)`` bytes, big-endian, keep
    the top ``k = bit_length(bound - 1)`` bits, retry while not below bound.
    """
    order = [i for i, q in enumerate(quotas) for _ in range(q)]
    rng = Rng(SeededBits(stream_seed(master, "order"), 0))
    for i in range(len(order) - 1, 0, -1):
        j = rng.below_int(i + 1)
        order[i], order[j] = order[j], order[i]
    return order
