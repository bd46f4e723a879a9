"""Training runs in background threads, one per session, that never touch Streamlit.

A ``TrainingJob`` pulls snapshots from a ``fit_iter`` stream in its own thread and keeps
them in a list that the page polls. Pause, resume and step act at the next frame; stop
also between minibatches and before an evaluation (the stream's ``should_stop``). A
job whose tab is gone stops by itself ``reload_grace`` seconds later, unless a reload of
the page takes it up again (``adopt``), and one whose page stopped polling after
``heartbeat_timeout`` seconds, so no worker outlives its session for long. It trains once
a ``slots.JobSlots`` lets it: a process-wide cap on how many jobs train at once, which turns
a job away when too many wait; and it holds its slot ``max_seconds`` at most.
"""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from .frames import MAX_FRAME_BYTES, FrameBuffer, progress
from .run_clock import RunClock
from .slots import JobSlots, LineFull

if TYPE_CHECKING:
    from nca_core import Snapshot

    from .sharing import Frames

__all__ = ["JobState", "TrainingJob"]


# Training runs in threads beside the threads that build the pages, and a frame of a small
# set makes hundreds of short torch calls, each giving up the interpreter lock and taking it
# back. Beside a thread busy in Python (a page building its picture), each taking-back waited
# for the busy thread's turn to end, 5 ms by default: digits trained 30 ms epochs in seconds.
# A shorter turn lets the training thread back in sooner; Python code runs a little slower
# for the extra switching.
SWITCH_INTERVAL_SECONDS = 0.0005
sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)


# glibc keeps what a thread freed in that thread's heap arena, so without a trim a server's
# size after a class has trained stays near its peak. Looked up once, in the C library the
# process already has loaded; None where that is not glibc.
_malloc_trim = getattr(ctypes.CDLL(None), "malloc_trim", None)


def _return_free_heap() -> None:
    """Give freed heap pages back to the OS (glibc only)."""
    if _malloc_trim is not None:
        _malloc_trim(0)


# A job's frames live as long as the session that shows them: Streamlit drops a closed tab's
# session a few minutes later, and its frames are freed then, long after the job ended. So
# a job's collection asks for a trim too, a moment later (a finalizer runs before the object
# it watches frees what it holds); one trim serves every job collected meanwhile.
TRIM_DELAY_SECONDS = 1.0
_trim_pending = threading.Lock()


def _return_free_heap_soon() -> None:
    if not _trim_pending.acquire(blocking=False):
        return  # a trim is already on its way

    def trim() -> None:
        _trim_pending.release()
        _return_free_heap()

    timer = threading.Timer(TRIM_DELAY_SECONDS, trim)
    timer.daemon = True
    timer.start()


# Every job still in memory. A closed tab's session, and its job with it, can be freed only
# by the cycle collector, which an idle server seldom runs: after a class of thirty, about
# 35 MB stayed on the heap until a collection (benchmarks/load_test.py). While no job trains
# (a collection stops every thread a moment) and ended ones remain, the server collects,
# less and less often while that frees none (a tab left open on its finished run).
_jobs: weakref.WeakValueDictionary[int, TrainingJob] = weakref.WeakValueDictionary()  # by ticket
_jobs_lock = threading.Lock()  # a job added while another thread reads the jobs
COLLECT_SECONDS = 30.0
COLLECT_MAX_SECONDS = 3600.0


class _Collector:
    def __init__(self):
        self.lock = threading.Lock()
        self.every = COLLECT_SECONDS
        self.next = 0.0

    def job_created(self) -> None:
        with self.lock:
            self.every, self.next = COLLECT_SECONDS, 0.0

    def collect(self) -> bool:
        """Collect and give the heap back when it is due; whether it did."""
        with self.lock:
            jobs = _every_job()
            now = time.monotonic()
            if not jobs or now < self.next or any(job.alive for job in jobs):
                return False
            kept = len(jobs)
            del jobs
            gc.collect()
            _return_free_heap()
            freed = kept > len(_jobs)
            self.every = COLLECT_SECONDS if freed else min(2 * self.every, COLLECT_MAX_SECONDS)
            self.next = now + self.every
            return True


_collector = _Collector()


def _every_job() -> list[TrainingJob]:
    with _jobs_lock:
        return list(_jobs.values())


def collect_ended() -> bool:
    """Free the ended jobs nothing refers to any more, when due (see ``_jobs``); whether it
    collected. Called now and then (``state.RunRegistry``)."""
    return _collector.collect()


# The longest a run holds its training slot, pauses included, before it stops by itself and
# keeps what it learnt: four times MNIST's 50 epochs in the app (15 minutes on 2 cores,
# benchmarks/RESULTS.md, app_speed.py), where the sidebar allows runs of hours (a network
# trained 12 epochs on all of MNIST in 17 minutes, and it may ask for 300), each holding a
# slot that others wait for.
MAX_RUN_SECONDS = 3600.0

_tickets = iter(range(1, 1 << 62))
_ticket_lock = threading.Lock()


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
    ``shared`` instead (a reader from ``sharing.join``), the job reads a run other pages may
    read too: it takes one training slot with them, none for a run already computed to its
    end, its Pause, Step and Stop act on its own reading, and it closes the reader when done.

    Attributes read by the page: ``snapshots`` (at most ``max_snapshots`` in at most
    ``max_frame_bytes``, a ``FrameBuffer``),
    ``state`` (a ``JobState``), ``error``, ``stop_reason`` and ``clock`` (a ``RunClock``).
    ``pace(snapshot)`` gives the least seconds a frame stays before training goes on, or
    None to leave the frame out (else ``max_epochs_per_second`` caps every frame). With
    ``hold_first_frame`` > 0, training waits after the start frame until the page has drawn
    it (``drawn()``, at most 5 s) and then that many seconds, so the start is seen.
    ``threads``, if given, is torch's intra-op thread count for this job's thread only
    (OpenMP keeps the setting per thread), leaving other jobs and the server alone.
    ``slots`` caps the runs under way at once; ``turns``, if given, the cores: a job takes
    a turn for each frame's computation and gives it back while its frame is on screen,
    paused or waiting to be drawn, so runs under way at once share the cores frame by frame
    (without it, a job computes whenever it holds its slot).
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
    state: JobState = JobState.QUEUED
    error: str | None = None
    stop_reason: str | None = None

    def __post_init__(self):
        with _ticket_lock:
            self.ticket = next(_tickets)
        self._stop = threading.Event()
        self._resume = threading.Event()
        self._resume.set()
        self._step_to: float | None = None  # progress at which a step pauses again
        # Pause, Resume, Step and the worker's end of a step each change both of the above;
        # one at a time, or a Resume landing between the two changes of a step's end is lost.
        self._control = threading.Lock()
        self._drawn = threading.Event()
        self._heartbeat = time.monotonic()
        self._gone_since: float | None = None  # when ``connected`` first said the tab was gone
        self._slot_since: float | None = None  # when the job took its training slot
        self.frames = FrameBuffer(self.max_snapshots, self.max_frame_bytes)
        self.clock = RunClock()
        if self.shared is not None:
            self.shared.wanted = lambda: not self._stop.is_set()
        weakref.finalize(self, _return_free_heap_soon)
        with _jobs_lock:
            _jobs[self.ticket] = self
        _collector.job_created()
        self._thread = threading.Thread(target=self._run, name=f"nca-job-{self.ticket}", daemon=True)
        self._thread.start()

    # -- control, called from the page -----------------------------------------------

    def heartbeat(self) -> None:
        self._heartbeat = time.monotonic()

    def stop(self) -> None:
        """Stop at the next minibatch; a paused or held job wakes up to end."""
        self._stop.set()
        self._resume.set()
        self._drawn.set()
        self.slots.wake()  # a job waiting in line leaves it now

    def pause(self) -> None:
        """Pause at the next frame (within an epoch when the run takes frames there)."""
        with self._control:
            if self.alive:
                self._step_to = None
                self._resume.clear()

    def resume(self) -> None:
        with self._control:
            self._step_to = None
            self._resume.set()

    def step(self) -> None:
        """While paused, train exactly one epoch more (from a part-way frame too), then
        pause again; each click during a step adds one epoch more to it."""
        with self._control:
            if not self.pause_requested:
                return
            if self._step_to is not None:
                self._step_to += 1.0
                return
            latest = self.latest
            self._step_to = (progress(latest) if latest is not None else 0.0) + 1.0
            self._resume.set()

    def drawn(self) -> None:
        """The page has drawn a frame (the start frame waits for this)."""
        self._drawn.set()

    @property
    def start_released(self) -> bool:
        """Whether the start frame is no longer held: the page drew a frame, or the run stopped."""
        return self._drawn.is_set()

    @property
    def waits_for_slot(self) -> bool:
        """Queued behind other sessions' runs (not merely about to take a free slot)."""
        return self.state == JobState.QUEUED and self.slots.full

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    @property
    def pause_requested(self) -> bool:
        """Paused, or pausing at the next frame: what the Pause/Resume button shows."""
        return self.alive and (not self._resume.is_set() or self._step_to is not None)

    @property
    def stepping_to(self) -> float | None:
        """Where the step under way pauses again (epochs done), or None."""
        return self._step_to

    @property
    def at_rest(self) -> bool:
        """Paused, or pausing at the next frame, with no step to take: after that frame
        nothing on the page moves until a click."""
        return self.alive and not self._resume.is_set()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

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

    # -- the worker ---------------------------------------------------------------------

    def adopt(self, connected: Callable[[], bool]) -> None:
        """Watched from another tab from now on (a reload of the page that started it)."""
        self.connected, self._gone_since = connected, None
        self.heartbeat()

    def _abandoned(self) -> str | None:
        """Why nobody is watching any more, if so: the tab has been gone for
        ``reload_grace`` seconds, or no page has asked for updates for
        ``heartbeat_timeout`` seconds (a backstop)."""
        connected = self.connected
        if connected is not None and not connected():
            self._gone_since = self._gone_since or time.monotonic()
            if time.monotonic() - self._gone_since >= self.reload_grace:
                return "the browser tab was closed"
        else:
            self._gone_since = None
        if time.monotonic() - self._heartbeat > self.heartbeat_timeout:
            return "the page stopped asking for updates"
        return None

    def _over_time(self) -> str | None:
        """Why the run stops when it has held its slot ``max_seconds`` (saying so in ``error``)."""
        since = self._slot_since
        if since is None or self.max_seconds is None or time.monotonic() - since < self.max_seconds:
            return None
        self.error = (
            f"This run held a training slot for {self.max_seconds / 60:g} minutes, the longest one run "
            "may here: it stopped, and keeps what it learnt."
        )
        return "it reached the server's time limit"

    def _should_stop(self) -> bool:
        reason = self._abandoned() or self._over_time()
        if reason is not None:
            self.stop_reason = reason
        return self._stop.is_set() or reason is not None

    def _run(self) -> None:
        # Imported by the worker, not with this module: the Train page draws its buttons,
        # which need this module, before torch has loaded (seconds on a first visit).
        import torch

        from nca_core.training.loop import TrainingDiverged

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
                stream = self.make_stream(self._stop.is_set)
            self._follow(stream)
            self.state = JobState.STOPPED if self._stop.is_set() or self.stop_reason else JobState.FINISHED
        except TrainingDiverged as exc:
            self.state, self.error = JobState.FAILED, str(exc)
        except torch.OutOfMemoryError:
            self.state = JobState.FAILED
            self.error = (
                "The device ran out of memory. Lower the batch size or the display subset, or "
                "choose a smaller dataset; the last good snapshot is kept."
            )
        except MemoryError:
            self.state = JobState.FAILED
            self.error = "The machine ran out of memory; the last good snapshot is kept."
        except Exception as exc:  # reported on the page instead of killing the thread silently
            self.state, self.error = JobState.FAILED, f"Training stopped: {exc}"
        finally:
            self.clock.end()
            if stream is not None:
                stream.close()
            self.slots.release(self.ticket)
            _return_free_heap()

    def _estimate(self) -> Callable[[], tuple[float | None, float]]:
        """What the slots' line reads of this job once it holds a slot: its seconds left
        and seconds since then."""
        started = time.monotonic()
        return lambda: (self.seconds_left, time.monotonic() - started)

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
            self._slot_since = time.monotonic()
            return True
        share = None if self.shared is None else self.shared.source
        try:
            taken = self.slots.acquire(self.ticket, self._should_stop, self._estimate(), share=share)
        except LineFull as exc:
            self.error = f"The server is busy: {exc}. Press Train again in a few minutes."
            taken = False
        if not taken:
            self.state = JobState.STOPPED
            self.clock.end()
            return False
        self._slot_since = time.monotonic()
        return True

    def _follow(self, stream: Iterator[Snapshot]) -> None:
        """Keep and pace the stream's frames until it ends or the job is told to stop (a
        frame the pace would leave out is kept when it is the last)."""
        last = released = time.monotonic()  # a frame's computing starts; the latest wait ended
        computing = 0.0  # waiting for a turn included: the time left is then the truth on a busy server
        frames = iter(stream)
        while (snap := self._next_frame(frames)) is not None:
            computing += time.monotonic() - last
            self.clock.frame_computed(progress(snap), computing)
            wait = self._frame_seconds(snap)
            if wait is None and not (self._stop.is_set() or self._step_ends(snap)):
                last = time.monotonic()
                continue  # the pace leaves this frame out
            wait = wait or 0.0  # a frame kept all the same (the last, or where a step ends)
            self._keep(snap)
            if self._should_stop():
                return
            # frames left out since the latest wait count in the pace: a capped set shows
            # whole epochs at the cap, not the cap plus the computing of the frames between
            self._wait_between_frames(snap, released, wait)
            if self._should_stop():
                return
            last = released = time.monotonic()

    @property
    def elapsed(self) -> float:
        """Seconds since the job was created, pauses left out, frozen when it ends."""
        return self.clock.elapsed

    @property
    def epochs_per_second(self) -> float | None:
        """Epochs per second of the run as the page sees it (the frame cap included; pauses,
        the held start frame and a slow-motion start not); None before any progress."""
        return self.clock.epochs_per_second(since=getattr(self.pace, "slow_epochs", 0.0))

    @property
    def seconds_left(self) -> float | None:
        """Estimated seconds to the last epoch: the stream's speed, and what the pace adds
        to it (a slow-motion start, a frame cap). None before two frames."""
        latest, per_epoch = self.latest, self.clock.compute_seconds_per_epoch()
        if latest is None or self.total_epochs is None or per_epoch is None:
            return None
        done = progress(latest)
        if hasattr(self.pace, "seconds_between"):
            return self.pace.seconds_between(done, self.total_epochs, per_epoch)
        least = 1.0 / self.max_epochs_per_second if self.max_epochs_per_second > 0 else 0.0
        return max(0.0, self.total_epochs - done) * max(per_epoch, least)

    def _keep(self, snap: Snapshot) -> None:
        self.clock.frame_kept(progress(snap))
        self.frames.keep(snap)

    def _step_ends(self, snap: Snapshot) -> bool:
        """Whether ``snap`` is where a step asked for pauses again (one epoch on)."""
        step_to = self._step_to
        return step_to is not None and progress(snap) >= step_to - 1e-9

    def _frame_seconds(self, snap: Snapshot) -> float | None:
        if self.pace is not None:
            return self.pace(snap)
        return 1.0 / self.max_epochs_per_second if self.max_epochs_per_second > 0 else 0.0

    def _wait_between_frames(self, snap: Snapshot, last: float, seconds: float) -> None:
        if len(self.snapshots) == 1 and self.hold_first_frame > 0:
            self._drawn.wait(5.0)  # the audience sees where the run starts
            self._stop.wait(self.hold_first_frame)
        pause = seconds - (time.monotonic() - last)
        if pause > 0:
            self._stop.wait(pause)
        with self._control:
            if self._step_ends(snap):
                self._step_to = None
                self._resume.clear()
        if not self._resume.is_set():
            self.state = JobState.PAUSED
            self.clock.pause()
            try:
                while not self._resume.wait(timeout=0.1):
                    if self._should_stop():
                        return
            finally:
                self.clock.resume()
            if not self._stop.is_set():
                self.state = JobState.RUNNING
