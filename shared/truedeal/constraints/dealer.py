"""Dealer scripts to the internal form (:class:`ir.Program`): statements and entry points.

A script is a list of statements, in any order:

* ``condition EXPR``, or a bare ``EXPR`` (BBO's dialect).  As in dealer, the
  last condition given wins;
* ``name = EXPR``: a variable, substituted where it is used later (it may hold
  a number or a condition; as in dealer, a name is defined once);
* ``predeal north SAK, HQJ2[, south D5432 ...]``; ``produce N``; ``generate N``;
  ``dealer SEAT``; ``vulnerable none|NS|EW|all``.  As in dealer, the first
  ``produce``/``generate`` counts and the last of the others;
* ``pointcount 13 9 6 4 2 1`` (the scale ``hcp`` reads) and ``altcount N w...``
  (the scale of ``ptN`` and its named alias); as in dealer, the last one of
  each scale applies to the whole script;
* ``action A, B, ...``: ``printall``, ``print(SEAT, ...)``, ``printew``,
  ``printpbn``, ``printcompact[(EXPR)]``, ``printoneline[(EXPR)]``,
  ``printes ITEMS`` (also ``printes(ITEMS)``), ``average ["label"] EXPR``,
  ``frequency ["label"] (EXPR, lo, hi[, EXPR, lo, hi])``; a trailing comma is
  allowed.  As in dealer, the last ``action`` statement is the one kept.

Expressions are parsed by :mod:`.dealer_expr`.  See docs/dealer-scripts.md.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, replace
from pathlib import Path

from ..cards import card
from . import fold, ir
from .card_owner import predeal_folded
from .dealer_expr import DEFAULT_SCALES, FUNCTIONS, RANKS, SEATS, ExprParser, describe
from .dealer_lex import ScriptError, Token, tokenize

__all__ = [
    "ScriptError", "Script", "Statement", "parse_script", "parse_program", "parse_condition", "parse_number", "load_program", "is_script",
]  # fmt: skip

STATEMENTS = frozenset(
    {"condition", "produce", "generate", "dealer", "vulnerable", "predeal", "pointcount", "altcount", "action"}
)
ACTIONS = frozenset(
    {"printall", "print", "printew", "printpbn", "printcompact", "printoneline", "printes", "average", "frequency"}
)
_VULNERABLE = {"none": "none", "NS": "ns", "ns": "ns", "EW": "ew", "ew": "ew", "all": "all"}


#: Largest condition (plus actions) accepted, in IR nodes after substituting
#: variables (the engine walks each shared node once: the library's Fourth
#: Suit Forcing expands to 1,030,987 nodes and plans in 23 s and 1 GB).
MAX_NODES = 4_000_000


@dataclass(frozen=True)
class Statement:
    """Where one statement lies in the source: ``text[start:end]``.  ``kind`` is
    the keyword (``condition``, ``action``, ``predeal`` ...), ``define`` for a
    variable or ``bare`` for a condition written without ``condition``."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Script:
    """A parsed script: its program, and where its (last) condition starts.

    ``condition_at`` is ``(line, column, offset)`` of the condition's first
    token (``None`` without a condition); ``bare`` is True when it was written
    without the ``condition`` keyword.  ``statements`` lists every statement
    in order; ``variables`` the final value of each variable, by name."""

    program: ir.Program
    condition_at: tuple[int, int, int] | None = None
    bare: bool = False
    statements: tuple[Statement, ...] = ()
    variables: tuple[tuple[str, object], ...] = ()


class _ScriptParser(ExprParser):
    """One pass over a script.  ``scales`` fixes the point scales for the
    whole pass (the second pass of :func:`parse_script`); without it the
    pass starts from dealer's defaults and records what the script sets in
    ``scales_set``."""

    def __init__(self, text: str, scales: dict | None = None):
        super().__init__(tokenize(text), scales=None if scales is None else dict(scales))
        self.fixed_scales = scales is not None
        self.scales_set: dict[str, tuple[int, ...]] = {}
        self.fields: dict = {}
        self.predeal: dict[int, list[int]] = {}
        self.owner: dict[int, int] = {}
        self.actions: list[ir.Action] = []
        self.condition: ir.Cond = ir.TRUE
        self.condition_at: tuple[int, int, int] | None = None
        self.bare = False
        self.statements: list[Statement] = []

    def script(self) -> Script:
        while self.tok.kind != "eof":
            self.statement()
        self.check_size()
        program = ir.Program(
            condition=self.condition,
            predeal=tuple((s, tuple(sorted(c))) for s, c in sorted(self.predeal.items())),
            actions=tuple(self.actions),
            **self.fields,
        )
        variables = tuple(self.env.items())
        return Script(program, self.condition_at, self.bare, tuple(self.statements), variables)

    def check_size(self) -> None:
        """Variables may be used many times each: refuse a script whose expanded
        condition and actions would take the engine too long."""
        memo: dict = {}
        size = fold.tree_size(self.condition, memo) + fold.tree_size(tuple(self.actions), memo)
        if size > MAX_NODES:
            at = self.condition_at or (1, 1, 0)
            raise ScriptError(at[0], at[1], f"script too large once its variables are expanded ({size:,} nodes)")

    # ------------------------------------------------------------ statements
    def statement(self) -> None:
        start = self.i
        kind = self.statement_body()
        last = self.tokens[self.i - 1] if self.i > start else self.tok
        self.statements.append(Statement(kind, self.tokens[start].start, last.end))

    def statement_body(self) -> str:
        """Parse one statement; return its kind."""
        tok = self.tok
        if tok.kind == "ident" and tok.text in STATEMENTS:
            self.advance()
            getattr(self, "st_" + tok.text)(tok)
            return tok.text
        if tok.kind == "ident" and tok.text == "evalcontract":
            raise self.error(tok, "'evalcontract' is not supported")
        if tok.kind == "ident" and self.peek().kind == "op" and self.peek().text == "=":
            self.define()
            return "define"
        if tok.kind == "op" and tok.text not in ("(", "!", "-"):
            raise self.error(tok, f"unexpected {describe(tok)} (expected a statement)")
        self.set_condition(tok, bare=True)
        return "bare"

    def set_condition(self, tok: Token, bare: bool) -> None:
        first = self.tok
        self.condition = fold.as_cond(self.expression())
        self.condition_at = (first.line, first.col, first.start)
        self.bare = bare

    def st_condition(self, tok: Token) -> None:
        self.set_condition(tok, bare=False)

    def define(self) -> None:
        name = self.advance()
        if name.text in STATEMENTS | ACTIONS | SEATS.keys() | {"and", "or", "not"}:
            raise self.error(name, f"'{name.text}' is a keyword and cannot be a variable")
        if name.text in FUNCTIONS:
            raise self.error(name, f"'{name.text}' is a function and cannot be a variable")
        # dealer refuses a second definition; BBO's dialect accepts it (the
        # library's Major Suit Fit defines sTP for North, then for South).  Names
        # are bound as they are parsed, so each use reads the definition above it.
        self.advance()  # '='
        self.env[name.text] = self.expression()

    def number(self, what: str, signed: bool = False) -> int:
        sign = 1
        if signed and self.at("-"):
            self.advance()
            sign = -1
        tok = self.tok
        if tok.kind != "num":
            raise self.error(tok, f"expected {what} but found {describe(tok)}")
        self.advance()
        assert isinstance(tok.value, int)  # a "num" token's value
        return sign * tok.value

    def st_produce(self, tok: Token) -> None:
        n = self.number("a number of deals after 'produce'")
        self.fields.setdefault("produce", n)  # dealer keeps the first one

    def st_generate(self, tok: Token) -> None:
        n = self.number("a number of deals after 'generate'")
        self.fields.setdefault("generate", n)  # dealer keeps the first one

    def st_dealer(self, tok: Token) -> None:
        self.fields["dealer"] = self.seat()

    def st_vulnerable(self, tok: Token) -> None:
        self.fields["vulnerable"] = self.word(_VULNERABLE, "vulnerability", "none, NS, EW, all")

    def st_pointcount(self, tok: Token) -> None:
        self.set_scale("hcp", self.weights(tok))

    def set_scale(self, name: str, weights: tuple[int, ...]) -> None:
        self.scales_set[name] = weights
        if not self.fixed_scales:
            self.scales[name] = weights

    def st_altcount(self, tok: Token) -> None:
        n_tok = self.tok
        n = self.number("a scale number 0-9 after 'altcount'")
        if not 0 <= n <= 9:
            raise self.error(n_tok, f"altcount {n}: the scales are numbered 0 to 9")
        if self.at(","):
            self.advance()
        self.set_scale(f"pt{n}", self.weights(tok))

    def weights(self, tok: Token) -> tuple[int, ...]:
        """Up to 13 weights, ace first, with or without commas between them.
        As in dealer, none at all clears the scale and a weight may be negative."""
        out: list[int] = []
        while self.at_weight(0) or (out and self.at(",") and self.at_weight(1)):
            if self.at(","):
                self.advance()
            out.append(self.number("a weight", signed=True))
        if len(out) > 13:
            raise self.error(tok, f"'{tok.text}' takes at most 13 weights, got {len(out)}")
        return tuple(out)

    def at_weight(self, k: int) -> bool:
        """Does a weight (``N`` or ``-N``) start ``k`` tokens ahead?"""
        t = self.peek(k)
        return t.kind == "num" or (t.kind == "op" and t.text == "-" and self.peek(k + 1).kind == "num")

    # ---------------------------------------------------------------- predeal
    def st_predeal(self, tok: Token) -> None:
        seat = self.seat()
        self.holding(seat)
        while self.at(","):
            self.advance()
            if self.tok.kind == "ident" and self.tok.text in SEATS:
                seat = self.seat()
            self.holding(seat)

    def holding(self, seat: int) -> None:
        """``SAK``-style: a suit letter then ranks, highest first."""
        tok = self.tok
        text = tok.text
        if tok.kind != "ident" or text[0] not in "SHDC" or any(r not in RANKS for r in text[1:]):
            raise self.error(tok, f"bad holding {describe(tok)} (write a suit letter then ranks, e.g. SAK or HQJ2)")
        self.advance()
        suit = "SHDC".index(text[0])
        for r in text[1:]:
            c = card(RANKS.index(r), suit)
            if c in self.owner:
                raise self.error(tok, f"card {text[0]}{r} is predealt twice")
            self.owner[c] = seat
            self.predeal.setdefault(seat, []).append(c)
        if len(self.predeal.get(seat, ())) > 13:
            raise self.error(tok, "more than 13 cards predealt to one seat")

    # ---------------------------------------------------------------- actions
    def st_action(self, tok: Token) -> None:
        self.actions = [self.action()]  # as in dealer, a later 'action' statement replaces the list
        while self.at(","):
            self.advance()
            if not (self.tok.kind == "ident" and self.tok.text in ACTIONS):
                break  # a trailing comma (BBO)
            self.actions.append(self.action())

    def action(self) -> ir.Action:
        tok = self.tok
        if tok.kind != "ident" or tok.text not in ACTIONS:
            raise self.error(tok, f"unknown action {describe(tok)} (actions are {', '.join(sorted(ACTIONS))})")
        self.advance()
        name = tok.text
        if name == "print":
            return ir.Action("print", style="print", seats=self.seat_list())
        if name in ("printcompact", "printoneline"):
            return ir.Action("print", style=name, expr=self.optional_argument(name))
        if name == "printes":
            return ir.Action("print", style="printes", items=self.printes_items())
        if name == "average":
            label = self.label()
            return ir.Action("average", label=label, expr=self.expression())
        if name == "frequency":
            return self.frequency()
        return ir.Action("print", style=name)

    def optional_argument(self, name: str):
        """dealer's ``printcompact(EXPR)``: an argument only in parentheses (a
        ``(`` right after the action, even on the next line, opens it)."""
        if not self.at("("):
            return None
        self.advance()
        expr = self.expression()
        self.expect(")", f" to close '{name}('")
        return expr

    def starts_expression(self) -> bool:
        t = self.tok
        if t.kind == "num" or (t.kind == "op" and t.text in ("(", "!", "-")):
            return True
        return t.kind == "ident" and t.text not in ACTIONS and t.text not in STATEMENTS

    def seat_list(self) -> tuple[int, ...]:
        self.expect("(", " after 'print'")
        seats = [self.seat()]
        while self.at(","):
            self.advance()
            seats.append(self.seat())
        self.expect(")")
        return tuple(seats)

    def label(self) -> str:
        if self.tok.kind == "str":
            return str(self.advance().value)
        return ""

    def printes_items(self) -> tuple:
        paren = self.at("(")
        if paren:
            self.advance()
        items = [self.printes_item()]
        while self.at(",") and (paren or self.peek().kind == "str" or self.peek_starts_item()):
            self.advance()
            items.append(self.printes_item())
        if paren:
            self.expect(")", " to close 'printes('")
        return tuple(items)

    def peek_starts_item(self) -> bool:
        self.i += 1
        try:
            return self.starts_expression()
        finally:
            self.i -= 1

    def printes_item(self):
        if self.tok.kind == "str":
            return self.advance().value
        return self.expression()

    def frequency(self) -> ir.Action:
        label = self.label()
        self.expect("(", " after 'frequency'")
        expr = self.expression()
        bounds: tuple[int, ...] = self.bounds()
        expr2 = None
        if self.at(","):
            self.advance()
            expr2 = self.expression()
            bounds += self.bounds()
        self.expect(")", " to close 'frequency('")
        return ir.Action("frequency", label=label, expr=expr, expr2=expr2, bounds=bounds)

    def bounds(self) -> tuple[int, int]:
        self.comma()
        lo = self.number("a lower bound", signed=True)
        self.comma()
        at = self.tok
        hi = self.number("an upper bound", signed=True)
        if hi < lo:  # (dealer's table of hi - lo + 1 counts would be negative)
            raise self.error(at, f"the upper bound {hi} is below the lower bound {lo}")
        return (lo, hi)


# ----------------------------------------------------------------- entry points


def parse_script(text: str) -> Script:
    """Parse a whole script.  Raises :class:`ScriptError` (one line, with line and column).

    dealer fills its point tables while it parses and reads them while it
    deals, so the last ``pointcount`` (or ``altcount N``) is the scale of
    every ``hcp`` (``ptN``) in the script, wherever it is written.  A script
    that sets a scale is therefore parsed twice, the second time with the
    final scales."""
    first = _ScriptParser(text)
    script = first.script()
    if first.scales_set:
        script = _ScriptParser(text, scales={**DEFAULT_SCALES, **first.scales_set}).script()
    return replace(script, program=predeal_folded(script.program))


def parse_program(text: str) -> ir.Program:
    """The :class:`ir.Program` of a script's text."""
    return parse_script(text).program


def parse_condition(text: str) -> ir.Cond:
    """One expression (no statements, no variables) as a condition, e.g.
    ``"hcp(north) + hcp(south) >= 25"``.  Raises :class:`ScriptError`."""
    p = ExprParser(tokenize(text))
    cond = fold.as_cond(p.expression())
    if p.tok.kind != "eof":
        raise p.error(p.tok, f"unexpected {describe(p.tok)} after the condition")
    return cond


def parse_number(text: str) -> ir.Num:
    """One expression (no statements, no variables) as a number, e.g.
    ``"hcp(north) + hcp(south)"``; a condition reads as 1 or 0.  Raises
    :class:`ScriptError`."""
    p = ExprParser(tokenize(text))
    num = fold.as_num(p.expression())
    if p.tok.kind != "eof":
        raise p.error(p.tok, f"unexpected {describe(p.tok)} after the expression")
    return num


def _read(source) -> str:
    """The text of ``source``: a path (``Path`` or a one-line string naming a
    file), or the script's text itself."""
    if isinstance(source, os.PathLike):
        return Path(source).read_text(encoding="utf-8")
    if "\n" not in source and len(source) < 4096:
        path = Path(source)
        if _is_file(path):
            return path.read_text(encoding="utf-8")
        if path.suffix.lower() in (".dlr", ".dealer"):
            raise FileNotFoundError(errno.ENOENT, "no such script", source)  # the caller names the file
    return source


def _is_file(path: Path) -> bool:
    """Whether ``path`` names a file; a line too long for a file name is not one."""
    try:
        return path.is_file()
    except OSError:
        return False


def load_program(source) -> ir.Program:
    """The Program of a dealer script given by path or text.  Raises
    :class:`ScriptError` for a bad script and ``OSError`` for an unreadable file."""
    return parse_program(_read(source))


def is_script(source) -> bool:
    """True for a dealer script, False for a JSON spec: a ``.dlr`` path is a
    script and a ``.json`` path a spec; otherwise a script is text whose first
    non-blank character is not ``{``."""
    if isinstance(source, os.PathLike) or ("\n" not in source and len(source) < 4096):
        suffix = Path(source).suffix.lower()
        if suffix in (".dlr", ".dealer"):
            return True
        if suffix == ".json":
            return False
    text = _read(source)
    return not text.lstrip().startswith("{")
