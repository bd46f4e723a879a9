"""The process-wide settings the engine needs, applied by ``start()`` (the app's entry
point calls it once), and the heap trim its jobs ask for."""

from __future__ import annotations

import ctypes
import functools
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
    """Apply the engine's process-wide settings: the interpreter's switch interval."""
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)


@functools.cache
def _malloc_trim():
    """glibc's malloc_trim, looked up once in the C library the process has loaded; None
    where that is not glibc."""
    return getattr(ctypes.CDLL(None), "malloc_trim", None)


def return_free_heap() -> None:
    """Give freed heap pages back to the OS (glibc only). glibc keeps what a thread freed in
    that thread's heap arena, so without a trim a server's size after a class has trained
    stays near its peak."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
