"""Every Redis call of tournament set jobs (:mod:`truedeal_jobs.sets` holds their logic).

Keys (prefix ``P``)
    ``P set:{id}`` hash: ``doc`` (set file, spec sources, settings), ``keys``
    (JSON, secret), ``state`` (:class:`SetState`), ``chunks``, ``chunk_size``, ``boards``,
    ``error``, ``progress_at``, ``requeues``, ``requeued_at``;
    ``P set:{id}:deals:<c>`` and ``P set:{id}:dd:<c>`` JSON strings;
    ``P set:{id}:solved`` set of solved chunks; ``P sets:active`` the sets
    the watchdog looks after.  Every key expires after :data:`TTL` seconds.
"""

from __future__ import annotations

import json
import time
from enum import StrEnum
from typing import Any, cast

from truedeal.errors import SetError

#: Seconds a set's keys live after their last write.
TTL = 7 * 24 * 3600

# Moves a set from one state to another, or does nothing if it has left the
# first (a cancel and a finishing task cannot both win).  With a second key
# (the watchdog's list) the set joins that list in the same step, so that a
# set never becomes queued without the watchdog looking after it.
_ADVANCE = """
if redis.call('HGET', KEYS[1], 'state') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
if KEYS[2] then
  redis.call('SADD', KEYS[2], ARGV[2])
  redis.call('EXPIRE', KEYS[1], ARGV[3])
end
return 1
"""


class UnknownSet(SetError):
    """No set has this id (never made, or expired)."""


class SetState(StrEnum):
    COMMITTED = "committed"  # manifest announced; dealt once its public value is given
    QUEUED = "queued"
    DEALING = "dealing"
    SOLVING = "solving"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def final(self) -> bool:
        return self in (SetState.DONE, SetState.FAILED, SetState.CANCELLED)


class SetStore:
    """A set's record, its dealt chunks and its solved chunks, in Redis."""

    def __init__(self, client: Any, prefix: str) -> None:
        self.r, self.prefix = client, prefix
        self._advance = client.register_script(_ADVANCE)

    def key(self, set_id: str, suffix: str = "") -> str:
        return f"{self.prefix}set:{{{set_id}}}{suffix}"

    @property
    def _active(self) -> str:
        return f"{self.prefix}sets:active"

    # ------------------------------------------------------------ the record

    def create(self, set_id: str, doc: dict, keys: dict[str, str], boards: int,
               state: SetState = SetState.QUEUED) -> None:
        """A new set record; a queued one goes on the watchdog's list at once,
        a committed one when :meth:`watch` is called (it waits for no worker)."""
        k = self.key(set_id)
        self.r.hset(k, mapping={"doc": json.dumps(doc), "keys": json.dumps(keys), "state": state,
                                "boards": boards, "progress_at": repr(time.time())})
        self.r.expire(k, TTL)
        if state is SetState.QUEUED:
            self.watch(set_id)

    def watch(self, set_id: str) -> None:
        """Put the set on the watchdog's list, and give its record a fresh :data:`TTL`."""
        self.r.expire(self.key(set_id), TTL)
        self.r.sadd(self._active, set_id)

    def record(self, set_id: str) -> dict[str, str]:
        """The set's hash as text; :class:`SetError` when there is no such set."""
        raw = cast(dict[bytes, bytes], self.r.hgetall(self.key(set_id)))
        if not raw:
            raise UnknownSet(f"no set {set_id!r}")
        return {k.decode(): v.decode() for k, v in raw.items()}

    def state(self, set_id: str) -> SetState:
        return SetState(self.record(set_id)["state"])

    def update(self, set_id: str, **fields: Any) -> None:
        self.r.hset(self.key(set_id), mapping={k: str(v) for k, v in fields.items()})

    def advance(self, set_id: str, frm: SetState, to: SetState, watch: bool = False, **fields: Any) -> bool:
        """Move the set from state ``frm`` to ``to`` with ``fields`` (and a
        fresh ``progress_at``), atomically; False if it is no longer in ``frm``.
        ``watch``: in the same step, put it on the watchdog's list with a fresh
        :data:`TTL` (see :meth:`watch`).  A final state also takes the set off that list."""
        flat = [x for k, v in {"state": to, "progress_at": repr(time.time()), **fields}.items() for x in (k, str(v))]
        keys = [self.key(set_id), *([self._active] if watch else [])]
        moved = self._advance(keys=keys, args=[frm, set_id, TTL, *flat]) == 1
        if moved and to.final:
            self.r.srem(self._active, set_id)
        return moved

    def end(self, set_id: str, to: SetState, **fields: Any) -> SetState:
        """Move an unfinished set to the final state ``to``; the state after
        (unchanged when it had already ended)."""
        while not (state := self.state(set_id)).final:
            if self.advance(set_id, state, to, **fields):
                return to
        return state

    # ---------------------------------------------------------------- chunks

    def put_deals(self, set_id: str, c: int, rows: list) -> None:
        self.r.set(self.key(set_id, f":deals:{c}"), json.dumps(rows), ex=TTL)

    def deals(self, set_id: str, c: int) -> list | None:
        raw = self.r.get(self.key(set_id, f":deals:{c}"))
        return None if raw is None else json.loads(raw)

    def put_solved(self, set_id: str, c: int, rows: list) -> int:
        """Store chunk ``c``'s tables; the number of chunks solved so far."""
        self.r.set(self.key(set_id, f":dd:{c}"), json.dumps(rows), ex=TTL)
        solved = self.key(set_id, ":solved")
        self.r.sadd(solved, c)
        self.r.expire(solved, TTL)
        return int(self.r.scard(solved))

    def solved(self, set_id: str, c: int) -> list | None:
        raw = self.r.get(self.key(set_id, f":dd:{c}"))
        return None if raw is None else json.loads(raw)

    def solved_chunks(self, set_id: str) -> set[int]:
        return {int(x) for x in self.r.smembers(self.key(set_id, ":solved"))}

    # -------------------------------------------------------------- watchdog

    def active(self) -> list[str]:
        return [raw.decode() for raw in self.r.smembers(self._active)]

    def forget(self, set_id: str) -> None:
        self.r.srem(self._active, set_id)

    def claim(self, set_id: str, period: float) -> bool:
        """One re-send per set per ``period`` seconds, however many workers scan."""
        return bool(self.r.set(self.key(set_id, ":watchdog"), "1", nx=True, px=int(max(period, 1.0) * 1000)))
