"""A command's output, every byte of it, even when a signal cuts a write short.

CPython 3.11's buffered writer drops the rest of a write larger than its
buffer when ``write(2)`` returns short, which a blocking pipe does when the
writer is stopped and continued mid-write: Ctrl-Z then ``fg``, a debugger, a
sampling profiler.  Measured here (strace): ``write(1, ..., 80000) = 65536``,
then the next chunk's ``write``; 0.6 MB of 1.5 MB of PBN arrived when the
process was stopped and continued every 4 ms.  So output that has a file
descriptor goes out by ``os.write``, looping until every byte is written.
"""

from __future__ import annotations

import io
import os
import select
from collections.abc import Iterable
from typing import TextIO


def write_all(chunks: Iterable[str], out: TextIO) -> None:
    """Write ``chunks`` to ``out`` and flush it.

    A stream with a file descriptor (a pipe, a file, a terminal) gets the
    chunks encoded as ``out`` would encode them, by :func:`write_bytes`; one
    without (a test's captured stream) by its own ``write``.  BrokenPipeError
    propagates: the reader went away."""
    fd = _fileno(out)
    if fd is None:
        for text in chunks:
            out.write(text)
        out.flush()
        return
    out.flush()  # what was written to it before goes first
    encoding, errors = out.encoding or "utf-8", out.errors or "strict"
    for text in chunks:
        write_bytes(fd, text.encode(encoding, errors))


def write_bytes(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd``: again after a short write, and after
    waiting for room on a descriptor left non-blocking (EAGAIN)."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            select.select([], [fd], [])


def _fileno(out: TextIO) -> int | None:
    try:
        return out.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return None
