"""Pydantic models of the HTTP API: they validate requests and, through
``model_json_schema``, make the schemas of the OpenAPI document.

The constraint spec itself is :class:`truedeal.spec.Spec`, the same model the
CLI and the workers validate with.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, field_validator

from truedeal.engine import MAX_DEALS
from truedeal.formats import FORMATS
from truedeal.randomness import STREAMS
from truedeal.spec import Spec
from truedeal_jobs.models import MAX_FIRST_BOARD, State

#: Job states, in life-cycle order (mirrors truedeal_jobs.STATES).
#: The job states, as the job system, its Lua scripts and the API name them.
JobState = State
Format = Literal[FORMATS]  # type: ignore[valid-type]
Stream = Literal[STREAMS]  # type: ignore[valid-type]
#: Formats the deals endpoint streams.
DEAL_FORMATS: tuple[str, ...] = tuple(FORMATS)


class Rejection(BaseModel):
    """How seats that the listing cannot hold are handled by rejection."""

    seats: list[str]
    acceptance_rate: float
    acceptance_stderr: float
    pilot_draws: int
    listed_deals: int
    listed_cases: int | None
    acceptance_exact: bool = Field(False, description="True when the acceptance is exact: the count over the listed "
                                   "deals (the count is then exact too, `deals` set), not a pilot's share.")
    why_not_exact: str | None = Field(None, description="Why the whole spec is not listed exactly: the limit its exact "
                                      "listing would pass. Null where rejection checks only what no listing reads "
                                      "(`tricks`, `rnd`).")


class CountResult(BaseModel):
    """The exact count of a spec (``truedeal count --json`` plus a few conveniences).

    ``deals`` is an exact integer that can exceed 2**53; JavaScript clients
    should read ``deals_text`` (the same number as a decimal string).  When
    some seats are handled by rejection (``exact`` false) the count is an
    estimate: ``deals`` is null and ``deals_estimate`` is given; where the
    parts rejected are counted exactly by their complements, ``deals`` is
    exact and ``rejection`` gives the exact acceptance.  A script
    whose ``rnd()`` is weighed exactly gives ``deals_expected`` instead.
    """

    spec: dict[str, Any] = Field(description="The spec in canonical form (full seat names, ranges as [min, max]).")
    possible: bool = Field(description="Whether at least one deal satisfies the spec.")
    exact: bool = Field(description="True when `deals` is an exact count; false for an estimate, and for a script "
                        "whose rnd() is weighed (its exact expected count is `deals_expected`).")
    deals: int | None = Field(description="Exact number of deals that satisfy the spec.")
    deals_text: str | None = Field(description="`deals` as a decimal string.")
    deals_estimate: float | None = None
    deals_estimate_stderr: float | None = None
    deals_expected: str | None = Field(None, description="A script whose rnd() is weighed exactly: the deals it is "
                                       "expected to keep out of all, an exact integer or fraction 'p/q' "
                                       "(`deals` is null, the probability exact).")
    probability: float = Field(description="Probability that a random deal satisfies the spec.")
    probability_exact: str | None = Field(None, description="The exact probability as a fraction 'p/q'.")
    odds: str = Field(description="The probability as a player reads it: '1 in 291 (0.343%)' ('about ...' for an estimate).")
    one_in: float | None = Field(description="1 deal in `one_in` satisfies the spec; null when none does.")
    cases: int | None = Field(description="Cases in Pavlicek's listing (suit pattern x A-K-Q-J holding of each constrained seat); "
                              "null for an estimate, and for a split by coin cards listed one class at a time.")
    method: str
    rejection: Rejection | None = None
    side_total: int
    unconstrained_ways: int
    cells: int
    entries: int
    build_seconds: float


class JobRequest(BaseModel):
    """A generation job: ``count`` deals drawn uniformly from those that satisfy ``constraints``."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"constraints": {"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}},
                 "count": 32, "seed": "club night", "format": "pbn"}
            ]
        },
    )

    constraints: Spec
    count: int | None = Field(
        None, strict=True, ge=1, le=MAX_DEALS,
        description=("Number of deals; when not given, the script's produce, else its generate (a spec naming "
                     "neither needs it). Above the server's configured maximum the answer is 413."),
    )
    seed: StrictStr | StrictInt | None = Field(
        None,
        description=(
            "Seed of a reproducible stream (1 to 1000 characters); an integer is used as its decimal text, so 3 and "
            "\"3\" give the same deals. Without one the server picks a random seed and reports it."
        ),
    )
    stream: Stream = Field(
        "v1",
        description="Seeded stream version. v2 differs from v1 only for a spec that every deal fits, whose deal "
                    "numbers it reads straight off the stream (several times faster). v3 draws a listing that can be "
                    "cut in 16 shards, each from a stream of its own, so that each worker holds only its partition's "
                    "shards (other specs as v2); v1 and v2 stay reproducible.",
    )
    format: Format = Field("pbn", description="Default format of the deals endpoint for this job.")
    first_board: int = Field(1, strict=True, ge=1, le=MAX_FIRST_BOARD, description="Board number of the first deal.")
    dealer: StrictStr | None = Field(
        None, max_length=10,
        description="Dealer of every board (N, E, S, W or north ...), or \"rotate\" by board number. "
                    "Default: a dealer script's `dealer`, else rotate.",
    )
    vulnerability: StrictStr | None = Field(
        None, max_length=10,
        description="Vulnerability of every board (none, ns, ew, all), or \"rotate\" by board number. "
                    "Default: a dealer script's `vulnerable`, else rotate.",
    )

    @field_validator("seed")
    @classmethod
    def _seed_text(cls, v: str | int | None) -> str | None:
        """The seed as text: an integer becomes its decimal digits."""
        if v is None:
            return None
        text = str(v) if isinstance(v, int) else v
        if not 1 <= len(text) <= 1000:
            raise ValueError("the seed must be 1 to 1000 characters")
        return text


class PhaseProgress(BaseModel):
    done: int
    total: int


class DrawProgress(PhaseProgress):
    deals_done: int
    deals_total: int


class Progress(BaseModel):
    """``done``/``total`` count deals; ``fraction`` (0..1) blends both phases
    (enumeration partitions and draw chunks) for a progress bar."""

    done: int
    total: int
    fraction: float
    enumeration: PhaseProgress
    drawing: DrawProgress


class JobLinks(BaseModel):
    self: str
    deals: str
    pbn: str
    numbers: str


class JobStatus(BaseModel):
    """State, progress and count of a job."""

    id: str
    state: JobState
    count: int = Field(description="Deals asked for.")
    seed: str
    seed_generated: bool
    stream: str = Field(description="The seeded stream version its deals come from.")
    format: str
    first_board: int
    dealer: str = Field(description="The dealer of every board (N, E, S or W), or \"rotate\".")
    vulnerability: str = Field(description="The vulnerability of every board (none, ns, ew, all), or \"rotate\".")
    constraints: dict[str, Any] = Field(description="The spec in canonical form.")
    progress: Progress
    result: CountResult | None = Field(description="The spec's exact count and probability, once known.")
    error: str | None = Field(description="Why the job failed or was cancelled.")
    note: str | None = Field(None, description="A warning about the job, e.g. that no worker has been seen to run it.")
    created: str
    started: str | None
    updated: str | None
    finished: str | None
    links: JobLinks


class ProblemError(BaseModel):
    detail: str
    pointer: str = Field(description="JSON Pointer (RFC 6901) into the request body.")


class ProblemDetails(BaseModel):
    """RFC 9457 problem details."""

    model_config = ConfigDict(extra="allow")

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    instance: str | None = None
    errors: list[ProblemError] | None = None


__all__ = ["CountResult", "JobRequest", "JobStatus", "Progress", "ProblemDetails", "Spec", "DEAL_FORMATS"]
