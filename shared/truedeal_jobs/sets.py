"""Sets as jobs: dealt once, solved in chunks by any number of workers.

This module holds the job logic only; the store (:class:`SetStore`) and a
``send(name, args)`` function that queues a task are passed in (the Celery tasks live in
``truedeal_worker.settasks``), so the core imports neither Redis nor Celery.

Steps
    :func:`submit_set` validates the set file, resolves its specs, makes the
    session keys (CSPRNG, or derived from a seed) and stores the record.
    A set whose public value is still to come waits, ``committed``, until
    :func:`reveal_set` gives it the value.
    :func:`run_deal` deals every session (cheap: tens of thousands of boards
    per second) and stores the boards in chunks (:func:`chunk_size`) as
    deal numbers; it then queues one solve task per chunk.  :func:`run_solve`
    solves one chunk with DDS and stores its tables and par.  Both are
    idempotent: a re-run writes the same values (the deals come from the
    stored keys, DDS is deterministic), so a worker killed mid-solve (the
    task is re-delivered, ``acks_late``) loses nothing and changes nothing.

Keys: see :mod:`truedeal_jobs.set_store`, which holds every Redis call.
A cancelled set keeps its record; its queued tasks find it cancelled and
do nothing.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from truedeal.dealnumber import decode
from truedeal.formats.records import DoubleDummy, HandRecord
from truedeal.tournament.build import session_boards
from truedeal.tournament.commit import keys_json, manifest_of
from truedeal.tournament.files import session_files
from truedeal.tournament.run import session_key, session_plans, settings_of
from truedeal.tournament.setfile import SetError, parse_set
from truedeal.tournament.solve import solve_tables
from truedeal.tournament.solve_threads import set_dds_threads
from truedeal.tournament.specs import SpecSource, resolve

from .set_store import SetState, SetStore

#: Most boards in one solve task (DDS solves up to 40 tables in one call).
SOLVE_CHUNK = 25
#: Solve tasks a set is cut into at least, when it has boards enough, so that
#: workers finishing at different times share the last of the work evenly.
MIN_SOLVE_TASKS = 64
DEAL_TASK = "truedeal.set_deal"
SOLVE_TASK = "truedeal.set_solve"

Send = Callable[[str, tuple], None]


def submit_set(store: SetStore, data: dict, base: Path, *, seed: str | None = None,
               public: str | None = None, to_come: str | None = None) -> str:
    """Store a new set job and return its id: queue :data:`DEAL_TASK` next,
    unless ``to_come`` announces a public value still to come (the set is
    then ``committed``: its manifest is final but for the value, and
    :func:`reveal_set` queues it once the value is known).
    :class:`SetError` for a bad set file or spec."""
    if to_come is not None and (seed is not None or public is not None):
        raise SetError("a public value still to come excludes a seed and a public value: "
                       "the keys are fresh and the value is given once drawn")
    sf = parse_set(data)
    sources = [resolve(ref, i, base) for i, ref in enumerate(sf.spec_refs())]
    for s in sources:
        s.plan()  # refuse impossible or too-wide specs now, not in a worker
    sessions: list[dict[str, Any]] = [{"name": s.name, "boards": list(s.boards), "quotas": sf.quotas(s)} for s in sf.sessions]
    session_plans(settings_of(sf), sessions, sources)  # rotation errors now
    keys = {s["name"]: session_key(s["name"], seed).hex() for s in sessions}
    doc = {"set": sf.model_dump(mode="json"), "specs": [s.to_json() for s in sources],
           "sessions": sessions, "public_value": public, **({} if to_come is None else {"public_value_to_come": to_come})}
    set_id = secrets.token_hex(8)
    store.create(set_id, doc, keys, sum(s["boards"][1] - s["boards"][0] + 1 for s in sessions),
                 SetState.QUEUED if to_come is None else SetState.COMMITTED)
    return set_id


def reveal_set(store: SetStore, set_id: str, public: str) -> None:
    """Give a committed set its public value, drawn since the manifest was
    announced: the set is queued (queue :data:`DEAL_TASK` next) and dealt from
    its committed keys with that value.  :class:`SetError` when the set is not
    waiting for a value (given already, cancelled, or never announced one)."""
    rec, doc, _ = _doc(store, set_id)
    waiting = f"set {set_id} is not waiting for a public value (it is {rec['state']})"
    if rec["state"] != SetState.COMMITTED:
        raise SetError(waiting)
    # queued and watched in one step: a crash before the deal task is sent leaves it to the watchdog
    if not store.advance(set_id, SetState.COMMITTED, SetState.QUEUED, watch=True,
                         doc=json.dumps({**doc, "public_value": public})):
        raise SetError(waiting)  # another reveal or a cancel came first


def chunk_size(boards: int) -> int:
    """Boards per solve task for a set of ``boards``: 4 to :data:`SOLVE_CHUNK`, aiming at
    :data:`MIN_SOLVE_TASKS` tasks.  (81 boards in chunks of 25 left 2 workers
    50 boards against 31; in chunks of 4, 44 against 37 at worst.)"""
    return min(SOLVE_CHUNK, max(4, -(-boards // MIN_SOLVE_TASKS)))


def _doc(store: SetStore, set_id: str) -> tuple[dict, dict, dict]:
    rec = store.record(set_id)
    return rec, json.loads(rec["doc"]), json.loads(rec["keys"])


def _record_json(rec: HandRecord, number: int) -> list:
    return [rec.board, rec.dealer, rec.vulnerable, rec.spec, str(number)]


def run_deal(store: SetStore, set_id: str, send: Send) -> int:
    """Deal every session, store the boards in chunks, queue the solves.
    Returns the number of chunks (0 for a cancelled or finished set)."""
    rec, doc, keys = _doc(store, set_id)
    state = SetState(rec["state"])
    if state not in (SetState.QUEUED, SetState.DEALING) or not store.advance(set_id, state, SetState.DEALING):
        return 0  # cancelled, failed, or dealt already (a re-sent deal)
    sources = [SpecSource.from_json(s) for s in doc["specs"]]
    plans = [s.plan() for s in sources]
    records = []
    for sp in session_plans(doc["set"], doc["sessions"], sources):
        records += session_boards(sp, bytes.fromhex(keys[sp.name]), doc["public_value"] or "", plans)
    size = chunk_size(len(records))
    chunks = [records[i:i + size] for i in range(0, len(records), size)]
    for c, part in enumerate(chunks):
        store.put_deals(set_id, c, [_record_json(x, x.number) for x in part])
    solve = doc["set"]["double_dummy"]
    if not store.advance(set_id, SetState.DEALING, SetState.SOLVING if solve else SetState.DONE, chunks=len(chunks),
                         chunk_size=size):
        return 0  # cancelled while dealing
    if solve:
        for c in range(len(chunks)):
            send(SOLVE_TASK, (set_id, c))
    return len(chunks)


def _chunk_records(store: SetStore, set_id: str, c: int) -> list[HandRecord]:
    rows = store.deals(set_id, c)
    if rows is None:
        raise SetError(f"set {set_id}: chunk {c} is not dealt")
    return [HandRecord(b, d, v, tuple(int(x) for x in decode(int(n))), int(n), label) for b, d, v, label, n in rows]


def run_solve(store: SetStore, set_id: str, c: int) -> str:
    """Solve chunk ``c`` (DDS, one thread per worker process) and store it."""
    rec = store.record(set_id)
    if SetState(rec["state"]) is not SetState.SOLVING:
        return f"skipped: the set is {rec['state']}"
    set_dds_threads()
    dds = solve_tables(_chunk_records(store, set_id, c))
    solved = store.put_solved(set_id, c, [[d.tricks, d.par_score, d.par_contracts] for d in dds])
    done = solved >= int(rec.get("chunks") or 0)
    if not store.advance(set_id, SetState.SOLVING, SetState.DONE if done else SetState.SOLVING):
        return f"skipped: the set is {store.state(set_id)}"
    return "solved"


def cancel_set(store: SetStore, set_id: str) -> SetState:
    """Cancel a set that is not finished: its queued deal and solve tasks
    then do nothing.  Idempotent; returns the state after."""
    return store.end(set_id, SetState.CANCELLED)


def fail_set(store: SetStore, set_id: str, why: str) -> SetState:
    """Fail a set that is not finished, with the reason."""
    return store.end(set_id, SetState.FAILED, error=why)


def watchdog_sets(store: SetStore, send: Send, stale_after: float, max_rounds: int, now: float | None = None) -> list[str]:
    """Re-send the missing work of sets with no progress for ``stale_after``
    seconds: the deal, or the chunks missing from ``:solved`` (a worker killed
    mid-solve leaves its chunk unacknowledged for the visibility timeout).
    Solving and dealing are idempotent, so a duplicate is harmless.  A set
    re-sent ``max_rounds`` times without progress fails with the reason.
    Returns ``"<set id>: <what>"`` lines for the log."""
    now = time.time() if now is None else now
    out = []
    for set_id in store.active():
        try:
            rec = store.record(set_id)
        except SetError:  # expired
            store.forget(set_id)
            continue
        if SetState(rec["state"]).final:
            store.forget(set_id)
            continue
        quiet = now - max(float(rec.get("progress_at") or 0), float(rec.get("requeued_at") or 0))
        if quiet < stale_after or not store.claim(set_id, stale_after):
            continue
        out.append(f"{set_id}: {_resend(store, set_id, rec, send, max_rounds, now)}")
    return out


def _resend(store: SetStore, set_id: str, rec: dict, send: Send, max_rounds: int, now: float) -> str:
    progressed = float(rec.get("progress_at") or 0) > float(rec.get("requeued_at") or 0)
    rounds = 1 if progressed else int(rec.get("requeues") or 0) + 1
    if rounds > max_rounds:
        why = f"no progress although its missing work was re-sent {rounds - 1} times"
        return "failed" if store.advance(set_id, SetState(rec["state"]), SetState.FAILED, error=why) else "moved on"
    store.update(set_id, requeues=rounds, requeued_at=repr(now))
    if rec["state"] != SetState.SOLVING:
        send(DEAL_TASK, (set_id,))
        return "deal re-sent"
    solved = store.solved_chunks(set_id)
    missing = [c for c in range(int(rec.get("chunks") or 0)) if c not in solved]
    for c in missing:
        send(SOLVE_TASK, (set_id, c))
    return f"solve chunks re-sent: {missing}"


def set_status(store: SetStore, set_id: str) -> dict:
    """``{"id", "state", "boards", "solved", "phase"}``; the phase reads like
    ``"solving 1,200 / 3,000 boards"``."""
    rec, doc, _ = _doc(store, set_id)
    total = int(rec["boards"])
    chunks, size = int(rec.get("chunks", 0)), int(rec.get("chunk_size", SOLVE_CHUNK))  # older sets: 25
    solved = sum(min(size, total - c * size) for c in store.solved_chunks(set_id) if c < chunks)
    state = rec["state"]
    phase = {"committed": f"committed: dealt once the public value is given ({doc.get('public_value_to_come')})",
             "queued": "queued", "dealing": f"dealing {total:,} boards",
             "solving": f"solving {solved:,} / {total:,} boards", "done": "done"}.get(state, state)
    return {"id": set_id, "state": state, "boards": total, "solved": solved, "phase": phase,
            "sessions": [s["name"] for s in doc["sessions"]], "error": rec.get("error")}


def set_records(store: SetStore, set_id: str) -> dict[str, list[HandRecord]]:
    """Session name -> its records, with DD when solved (state must be done)."""
    rec, doc, _ = _doc(store, set_id)
    if rec["state"] != SetState.DONE:
        raise SetError(f"set {set_id} is not finished ({rec['state']})")
    records: list[HandRecord] = []
    for c in range(int(rec["chunks"])):
        part = _chunk_records(store, set_id, c)
        rows = store.solved(set_id, c)
        if rows is not None:
            dds = [DoubleDummy(tuple(tuple(x) for x in t), s, tuple(p)) for t, s, p in rows]
            part = [dataclasses.replace(x, dd=d) for x, d in zip(part, dds)]
        records += part
    out, i = {}, 0
    for s in doc["sessions"]:
        n = s["boards"][1] - s["boards"][0] + 1
        out[s["name"]] = records[i:i + n]
        i += n
    return out


def set_files(store: SetStore, set_id: str):
    """Every output file of a finished set: ``(session, ext, bytes or the
    Exception a format raised)``, each session's records read once."""
    _, doc, _ = _doc(store, set_id)
    sf = parse_set(doc["set"])
    for session, records in set_records(store, set_id).items():
        for ext, data in session_files(sf, session, records):
            yield session, ext, data


def set_file(store: SetStore, set_id: str, session: str, ext: str) -> bytes:
    """One output file of a finished set (``ext`` as in :data:`.files.EXTENSIONS`)."""
    _, doc, _ = _doc(store, set_id)
    records = set_records(store, set_id)
    if session not in records:
        raise SetError(f"set {set_id} has no session {session!r}")
    sf = parse_set(doc["set"])
    for e, data in session_files(sf, session, records[session]):
        if e == ext:
            if isinstance(data, Exception):
                raise SetError(str(data))
            return data
    raise SetError(f"unknown file type {ext!r}")


def set_keys(store: SetStore, set_id: str) -> dict:
    """The secret keys of a finished set, as ``keys.json`` (:func:`truedeal.tournament.commit.keys_json`).
    :class:`SetError` before it is done: until its boards exist, the keys are the organiser's secret."""
    rec, _, keys = _doc(store, set_id)
    if rec["state"] != SetState.DONE:
        raise SetError(f"set {set_id} is not finished ({rec['state']}): its keys are given once it is done")
    return keys_json({name: bytes.fromhex(k) for name, k in keys.items()})


def set_manifest(store: SetStore, set_id: str) -> dict:
    """The public manifest of a set job (same form as ``truedeal set --commit``)."""
    _, doc, keys = _doc(store, set_id)
    return manifest_of(parse_set(doc["set"]), doc["specs"], {name: bytes.fromhex(k) for name, k in keys.items()},
                       doc["public_value"], doc.get("public_value_to_come"))
