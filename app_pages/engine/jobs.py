"""Training runs in background threads, one per session, that never touch Streamlit.

A ``TrainingJob`` pulls snapshots from a ``fit_iter`` stream in its own thread and keeps
them in a list that the page polls. Pause, resume and step act at the next frame; stop
also between minibatches and before an evaluation (the stream's ``should_stop``). A
job whose tab is gone stops by itself ``reload_grace`` seconds later, unless a reload of
the page takes it up again (``adopt``), and one whose page stopped polling after
``heartbeat_timeout`` seconds, so no worker outlives its session for long. It trains once
a ``slots.JobSlots`` lets it: a process-wide cap on how many jobs train at once, which turns
a job away when too many wait; and it holds its slot ``max_seconds`` at most. Every second
it reads or waits is its ``clock``'s (``clock.Clock``).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from .clock import SYSTEM_CLOCK, Clock
from .collection import job_created
from .control import RunControl, Watch
from .frames import MAX_FRAME_BYTES, FrameBuffer, progress
from .process import return_free_heap
from .run_clock import RunClock
from .slots import JobSlots, LineFull

if TYPE_CHECKING:
    from nca_core import Snapshot

    from .shared_runs import Frames

__all__ = ["MAX_RUN_SECONDS", "JobState", "TrainingJob"]

# The longest a run holds its training slot, pauses included, before it stops by itself and
# keeps what it learnt: four times MNIST's 50 epochs in the app (15 minutes on 2 cores,
# benchmarks/RESULTS.md, app_speed.py), where the sidebar allows runs of hours (a network
# trained 12 epochs on all of MNIST in 17 minutes, and it may ask for 300), each holding a
# slot that others wait for.
MAX_RUN_SECONDS = 3600.0

_tickets = itertools.count(1)  # next() on a count is atomic under the interpreter lock


class JobState(str, Enum):
    """Where a job is. A str, so that pages and tests may compare it with its value."""

    QUEUED = "queued"  # waiting for a training slot
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"  # trained to the end
    STOPPED = "stopped"  # by Stop, a closed tab, or before it had a slot
    FAILED = "failed"  # ``error`` says why

    def __str__(self) -> str:  # its value, on Python 3.11+ too
        return self.value


@dataclass
class TrainingJob:
    """One training run. ``make_stream(should_stop)`` is called in the worker thread; the
    stream it returns asks ``should_stop()`` between minibatches (``NCA.fit_iter``). With
    ``shared`` instead (a reader from ``shared_runs.join``), the job reads a run other pages
    may read too: it takes one training slot with them, none for a run already computed to
    its end, its Pause, Step and Stop act on its own reading, and it closes the reader when
    done.

    Attributes read by the page: ``snapshots`` (at most ``max_snapshots`` in at most
    ``max_frame_bytes``, a ``FrameBuffer``), ``state`` (a ``JobState``), ``error``,
    ``stop_reason`` and ``run_clock`` (a ``RunClock``).
    ``pace(snapshot)`` gives the least seconds a frame stays before training goes on, or
    None to leave the frame out (else ``max_epochs_per_second`` caps every frame). With
    ``hold_first_frame`` > 0, training waits after the start frame until the page has drawn
    it (``drawn()``, at most 5 s) and then that many seconds, so the start is seen.
    ``threads``, if given, is torch's intra-op thread count for this job's thread only
    (OpenMP keeps the setting per thread), leaving other jobs and the server alone.
    ``slots`` caps the runs under way at once; ``turns``, if given, the cores: a job takes a
    turn for each frame's computation and gives it back while its frame is on screen, paused
    or waiting to be drawn, so runs under way share the cores frame by frame.
    The time left comes from the stream's own speed (seconds spent computing per epoch)
    and, where the pace has ``seconds_between`` (``pacing.Pace``), what it adds on top:
    so it is known from the second frame on, slow-motion start included. Paused time
    counts in neither time nor speed.
    """

    make_stream: Callable[[Callable[[], bool]], Iterator[Snapshot]] | None
    slots: JobSlots
    max_epochs_per_second: float = 0.0
    pace: Callable[[Snapshot], float | None] | None = None
    hold_first_frame: float = 0.0
    total_epochs: int | None = None
    connected: Callable[[], bool] | None = None
    reload_grace: float = 0.0
    heartbeat_timeout: float = 600.0
    max_seconds: float | None = MAX_RUN_SECONDS
    max_snapshots: int = 600
    max_frame_bytes: int = MAX_FRAME_BYTES
    threads: int | None = None
    turns: JobSlots | None = None
    shared: Frames | None = None
    clock: Clock = field(default=SYSTEM_CLOCK, repr=False)
    state: JobState = JobState.QUEUED
    error: str | None = None
    stop_reason: str | None = None

    def __post_init__(self):
        self.ticket = next(_tickets)
        self.control = RunControl()
        self.watch = Watch(self.clock)
        self.frames = FrameBuffer(self.max_snapshots, self.max_frame_bytes)
        self.run_clock = RunClock(self.clock)
        if self.shared is not None:
            self.shared.wanted = lambda: not self.control.stopped.is_set()
        job_created(self)
        self._thread = threading.Thread(target=self._run, name=f"nca-job-{self.ticket}", daemon=True)
        self._thread.start()

    # -- control, called from the page -----------------------------------------------

    def heartbeat(self) -> None:
        self.watch.heartbeat()

    def stop(self) -> None:
        """Stop at the next minibatch; a paused or held job wakes up to end."""
        self.control.stop()
        self.slots.wake()  # a job waiting in line leaves it now

    def pause(self) -> None:
        """Pause at the next frame (within an epoch when the run takes frames there)."""
        if self.alive:
            self.control.pause()

    def resume(self) -> None:
        self.control.resume()

    def step(self) -> None:
        """While paused, train exactly one epoch more (from a part-way frame too), then
        pause again; each click during a step adds one epoch more to it."""
        if self.pause_requested:
            latest = self.latest
            self.control.step(progress(latest) if latest is not None else 0.0)

    def drawn(self) -> None:
        """The page has drawn a frame (the start frame waits for this)."""
        self.control.drawn.set()

    def adopt(self, connected: Callable[[], bool]) -> None:
        """Watched from another tab from now on (a reload of the page that started it)."""
        self.connected, self.watch.gone_since = connected, None
        self.heartbeat()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    # -- what the page reads ----------------------------------------------------------

    @property
    def start_released(self) -> bool:
        """Whether the start frame is no longer held: the page drew a frame, or the run stopped."""
        return self.control.drawn.is_set()

    @property
    def waits_for_slot(self) -> bool:
        """Queued behind other sessions' runs (not merely about to take a free slot)."""
        return self.state == JobState.QUEUED and self.slots.full

    @property
    def stop_requested(self) -> bool:
        return self.control.stopped.is_set()

    @property
    def pause_requested(self) -> bool:
        """Paused, or pausing at the next frame: what the Pause/Resume button shows."""
        return self.alive and self.control.pause_requested

    @property
    def stepping_to(self) -> float | None:
        """Where the step under way pauses again (epochs done), or None."""
        return self.control.step_to

    @property
    def at_rest(self) -> bool:
        """Paused, or pausing at the next frame, with no step to take: after that frame
        nothing on the page moves until a click."""
        return self.alive and not self.control.resumed.is_set()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def queue_position(self) -> int:
        return self.slots.position(self.ticket) if self.state == JobState.QUEUED else 0

    @property
    def queue_wait(self) -> float | None:
        """Estimated seconds until this queued job starts (None: unknown or not queued)."""
        return self.slots.wait_estimate(self.ticket) if self.state == JobState.QUEUED else None

    @property
    def snapshots(self) -> list[Snapshot]:
        return self.frames.items

    @property
    def latest(self) -> Snapshot | None:
        return self.frames.latest

    @property
    def elapsed(self) -> float:
        """Seconds since the job was created, pauses left out, frozen when it ends."""
        return self.run_clock.elapsed

    @property
    def epochs_per_second(self) -> float | None:
        """Epochs per second of the run as the page sees it (the frame cap included; pauses,
        the held start frame and a slow-motion start not); None before any progress."""
        return self.run_clock.epochs_per_second(since=getattr(self.pace, "slow_epochs", 0.0))

    @property
    def seconds_left(self) -> float | None:
        """Estimated seconds to the last epoch: the stream's speed, and what the pace adds
        to it (a slow-motion start, a frame cap). None before two frames."""
        latest, per_epoch = self.latest, self.run_clock.compute_seconds_per_epoch()
        if latest is None or self.total_epochs is None or per_epoch is None:
            return None
        done = progress(latest)
        if hasattr(self.pace, "seconds_between"):
            return self.pace.seconds_between(done, self.total_epochs, per_epoch)
        least = 1.0 / self.max_epochs_per_second if self.max_epochs_per_second > 0 else 0.0
        return max(0.0, self.total_epochs - done) * max(per_epoch, least)

    # -- the worker ---------------------------------------------------------------------

    def _should_stop(self) -> bool:
        reason = self.watch.abandoned(self.connected, self.reload_grace, self.heartbeat_timeout)
        if reason is None and self.watch.over_time(self.max_seconds):
            reason = "it reached the server's time limit"
            self.error = (
                f"This run held a training slot for {self.max_seconds / 60:g} minutes, the longest one run "
                "may here: it stopped, and keeps what it learnt."
            )
        if reason is not None:
            self.stop_reason = reason
        return self.control.stopped.is_set() or reason is not None

    def _run(self) -> None:
        # Imported by the worker, not with this module: the Train page draws its buttons,
        # which need this module, before torch has loaded (seconds on a first visit).
        import torch

        stream = self.shared
        if not self._take_slot():
            if stream is not None:
                stream.close()
            return
        try:
            if self.threads:
                torch.set_num_threads(self.threads)
            self.state = JobState.RUNNING
            if stream is None:
                stream = self.make_stream(self.control.stopped.is_set)
            self._follow(stream)
            stopped = self.control.stopped.is_set() or self.stop_reason
            self.state = JobState.STOPPED if stopped else JobState.FINISHED
        except Exception as exc:  # reported on the page instead of killing the thread silently
            self.state, self.error = JobState.FAILED, _failure(exc)
        finally:
            self.run_clock.end()
            if stream is not None:
                stream.close()
            self.slots.release(self.ticket)
            return_free_heap()

    def _estimate(self) -> Callable[[], tuple[float | None, float]]:
        """What the slots' line reads of this job once it holds a slot: its seconds left
        and seconds since then."""
        started = self.clock.now()
        return lambda: (self.seconds_left, self.clock.now() - started)

    def _next_frame(self, frames: Iterator[Snapshot]) -> Snapshot | None:
        """The stream's next frame, computed in a turn of the cores when turns are shared;
        None when the stream has ended or the job was stopped while waiting for its turn."""
        if self.turns is None or getattr(frames, "ready", lambda: False)():
            return next(frames, None)  # a shared run's frame another page computed: no turn
        if not self.turns.acquire(self.ticket, self._should_stop):
            return None
        try:
            return next(frames, None)
        finally:
            self.turns.release(self.ticket)

    def _take_slot(self) -> bool:
        """Wait in line for a training slot; False, the job over, when it was stopped while
        waiting or turned away by a full line (``error`` says so)."""
        if self.shared is not None and self.shared.source.ended:  # its every frame is there to read
            self.watch.slot_since = self.clock.now()
            return True
        share = None if self.shared is None else self.shared.source
        try:
            taken = self.slots.acquire(self.ticket, self._should_stop, self._estimate(), share=share)
        except LineFull as exc:
            self.error = f"The server is busy: {exc}. Press Train again in a few minutes."
            taken = False
        if not taken:
            self.state = JobState.STOPPED
            self.run_clock.end()
            return False
        self.watch.slot_since = self.clock.now()
        return True

    def _follow(self, stream: Iterator[Snapshot]) -> None:
        """Keep and pace the stream's frames until it ends or the job is told to stop (a
        frame the pace would leave out is kept when it is the last)."""
        last = released = self.clock.now()  # a frame's computing starts; the latest wait ended
        computing = 0.0  # waiting for a turn included: the time left is then the truth on a busy server
        frames = iter(stream)
        while (snap := self._next_frame(frames)) is not None:
            computing += self.clock.now() - last
            self.run_clock.frame_computed(progress(snap), computing)
            wait = self._frame_seconds(snap)
            if wait is None and not (self.control.stopped.is_set() or self.control.step_ends(progress(snap))):
                last = self.clock.now()
                continue  # the pace leaves this frame out
            self.run_clock.frame_kept(progress(snap))
            self.frames.keep(snap)
            if self._should_stop():
                return
            # frames left out since the latest wait count in the pace: a capped set shows
            # whole epochs at the cap, not the cap plus the computing of the frames between
            self._wait_between_frames(snap, released, wait or 0.0)  # a kept frame: the last, a step's end
            if self._should_stop():
                return
            last = released = self.clock.now()

    def _frame_seconds(self, snap: Snapshot) -> float | None:
        if self.pace is not None:
            return self.pace(snap)
        return 1.0 / self.max_epochs_per_second if self.max_epochs_per_second > 0 else 0.0

    def _wait_between_frames(self, snap: Snapshot, last: float, seconds: float) -> None:
        control = self.control
        if len(self.snapshots) == 1 and self.hold_first_frame > 0:
            self.clock.wait(control.drawn, 5.0)  # the audience sees where the run starts
            self.clock.wait(control.stopped, self.hold_first_frame)
        pause = seconds - (self.clock.now() - last)
        if pause > 0:
            self.clock.wait(control.stopped, pause)
        control.end_step(progress(snap))
        if not control.resumed.is_set():
            self.state = JobState.PAUSED
            self.run_clock.pause()
            try:
                while not self.clock.wait(control.resumed, 0.1):
                    if self._should_stop():
                        return
            finally:
                self.run_clock.resume()
            if not control.stopped.is_set():
                self.state = JobState.RUNNING


def _failure(exc: Exception) -> str:
    """What the page says of a run that raised ``exc``: its own words for a run that
    diverged, plain ones for memory, the exception's for anything else."""
    import torch

    from nca_core.training.loop import TrainingDiverged

    if isinstance(exc, TrainingDiverged):
        return str(exc)
    if isinstance(exc, torch.OutOfMemoryError):
        return (
            "The device ran out of memory. Lower the batch size or the display subset, or "
            "choose a smaller dataset; the last good snapshot is kept."
        )
    if isinstance(exc, MemoryError):
        return "The machine ran out of memory; the last good snapshot is kept."
    return f"Training stopped: {exc}"
