"""Freed CPU memory kept for the next step instead of handed back to the system (glibc's ``mallopt``).

A training step allocates the same tensors again and again: activations, gradients, an evaluation
chunk's layer outputs.  By default glibc serves a block above 128 KiB with a fresh ``mmap`` (or trims
the heap's free top back to the system once it passes twice that threshold), so the next step's block
of the same size arrives as new pages, each faulted in and zeroed by the kernel.  On FedLC's FMNIST CNN
that was about 19,000 page faults a round, nearly all in the test-set evaluation, and about a fifth of a
1-thread round's CPU time (``benchmarks/README.md``, "Page faults").  PyTorch's CPU tuning guide advises
a caching allocator (jemalloc, tcmalloc) for the same reason.

:func:`keep_freed_memory` sets two glibc thresholds once per process: blocks up to 256 MiB come from the
heap, and the heap's free top is handed back only above 1 GiB.  Only where memory comes from changes:
torch aligns every CPU tensor to 64 bytes either way, and no kernel reads an address, so the floats are
the same (``tests/test_allocator.py`` trains a run with and without it and compares every parameter).
``import fedlib`` calls it, before a run's data and models take the heap: called once a process has
grown its heap, the same thresholds left the CNN's faults as they were (measured, not explained).
``FEDLIB_KEEP_FREED_MEMORY=0`` leaves glibc's defaults; on a system without glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys

__all__ = ["keep_freed_memory", "MMAP_THRESHOLD", "TRIM_THRESHOLD"]

#: blocks up to this size come from the heap (glibc's own adjustment of the threshold stops at 32 MiB)
MMAP_THRESHOLD = 256 * 1024 ** 2
#: the heap's free top is handed back to the system only above this
TRIM_THRESHOLD = 1024 ** 3
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h


@functools.lru_cache(maxsize=None)
def keep_freed_memory() -> bool:
    """Set glibc's thresholds (once per process); True where they were set.  ``FEDLIB_KEEP_FREED_MEMORY=0``
    or a C library other than glibc: False, nothing changed."""
    if os.environ.get("FEDLIB_KEEP_FREED_MEMORY", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # no glibc (musl has no mallopt)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # the mmap threshold first: setting either fixes both (glibc stops adjusting them itself)
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
