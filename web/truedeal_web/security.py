"""Optional API keys and rate limiting for ``/api/*``.

API keys: when ``TRUEDEAL_API_KEYS`` is set, every ``/api/*`` request except
the OpenAPI document needs ``Authorization: Bearer <key>``.  Only SHA-256
digests of the keys are kept in memory, and the presented key's digest is
compared with each of them by :func:`secrets.compare_digest` (all of them,
so the time taken does not depend on which key matched).

Rate limit: ``TRUEDEAL_RATE_LIMIT=N/minute`` allows N requests per window
per API key (or per client address without keys), as a fixed-window counter
in Redis (``INCR`` + ``EXPIRE`` on ``<prefix>rate:<who>``, the window opening at the first request), so every
web process shares it.  Over the limit: 429 with ``Retry-After``.  If Redis
cannot be reached the request is let through (the limit protects the
service; it must not take it down).
"""

from __future__ import annotations

import hashlib
import logging
import secrets

import redis
from flask import request

from .problems import Problem

logger = logging.getLogger("truedeal.web")


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


class ApiKeys:
    """The configured keys, as digests."""

    def __init__(self, keys: tuple[str, ...]) -> None:
        self._digests = [_digest(k) for k in keys]

    @property
    def required(self) -> bool:
        return bool(self._digests)

    def check(self, presented: str) -> bool:
        d = _digest(presented)
        ok = False
        for known in self._digests:
            ok |= secrets.compare_digest(d, known)
        return ok

    def authenticate(self) -> str | None:
        """The caller's key (after checking it), None when keys are not required;
        raises a 401 :class:`Problem` otherwise."""
        if not self.required:
            return None
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        token = token.strip()
        challenge = {"WWW-Authenticate": 'Bearer realm="truedeal"'}
        if scheme.lower() != "bearer" or not token:
            raise Problem(401, "this API needs a key: send Authorization: Bearer <key>",
                          kind="unauthorized", headers=challenge)
        if not self.check(token):
            challenge["WWW-Authenticate"] = 'Bearer realm="truedeal", error="invalid_token"'
            raise Problem(401, "the API key is not valid", kind="unauthorized", headers=challenge)
        return token


class RateLimiter:
    """Fixed-window request counter in Redis."""

    def __init__(self, client: redis.Redis, prefix: str, limit: int, window: int) -> None:
        self.r = client
        self.prefix = prefix
        self.limit = limit
        self.window = window

    def hit(self, who: str) -> None:
        # The window opens at a client's first request (not at a clock
        # boundary), so N requests in a row always see the N+1th refused.
        key = f"{self.prefix}rate:{hashlib.sha256(who.encode()).hexdigest()[:32]}"
        try:
            pipe = self.r.pipeline(transaction=True)
            pipe.incr(key)
            pipe.ttl(key)
            used, ttl = (int(x) for x in pipe.execute())
            if ttl < 0:  # new window (or a key that lost its expiry)
                self.r.expire(key, self.window)
                ttl = self.window
        except redis.exceptions.RedisError as exc:
            logger.warning("rate limit not applied (Redis unreachable): %s", exc)
            return
        if used > self.limit:
            retry = max(1, ttl)
            raise Problem(
                429,
                f"more than {self.limit} requests in {self.window} s; try again in {retry} s",
                kind="rate-limited",
                headers={"Retry-After": str(retry)},
                limit=self.limit,
                window_seconds=self.window,
            )


class AuthFailureLimiter:
    """Wrong API keys, counted per client address in Redis (fixed window):
    past ``limit`` failures in ``window`` seconds, the address gets 429
    before its key is even looked at, so keys cannot be guessed at speed.
    A right key does not reset the count (a guesser may hold one key).
    If Redis cannot be reached the request is let through, as above."""

    def __init__(self, client: redis.Redis, prefix: str, limit: int = 20, window: int = 60) -> None:
        self.r = client
        self.prefix = prefix
        self.limit = limit
        self.window = window

    def _key(self, addr: str) -> str:
        return f"{self.prefix}authfail:{hashlib.sha256(addr.encode()).hexdigest()[:32]}"

    def check(self, addr: str) -> None:
        """429 when ``addr`` has used up its failures."""
        try:
            pipe = self.r.pipeline(transaction=False)
            pipe.get(self._key(addr))
            pipe.ttl(self._key(addr))
            used, ttl = pipe.execute()
        except redis.exceptions.RedisError as exc:
            logger.warning("API key failures not limited (Redis unreachable): %s", exc)
            return
        if used is not None and int(used) >= self.limit:
            retry = max(1, int(ttl)) if ttl and int(ttl) > 0 else self.window
            raise Problem(429, f"too many wrong API keys from this address; try again in {retry} s",
                          kind="rate-limited", headers={"Retry-After": str(retry)},
                          limit=self.limit, window_seconds=self.window)

    def failed(self, addr: str) -> None:
        """Count one wrong key from ``addr``."""
        try:
            pipe = self.r.pipeline(transaction=True)
            pipe.incr(self._key(addr))
            pipe.expire(self._key(addr), self.window, nx=True)
            pipe.execute()
        except redis.exceptions.RedisError as exc:
            logger.warning("API key failure not counted (Redis unreachable): %s", exc)
