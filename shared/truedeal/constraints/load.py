"""One reader for every way a user gives constraints: a JSON spec or a dealer script.

``load_constraints`` is what the CLI, the jobs and the web app call, so that
a script is accepted wherever a JSON spec is.
"""

from __future__ import annotations

import os
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
    where: ``script line L, column C: ...``.
    """
    if isinstance(source, (Spec, ir.Program, dict)):
        return source if not isinstance(source, dict) else load_spec(source)
    if isinstance(source, (bytes, bytearray)):
        try:
            source = bytes(source).decode("utf-8")
        except UnicodeDecodeError:
            raise SpecError("spec: not UTF-8 text") from None
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
        raise SpecError(f"neither a JSON spec nor a valid dealer script: script {exc}") from None
    except OSError as exc:
        raise SpecError(f"cannot read {source}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SpecError(f"cannot read {source}: not UTF-8 text") from None


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
