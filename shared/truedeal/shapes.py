"""Shape expressions in the syntax of the classic ``dealer`` program.

A *term* is four characters giving the spade, heart, diamond and club
lengths in that order; each character is a digit (exactly that length) or
``x`` / ``X`` (any length).  ``any`` before a term lets the four characters
go to the suits in every order.  Terms are combined with ``+`` (union) and
``-`` (set difference), strictly left to right, so ``a - b + c`` is
``(a - b) + c``.  Whitespace around terms, operators and after ``any`` is
free (``"any 4333"`` and ``"any4333"`` are the same); a term itself must be
written without spaces.

Examples::

    "5xxx + x5xx"                      five spades or five hearts (exactly)
    "any 4333 + any 4432 + any 5332"   balanced
    "any 5xxx - 5xxx"                  some five-card suit, but not spades

A term without ``x`` must sum to 13; a term with ``x`` must have digits
summing to at most 13 (it then always matches at least one pattern).

An expression evaluates to a boolean mask over :data:`truedeal.patterns.PATTERNS`
(shape ``(560,)``); pattern ``i`` is allowed iff ``mask[i]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

import numpy as np

from .patterns import N_PATTERNS, PATTERNS

__all__ = ["ShapeError", "ShapeTerm", "parse_shape", "parse_terms", "normalize_shape", "term_mask"]

_TERM_CHARS = frozenset("0123456789x")
_OPERATORS = "+-"


class ShapeError(ValueError):
    """A malformed shape expression.  The message is one line and names the problem."""


@dataclass(frozen=True)
class ShapeTerm:
    """One term of a shape expression.

    ``chars`` is the term in canonical spelling: four characters, each a digit
    or a lower-case ``x``, in S H D C order.  ``any`` is True when the term was
    preceded by ``any`` (every suit order allowed).
    """

    chars: str
    any: bool = False

    def __str__(self) -> str:
        return f"any {self.chars}" if self.any else self.chars


def _parse_term(chunk: str) -> ShapeTerm:
    """Parse one non-empty operand (``"any 4333"``, ``"5xxx"``), whitespace allowed around it."""
    text = chunk.strip()
    is_any = False
    if text[:3].lower() == "any":
        is_any = True
        text = text[3:].lstrip()
        if not text:
            raise ShapeError("'any' must be followed by a term")
    term = text.lower()
    if len(term) != 4 or not set(term) <= _TERM_CHARS:
        raise ShapeError(f"bad term {text!r} (a term is 4 characters, digits or x)")
    digits = sum(int(c) for c in term if c != "x")
    if "x" not in term:
        if digits != 13:
            raise ShapeError(f"term {text!r} sums to {digits}, not 13")
    elif digits > 13:
        raise ShapeError(f"term {text!r} has digits summing to {digits}, more than 13")
    result = ShapeTerm(term, is_any)
    if not term_mask(result).any():  # cannot happen after the checks above; kept as a guard
        raise ShapeError(f"term {text!r} matches no hand pattern")
    return result


def parse_terms(expr: str) -> list[tuple[str, ShapeTerm]]:
    """Split a shape expression into ``(operator, term)`` pairs.

    The first pair's operator is ``"+"`` (union with the empty set).  Raises
    :class:`ShapeError` on any syntax problem; a non-string ``expr`` is a
    :class:`ShapeError` too.
    """
    if not isinstance(expr, str):
        raise ShapeError(f"a shape expression must be a string, not {type(expr).__name__}")
    if not expr.strip():
        raise ShapeError("empty shape expression")
    out: list[tuple[str, ShapeTerm]] = []
    op: str | None = None
    start = 0
    for i, ch in enumerate(expr + "+"):  # sentinel operator flushes the last chunk
        if ch in _OPERATORS:
            chunk = expr[start:i]
            if not chunk.strip():
                if op is None:
                    raise ShapeError(f"missing term before '{ch}' at the start of the expression")
                if i == len(expr):
                    raise ShapeError(f"missing term after '{op}' at the end of the expression")
                raise ShapeError(f"missing term between '{op}' and '{ch}'")
            out.append((op or "+", _parse_term(chunk)))
            op = ch
            start = i + 1
    return out


def term_mask(term: ShapeTerm) -> np.ndarray:
    """Boolean mask ``(560,)`` of the patterns matched by one term."""
    orders = set(permutations(term.chars)) if term.any else {tuple(term.chars)}
    mask = np.zeros(N_PATTERNS, dtype=bool)
    for order in orders:
        m = np.ones(N_PATTERNS, dtype=bool)
        for suit, c in enumerate(order):
            if c != "x":
                m &= PATTERNS[:, suit] == int(c)
        mask |= m
    return mask


def parse_shape(expr: str) -> np.ndarray:
    """Evaluate a shape expression to a boolean mask of shape ``(560,)`` over PATTERNS.

    Terms are combined left to right: ``+`` is union, ``-`` removes the
    patterns of the following term.  The result may be all False (e.g.
    ``"5xxx - 5xxx"``); that is not an error here.  Raises :class:`ShapeError`
    (a ``ValueError``) with a one-line message for malformed input.
    """
    mask = np.zeros(N_PATTERNS, dtype=bool)
    for op, term in parse_terms(expr):
        if op == "+":
            mask |= term_mask(term)
        else:
            mask &= ~term_mask(term)
    return mask


def normalize_shape(expr: str) -> str:
    """Canonical spelling of a valid expression: ``"any 4333 + 5xxx - x5xx"``.

    Single spaces around operators and after ``any``, lower-case ``x`` and
    ``any``.  ``parse_shape(normalize_shape(e))`` equals ``parse_shape(e)``,
    and normalising twice changes nothing.  Raises :class:`ShapeError` like
    :func:`parse_shape`.
    """
    parts: list[str] = []
    for i, (op, term) in enumerate(parse_terms(expr)):
        parts.append(str(term) if i == 0 else f"{op} {term}")
    return " ".join(parts)
