"""The process-wide settings the engine needs, applied by ``start()`` (the app's entry
point calls it on every page run; they are applied once), and the heap trim its jobs and
the quiet release ask for."""

from __future__ import annotations

import ctypes
import functools
import os
import sys

__all__ = ["SWITCH_INTERVAL_SECONDS", "return_free_heap", "start"]

# Training runs in threads beside the threads that build the pages, and a frame of a small
# set makes hundreds of short torch calls, each giving up the interpreter lock and taking it
# back. Beside a thread busy in Python (a page building its picture), each taking-back waited
# for the busy thread's turn to end, 5 ms by default: digits trained 30 ms epochs in seconds.
# A shorter turn lets the training thread back in sooner; Python code runs a little slower
# for the extra switching.
SWITCH_INTERVAL_SECONDS = 0.0005


def start() -> None:
    """Apply the engine's process-wide settings: the interpreter's switch interval, and
    Arrow's buffers on the C library's heap (unless $ARROW_DEFAULT_MEMORY_POOL chooses)."""
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    _arrow_on_the_heap()


@functools.cache
def _arrow_on_the_heap() -> None:
    """Arrow's default allocator, the C library's: set for a pyarrow yet to be loaded, which
    reads $ARROW_DEFAULT_MEMORY_POOL once, and on a pyarrow loaded already.

    Arrow holds pandas' text cells, and an uploaded CSV is parsed into millions of them.
    Arrow's own allocator (mimalloc) keeps what a page's thread freed for that thread's
    reuse, and the thread ends with its page run: parsing a 45 MB file of pixels and letting
    it go left 237 MB above the size before, which no trim returned. On the C library's heap
    ``return_free_heap`` gives it back (13 to 21 MB left).
    """
    if "ARROW_DEFAULT_MEMORY_POOL" in os.environ:
        return
    os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "system"
    if (pyarrow := sys.modules.get("pyarrow")) is not None:
        pyarrow.set_memory_pool(pyarrow.system_memory_pool())


@functools.cache
def _malloc_trim():
    """glibc's malloc_trim, looked up once in the C library the process has loaded; None
    where that is not glibc."""
    return getattr(ctypes.CDLL(None), "malloc_trim", None)


def return_free_heap() -> None:
    """Give freed heap pages back to the OS (glibc only). glibc keeps what a thread freed in
    that thread's heap arena, so without a trim a server's size after a class has trained
    (or a page has parsed an upload: ``start()`` puts Arrow's buffers on this heap) stays
    near its peak."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
