"""A job's Pause, Resume, Step and Stop, on a clock the test moves: which frames it keeps,
in which state, however far the clock goes."""

from __future__ import annotations

import threading

import pytest
from engine_helpers import Engine, frames, wait_until

from app_pages.engine.frames import progress
from app_pages.engine.pacing import Pace

CAP = 20  # epochs a second: a frame every TICK seconds of the clock
TICK = 0.05


@pytest.fixture
def engine():
    with Engine() as engine:
        yield engine


def _paused_after(engine, kept: int, cap: float = CAP):
    """A job capped at ``cap`` epochs a second that has kept ``kept`` frames and paused at
    the last of them."""
    job = engine.job(max_epochs_per_second=cap)
    for _ in range(kept - 1):
        engine.advance(1 / cap)
    job.pause()
    engine.advance(1 / cap)  # the frame's wait ends: the pause holds it there
    assert job.state == "paused" and len(job.snapshots) == kept
    return job


def test_pause_step_resume_stop(engine):
    job = _paused_after(engine, 3)
    for _ in range(3):
        engine.advance(60.0)  # paused: however far the clock moves
    assert len(job.snapshots) == 3 and job.state == "paused"
    job.step()
    engine.settle()
    assert len(job.snapshots) == 4 and job.state == "running"  # the epoch's frame, on screen its time
    engine.advance(TICK)
    assert len(job.snapshots) == 4 and job.state == "paused"
    engine.advance(60.0)
    assert len(job.snapshots) == 4
    job.resume()
    for _ in range(3):
        engine.advance(TICK)
    assert len(job.snapshots) == 8 and job.state == "running"  # one at once, one per tick
    job.stop()
    job.join(30)
    assert job.state == "stopped" and not job.alive


def test_each_step_click_during_a_step_adds_one_epoch(engine):
    """A second Step clicked while the first still trains (a step takes over a second in
    the slow-motion start) was dropped: two clicks, one epoch."""
    job = _paused_after(engine, 2)
    start = job.latest.epoch
    job.step()
    job.step()  # while the first step trains
    assert job.stepping_to == start + 2
    engine.run_until(lambda: job.state == "paused")
    engine.advance(60.0)
    assert job.latest.epoch == start + 2 and job.state == "paused" and job.at_rest


def test_a_job_is_at_rest_only_while_paused_with_no_step_to_take(engine):
    """What lets the page poll a paused run seldom: a pause rests at once (it holds at the
    next frame); a step asked for, or a resume, ends the rest at once, before the worker
    wakes; a step's end is rest again."""
    job = engine.job(max_epochs_per_second=CAP)
    engine.advance(TICK)
    assert not job.at_rest
    job.pause()
    assert job.at_rest
    engine.advance(TICK)
    assert job.at_rest and job.state == "paused"
    job.step()
    assert not job.at_rest
    engine.advance(TICK)
    assert job.at_rest and job.state == "paused" and len(job.snapshots) == 3
    job.resume()
    assert not job.at_rest
    job.stop()
    job.join(30)
    assert not job.at_rest


class _Contended:
    """A lock that tells (``asked``) when a thread asks for it while another holds it."""

    def __init__(self):
        self._lock, self.asked = threading.Lock(), threading.Event()

    def __enter__(self):
        if not self._lock.acquire(blocking=False):
            self.asked.set()
            self._lock.acquire()

    def __exit__(self, *exc):
        self._lock.release()


def test_a_resume_clicked_as_a_step_ends_is_not_lost(engine):
    """The worker ends a step in two changes (no step, then paused); a Resume arriving
    between them used to be undone, and the run stayed paused as if it was never clicked."""
    job = _paused_after(engine, 2)
    lock = job.control._lock = _Contended()
    ends, clicked = job.control.step_ends, []

    def resume_clicked_now(done):
        ended = ends(done)
        if ended and not clicked:  # the click lands while the worker ends the step
            click = threading.Thread(target=job.resume)
            click.start()
            clicked.append(click)
            wait_until(lambda: lock.asked.is_set() or not click.is_alive())  # it waits for the worker
        return ended

    job.control.step_ends = resume_clicked_now
    job.step()
    engine.advance(TICK)  # the step's frame has had its time: the step ends, as Resume is clicked
    clicked[0].join(30)
    assert lock.asked.is_set()
    for _ in range(3):
        engine.advance(TICK)
    assert job.state == "running" and not job.pause_requested
    assert len(job.snapshots) == 2 + 1 + 1 + 3  # the step's frame, one at the resume, one a tick


def test_a_step_from_a_part_way_frame_trains_exactly_one_epoch(engine):
    """In the slow-motion start frames come four an epoch: a step from 1.5 must end at 2.5,
    not at the end of epoch 2 (a quarter epoch, while the button says one), and one that
    ends past the start, on a frame the pace would leave out, keeps it."""
    pace = Pace(0, True, frames_per_epoch=4)
    job = engine.job(frames(per_epoch=4), pace=pace)
    engine.run_until(lambda: progress(job.latest) == 1.5)
    job.pause()
    engine.run_until(lambda: job.state == "paused")
    assert progress(job.latest) == 1.5
    for start in (1.5, 2.5, 3.5, 4.5, 5.5, 6.5):
        job.step()
        engine.run_until(lambda: job.state == "paused")
        assert progress(job.latest) == start + 1.0
    assert progress(job.latest) > pace.slow_epochs and job.latest.fraction < 1


def test_a_pause_stops_the_clock_and_leaves_the_speed_alone(engine):
    job = _paused_after(engine, 4, cap=4)
    before = job.elapsed
    for _ in range(4):
        engine.advance(25.0)
    assert job.elapsed == before  # paused time is not training time
    job.resume()
    for _ in range(8):
        engine.advance(0.25)
    assert job.epochs_per_second == pytest.approx(4.0)  # 100 s of pause would have dragged it to 0.1
