"""The time a job reads and waits on: the system's monotonic clock, or one a test moves.

Every ``TrainingJob`` takes a ``Clock``: it reads seconds from ``now()`` and waits with
``wait(event, seconds)``, which returns early, True, once the event is set. A test hands a
``ManualClock`` and moves it with ``advance``: it then asserts what the job did in which
order, and how often, rather than how many seconds it took on a shared machine.
"""

from __future__ import annotations

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
    """A clock that moves only when told (``advance``); its waits end when it has moved far
    enough or their event is set, whichever comes first. ``waiting`` counts the threads
    waiting on it, so a test can let a job reach its next wait before moving on."""

    # How often a wait looks at its event in real time: an Event has no way to wake a
    # waiter on another condition, and a set event must end the wait at once.
    POLL_SECONDS = 0.002

    def __init__(self, start: float = 1000.0):
        self._now = start
        self._moved = threading.Condition()
        self.waiting = 0

    def now(self) -> float:
        with self._moved:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._moved:
            self._now += seconds
            self._moved.notify_all()

    def wait(self, event: threading.Event, seconds: float) -> bool:
        with self._moved:
            deadline = self._now + seconds
            self.waiting += 1
            try:
                while not event.is_set():
                    if self._now >= deadline:
                        return False
                    self._moved.wait(self.POLL_SECONDS)
                return True
            finally:
                self.waiting -= 1

    def wait_for_waiters(self, count: int = 1, timeout: float = 30.0) -> None:
        """Block (in real time, at most ``timeout``) until ``count`` threads wait on this clock."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._moved:
                if self.waiting >= count:
                    return
            time.sleep(self.POLL_SECONDS)
        raise TimeoutError(f"fewer than {count} threads waited on the clock within {timeout} s")
