"""A process's standard output, every byte of it, even when a signal cuts a write short.

CPython 3.11's buffered writer drops the rest of a write larger than its
buffer when ``write(2)`` returns short, which a blocking pipe does when the
writer is stopped and continued mid-write: Ctrl-Z then ``fg``, a debugger, a
sampling profiler.  Measured here (strace): ``write(1, ..., 80000) = 65536``,
then the next chunk's ``write``; 0.6 MB of 1.5 MB of PBN arrived when the
process was stopped and continued every 4 ms.  :func:`whole_stdout` gives
the process a ``sys.stdout`` over a raw file whose writes loop until every
byte is written, so no layer above it ever sees a short write.
"""

from __future__ import annotations

import io
import os
import select
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


def whole_stdout() -> None:
    """Replace ``sys.stdout`` by the same text stream (encoding, errors, line
    buffering) over :class:`WholeWrites` on its file descriptor; nothing
    where it has none (a test's captured stream)."""
    out = sys.stdout
    try:
        fd = out.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return
    out.flush()
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(WholeWrites(fd)), encoding=out.encoding, errors=out.errors,
                                  newline="\n", line_buffering=bool(out.line_buffering))


class WholeWrites(io.RawIOBase):
    """A raw writer on ``fd`` (left open) whose :meth:`write` writes all it is given."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: ReadableBuffer) -> int:
        """Write all of ``data``: again after a short write, and after waiting
        for room on a descriptor left non-blocking (EAGAIN)."""
        view = memoryview(data).cast("B")
        written = 0
        while written < len(view):
            try:
                written += os.write(self._fd, view[written:])
            except BlockingIOError:
                select.select([], [self._fd], [])
        return written
