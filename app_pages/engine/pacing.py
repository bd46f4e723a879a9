"""How fast a live run is shown: a slow-motion start, a frame cap, or full speed.

A fast run (the rings separate in two epochs, a fraction of a second) shows nothing but its
end unless the page holds the start frame until the audience has seen it and then walks
through the first frames in slow motion. The slow-motion start is a number of frames, not
epochs: six of a small set's epochs at four frames each, a fraction of one MNIST epoch
(whose first minibatches move the picture most). Past it, a large set trains at its own
pace (the page shows a couple of its frames a second anyway); a small set's frames are
capped so that every epoch can be seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from nca_core.config.rules import LARGE_SET_SAMPLES

from .frames import progress

if TYPE_CHECKING:
    from nca_core import Snapshot

# Seconds the start frame stays after the page has drawn it, in slow-motion mode.
HOLD_START_SECONDS = 1.5
# The first this-many frames after the start are shown in slow motion, SLOW_FRAME_SECONDS each.
SLOW_FRAMES = 24
SLOW_FRAME_SECONDS = 0.3
# Sets above this many training points take frames within every epoch.
EPOCH_FRAMES_MIN_SAMPLES = 3000


def frames_per_epoch(n_train: int, batch_size: int, slow_start: bool) -> int:
    """Frames the library takes per minibatch epoch: one per minibatch for a large set (an
    MNIST epoch takes seconds; a frame per batch, well under a second apart, is also when
    Pause and Stop act), four for a small set's slow-motion start, else one (a small set's
    epoch takes milliseconds)."""
    batches = max(1, -(-n_train // batch_size))
    if n_train > LARGE_SET_SAMPLES:
        return min(batches, 200)
    if n_train > EPOCH_FRAMES_MIN_SAMPLES:
        return min(batches, 4)
    return min(batches, 4) if slow_start else 1


@dataclass(frozen=True)
class Pace:
    """``max_frames_per_second`` caps a small set's frames (0: no cap); ``slow_start`` holds
    the start frame and shows the first ``SLOW_FRAMES`` frames slowly; ``frames_per_epoch``
    is what the run takes (``frames_per_epoch()``); ``large``: a set above ``EPOCH_FRAMES_MIN_SAMPLES``."""

    max_frames_per_second: float
    slow_start: bool
    large: bool = False
    frames_per_epoch: int = 4

    @property
    def full_speed(self) -> bool:
        return self.max_frames_per_second <= 0 and not self.slow_start

    @property
    def hold_first_frame(self) -> float:
        return HOLD_START_SECONDS if self.slow_start else 0.0

    @property
    def slow_epochs(self) -> float:
        """Epochs the slow-motion start lasts (0 without one)."""
        return SLOW_FRAMES / self.frames_per_epoch if self.slow_start else 0.0

    @property
    def _cap(self) -> float:
        return 1.0 / self.max_frames_per_second if self.max_frames_per_second > 0 else 0.0

    @property
    def steady_seconds_per_epoch(self) -> float:
        """Least seconds an epoch is shown for past the slow start: the cap for a small set
        (one frame an epoch), nothing for a large one."""
        return 0.0 if self.large else self._cap

    def seconds_between(self, start: float, end: float, compute_per_epoch: float) -> float:
        """Seconds a run takes from ``start`` to ``end`` epochs when the training itself
        takes ``compute_per_epoch`` seconds an epoch: a slow-motion frame or a capped one
        lasts at least its pace."""
        slow_end = self.slow_epochs
        slow = max(0.0, min(end, slow_end) - start)
        steady = max(0.0, end - max(start, slow_end))
        slow_per_epoch = self.frames_per_epoch * max(self._cap, SLOW_FRAME_SECONDS)
        return slow * max(compute_per_epoch, slow_per_epoch) + steady * max(
            compute_per_epoch, self.steady_seconds_per_epoch
        )

    def in_slow_start(self, snap: Snapshot) -> bool:
        return progress(snap) < self.slow_epochs

    def __call__(self, snap: Snapshot) -> float | None:
        """Least seconds ``snap`` stays on screen, or None to leave it out."""
        if self.in_slow_start(snap):
            return max(self._cap, SLOW_FRAME_SECONDS)
        if snap.fraction < 1.0 and not self.large:
            return None  # past the slow start a small set shows whole epochs only
        return self.steady_seconds_per_epoch
