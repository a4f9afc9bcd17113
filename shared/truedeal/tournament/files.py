"""A session's files: X.pbn, X.lin, X.dup, X.dlm, X.bri, X.csv, X.html, X.pdf.

The dealing-machine formats hold boards 1-99 only; a session beyond that gets
no DUP, DLM or BRI file, and :func:`write_session` says so in its notes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..formats.bri import bri_bytes
from ..formats.csvfile import csv_text
from ..formats.dlm import dlm_text
from ..formats.dup import dup_bytes
from ..formats.html import html_text
from ..formats.linset import lin_set
from ..formats.pbnset import pbn_set
from ..formats.pdf import pdf_bytes
from ..formats.records import FormatLimit, HandRecord
from .setfile import SetFile

#: Extensions written for every session, in order.
EXTENSIONS = ("pbn", "lin", "dup", "dlm", "bri", "csv", "html", "pdf")


def session_files(sf: SetFile, name: str, records: Sequence[HandRecord], *, crlf: bool = True):
    """``(extension, bytes or FormatLimit)`` for each file of one session."""
    title = f"{sf.event} - session {name}" if sf.event != "?" else f"Session {name}"
    makers = {
        "pbn": lambda: pbn_set(records, event=sf.event, site=sf.site, date=sf.pbn_date, crlf=crlf).encode(),
        "lin": lambda: lin_set(records).encode(),
        "dup": lambda: dup_bytes(records),
        "dlm": lambda: dlm_text(records).encode(),
        "bri": lambda: bri_bytes(records),
        "csv": lambda: csv_text(records).encode(),
        "html": lambda: html_text(records, title=title).encode(),
        "pdf": lambda: pdf_bytes(records, title=title),
    }
    for ext in EXTENSIONS:
        try:
            yield ext, makers[ext]()
        except FormatLimit as exc:
            yield ext, exc


def write_session(out: Path, sf: SetFile, name: str, records: Sequence[HandRecord], *, crlf: bool = True) -> list[str]:
    """Write one session's files into ``out``; returns notes on files not written."""
    notes = []
    for ext, data in session_files(sf, name, records, crlf=crlf):
        if isinstance(data, FormatLimit):
            notes.append(f"{name}.{ext} not written: {data}")
            continue
        (out / f"{name}.{ext}").write_bytes(data)
    return notes
