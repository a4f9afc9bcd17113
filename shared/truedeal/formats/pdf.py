"""Printable PDF hand record with fpdf2: A4, four boards to a page (2 x 2).

Each board shows the diagram, the board number, dealer and vulnerability,
each hand's HCP, the double-dummy table and the par.  Suits are written
S H D C (the PDF core fonts have no suit glyphs, and a core font keeps the
file free of font dependencies).
"""

from __future__ import annotations

from collections.abc import Sequence

from .handrecord import BOARDS_PER_PAGE, board_sheet, pages, seat_name
from .records import HandRecord

_W, _H = 95.0, 135.0  # one board's cell in mm
_LINE = 4.2


def _latin1(text: str) -> str:
    """The core fonts are Latin-1: other characters print as '?'."""
    return text.encode("latin-1", "replace").decode("latin-1")


def _text(pdf, x: float, y: float, lines: Sequence[str], bold_first: bool = False) -> None:
    for i, line in enumerate(lines):
        pdf.set_font("Helvetica", "B" if bold_first and i == 0 else "", 9)
        pdf.text(x, y + i * _LINE, line)


def _board(pdf, r: HandRecord, x: float, y: float) -> None:
    sh = board_sheet(r)
    pdf.rect(x, y, _W, _H)
    pdf.set_font("Helvetica", "B", 11)
    pdf.text(x + 3, y + 6, sh.title)
    pdf.set_font("Helvetica", "", 9)
    pdf.text(x + 40, y + 6, sh.subtitle)
    spots = {0: (x + 33, y + 13), 3: (x + 3, y + 38), 1: (x + 63, y + 38), 2: (x + 33, y + 63)}
    for seat, (hx, hy) in spots.items():
        _text(pdf, hx, hy, [f"{seat_name(seat)} {sh.hcp[seat]}"] + list(sh.hands[seat]), bold_first=True)
    if sh.dd_rows:
        ty = y + 92
        for i, row in enumerate((sh.dd_header, *sh.dd_rows)):
            pdf.set_font("Helvetica", "B" if i == 0 else "", 9)
            for j, cell in enumerate(row):
                pdf.text(x + 6 + j * 9, ty + i * _LINE, cell)
        pdf.set_font("Helvetica", "", 8)
        pdf.text(x + 3, ty + 6 * _LINE + 2, sh.par[:70])


def pdf_bytes(records: Sequence[HandRecord], *, title: str) -> bytes:
    """The PDF hand record of ``records`` with header ``title`` on every page."""
    from fpdf import FPDF

    pdf = FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_title(_latin1(title))
    pdf.set_creator("truedeal")
    for page in pages(records, BOARDS_PER_PAGE):
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 12)
        pdf.text(10, 11, _latin1(title[:90]))
        for i, r in enumerate(page):
            _board(pdf, r, 10 + (i % 2) * (_W + 0), 15 + (i // 2) * (_H + 0))
    return bytes(pdf.output())
