"""endplay as the oracle of dealer scripts: a corpus script in endplay's dialect.

endplay 0.5 needs the ``condition`` keyword, rejects trailing commas in
action lists and differs from dealer in a few places.  A corpus script that
differs says so with ``# endplay-differs: why`` and gives the equivalent
condition in endplay's dialect with ``# endplay-as: ...`` (and, for a
variable, ``# endplay-define: name = ...``).  Shared by the
tests that check our evaluator and our deals against endplay.
"""

from __future__ import annotations

import re

from endplay.dealer.constraint import ConstraintInterpreter
from endplay.parsers.dealer import DealerParser

from truedeal.constraints.dealer import parse_script


def directives(text: str, key: str) -> list[str]:
    """The values of the ``# key: value`` lines of a script."""
    return [m.group(1).strip() for m in re.finditer(rf"^#\s*{key}:(.*)$", text, re.MULTILINE)]


def endplay_text(text: str) -> str:
    """The script in endplay's dialect: definitions, scales and conditions only."""
    script = parse_script(text)
    overrides = {d.split("=", 1)[0].strip(): d for d in directives(text, "endplay-define")}
    parts = []
    for st in script.statements:
        piece = text[st.start : st.end]
        if st.kind == "define":
            piece = overrides.get(piece.split("=", 1)[0].strip(), piece)
        if st.kind in ("define", "condition"):
            parts.append(piece)
        elif st.kind == "bare":
            parts.append("condition " + piece)
        elif st.kind == "altcount":  # endplay wants "altcount N w, w, w"
            nums = re.findall(r"\d+", piece)
            parts.append(f"altcount {nums[0]} " + ", ".join(nums[1:]))
    replacement = directives(text, "endplay-as")
    if replacement:
        parts = [p for p in parts if not p.startswith("condition ")] + ["condition " + replacement[0]]
    return "\n".join(parts)


def endplay_interpreter(text: str):
    """endplay's interpreter with the script's variables and scales set, its
    condition node and the names it defined."""
    tree = DealerParser().parse_string(endplay_text(text))
    interp, cond, defined = ConstraintInterpreter(), None, []
    for node in tree.children:
        if node.value == "define":
            interp.set_env(node.first_child.value, node.last_child)
            defined.append(node.first_child.value)
        elif node.value == "altcount":
            interp.set_env(f"pt{node.first_child.value}", [c.value for c in node.children[1:]] + [0] * 13)
        elif node.value == "condition":
            cond = node.first_child
    return interp, cond, defined
