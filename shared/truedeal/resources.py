"""What this process uses, for the memory bounds of workers and count helpers."""

from __future__ import annotations

import os


def resident_bytes(pid: int | str = "self") -> int:
    """Resident memory of this process (or of ``pid``) in bytes; 0 where
    /proc is missing or the process is gone."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0
