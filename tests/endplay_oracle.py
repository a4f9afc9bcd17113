"""endplay as the oracle of dealer scripts: a corpus script in endplay's dialect.

endplay 0.5 needs the ``condition`` keyword, rejects trailing commas in
action lists and differs from dealer in a few places.  A corpus script that
differs says so with ``# endplay-differs: why`` and gives the equivalent
condition in endplay's dialect with ``# endplay-as: ...`` (and, for a
variable, ``# endplay-define: name = ...``).  Shared by the
tests that check our evaluator and our deals against endplay.
"""

from __future__ import annotations

import functools
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


@functools.cache
def _parser() -> DealerParser:
    """One endplay grammar for the process: building one takes tens of ms, and
    its parse actions are set on pyparsing's shared elements anyway."""
    return DealerParser()


class _Interpreter(ConstraintInterpreter):
    """endplay's interpreter on the shared grammar; with a memo, what endplay's
    hand evaluators (hcp and the point scales, lengths, controls, losers) gave
    on a deal is remembered, so the scripts checked on the same deals do not
    each recount the same hands (most of their time).  The values are still
    endplay's own."""

    def __init__(self, memo: dict | None):
        self.parser = _parser()
        self.reset_env()
        self._memo = memo

    def _remembered(self, deal, key, compute):
        if self._memo is None:
            return compute()
        # keyed by the cards the deal holds (its 4 x 4 masks), not by the object: a value is read
        # again on the same deal wherever it comes from (another script's deals, dealt alike)
        values = self._memo.setdefault(bytes(deal._data.remainCards), {})
        if key not in values:
            values[key] = compute()
        return values[key]

    def _fn_hcp(self, node, deal, scale):
        key = ("hcp", *(c.value for c in node.children), tuple(scale))
        return self._remembered(deal, key, lambda: ConstraintInterpreter._fn_hcp(self, node, deal, scale))

    def _fn_suit(self, node, deal):
        key = (node.value, node.first_child.value)
        return self._remembered(deal, key, lambda: ConstraintInterpreter._fn_suit(self, node, deal))

    def _fn_control(self, node, deal):
        key = ("controls", *(c.value for c in node.children))
        return self._remembered(deal, key, lambda: ConstraintInterpreter._fn_control(self, node, deal))

    def _fn_loser(self, node, deal):
        key = ("losers", *(c.value for c in node.children))
        return self._remembered(deal, key, lambda: ConstraintInterpreter._fn_loser(self, node, deal))


def endplay_interpreter(text: str, memo: dict | None = None):
    """endplay's interpreter with the script's variables and scales set, its
    condition node and the names it defined.  ``memo`` (a dict the caller
    keeps, one per set of deals) shares endplay's hand values between the
    scripts evaluated on the same deals."""
    tree = _parser().parse_string(endplay_text(text))
    interp, cond, defined = _Interpreter(memo), None, []
    for node in tree.children:
        if node.value == "define":
            interp.set_env(node.first_child.value, node.last_child)
            defined.append(node.first_child.value)
        elif node.value == "altcount":
            interp.set_env(f"pt{node.first_child.value}", [c.value for c in node.children[1:]] + [0] * 13)
        elif node.value == "condition":
            cond = node.first_child
    return interp, cond, defined
