"""A fair, process-wide cap on something training jobs share: the runs under way at once
(the rest wait in line, first come first served, and know their place and roughly how long
they wait; past a longest line, a job is turned away), or the cores, taken one frame's
computation at a time (``jobs.TrainingJob``)."""

from __future__ import annotations

import heapq
import statistics
import threading
from collections.abc import Callable, Hashable

__all__ = ["MAX_WAITING", "JobSlots", "LineFull"]

# The most jobs that wait for a slot at once: a class of thirty pressing Train together
# waits in full, twice over. A session has one job at a time (the Train page starts none
# while its run trains), so only many sessions reach it, each waiting job a thread.
MAX_WAITING = 60


class LineFull(Exception):
    """Every slot is taken and ``max_waiting`` jobs already wait for one."""


class JobSlots:
    """A fair (first come, first served) cap on concurrently training jobs, with at most
    ``max_waiting`` of them waiting. Jobs that ask with the same ``share`` key (one run
    that several pages watch, ``shared_runs``) hold one place: in line, where the first of
    them stands, and one slot, until the last of them lets go."""

    def __init__(self, capacity: int, max_waiting: int = MAX_WAITING):
        self.capacity = max(1, int(capacity))
        self.max_waiting = max_waiting
        self._lock = threading.Condition()
        # place (a share key, else the ticket alone) -> its tickets, each with its estimate:
        # (seconds left or None, seconds since it started)
        self._members: dict[Hashable, dict[int, Callable[[], tuple[float | None, float]]]] = {}
        self._place: dict[int, Hashable] = {}  # ticket -> its place
        self._running: set[Hashable] = set()
        self._queue: list[Hashable] = []

    def position(self, ticket: int) -> int:
        """0 when running, else 1 + the number of places ahead in line."""
        with self._lock:
            place = self._place.get(ticket)
            return self._queue.index(place) + 1 if place in self._queue else 0

    def wait_estimate(self, ticket: int) -> float | None:
        """Seconds until ``ticket`` gets a slot, from the running jobs' own estimates: each
        slot frees when its job's time left runs out, and each place ahead in line then
        holds one for as long as a running job takes in all (their median), first come first
        served. None while a running job has no estimate yet."""
        with self._lock:
            place = self._place.get(ticket)
            if place not in self._queue:
                return None
            ahead = self._queue.index(place)
            estimates = [self._estimate(running) for running in self._running]
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

    def _estimate(self, place: Hashable) -> tuple[float | None, float]:
        """A running place's estimate: the one of its jobs furthest from its end."""
        estimates = [estimate() for estimate in self._members[place].values()]
        known = [e for e in estimates if e[0] is not None]
        return max(known, key=lambda e: e[0]) if known else (None, max(e[1] for e in estimates))

    def acquire(
        self,
        ticket: int,
        cancelled: Callable[[], bool],
        estimate: Callable[[], tuple[float | None, float]] = lambda: (None, 0.0),
        share: Hashable | None = None,
    ) -> bool:
        """Wait for a slot; False if ``cancelled()`` became true while waiting. ``estimate``
        gives the holder's seconds left (None: not known yet) and seconds so far. A job
        whose ``share`` key is running takes its slot at once, and one whose key waits in line
        waits there. Raises LineFull, without waiting, when the line is as long as it may get."""
        place = ticket if share is None else ("share", share)
        with self._lock:
            joined = place in self._members
            if not joined and len(self._running) >= self.capacity and len(self._queue) >= self.max_waiting:
                raise LineFull(f"{len(self._queue)} runs already wait for a training slot")
            self._members.setdefault(place, {})[ticket] = estimate
            self._place[ticket] = place
            if not joined:
                self._queue.append(place)
            while place not in self._running:
                if len(self._running) < self.capacity and self._queue[0] == place:
                    self._queue.pop(0)
                    self._running.add(place)
                    self._lock.notify_all()
                    break
                if cancelled():
                    self._leave(ticket)
                    return False
                self._lock.wait(timeout=0.2)
            return True

    def release(self, ticket: int) -> None:
        with self._lock:
            self._leave(ticket)

    def _leave(self, ticket: int) -> None:
        """``ticket`` lets go of its place: the place's slot or place in line goes with its
        last ticket."""
        place = self._place.pop(ticket, None)
        if place is None:
            return
        members = self._members[place]
        members.pop(ticket, None)
        if not members:
            del self._members[place]
            self._running.discard(place)
            if place in self._queue:
                self._queue.remove(place)
        self._lock.notify_all()

    def wake(self) -> None:
        """Have every waiting job check at once whether it was cancelled (it leaves the line)."""
        with self._lock:
            self._lock.notify_all()

    @property
    def running(self) -> int:
        """Slots taken (a run watched by several pages takes one)."""
        with self._lock:
            return len(self._running)

    @property
    def full(self) -> bool:
        """Every slot is taken: a job that asks now waits in line."""
        with self._lock:
            return len(self._running) >= self.capacity
