"""One reader for every way a user gives constraints: a JSON spec or a dealer script.

``load_constraints`` is what the CLI, the jobs and the web app call, so that
a script is accepted wherever a JSON spec is.
"""

from __future__ import annotations

import os
import re
from typing import overload

from ..formats.rotation import STANDARD, Rotation
from ..spec import Spec, SpecError, load_spec
from . import ir

Constraints = Spec | ir.Program


@overload
def load_constraints(source: ir.Program) -> ir.Program: ...
@overload
def load_constraints(source: str | bytes | os.PathLike | dict | Spec) -> Spec: ...
def load_constraints(source: str | bytes | os.PathLike | dict | Spec | ir.Program) -> Constraints:
    """A validated :class:`Spec` for JSON, a :class:`ir.Program` for a dealer
    script (a ``.dlr`` path, or text that does not start with ``{``).

    Every problem raises :class:`SpecError` with one line; a script's says
    where: ``script line L, column C: ...``, or ``NAME: line L, column C: ...``
    for a file (see :func:`_script_error`).
    """
    if isinstance(source, (Spec, ir.Program, dict)):
        return source if not isinstance(source, dict) else load_spec(source)
    may_name_a_file = not isinstance(source, (bytes, bytearray))  # bytes are a spec's text (stdin)
    if isinstance(source, (bytes, bytearray)):
        try:
            source = bytes(source).decode("utf-8")
        except UnicodeDecodeError:
            raise SpecError("spec: not UTF-8 text") from None
    if isinstance(source, str) and "\n" not in source and len(source) < 4096 and source.lower().endswith(".json"):
        return load_spec(source)  # a JSON file, as is_script says, without importing the script parser (5 ms)
    from .dealer import ScriptError, is_script, load_program

    if isinstance(source, str) and not source.strip():
        raise SpecError("empty spec: give a JSON spec or a dealer script")
    try:
        if not is_script(source):
            return load_spec(source)
        load_program(source)  # one line for a bad script, naming the file
        text = source if "\n" in str(source) or not os.path.isfile(source) else open(source, encoding="utf-8").read()
        return load_spec({"script": text})
    except ScriptError as exc:
        raise SpecError(_script_error(source, exc, may_name_a_file)) from None
    except OSError as exc:
        raise SpecError(f"cannot read {source}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SpecError(f"cannot read {source}: not UTF-8 text") from None


#: One word, such as ``spec.jsn`` or ``specs/nt``: as a script it reads as an
#: unknown variable or a stray ``.``, but it may have been meant as a file.
_ONE_WORD = re.compile(r"[\w.~/\\:-]+")


def _script_error(source: str | os.PathLike, exc: Exception, may_name_a_file: bool) -> str:
    """The one line for a script that does not parse, ``exc`` its error
    (``line L, column C: ...``).

    A script beyond doubt -- a file (a ``.dlr`` one, or any file whose text
    does not open with ``{``), or text that is no JSON -- gets the script's
    error alone, a file's prefixed with its name as a JSON file's is.  Only
    what may have been meant as something else says so: text that opens like
    JSON (``[``), and a single word (a file name that names no file, when
    ``may_name_a_file``: an argument, not standard input)."""
    text = os.fspath(source)
    if isinstance(source, os.PathLike) or ("\n" not in text and len(text) < 4096 and os.path.isfile(text)):
        return f"{text}: {exc}"
    stripped = text.strip()
    if _ONE_WORD.fullmatch(stripped) and may_name_a_file:
        return f"no file named {stripped!r}, nor a valid dealer script: script {exc}"
    if stripped.startswith("[") or _ONE_WORD.fullmatch(stripped):
        return f"neither a JSON spec nor a valid dealer script: script {exc}"
    return f"script {exc}"


def rotation_of(constraints: Constraints, dealer: str | None = None, vulnerability: str | None = None) -> Rotation:
    """The dealer and vulnerability of the boards dealt from ``constraints``:
    the words given (see :meth:`Rotation.from_words`), else a dealer script's
    ``dealer``/``vulnerable``, else the standard cycle.  Raises
    :class:`~truedeal.formats.rotation.RotationError` naming the bad word's field."""
    if isinstance(constraints, ir.Program):
        script = constraints.rotation()
    elif constraints.script is not None:
        from .dealer import parse_program

        script = parse_program(constraints.script).rotation()
    else:
        script = STANDARD
    return Rotation.from_words(dealer, vulnerability, script)


def deals_wanted(constraints: Constraints) -> tuple[str, int] | None:
    """A dealer script's own count of deals, as ``(word, n)``: its ``produce``,
    else its ``generate`` (the deals dealer tries; truedeal throws none away,
    so all of them are produced); None for a spec without a script or a
    script without either."""
    if isinstance(constraints, ir.Program):
        program = constraints
    elif constraints.script is not None:
        from .dealer import parse_program

        program = parse_program(constraints.script)
    else:
        return None
    return next(((word, n) for word in ("produce", "generate") if (n := getattr(program, word)) is not None), None)
