"""A process that runs the fused schedule's Triton kernels through Triton's interpreter.

Triton reads TRITON_INTERPRET when it is imported (its own library functions, ``tl.sum``
among them, are decorated then), so a process that has imported triton for the GPU cannot
interpret, and one that interprets cannot compile. The tests therefore send their
embeddings to a spawned process whose first act is to set the variable; the test process
and every other test keep their environment.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor


def interpreter_pool(engine_takes_fused: bool = False) -> ProcessPoolExecutor:
    """One spawned worker that interprets Triton kernels (shut it down when done); with
    ``engine_takes_fused``, its exact engine takes them wherever they apply (NCA_FUSED=1,
    read when ``objective.fused`` is imported), CPU embeddings included."""
    return ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("spawn"), initializer=_interpret, initargs=(engine_takes_fused,)
    )


def _interpret(engine_takes_fused: bool) -> None:
    os.environ["TRITON_INTERPRET"] = "1"
    os.environ["NCA_FUSED"] = "1" if engine_takes_fused else "0"
    import torch

    torch.set_num_threads(1)


def fused_sums(Z, y, anchors, objective: str, block_rows: int, block_columns: int, value: bool = False):
    """``FusedSchedule.sums``'s gradient and total of one problem, and with ``value`` its
    ``value_sum`` (else None)."""
    from nca_core.objective.fused import FusedSchedule, Tiles

    schedule = FusedSchedule(objective, Tiles(block_rows, block_columns))
    grad, _, total = schedule.sums(Z, y, anchors, None)
    return grad, total, schedule.value_sum(Z, y, anchors, None) if value else None
