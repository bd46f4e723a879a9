"""A training job's clock: seconds with its pauses left out, and how fast the run goes."""

from __future__ import annotations

import itertools
import statistics
import threading

from .clock import SYSTEM_CLOCK, Clock

__all__ = ["RunClock"]


class RunClock:
    """Seconds of a run, pauses left out, and two speeds read from it: epochs per second as
    the page sees frames arrive, taken over the latest ``SPEED_WINDOW`` seconds so that it
    follows a change of pace, and the stream's own seconds of computing per epoch.
    The first frame, the start frame, does not count in the page's speed: it comes after
    the run's setup, not after an epoch, and may be held on screen. The worker pauses and
    resumes it while the page reads it: those three hold one lock. The stream's seconds per
    epoch, which the time left is made of, are read over whole epochs (see
    ``compute_seconds_per_epoch``)."""

    # Speed is measured over the latest this-many seconds.
    SPEED_WINDOW = 10.0

    def __init__(self, clock: Clock = SYSTEM_CLOCK):
        self._clock = clock
        self.started = clock.now()
        self.ended: float | None = None
        self._lock = threading.Lock()
        self._paused = 0.0  # seconds spent paused, finished pauses
        self._paused_since: float | None = None
        self.arrivals: list[tuple[float, float]] = []  # (epochs done, now()) of every frame kept
        self._computed: list[tuple[float, float]] = []  # (epochs done, seconds the stream has computed)

    def now(self) -> float:
        """Seconds of the run so far, pauses left out (on the monotonic clock's scale)."""
        with self._lock:
            now = self._clock.now()
            since = self._paused_since
            return now - self._paused - (now - since if since is not None else 0.0)

    def pause(self) -> None:
        with self._lock:
            self._paused_since = self._clock.now()

    def resume(self) -> None:
        with self._lock:
            if self._paused_since is not None:
                self._paused += self._clock.now() - self._paused_since
                self._paused_since = None

    def end(self) -> None:
        self.ended = self._clock.now()

    @property
    def elapsed(self) -> float:
        """Seconds since the run was created, pauses left out, frozen when it ends."""
        if self.ended is None:
            return self.now() - self.started
        with self._lock:
            return self.ended - self._paused - self.started

    def frame_kept(self, done: float) -> None:
        """A frame ``done`` epochs into the run reached the page's buffer."""
        self.arrivals.append((done, self.now()))

    def frame_computed(self, done: float, busy_seconds: float) -> None:
        """The stream had computed ``busy_seconds`` in all when it gave a frame ``done``
        epochs in (kept or not)."""
        self._computed.append((done, busy_seconds))

    def epochs_per_second(self, since: float = 0.0) -> float | None:
        """Epochs per second between frames kept in the latest SPEED_WINDOW seconds, from
        ``since`` epochs on (a slow-motion start's pace is the page's); None until there
        are two."""
        arrivals = [(e, t) for e, t in self.arrivals[1:] if e >= since]
        if not arrivals:
            return None
        end_epoch, end_at = arrivals[-1]
        window = [(e, t) for e, t in arrivals if t >= end_at - self.SPEED_WINDOW]
        if len(window) < 2 or end_epoch <= window[0][0] or end_at <= window[0][1]:
            return None
        return (end_epoch - window[0][0]) / (end_at - window[0][1])

    def compute_seconds_per_epoch(self) -> float | None:
        """Seconds the stream itself takes per epoch (the start frame's set-up left out);
        None until it has two frames.

        Once three epochs have ended, the mean of their costs with each held to at most
        ``STALL_FACTOR`` times their median: a few seconds in which the machine was busy
        elsewhere (a browser taking screenshots) stall one epoch, not the estimate, while
        work every epoch does once (a candidate search) stays in it. Before that, the mean
        over the run so far."""
        computed = self._computed[1:]
        if len(computed) < 2:
            return None
        costs = _epoch_costs(computed)
        if len(costs) >= 3:
            ceiling = self.STALL_FACTOR * statistics.median(costs)
            return sum(min(cost, ceiling) for cost in costs) / len(costs)
        (start_epoch, start_busy), (end_epoch, end_busy) = computed[0], computed[-1]
        if end_epoch <= start_epoch:
            return None
        return (end_busy - start_busy) / (end_epoch - start_epoch)

    # An epoch that costs more than this many times the median epoch counts as that much.
    STALL_FACTOR = 2.0


def _epoch_costs(computed: list[tuple[float, float]]) -> list[float]:
    """Busy seconds of each whole epoch between the frames that end epochs."""
    ends = [(done, busy) for done, busy in computed if float(done).is_integer()]
    return [b1 - b0 for (e0, b0), (e1, b1) in itertools.pairwise(ends) if e1 == e0 + 1]
