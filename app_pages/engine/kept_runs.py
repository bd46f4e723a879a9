"""The runs a server keeps by their tokens, for a reload of the page that started one.

A page's address names its run (``ActiveRun.token`` in ``ui.train.runs``); a reload, or a
visitor of a finished run's address, finds it here again. What is kept is bounded: the
latest ``KEPT_RUNS`` runs, each for ``KEEP_ENDED`` seconds after it ended, and the ended ones
together under ``KEPT_ENDED_BYTES`` of frames.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from typing import Any

from .collection import collect_ended
from .frames import MAX_FRAME_BYTES, frame_bytes

__all__ = ["KEEP_ENDED", "KEPT_ENDED_BYTES", "KEPT_RUNS", "RELOAD_GRACE", "RunRegistry"]

# A reloaded page finds its run again by the token in its address: the run trains on for
# this many seconds once its tab is gone, waiting for it (a reload reconnects within a
# second or two; a closed tab's training slot is free again soon after). The server keeps at most
# KEPT_RUNS runs whose tab is gone, each for KEEP_ENDED seconds after it ended (a finished
# MNIST run holds about 10 MB of frames).
RELOAD_GRACE = 5.0
KEPT_RUNS = 16
KEEP_ENDED = 300.0
# And the ended runs it keeps hold at most this many bytes of frames together, oldest let go
# first: a run's frames may reach ``frames.MAX_FRAME_BYTES`` (an upload's wide map), and
# sixteen such runs would hold 1 GB after their class had gone. Two runs at that cap, or a
# dozen finished MNIST runs, fit.
KEPT_ENDED_BYTES = 2 * MAX_FRAME_BYTES


class RunRegistry:
    """Every session's latest runs by their tokens (``ActiveRun.token``), for a reload of
    the page that started one. A token is a random, unguessable name: a session reaches a
    run only through the address of the page that started it, and takes it up only once
    that page's tab is gone (a copied address does not take a lecturer's run from an open tab)."""

    def __init__(
        self,
        kept: int = KEPT_RUNS,
        prune_every: float = KEEP_ENDED / 10,
        kept_ended_bytes: int = KEPT_ENDED_BYTES,
    ):
        self._runs: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.kept = kept
        self.kept_ended_bytes = kept_ended_bytes
        # An idle server after a class lets go of the runs too, not only at the next Train
        # or reload: their frames are most of what the class left behind.
        threading.Thread(
            target=_prune_every, args=(weakref.ref(self), prune_every), name="nca-run-registry", daemon=True
        ).start()

    def add(self, active: Any) -> None:
        with self._lock:
            self._prune()
            self._runs[active.token] = active
            while len(self._runs) > self.kept:
                self._runs.popitem(last=False)

    def find(self, token: str) -> Any | None:
        with self._lock:
            self._prune()
            return self._runs.get(token)

    def prune(self) -> None:
        with self._lock:
            self._prune()

    def let_go_ended(self) -> None:
        """Let go of every ended run, whenever it ended: no tab has been open for a while
        (``engine.quiet``), so no page is about to be reloaded."""
        with self._lock:
            for token, active in list(self._runs.items()):
                if active.job.run_clock.ended is not None:
                    del self._runs[token]

    def _prune(self) -> None:
        """Let go of the runs that ended more than ``KEEP_ENDED`` seconds ago, then of the
        oldest ended ones while those left hold more than ``kept_ended_bytes`` of frames."""
        now = time.monotonic()
        ended_bytes = {}  # token -> its frames' bytes, for the ended runs, oldest first
        for token, active in list(self._runs.items()):
            ended = active.job.run_clock.ended
            if ended is not None and now - ended > KEEP_ENDED:
                del self._runs[token]
            elif ended is not None:
                ended_bytes[token] = sum(frame_bytes(snap) for snap in active.job.snapshots)
        held = sum(ended_bytes.values())
        for token, size in ended_bytes.items():
            if held <= self.kept_ended_bytes:
                break
            del self._runs[token]
            held -= size


def _prune_every(registry: weakref.ref[RunRegistry], seconds: float) -> None:
    """Prune the registry every ``seconds`` for as long as it exists, and free what the
    ended jobs of closed tabs held (``jobs.collect_ended``)."""
    while True:
        time.sleep(seconds)
        kept = registry()
        if kept is None:
            return
        kept.prune()
        del kept
        collect_ended()
