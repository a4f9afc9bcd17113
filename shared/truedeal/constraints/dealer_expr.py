"""Expressions of the dealer language: a recursive-descent parser to IR values.

Precedence follows dealer's yacc grammar, which is *not* C's: every binary
operator has its own level, all left-associative, lowest first ``||``,
``&&``, ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``+``, ``-``, ``*``,
``/``, ``%``.  An operator of a higher level on the right groups first, so
``a * b / c`` is ``a * (b / c)`` and ``a / b % c`` is ``a / (b % c)``.
``?:`` is loosest and left-associative: ``a ? b : c ? d : e`` is
``(a ? b : c) ? d : e``, while its middle is a whole expression.  The
prefix ``!``/``not`` (and unary ``-``, which dealer allows on numbers only)
bind tightest.  Functions are
resolved while parsing, so an unknown function, a bad seat or an undefined
variable is a :class:`ScriptError` naming its line and column.  Nothing is
ever evaluated as code.
"""

from __future__ import annotations

from ..cards import SEAT_NAMES
from ..patterns import PATTERNS
from . import fold, ir, kaplan_rubens
from .dealer_lex import ScriptError, Token

SEATS = {name: i for i, name in enumerate(SEAT_NAMES)}
SUITS = {
    **{n: i for i, n in enumerate(("spades", "hearts", "diamonds", "clubs"))},
    **{n: i for i, n in enumerate(("spade", "heart", "diamond", "club"))},
}
STRAINS = {**SUITS, "notrump": 4, "notrumps": 4}
RANKS = "AKQJT98765432"

#: dealer's alternative point counts pt0..pt9 before any ``altcount``.
DEFAULT_SCALES: dict[str, tuple[int, ...]] = {
    "hcp": (4, 3, 2, 1),
    "pt0": (0, 0, 0, 0, 1),
    "pt1": (0, 0, 0, 1),
    "pt2": (0, 0, 1),
    "pt3": (0, 1),
    "pt4": (1,),
    "pt5": (1, 1),
    "pt6": (1, 1, 1),
    "pt7": (1, 1, 1, 1),
    "pt8": (1, 1, 1, 1, 1),
    "pt9": (6, 4, 2, 1),
}
#: Function names that read a point scale, and the scale each reads.
SCALE_OF = {
    "hcp": "hcp", "hcps": "hcp",
    "tens": "pt0", "ten": "pt0", "jacks": "pt1", "jack": "pt1",
    "queens": "pt2", "queen": "pt2", "kings": "pt3", "king": "pt3",
    "aces": "pt4", "ace": "pt4",
    "top2": "pt5", "top3": "pt6", "top4": "pt7", "top5": "pt8", "c13": "pt9",
    **{f"pt{i}": f"pt{i}" for i in range(10)},
}  # fmt: skip
LOCAL_FNS = {"controls": ir.CONTROLS, "control": ir.CONTROLS, "losers": ir.LOSERS, "loser": ir.LOSERS}
OPAQUE = {"tricks": "tricks", "trick": "tricks", "score": "score", "imps": "imps", "imp": "imps", "rnd": "rnd"}
FUNCTIONS = (frozenset(SCALE_OF) | frozenset(LOCAL_FNS) | frozenset(SUITS) | frozenset(OPAQUE)
             | {"shape", "hascard", "cccc", "quality"})

#: Deepest nesting of parentheses and prefix operators (Python's stack is the limit).
MAX_DEPTH = 40

#: Binary operators and their precedence, as dealer's grammar declares them:
#: one ``%left`` line each, so each its own level (higher binds tighter).
_BINARY = {
    "||": (1, "or"), "or": (1, "or"), "&&": (2, "and"), "and": (2, "and"),
    "==": (3, "=="), "!=": (4, "!="), "<": (5, "<"), "<=": (6, "<="), ">": (7, ">"), ">=": (8, ">="),
    "+": (9, "+"), "-": (10, "-"), "*": (11, "*"), "/": (12, "/"), "%": (13, "%"),
}  # fmt: skip


class ExprParser:
    """Parses expressions from a token list at ``self.i``.

    ``env`` maps variable names to IR values (substituted where used);
    ``scales`` maps ``hcp``/``pt0``..``pt9`` to their current weights."""

    def __init__(self, tokens: list[Token], env: dict | None = None, scales: dict | None = None):
        self.tokens = tokens
        self.i = 0
        self.env = {} if env is None else env
        self.scales = dict(DEFAULT_SCALES) if scales is None else scales
        self.depth = 0

    # ------------------------------------------------------------ tokens
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def advance(self) -> Token:
        t = self.tokens[self.i]
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return t

    def at(self, text: str) -> bool:
        return self.tok.kind in ("op", "ident") and self.tok.text == text

    def error(self, tok: Token, message: str) -> ScriptError:
        return ScriptError(tok.line, tok.col, message)

    def expect(self, text: str, what: str = "") -> Token:
        if not self.at(text):
            raise self.error(self.tok, f"expected '{text}'{what} but found {describe(self.tok)}")
        return self.advance()

    # ------------------------------------------------------- expressions
    def nest(self) -> None:
        """Count one level of nesting; refuse scripts deep enough to exhaust Python's stack."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(self.tok, f"expression nested too deeply (more than {MAX_DEPTH} levels)")

    def expression(self):
        """One whole expression (an IR number, condition or :class:`fold.Flag`)."""
        self.nest()
        try:
            return self.ternary()
        finally:
            self.depth -= 1

    def ternary(self):
        """``cond ? middle : other``, chained to the left as dealer's grammar
        does: the else branch stops at the next ``?``."""
        start = self.tok
        value = self.binary(1)
        while self.at("?"):
            self.advance()
            then = self.expression()
            self.expect(":", " in 'a ? b : c'")
            other = self.binary(1)
            value = self.fold_at(start, fold.if_else, value, then, other)
        return value

    def binary(self, min_level: int):
        """Precedence climbing: operators of level >= ``min_level``, each left-associative."""
        left = self.unary()
        while self.tok.kind in ("op", "ident") and self.tok.text in _BINARY:
            level, op = _BINARY[self.tok.text]
            if level < min_level:
                break
            op_tok = self.advance()
            right = self.binary(level + 1)  # recursion bounded by the 13 levels
            left = self.apply(op_tok, op, left, right)
        return left

    def apply(self, tok: Token, op: str, left, right):
        if op == "or":
            return fold.or_(left, right)
        if op == "and":
            return fold.and_(left, right)
        if op in ("+", "-", "*", "/", "%"):
            return self.fold_at(tok, fold.arith, op, left, right)
        return fold.compare(op, left, right)

    def fold_at(self, tok: Token, fn, *args):
        try:
            return fn(*args)
        except ZeroDivisionError:
            raise self.error(tok, "division by zero") from None
        except OverflowError:
            raise self.error(tok, "constant too large") from None

    def unary(self):
        if self.at("!") or self.at("not") or self.at("-"):
            op = self.advance()
            self.nest()
            try:
                item = self.unary()
            finally:
                self.depth -= 1
            return fold.not_(item) if op.text != "-" else self.fold_at(op, fold.negate, item)
        return self.primary()

    def primary(self):
        tok = self.tok
        if tok.kind == "num":
            self.advance()
            return fold.const(tok.value)
        if self.at("("):
            self.advance()
            value = self.expression()
            self.expect(")")
            return value
        if tok.kind == "ident" and (tok.text[0].isalpha() or tok.text[0] == "_"):
            # A defined variable is never called: as in dealer, whose function
            # names are keywords, ``x (a or b)`` ends one statement at ``x``
            # (a bare condition often follows a definition on the next line).
            called = self.peek().text == "(" and self.peek().kind == "op"
            if called and (tok.text in FUNCTIONS or tok.text not in self.env):
                return self.call()
            return self.variable()
        raise self.error(tok, f"expected an expression but found {describe(tok)}")

    def variable(self):
        tok = self.advance()
        if tok.text in self.env:
            return self.env[tok.text]
        if tok.text in FUNCTIONS:
            raise self.error(tok, f"function '{tok.text}' needs its arguments in parentheses")
        raise self.error(tok, f"undefined variable '{tok.text}'")

    # ---------------------------------------------------------- functions
    def call(self):
        name_tok = self.advance()
        name = name_tok.text
        self.expect("(")
        if name in SCALE_OF:
            value = self.feature_call(ir.weights(*self.scales[SCALE_OF[name]]))
        elif name in LOCAL_FNS:
            value = self.feature_call(LOCAL_FNS[name])
        elif name in SUITS:
            seat = self.seat()
            value = _feature(seat, (SUITS[name],), ir.LENGTH)
        elif name == "shape":
            value = self.shape()
        elif name == "hascard":
            value = self.hascard()
        elif name in OPAQUE:
            value = self.opaque(OPAQUE[name])
        elif name == "cccc":
            value = kaplan_rubens.cccc(self.seat())
        elif name == "quality":
            seat = self.seat()
            self.comma()
            value = kaplan_rubens.quality(seat, self.suit())
        else:
            raise self.error(name_tok, f"unknown function '{name}'")
        self.expect(")", f" to close '{name}('")
        return value

    def feature_call(self, fn: ir.LocalFn) -> ir.Linear:
        seat = self.seat()
        suits = ir.ALL_SUITS
        if self.at(","):
            self.advance()
            suits = (self.suit(),)
        return _feature(seat, suits, fn)

    def word(self, table: dict, what: str, choices: str) -> int:
        tok = self.tok
        if tok.kind != "ident" or tok.text not in table:
            raise self.error(tok, f"bad {what} {describe(tok)} (one of {choices})")
        self.advance()
        return table[tok.text]

    def seat(self) -> int:
        return self.word(SEATS, "seat", "north, east, south, west")

    def suit(self) -> int:
        return self.word(SUITS, "suit", "spades, hearts, diamonds, clubs")

    def comma(self) -> None:
        self.expect(",")

    def hascard(self) -> fold.Flag:
        seat = self.seat()
        self.comma()
        tok = self.tok
        text = tok.text
        if tok.kind != "ident" or len(text) != 2 or text[0] not in RANKS or text[1] not in "SHDC":
            raise self.error(tok, f"bad card {describe(tok)} (a card is a rank then a suit, e.g. AS or TC)")
        self.advance()
        fn = ir.one_rank(RANKS.index(text[0]))
        return fold.Flag(_feature(seat, ("SHDC".index(text[1]),), fn))

    def shape(self) -> ir.ShapeIn:
        from ..shapes import ShapeError, parse_shape

        seat = self.seat()
        self.comma()
        first = self.tok
        parts: list[str] = []
        prev = None
        while not (self.at(")") or self.tok.kind == "eof"):
            t = self.advance()
            text = "+" if t.text == "," else t.text  # dealer's ',' between terms means '+'
            parts.append(text if prev is None or prev.end == t.start else " " + text)
            prev = t
        try:
            mask = parse_shape("".join(parts))
        except ShapeError as e:
            raise self.error(first, f"bad shape: {e}") from None
        return ir.ShapeIn(seat, frozenset(tuple(int(x) for x in p) for p in PATTERNS[mask]))

    def opaque(self, name: str) -> ir.Num:
        if name == "tricks":
            seat = self.seat()
            self.comma()
            strain = self.word(STRAINS, "strain", "spades, hearts, diamonds, clubs, notrump")
            return ir.OpaqueNum("tricks", (seat, strain))
        if name == "score":
            vul = self.word({"vul": True, "nv": False}, "vulnerability", "vul, nv")
            self.comma()
            contract = self.contract()
            self.comma()
            return fold.opaque("score", (vul, contract, fold.as_num(self.expression())))
        return fold.opaque(name, (fold.as_num(self.expression()),))  # imps, rnd

    def contract(self) -> tuple[int, int]:
        """``x3N``-style contract as ``(level, strain)``, strain 0..4 for S H D C N."""
        tok = self.tok
        t = tok.text
        if tok.kind != "ident" or len(t) != 3 or t[0] != "x" or t[1] not in "1234567" or t[2] not in "SHDCN":
            raise self.error(tok, f"bad contract {describe(tok)} (write e.g. x3N or x4S)")
        self.advance()
        return (int(t[1]), "SHDCN".index(t[2]))


def _feature(seat: int, suits: tuple[int, ...], fn: ir.LocalFn) -> ir.Linear:
    return ir.Linear(((1, ir.Feature(seat, suits, fn)),))


def describe(tok: Token) -> str:
    if tok.kind == "eof":
        return "the end of the script"
    if tok.kind == "str":
        return "a string"
    return f"'{tok.text}'"
