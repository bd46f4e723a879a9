"""BLAS, or torch, on one thread while some work runs: on small matrices, or beside other
work on two cores, their threads cost more than they share. Enter and leave a block in the
same thread (OpenBLAS restores a count only where it was set)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

__all__ = ["numpy_blas_on_one_thread", "one_blas_thread", "torch_on_one_thread", "usable_cores"]


def usable_cores() -> int:
    """The cores this process may run on: those it is pinned to (``taskset``, a container's
    cpuset), else the machine's."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def one_blas_thread() -> AbstractContextManager:
    """Every BLAS library loaded now (numpy's, scipy's, ...) on one thread in the block.
    Finding them takes milliseconds: for work that takes longer."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def numpy_blas_on_one_thread() -> AbstractContextManager:
    """numpy's BLAS alone on one thread in the block, in microseconds: its library is
    found once and kept."""
    return _numpy_blas().limit(limits=1)


_kept = None


def _numpy_blas():
    """numpy's BLAS library, kept once found (before numpy's BLAS has loaded there is none)."""
    global _kept
    if _kept is not None:
        return _kept
    from pathlib import Path

    from threadpoolctl import ThreadpoolController

    found = ThreadpoolController().select(user_api="blas")
    # a wheel's own copy sits in numpy.libs (or numpy/.dylibs); elsewhere numpy links the system's
    mine = [lib for lib in found.lib_controllers if "numpy" in Path(lib.filepath).parent.name]
    mine = mine or found.lib_controllers
    if mine:
        _kept = found.select(filepath=mine[0].filepath)
    return _kept or found


@contextmanager
def torch_on_one_thread() -> Iterator[None]:
    """torch's intra-op work on one thread in the block (small matrices)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
