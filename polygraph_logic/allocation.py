"""Memory: bulk allocation without the cyclic garbage collector, and the process's peak.

Reading and compiling a large input makes millions of small objects (records, atoms,
facts) that all live on: CPython's collector, triggered every few hundred allocations,
walks them again and again and finds nothing to free (at x40, 112,000 assertions:
compiling took 2.9 s with the collector, 1.0 s without).  These objects hold no
reference cycles, so reference counting frees whatever is dropped; ``collector_paused``
turns the collector off for such a phase and back on after it, whatever happens.

``peak_rss_mb`` is the peak resident memory the benchmarks print.  Not ``getrusage``'s
``ru_maxrss`` alone: Linux carries that high-water mark across fork and exec, so a child of
a parent holding 1.8 GB reports at least 1.8 GB whatever it used itself (benchmarks/engines.py
printed 1,816 MB for a build under a 150MB limit that way).  ``VmHWM`` (/proc/self/status) is
the mark of the program running now, reset by exec; elsewhere ``ru_maxrss`` is all there is.
"""

from __future__ import annotations

import gc
import sys
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    """Runs the block with the cyclic collector off (restored after, as it was)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def peak_rss_mb() -> float:
    """The peak resident memory of this process's program, in MiB."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return usage / (2**20 if sys.platform == "darwin" else 2**10)
