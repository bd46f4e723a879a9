"""What a page asks of its job, Stop, Pause, Resume and Step, and who still watches it."""

from __future__ import annotations

import threading
from collections.abc import Callable

from .clock import Clock

__all__ = ["RunControl", "Watch"]


class RunControl:
    """A job's Stop, Pause, Resume and Step: set by the page, obeyed by the worker at its
    next frame. ``stopped`` and ``resumed`` are the events the worker waits on; ``drawn``
    says the page has drawn a frame (the start frame waits for it)."""

    def __init__(self):
        self.stopped = threading.Event()
        self.resumed = threading.Event()
        self.resumed.set()
        self.drawn = threading.Event()
        self.step_to: float | None = None  # progress at which a step pauses again
        # Pause, Resume, Step and the worker's end of a step each change both of the above;
        # one at a time, or a Resume landing between the two changes of a step's end is lost.
        self._lock = threading.Lock()

    def stop(self) -> None:
        """Stop at the next minibatch; a paused or held job wakes up to end."""
        self.stopped.set()
        self.resumed.set()
        self.drawn.set()

    def pause(self) -> None:
        with self._lock:
            self.step_to = None
            self.resumed.clear()

    def resume(self) -> None:
        with self._lock:
            self.step_to = None
            self.resumed.set()

    def step(self, done: float) -> None:
        """While paused at ``done`` epochs, train one epoch more and pause again; a click
        during a step adds one epoch more to it."""
        with self._lock:
            if self.step_to is not None:
                self.step_to += 1.0
                return
            self.step_to = done + 1.0
            self.resumed.set()

    @property
    def pause_requested(self) -> bool:
        return not self.resumed.is_set() or self.step_to is not None

    def step_ends(self, done: float) -> bool:
        """Whether ``done`` epochs is where a step asked for pauses again."""
        step_to = self.step_to
        return step_to is not None and done >= step_to - 1e-9

    def end_step(self, done: float) -> None:
        """Pause where a step ends (the worker, once its frame is on screen)."""
        with self._lock:
            if self.step_ends(done):
                self.step_to = None
                self.resumed.clear()


class Watch:
    """Whether anybody still watches a job: its tab (``connected``), gone for
    ``reload_grace`` seconds ends it unless a reload takes it up (``adopt``) or pages follow
    it (``followed``, within the same grace), and its page's polls (``heartbeat``), none for
    ``heartbeat_timeout`` seconds ends it (a backstop); and how long it has held its slot."""

    def __init__(self, clock: Clock):
        self.clock = clock
        self.last_heartbeat = clock.now()
        self.last_followed: float | None = None  # when a follower's page last drew the job
        self.gone_since: float | None = None  # when ``connected`` first said the tab was gone
        self.slot_since: float | None = None  # when the job took its training slot

    def heartbeat(self) -> None:
        self.last_heartbeat = self.clock.now()

    def followed(self) -> None:
        """A page following the job has just drawn it: a class still watches, whatever
        became of the tab that started it."""
        self.last_followed = self.clock.now()

    def abandoned(self, connected: Callable[[], bool] | None, reload_grace: float, timeout: float) -> str | None:
        """Why nobody is watching any more, if so."""
        now = self.clock.now()
        if connected is not None and not connected():
            self.gone_since = self.gone_since or now
            unwatched_since = max(self.gone_since, self.last_followed or self.gone_since)
            if now - unwatched_since >= reload_grace:
                return "the browser tab was closed"
        else:
            self.gone_since = None
        if now - self.last_heartbeat > timeout:
            return "the page stopped asking for updates"
        return None

    def over_time(self, max_seconds: float | None) -> bool:
        """Whether the job has held its slot ``max_seconds`` (None: no limit)."""
        since = self.slot_since
        return since is not None and max_seconds is not None and self.clock.now() - since >= max_seconds
