"""What one training job may take of the server: a place in a line of bounded length, and
its slot for a bounded time."""

import pytest
from test_jobs import rings_stream, wait

from app_pages.engine.jobs import TrainingJob
from app_pages.engine.slots import JobSlots

# The jobs train for real seconds, and these tests watch them by the wall clock.
pytestmark = pytest.mark.wall_clock


def test_a_full_line_turns_a_job_away_at_once_and_the_line_moves_on():
    slots = JobSlots(1, max_waiting=1)
    first = TrainingJob(rings_stream(max_iter=100000), slots, max_epochs_per_second=20)
    wait(lambda: first.state == "running")
    second = TrainingJob(rings_stream(max_iter=2), slots)
    wait(lambda: second.queue_position == 1)
    third = TrainingJob(rings_stream(max_iter=2), slots)
    third.join(5)
    assert third.state == "stopped" and not third.snapshots and third.run_clock.ended is not None
    assert third.error == "The server is busy: 1 runs already wait for a training slot. Press Train again in a few minutes."
    assert second.state == "queued"
    second.stop()  # leaves the line at once: its place is free again
    second.join(1)
    assert not second.alive and slots.position(second.ticket) == 0
    fourth = TrainingJob(rings_stream(max_iter=2), slots)
    wait(lambda: fourth.queue_position == 1)
    first.stop()
    fourth.join(30)
    assert fourth.state == "finished" and fourth.error is None


def test_a_run_gives_its_slot_back_at_the_time_limit_and_says_so():
    """Paused or training, a run holds its slot ``max_seconds`` at most, then stops and
    keeps what it learnt."""
    for pause in (False, True):
        job = TrainingJob(rings_stream(max_iter=100000), JobSlots(1), max_epochs_per_second=20, max_seconds=1.5)
        wait(lambda job=job: len(job.snapshots) >= 2)
        if pause:
            job.pause()
        job.join(10)
        assert not job.alive and job.state == "stopped" and len(job.snapshots) >= 2
        assert job.error == (
            "This run held a training slot for 0.025 minutes, the longest one run may here: it stopped, "
            "and keeps what it learnt."
        )
