"""The clocks a job reads and waits on: the system's, and the one a test moves."""

from __future__ import annotations

import threading

import pytest

from app_pages.engine.clock import SYSTEM_CLOCK, ManualClock


def _waiter(clock: ManualClock, event: threading.Event, *seconds: float) -> tuple[threading.Thread, list]:
    """A thread that waits ``seconds`` on ``clock`` one after another; what each wait returned."""
    returned = []

    def waits():
        for s in seconds:
            returned.append(clock.wait(event, s))

    thread = threading.Thread(target=waits, daemon=True)
    thread.start()
    return thread, returned


def test_a_wait_ends_when_the_clock_reaches_its_time_and_not_before():
    clock = ManualClock(start=0.0)
    thread, returned = _waiter(clock, threading.Event(), 1.0)
    clock.wait_for_waiters()
    clock.advance(0.5)
    clock.wait_for_waiters()  # half-way: still waiting
    assert returned == [] and thread.is_alive()
    clock.advance(0.5)
    thread.join(30)
    assert returned == [False] and clock.now() == 1.0


def test_a_set_event_ends_a_wait_at_once_with_the_clock_unmoved():
    clock, event = ManualClock(start=0.0), threading.Event()
    thread, returned = _waiter(clock, event, 60.0)
    clock.wait_for_waiters()
    event.set()
    assert clock.waiting == 0  # on its way out, no longer waiting
    thread.join(30)
    assert returned == [True] and clock.now() == 0.0
    assert clock.wait(event, 5.0) and not clock.wait(threading.Event(), 0.0)


def test_a_wait_whose_time_came_no_longer_counts_so_a_test_sees_the_next_one():
    """After ``advance`` the waits it ended stop counting at once, before their threads wake:
    ``wait_for_waiters`` returns once the thread waits again, never on the wait it left."""
    clock = ManualClock(start=0.0)
    thread, returned = _waiter(clock, threading.Event(), 1.0, 1.0, 1.0)
    for ended in (1, 2):
        clock.wait_for_waiters()
        clock.advance(1.0)
        # a wait counted now is the next one: the thread has woken and returned from the
        # ended wait already (it may, on a busy machine, before this line runs)
        assert clock.waiting == 0 or len(returned) == ended
        clock.wait_for_waiters()
        assert returned == [False] * ended
    clock.advance(1.0)
    thread.join(30)
    assert returned == [False] * 3


def test_advance_to_next_moves_to_the_nearest_wait_end():
    clock = ManualClock(start=10.0)
    threads = [_waiter(clock, threading.Event(), s)[0] for s in (0.25, 0.75)]
    clock.wait_for_waiters(2)
    assert clock.advance_to_next() == 0.25 and clock.now() == 10.25
    threads[0].join(30)
    assert clock.waiting == 1
    assert clock.advance_to_next() == 0.5 and clock.now() == 10.75
    threads[1].join(30)
    assert clock.advance_to_next() == 0.0 and clock.now() == 10.75  # nothing waits: it stays


def test_waiting_for_waiters_that_never_come_fails_within_its_timeout():
    with pytest.raises(TimeoutError):
        ManualClock().wait_for_waiters(timeout=0.05)


def test_the_system_clock_waits_for_its_event_or_its_seconds():
    event = threading.Event()
    start = SYSTEM_CLOCK.now()
    assert not SYSTEM_CLOCK.wait(event, 0.01) and SYSTEM_CLOCK.now() > start
    event.set()
    assert SYSTEM_CLOCK.wait(event, 60.0)
    assert SYSTEM_CLOCK.wait(event, -1.0)  # a negative time is no time
