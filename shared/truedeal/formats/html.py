"""Printable HTML hand record: four boards to a page (CSS page breaks).

Each board shows the diagram, the board number, dealer and vulnerability,
each hand's HCP, the double-dummy table and the par.  The page is one
self-contained file (inline CSS, no scripts).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from html import escape

from .handrecord import BOARDS_PER_PAGE, board_sheet, pages, seat_name
from .records import HandRecord

_SYMBOLS = "\u2660\u2665\u2666\u2663"
_CSS = """
body{font-family:sans-serif;margin:0}
h1{font-size:14pt;margin:8px}
.page{display:grid;grid-template-columns:1fr 1fr;gap:10px;padding:8px;page-break-after:always;break-after:page}
.board{border:1px solid #888;padding:6px;font-size:10pt}
.diagram{display:grid;grid-template-columns:1fr 1fr 1fr}
.hand{white-space:pre;font-family:monospace}
.red{color:#c00}
table.dd{border-collapse:collapse;margin-top:4px}
table.dd td,table.dd th{border:1px solid #aaa;padding:1px 5px;text-align:center}
"""
#: The CSP source that allows this file's one inline style block and no
#: other, for a page that shows a hand record under a strict policy.
CSP_STYLE_SOURCE = "'sha256-" + base64.b64encode(hashlib.sha256(_CSS.encode()).digest()).decode() + "'"


def _hand(sheet, seat: int) -> str:
    lines = []
    for s, line in enumerate(sheet.hands[seat]):
        cls = ' class="red"' if s in (1, 2) else ""
        lines.append(f"<span{cls}>{escape(line)}</span>")
    return (f'<div class="hand"><b>{seat_name(seat)}</b> ({sheet.hcp[seat]} HCP)\n'
            + "\n".join(lines) + "</div>")


def _board(r: HandRecord) -> str:
    sh = board_sheet(r, _SYMBOLS)
    cells = ["<div></div>", _hand(sh, 0), "<div></div>", _hand(sh, 3), "<div></div>", _hand(sh, 1),
             "<div></div>", _hand(sh, 2), "<div></div>"]
    out = [f'<div class="board" id="board-{r.board}"><b>{escape(sh.title)}</b> &nbsp; {escape(sh.subtitle)}',
           '<div class="diagram">' + "".join(cells) + "</div>"]
    if sh.dd_rows:
        head = "".join(f"<th>{escape(x)}</th>" for x in sh.dd_header)
        rows = "".join("<tr>" + "".join(f"<td>{escape(x)}</td>" for x in row) + "</tr>" for row in sh.dd_rows)
        out.append(f'<table class="dd"><tr>{head}</tr>{rows}</table>')
        out.append(f"<div>{escape(sh.par)}</div>")
    out.append("</div>")
    return "\n".join(out)


def html_text(records: Sequence[HandRecord], *, title: str) -> str:
    """The HTML hand record of ``records`` with heading ``title``."""
    body = ['<div class="page">' + "\n".join(_board(r) for r in page) + "</div>"
            for page in pages(records, BOARDS_PER_PAGE)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>\n"
            f"<h1>{escape(title)}</h1>\n" + "\n".join(body) + "\n</body></html>\n")
