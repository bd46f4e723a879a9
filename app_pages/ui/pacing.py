"""How fast a live run is shown: a slow-motion start, a frame cap, or full speed.

A fast run (the rings separate in two epochs, a fraction of a second) shows nothing but its
end unless the page holds the start frame until the audience has seen it and then walks
through the first epochs in slow motion, several frames per epoch. Large sets take seconds
per epoch, so they always take frames within each epoch; their pace is the training's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .jobs import progress

if TYPE_CHECKING:
    from nca_core import Snapshot

# Seconds the start frame stays after the page has drawn it, in slow-motion mode.
HOLD_START_SECONDS = 1.5
# The first this-many epochs are shown in slow motion, at SLOW_FRAME_SECONDS a frame.
SLOW_EPOCHS = 6
SLOW_FRAME_SECONDS = 0.3


def frames_per_epoch(n_train: int, batch_size: int, slow_start: bool) -> int:
    """Frames the library takes per minibatch epoch: one per minibatch for a large set (an
    MNIST epoch takes many seconds; a frame per batch, well under a second apart,
    is also when Pause and Stop act), four for a small set's slow-motion start, else one
    (a small set's epoch takes milliseconds)."""
    batches = max(1, -(-n_train // batch_size))
    if n_train > 20000:
        return min(batches, 200)
    if n_train > 3000:
        return min(batches, 4)
    return min(batches, 4) if slow_start else 1


@dataclass(frozen=True)
class Pace:
    """``max_frames_per_second`` caps the frames shown (0: no cap); ``slow_start`` holds the
    start frame and slows the first ``SLOW_EPOCHS`` epochs down."""

    max_frames_per_second: float
    slow_start: bool
    large: bool = False

    @property
    def full_speed(self) -> bool:
        return self.max_frames_per_second <= 0 and not self.slow_start

    @property
    def hold_first_frame(self) -> float:
        return HOLD_START_SECONDS if self.slow_start else 0.0

    def __call__(self, snap: Snapshot) -> float | None:
        """Least seconds ``snap`` stays on screen, or None to leave it out."""
        cap = 1.0 / self.max_frames_per_second if self.max_frames_per_second > 0 else 0.0
        if self.slow_start and progress(snap) < SLOW_EPOCHS:
            return max(cap, SLOW_FRAME_SECONDS)
        if snap.fraction < 1.0 and not self.large:
            return None  # past the slow start a small set shows whole epochs only
        return cap
