"""DDS thread count of this process.

endplay's DDS spreads ``calc_all_tables`` over all cores by default.  A
worker process that is one of several on a machine should use one thread,
so that N worker processes, not DDS, share the cores (and "per worker"
throughput means something).  ``TRUEDEAL_DDS_THREADS`` overrides (0 = DDS
default, all cores).
"""

from __future__ import annotations

import os

_set_to: int | None = None


def set_dds_threads(n: int | None = None) -> int:
    """Tell DDS to use ``n`` threads (default ``$TRUEDEAL_DDS_THREADS`` or 1);
    returns the number set.  Cheap to call again with the same ``n``."""
    global _set_to
    if n is None:
        n = int(os.environ.get("TRUEDEAL_DDS_THREADS", "1"))
    if n != _set_to:
        import endplay._dds as dds

        dds.SetMaxThreads(n)
        _set_to = n
    return n
