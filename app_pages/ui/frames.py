"""The frames a training job keeps for the page, and how far into the run each one is."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nca_core import Snapshot

__all__ = ["FrameBuffer", "progress"]


class FrameBuffer:
    """At most ``capacity`` snapshots, oldest first; past it the older ones are thinned
    (``_thinned``). ``items`` is only ever appended to or replaced whole, so a page may read
    it while the worker keeps frames."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.items: list[Snapshot] = []

    def keep(self, snap: Snapshot) -> None:
        if len(self.items) >= self.capacity:
            self.items = [*_thinned(self.items), snap]
        else:
            self.items.append(snap)

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
