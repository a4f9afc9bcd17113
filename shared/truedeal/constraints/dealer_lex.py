"""The lexer of the dealer-script language: text to tokens with line and column.

Comments are dropped here: ``//`` and ``#`` to the end of the line, ``/* ... */``
across lines.  dealer itself treats ``#`` as a comment only at the start of a
line; like endplay we accept it anywhere (no other token starts with ``#``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class ScriptError(ValueError):
    """A script that cannot be read.  The message is ONE line: ``line L, column C: ...``."""

    def __init__(self, line: int, col: int, message: str):
        super().__init__(f"line {line}, column {col}: {message}")
        self.line = line
        self.col = col


@dataclass(frozen=True)
class Token:
    """One token.  ``kind`` is ``num`` (``value`` the int), ``ident`` (a name,
    or a word that starts with digits such as ``2C`` or ``5xxx``), ``str``
    (``value`` the text; ``\\n`` gives a newline), ``op`` or ``eof``.
    ``start``/``end`` are offsets in the source, for shape terms."""

    kind: str
    text: str
    line: int
    col: int
    start: int
    end: int
    value: object = None


_OPS = ("&&", "||", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "?", ":", "(", ")", ",", "!", "=")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+[A-Za-z_][A-Za-z0-9_]*")
_NUM = re.compile(r"[0-9]+")


class _Lexer:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.line = 1
        self.line_start = 0
        self.tokens: list[Token] = []

    def col(self, pos: int) -> int:
        return pos - self.line_start + 1

    def error(self, pos: int, message: str) -> ScriptError:
        return ScriptError(self.line, self.col(pos), message)

    def newline(self, pos: int) -> None:
        self.line += 1
        self.line_start = pos + 1

    def skip_to_eol(self) -> None:
        end = self.text.find("\n", self.pos)
        self.pos = len(self.text) if end < 0 else end

    def block_comment(self) -> None:
        start, line, col = self.pos, self.line, self.col(self.pos)
        end = self.text.find("*/", start + 2)
        if end < 0:
            raise ScriptError(line, col, "comment '/*' is never closed")
        for i in range(start, end):
            if self.text[i] == "\n":
                self.newline(i)
        self.pos = end + 2

    def string(self) -> None:
        start = self.pos
        end = self.text.find('"', start + 1)
        nl = self.text.find("\n", start + 1)
        if end < 0 or 0 <= nl < end:
            raise self.error(start, "string is not closed on its line")
        self.add("str", start, end + 1, self.text[start + 1 : end])

    def add(self, kind: str, start: int, end: int, value: object = None) -> None:
        text = self.text[start:end]
        self.tokens.append(Token(kind, text, self.line, self.col(start), start, end, value))
        self.pos = end

    def run(self) -> list[Token]:
        text = self.text
        while self.pos < len(text):
            ch, pos = text[self.pos], self.pos
            nxt = text[pos + 1 : pos + 2]
            if ch == "\n":
                self.newline(pos)
                self.pos += 1
            elif ch in " \t\r\f\v":
                self.pos += 1
            elif ch == "#" or (ch == "/" and nxt == "/"):
                self.skip_to_eol()
            elif ch == "/" and nxt == "*":
                self.block_comment()
            elif ch == '"':
                self.string()
            elif ch == "\\" and nxt == "n":
                self.add("str", pos, pos + 2, "\n")
            else:
                self.word_or_op(ch, pos)
        self.tokens.append(Token("eof", "", self.line, self.col(self.pos), self.pos, self.pos))
        return self.tokens

    def word_or_op(self, ch: str, pos: int) -> None:
        m = _WORD.match(self.text, pos)
        if m:
            self.add("ident", pos, m.end())
            return
        m = _NUM.match(self.text, pos)
        if m:
            if len(m.group()) > 9:  # dealer's numbers are C ints; keep every constant well inside int64
                raise self.error(pos, f"number {m.group()} is too large (at most 999999999)")
            self.add("num", pos, m.end(), int(m.group()))
            return
        for op in _OPS:
            if self.text.startswith(op, pos):
                self.add("op", pos, pos + len(op))
                return
        raise self.error(pos, f"unexpected character {ch!r}")


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with an ``eof`` token.  Raises :class:`ScriptError`."""
    return _Lexer(text).run()
