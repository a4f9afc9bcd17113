"""The set file: a JSON object describing a tournament set.

Keys (see docs/tournaments.md): ``event``, ``site``, ``date``; ``sessions``,
a list of ``{"name": "1", "boards": [1, 27]}``; either ``spec`` (a spec
object, or the path of a JSON spec or a ``.dlr`` dealer script, relative to
the set file) or ``mix`` (``[{"spec": ..., "boards": K}, ...]`` whose ``K``
add up to every session's board count); ``dealer`` (``"rotate"`` or a seat),
``vulnerability`` (``"rotate"``, ``"none"``, ``"ns"``, ``"ew"``, ``"all"``);
``double_dummy`` (bool); and optionally ``rotate_to_dealer`` (false, true, or
the seat to move to each board's dealer).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import SetError
from ..formats.rotation import Rotation, seat_index


class SessionModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=40)
    boards: tuple[int, int]

    @field_validator("name")
    @classmethod
    def _file_name(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", v) or ".." in v:
            raise ValueError("session name must be letters, digits, '_', '-' or '.' (it names files)")
        return v

    @field_validator("boards")
    @classmethod
    def _range(cls, v: tuple[int, int]) -> tuple[int, int]:
        if not 1 <= v[0] <= v[1]:
            raise ValueError(f"boards must be [first, last] with 1 <= first <= last, got {list(v)}")
        if v[1] - v[0] >= 100_000:
            raise ValueError("a session holds at most 100,000 boards")
        return v

    @property
    def count(self) -> int:
        return self.boards[1] - self.boards[0] + 1


SpecRef = str | dict[str, Any]


class MixItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    spec: SpecRef
    boards: int = Field(ge=1)


class SetFile(BaseModel):
    """A validated set file (see module doc)."""

    model_config = ConfigDict(extra="forbid")
    event: str = Field(default="?", max_length=200)
    site: str = Field(default="?", max_length=200)
    date: str = "?"
    sessions: list[SessionModel] = Field(min_length=1, max_length=100)
    spec: SpecRef | None = None
    mix: list[MixItem] | None = Field(default=None, min_length=1, max_length=64)
    dealer: str = "rotate"
    vulnerability: Literal["rotate", "none", "ns", "ew", "all", "both"] = "rotate"
    double_dummy: bool = True
    rotate_to_dealer: bool | str = False

    @field_validator("event", "site")
    @classmethod
    def _tag_text(cls, v: str) -> str:
        if any(ch in v for ch in '"\r\n'):
            raise ValueError("must not contain quotes or line breaks")
        return v

    @field_validator("date")
    @classmethod
    def _date(cls, v: str) -> str:
        m = re.fullmatch(r"(\d{4}|\?{4})[-.](\d{2}|\?\?)[-.](\d{2}|\?\?)", v)
        if v != "?" and not m:
            raise ValueError(f"date must be YYYY-MM-DD or YYYY.MM.DD, got {v!r}")
        return v

    @field_validator("dealer")
    @classmethod
    def _dealer(cls, v: str) -> str:
        if v != "rotate":
            seat_index(v)
        return v

    @model_validator(mode="after")
    def _spec_or_mix(self) -> SetFile:
        if (self.spec is None) == (self.mix is None):
            raise ValueError("give exactly one of 'spec' and 'mix'")
        names = [s.name for s in self.sessions]
        if len(set(names)) != len(names):
            raise ValueError("session names must be distinct")
        if self.mix is not None:
            total = sum(m.boards for m in self.mix)
            for s in self.sessions:
                if s.count != total:
                    raise ValueError(f"mix quotas add up to {total} boards but session {s.name!r} has {s.count}")
        if isinstance(self.rotate_to_dealer, str):
            seat_index(self.rotate_to_dealer)
        return self

    # ------------------------------------------------------------ derived

    @property
    def pbn_date(self) -> str:
        """``YYYY.MM.DD`` as PBN wants it (``?`` when unknown)."""
        return self.date.replace("-", ".")

    def rotation(self) -> Rotation:
        """The dealer and vulnerability of every board."""
        return Rotation.from_words(self.dealer, self.vulnerability)

    def spec_refs(self) -> list[SpecRef]:
        """The set's specs, in mix order (one for a single-spec set)."""
        if self.mix is not None:
            return [m.spec for m in self.mix]
        assert self.spec is not None  # validated: a set has a spec or a mix
        return [self.spec]

    def quotas(self, session: SessionModel) -> list[int]:
        """Boards of each spec in ``session`` (a single spec fills it)."""
        return [m.boards for m in self.mix] if self.mix is not None else [session.count]


def _one_line(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(x) for x in err["loc"]) or "set"
    msg = err["msg"].removeprefix("Value error, ")
    return f"set file: {where}: {msg}"


def parse_set(data: Any) -> SetFile:
    """Validate a decoded set file; :class:`SetError` (one line) when bad."""
    try:
        return SetFile.model_validate(data)
    except ValidationError as exc:
        raise SetError(_one_line(exc)) from None


def load_set(path: str | Path) -> tuple[SetFile, Path]:
    """Read and validate the set file at ``path``; returns it and its folder
    (spec paths are relative to it).  :class:`SetError` on any problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SetError(f"set file: cannot read {str(p)!r}: {exc.strerror if isinstance(exc, OSError) else 'not UTF-8'}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SetError(f"set file: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    return parse_set(data), p.resolve().parent
