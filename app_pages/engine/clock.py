"""The time a job reads and waits on: the system's monotonic clock, or one a test moves.

Every ``TrainingJob`` takes a ``Clock``: it reads seconds from ``now()`` and waits with
``wait(event, seconds)``, which returns early, True, once the event is set. A test hands a
``ManualClock`` and moves it with ``advance``: it then asserts what the job did in which
order, and how often, rather than how many seconds it took on a shared machine.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "Clock", "ManualClock", "SystemClock"]


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic scale."""

    def wait(self, event: threading.Event, seconds: float) -> bool:
        """Wait until ``event`` is set (True) or ``seconds`` have passed on this clock (False)."""


class SystemClock:
    """``time.monotonic`` and ``Event.wait``: the clock of a serving app."""

    def now(self) -> float:
        return time.monotonic()

    def wait(self, event: threading.Event, seconds: float) -> bool:
        return event.wait(max(0.0, seconds))


SYSTEM_CLOCK = SystemClock()


class ManualClock:
    """A clock that moves only when told (``advance``, ``advance_to_next``); its waits end
    when it has moved far enough or their event is set, whichever comes first. ``waiting``
    counts the waits that stay put until it moves, so a test lets a job reach its next wait
    (``wait_for_waiters``) before it moves the clock on."""

    # How often a wait looks at its event in real time: an Event has no way to wake a
    # waiter on another condition, and a set event must end the wait at once.
    POLL_SECONDS = 0.002

    def __init__(self, start: float = 1000.0):
        self._now = start
        self._moved = threading.Condition()
        self._waits: dict[int, tuple[float, threading.Event]] = {}  # each wait's deadline and event
        self._keys = itertools.count()

    def now(self) -> float:
        with self._moved:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._moved:
            self._now += seconds
            self._moved.notify_all()

    def advance_to_next(self) -> float:
        """Move to the earliest time a wait still waits for; the seconds moved, 0 when none waits."""
        with self._moved:
            deadlines = [deadline for deadline, _ in self._blocked()]
            if not deadlines:
                return 0.0
            moved = min(deadlines) - self._now
            self._now = min(deadlines)
            self._moved.notify_all()
            return moved

    def wait(self, event: threading.Event, seconds: float) -> bool:
        with self._moved:
            key, deadline = next(self._keys), self._now + seconds
            self._waits[key] = (deadline, event)
            try:
                while not event.is_set():
                    if self._now >= deadline:
                        return False
                    self._moved.wait(self.POLL_SECONDS)
                return True
            finally:
                del self._waits[key]

    def _blocked(self) -> list[tuple[float, threading.Event]]:
        # a wait whose time has come or whose event is set is over, though its thread may not
        # have woken yet: it is on its way, not waiting
        return [(d, e) for d, e in self._waits.values() if d > self._now and not e.is_set()]

    @property
    def waiting(self) -> int:
        """Waits that stay put until the clock moves (or their event is set)."""
        with self._moved:
            return len(self._blocked())

    def wait_for_waiters(self, count: int = 1, timeout: float = 30.0) -> None:
        """Block until ``count`` waits stay put on this clock; ``timeout`` real seconds bound
        only a failure (a thread that never waits again)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.waiting >= count:
                return
            time.sleep(self.POLL_SECONDS)
        raise TimeoutError(f"fewer than {count} threads waited on the clock within {timeout} s")
