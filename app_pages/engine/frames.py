"""The frames a training job keeps for the page, and how far into the run each one is."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nca_core import Snapshot

__all__ = ["MAX_FRAME_BYTES", "FrameBuffer", "frame_bytes", "progress"]

# The most a run's frames hold. A 2-D or 3-D run keeps all its frames under it (MNIST's
# 5,000 drawn points at d = 3: 79 kB a frame with its map, 47 MB for 600 frames), while a
# 64-D map of an upload's 5,000 columns (3.8 MB a frame, 2.3 GB for 600) keeps 16: thirty
# sessions and the runs the server keeps for reloads (``kept_runs.KEPT_RUNS``) hold under 3 GB.
MAX_FRAME_BYTES = 64 * 2**20


def frame_bytes(snap: Snapshot) -> int:
    """The bytes of a snapshot's arrays: its embedding and its map (none for a network)."""
    components = snap.components
    return snap.embedding.nbytes + (0 if components is None else components.nbytes)


class FrameBuffer:
    """At most ``capacity`` snapshots, oldest first, and with ``max_bytes`` no more than
    fit in that many bytes (at least the first and the newest); past either the older ones
    are thinned (``_thinned``). ``items`` is only ever appended to or replaced whole, so a
    page may read it while the worker keeps frames."""

    def __init__(self, capacity: int, max_bytes: int | None = None):
        self.capacity = capacity
        self.max_bytes = max_bytes
        self.items: list[Snapshot] = []

    def keep(self, snap: Snapshot) -> None:
        if len(self.items) >= self._room(snap):
            self.items = [*_thinned(self.items), snap]
        else:
            self.items.append(snap)

    def _room(self, snap: Snapshot) -> int:
        """How many frames of ``snap``'s size are kept (every frame of a run has its size)."""
        if self.max_bytes is None:
            return self.capacity
        return max(2, min(self.capacity, self.max_bytes // max(1, frame_bytes(snap))))

    @property
    def latest(self) -> Snapshot | None:
        items = self.items
        return items[-1] if items else None


def _thinned(snapshots: list[Snapshot]) -> list[Snapshot]:
    """Every other part-way frame dropped, whole epochs kept (the curves and the replay
    are drawn from them: MNIST's 40 epochs take 2,360 frames); every other of all, the
    first kept, once only whole epochs are left."""
    partway = [s for s in snapshots if s.fraction < 1.0]
    if len(partway) < 2:
        return snapshots[::2]
    dropped = {id(s) for s in partway[1::2]}
    return [s for s in snapshots if id(s) not in dropped]


def progress(snap: Snapshot) -> float:
    """Epochs done at a snapshot, counting a part-way frame's fraction (12.25, say)."""
    return snap.epoch if snap.fraction >= 1.0 else snap.epoch - 1 + snap.fraction
