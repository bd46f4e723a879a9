"""What one training job may take of the server: a place in a line of bounded length, which
knows how long it waits, and its slot for a bounded time of its clock."""

import pytest
from engine_helpers import Engine, frames, wait_until

from app_pages.engine.slots import JobSlots


@pytest.fixture
def engine():
    with Engine() as engine:
        yield engine


def test_a_full_line_turns_a_job_away_at_once_and_the_line_moves_on(engine):
    slots = JobSlots(1, max_waiting=1)
    first = engine.job(slots=slots, max_epochs_per_second=20)  # waits on the clock, holding the slot
    engine.settle(first)
    second = engine.job(frames(epochs=2), slots)
    wait_until(lambda: second.queue_position == 1)
    third = engine.job(frames(epochs=2), slots)
    third.join(30)
    assert third.state == "stopped" and not third.snapshots and third.run_clock.ended is not None
    assert third.error == (
        "The server is busy: 1 runs already wait for a training slot. Press Train again in a few minutes."
    )
    assert second.state == "queued"
    second.stop()  # leaves the line at once: its place is free again
    second.join(30)
    assert not second.alive and slots.position(second.ticket) == 0
    fourth = engine.job(frames(epochs=2), slots)
    wait_until(lambda: fourth.queue_position == 1)
    first.stop()
    fourth.join(30)
    assert fourth.state == "finished" and fourth.error is None


def test_a_queued_job_knows_how_long_it_waits(engine):
    """The running job's time left: its epochs to go at its pace, here the cap's."""
    slots = JobSlots(1)
    first = engine.job(frames(epochs=60), slots, max_epochs_per_second=10, total_epochs=60)
    for _ in range(4):
        engine.advance(0.1, first)
    second = engine.job(frames(epochs=2), slots)
    wait_until(lambda: second.queue_position == 1)
    assert second.queue_wait == pytest.approx(5.6)  # 56 epochs at 10 a second
    engine.advance(0.1, first)
    assert second.queue_wait == pytest.approx(5.5)
    first.stop()
    second.join(30)
    assert second.queue_wait is None


@pytest.mark.parametrize("paused", [False, True])
def test_a_run_gives_its_slot_back_at_the_time_limit_and_says_so(engine, paused):
    """Paused or training, a run holds its slot ``max_seconds`` of its clock at most, then
    stops and keeps what it learnt; not a moment before."""
    job = engine.job(max_epochs_per_second=4, max_seconds=1.5)
    engine.advance(0.25)
    if paused:
        job.pause()
    for _ in range(4):
        engine.advance(0.25)
    assert job.alive and job.error is None  # 1.25 s into its slot
    engine.advance(0.25)
    job.join(30)
    assert not job.alive and job.state == "stopped"
    assert len(job.snapshots) == (2 if paused else 6)  # a frame every 0.25 s, or none once paused
    assert job.stop_reason == "it reached the server's time limit"
    assert job.error == (
        "This run held a training slot for 0.025 minutes, the longest one run may here: it stopped, "
        "and keeps what it learnt."
    )
