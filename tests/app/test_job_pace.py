"""How fast a job shows its frames, and what it says of its speed and its time left, on a
clock the test moves: each frame's computing is seconds the stream takes on that clock."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest
from engine_helpers import Engine, frames

from app_pages.engine.frames import progress
from app_pages.engine.pacing import HOLD_START_SECONDS, SLOW_FRAME_SECONDS, SLOW_FRAMES, Pace


@pytest.fixture
def engine():
    with Engine() as engine:
        yield engine


def _gaps(job) -> list[float]:
    """Seconds between the frames the job kept, on its run's clock."""
    return [b - a for (_, a), (_, b) in itertools.pairwise(job.run_clock.arrivals)]


def test_a_capped_job_keeps_one_frame_more_for_each_frames_time_on_the_clock(engine):
    job = engine.job(max_epochs_per_second=20)
    engine.settle()
    assert len(job.snapshots) == 1  # the start frame, on screen its 0.05 s
    for kept in range(2, 22):
        engine.advance(0.05)
        assert len(job.snapshots) == kept
    engine.advance(0.04)
    assert len(job.snapshots) == 21  # not yet its time
    engine.advance(0.02)
    assert len(job.snapshots) == 22
    engine.advance(10.0)
    assert len(job.snapshots) == 23  # a late frame is not made up for by a burst
    assert [s.epoch for s in job.snapshots] == list(range(23))


def test_speed_is_epochs_per_second_of_the_clock_frame_cap_included(engine):
    job = engine.job(max_epochs_per_second=20)
    engine.settle()
    assert job.epochs_per_second is None  # not before two frames after the start
    engine.advance(0.05)
    assert job.epochs_per_second is None
    for _ in range(23):
        engine.advance(0.05)
    assert job.epochs_per_second == pytest.approx(20.0)


def test_slow_motion_start_walks_through_the_first_epochs_and_full_speed_does_not(engine):
    """The start frame is held until drawn and then HOLD_START_SECONDS; the next SLOW_FRAMES
    frames, four an epoch, SLOW_FRAME_SECONDS each; then whole epochs at the cap."""
    pace = Pace(10, True, frames_per_epoch=4)
    assert pace.slow_epochs == 6.0  # 24 frames, four an epoch
    job = engine.job(frames(epochs=8, per_epoch=4), pace=pace, hold_first_frame=pace.hold_first_frame)
    engine.advance(4.0)
    assert len(job.snapshots) == 1  # held until the page has drawn it (5 s at most)
    job.drawn()
    engine.run_until(lambda: not job.alive)
    assert job.state == "finished"
    kept = [progress(s) for s in job.snapshots]
    assert kept == [k / 4 for k in range(SLOW_FRAMES + 1)] + [7.0, 8.0]  # part-way in the slow start only
    slow = [SLOW_FRAME_SECONDS] * (SLOW_FRAMES - 1)
    assert _gaps(job) == pytest.approx([4.0 + HOLD_START_SECONDS, *slow, 0.1, 0.1])
    fast = engine.job(frames(epochs=8), pace=Pace(0, False))
    fast.join(30)
    assert fast.state == "finished" and len(fast.snapshots) == 9
    assert fast.elapsed == 0.0  # it never waited on the clock


def test_a_large_sets_slow_start_is_frames_not_epochs_and_its_frames_are_not_capped():
    """MNIST takes a frame per minibatch (59 an epoch): six slow epochs would hold it for
    over a minute, and a 10 frames/s cap would slow its training."""
    pace = Pace(10, True, large=True, frames_per_epoch=59)
    assert pace.slow_epochs == SLOW_FRAMES / 59 < 0.5
    early = SimpleNamespace(epoch=1, fraction=10 / 59)
    later = SimpleNamespace(epoch=1, fraction=40 / 59)
    assert pace(early) == SLOW_FRAME_SECONDS
    assert pace(later) == 0.0 and pace(SimpleNamespace(epoch=3, fraction=1.0)) == 0.0
    small = Pace(10, True, frames_per_epoch=4)  # rings: a part-way frame past the slow start is left out
    assert small(SimpleNamespace(epoch=8, fraction=0.5)) is None
    assert small(SimpleNamespace(epoch=8, fraction=1.0)) == 0.1


@pytest.mark.parametrize(("compute", "epoch_seconds"), [(0.02, 0.2), (0.1, 0.4)])
def test_a_capped_set_shows_whole_epochs_at_the_cap_however_long_the_frames_between_take(
    engine, compute, epoch_seconds
):
    """A small set past its slow start shows one frame an epoch and leaves the others out.
    The pace counted from the last frame left out, so each epoch took the cap plus the
    computing of three frames: 3.4 epochs a second where the page asked for 5. An epoch
    that computes longer than the cap takes its computing, no more."""
    stream = frames(epochs=20, per_epoch=4, clock=engine.clock, compute=compute)
    job = engine.job(stream, pace=Pace(5, False, frames_per_epoch=4))
    engine.run_until(lambda: not job.alive)
    assert [s.epoch for s in job.snapshots] == list(range(21))  # whole epochs only
    assert _gaps(job)[1:] == pytest.approx([epoch_seconds] * 19)
    assert job.epochs_per_second == pytest.approx(1 / epoch_seconds)


@pytest.mark.parametrize("compute", [0.01, 0.1])  # a quarter epoch's: below the cap, then above it
def test_the_time_left_is_known_from_the_start_and_slow_motion_included(engine, compute):
    """From the second frame after the start, the time left is what the stream's computing
    and the pace add up to: the slow-motion start's frames, then whole epochs at the cap or
    at the stream's own speed, whichever is slower. It comes true within an epoch's computing."""
    pace = Pace(10, True, frames_per_epoch=4)
    stream = frames(epochs=40, per_epoch=4, clock=engine.clock, compute=compute)
    job = engine.job(stream, pace=pace, hold_first_frame=pace.hold_first_frame, total_epochs=40)
    job.drawn()
    told = {}  # epochs done -> (seconds left, when) at each frame the job waits on
    while job.alive:
        engine.settle()
        told.setdefault(progress(job.latest), (job.seconds_left, engine.clock.now()))
        engine.clock.advance_to_next()
    assert told[0.0][0] is None and told[0.25][0] is None and told[0.5][0] is not None
    last = dict(job.run_clock.arrivals)[40.0]
    told = {done: (left, at) for done, (left, at) in told.items() if left is not None}
    assert len(told) >= 20
    for done, (left, at) in told.items():
        assert left == pytest.approx(last - at, abs=4 * compute), done
