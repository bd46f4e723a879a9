"""The process-wide settings the engine needs, applied by ``start()`` (the app's entry
point calls it on every page run; they are applied once): the interpreter's switch
interval, Arrow's allocator and the C library's mmap threshold; and the heap trim its jobs
and the quiet release ask for."""

from __future__ import annotations

import ctypes
import functools
import os
import sys

__all__ = ["MMAP_THRESHOLD_BYTES", "SWITCH_INTERVAL_SECONDS", "return_free_heap", "start"]

# Training runs in threads beside the threads that build the pages, and a frame of a small
# set makes hundreds of short torch calls, each giving up the interpreter lock and taking it
# back. Beside a thread busy in Python (a page building its picture), each taking-back waited
# for the busy thread's turn to end, 5 ms by default: digits trained 30 ms epochs in seconds.
# A shorter turn lets the training thread back in sooner; Python code runs a little slower
# for the extra switching.
SWITCH_INTERVAL_SECONDS = 0.0005

# Allocations from this size get pages of their own (glibc's mmap), which go back to the
# system as soon as they are freed: glibc's starting value, kept (``_fixed_mmap_threshold``).
MMAP_THRESHOLD_BYTES = 128 * 1024
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number for it, in glibc's malloc.h


def start() -> None:
    """Apply the engine's process-wide settings: the interpreter's switch interval, Arrow's
    buffers on the C library's heap (unless $ARROW_DEFAULT_MEMORY_POOL chooses) and a fixed
    mmap threshold (unless $MALLOC_MMAP_THRESHOLD_ sets one)."""
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    _arrow_on_the_heap()
    _fixed_mmap_threshold()


@functools.cache
def _fixed_mmap_threshold() -> None:
    """Keep glibc's mmap threshold at ``MMAP_THRESHOLD_BYTES`` (setting it turns off its growth).

    By default glibc raises the threshold to the size of every mmapped block freed, up to
    32 MB. Once a run has freed its first large arrays, its minibatches', frames' and
    scores' arrays come from the heap arenas of the many threads the app runs, and stay
    there: after a class's mix (three MNIST runs, a 50,000-row upload, Compare) and every
    tab let go, the server kept 1.75x its size after the first page, with 1 GB free in its
    arenas that ``malloc_trim`` did not return. With the threshold fixed, 1.08x.
    """
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is not None and "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)


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
def _libc() -> ctypes.CDLL:
    """The C library the process has loaded."""
    return ctypes.CDLL(None)


def _malloc_trim():
    """glibc's malloc_trim; None where the C library is not glibc."""
    return getattr(_libc(), "malloc_trim", None)


def return_free_heap() -> None:
    """Give freed heap pages back to the OS (glibc only). glibc keeps what a thread freed in
    that thread's heap arena, so without a trim a server's size after a class has trained
    (or a page has parsed an upload: ``start()`` puts Arrow's buffers on this heap) stays
    near its peak."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
