"""A fair, process-wide cap on something training jobs share: the runs under way at once
(the rest wait in line, first come first served, and know their place and roughly how long
they wait; past a longest line, a job is turned away), or the cores, taken one frame's
computation at a time (``jobs.TrainingJob``)."""

from __future__ import annotations

import heapq
import statistics
import threading
from collections.abc import Callable

__all__ = ["MAX_WAITING", "JobSlots", "LineFull"]

# The most jobs that wait for a slot at once: a class of thirty pressing Train together
# waits in full, twice over. A session has one job at a time (the Train page starts none
# while its run trains), so only many sessions reach it, each waiting job a thread.
MAX_WAITING = 60


class LineFull(Exception):
    """Every slot is taken and ``max_waiting`` jobs already wait for one."""


class JobSlots:
    """A fair (first come, first served) cap on concurrently training jobs, with at most
    ``max_waiting`` of them waiting."""

    def __init__(self, capacity: int, max_waiting: int = MAX_WAITING):
        self.capacity = max(1, int(capacity))
        self.max_waiting = max_waiting
        self._lock = threading.Condition()
        # ticket -> its estimate: (seconds left or None, seconds since it started)
        self._running: dict[int, Callable[[], tuple[float | None, float]]] = {}
        self._queue: list[int] = []

    def position(self, ticket: int) -> int:
        """0 when running, else 1 + the number of jobs ahead in line."""
        with self._lock:
            if ticket in self._running:
                return 0
            return self._queue.index(ticket) + 1 if ticket in self._queue else 0

    def wait_estimate(self, ticket: int) -> float | None:
        """Seconds until ``ticket`` gets a slot, from the running jobs' own estimates: each
        slot frees when its job's time left runs out, and each job ahead in line then holds
        one for as long as a running job takes in all (their median), first come first
        served. None while a running job has no estimate yet."""
        with self._lock:
            if ticket not in self._queue:
                return None
            ahead = self._queue.index(ticket)
            estimates = [estimate() for estimate in self._running.values()]
        if any(left is None for left, _ in estimates):
            return None
        free = [left for left, _ in estimates] + [0.0] * (self.capacity - len(estimates))
        heapq.heapify(free)
        if ahead:
            if not estimates:
                return None
            typical = statistics.median(left + elapsed for left, elapsed in estimates)
            for _ in range(ahead):
                heapq.heappush(free, heapq.heappop(free) + typical)
        return free[0]

    def acquire(
        self,
        ticket: int,
        cancelled: Callable[[], bool],
        estimate: Callable[[], tuple[float | None, float]] = lambda: (None, 0.0),
    ) -> bool:
        """Wait for a slot; False if ``cancelled()`` became true while waiting. ``estimate``
        gives the holder's seconds left (None: not known yet) and seconds so far. Raises
        LineFull, without waiting, when the line is as long as it may get."""
        with self._lock:
            if len(self._running) >= self.capacity and len(self._queue) >= self.max_waiting:
                raise LineFull(f"{len(self._queue)} runs already wait for a training slot")
            self._queue.append(ticket)
            while not (len(self._running) < self.capacity and self._queue[0] == ticket):
                if cancelled():
                    self._queue.remove(ticket)
                    self._lock.notify_all()
                    return False
                self._lock.wait(timeout=0.2)
            self._queue.pop(0)
            self._running[ticket] = estimate
            self._lock.notify_all()
            return True

    def release(self, ticket: int) -> None:
        with self._lock:
            self._running.pop(ticket, None)
            self._lock.notify_all()

    def wake(self) -> None:
        """Have every waiting job check at once whether it was cancelled (it leaves the line)."""
        with self._lock:
            self._lock.notify_all()

    @property
    def running(self) -> int:
        with self._lock:
            return len(self._running)

    @property
    def full(self) -> bool:
        """Every slot is taken: a job that asks now waits in line."""
        with self._lock:
            return len(self._running) >= self.capacity
