"""What a submission must be before a job is recorded, and how many
partitions its listing is cut into.  Pure functions: nothing here talks to
Redis or lists anything (this runs in the web request)."""

from __future__ import annotations

import secrets

from truedeal.engine import TooWide, check_count, exact_source
from truedeal.formats import FORMATS
from truedeal.listing import make_layout
from truedeal.randomness import DEFAULT_STREAM, check_stream
from truedeal.shards import SHARDS
from truedeal.spec import Spec

from .models import MAX_FIRST_BOARD, JobInputError
from .settings import MAX_PARTITIONS

#: Longest seed accepted, in characters.
MAX_SEED_CHARS = 1000
#: Bytes of a generated seed (written as hex).
SEED_BYTES = 16


def check_submission(n: int, seed: str | None, fmt: str, first_board: int, max_deals: int,
                     stream: str = DEFAULT_STREAM) -> tuple[str, bool]:
    """The job's seed and whether it was generated (with :mod:`secrets`, so
    that re-runs of any chunk reproduce the same deals); JobInputError for a
    bad count (``check_count`` and at most ``max_deals``), seed, format,
    first board or stream."""
    _check_count(n, max_deals)
    generated = seed is None
    seed = secrets.token_hex(SEED_BYTES) if seed is None else seed
    _check_seed(seed)
    if fmt not in FORMATS:
        raise JobInputError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    _check_first_board(first_board)
    try:
        check_stream(stream)
    except ValueError as exc:
        raise JobInputError(str(exc)) from None
    return seed, generated


def _check_count(n: int, max_deals: int) -> None:
    try:
        check_count(n)
    except ValueError as exc:
        raise JobInputError(str(exc)) from None
    if n > max_deals:
        raise JobInputError(f"at most {max_deals:,} deals per job, got {n:,}")


def _check_seed(seed: object) -> None:
    if not isinstance(seed, str) or not seed or len(seed) > MAX_SEED_CHARS:
        raise JobInputError(f"the seed must be a non-empty string of at most {MAX_SEED_CHARS} characters")
    try:
        seed.encode("utf-8")  # the stream is keyed by the seed's UTF-8 bytes
    except UnicodeEncodeError:
        raise JobInputError("the seed must be text (UTF-8); it contains bytes that are not") from None


def _check_first_board(first_board: object) -> None:
    if isinstance(first_board, bool) or not isinstance(first_board, int) or not 1 <= first_board <= MAX_FIRST_BOARD:
        shown = repr(first_board) if len(repr(first_board)) <= 40 else repr(first_board)[:37] + "..."
        raise JobInputError(f"the first board must be an integer from 1 to {MAX_FIRST_BOARD:,}, got {shown}")


def partition_count(spec: Spec, wanted: int, stream: str = DEFAULT_STREAM) -> int:
    """Partitions for ``spec``, decided without listing anything (this runs
    in the web request): ``min(wanted, 64)`` slices of the cells (in stream
    v3 at most 16, unions of its shards), or 1 when
    the plan is not one listing that can be cut (see
    :func:`truedeal.engine.exact_source`) or has a single cell (no seat
    whose shape is constrained).  Compiling the spec is cheap; a spec that
    does not compile gets ``wanted`` and the workers report why it fails.
    """
    try:
        source = exact_source(spec)
        if source is None or not make_layout(source).patterned:
            return 1
    except (TooWide, ValueError):
        pass
    return max(1, min(wanted, SHARDS if stream == "v3" else MAX_PARTITIONS))
