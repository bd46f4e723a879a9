"""A job's clock: pauses left out of its seconds, speeds over frames as they come."""

from __future__ import annotations

import threading

import pytest

from app_pages.engine.clock import ManualClock
from app_pages.engine.run_clock import RunClock


def test_a_pause_is_left_out_of_the_elapsed_seconds_and_the_end_freezes_them():
    manual = ManualClock(start=100.0)
    clock = RunClock(manual)
    manual.advance(2.0)
    clock.pause()
    manual.advance(30.0)
    assert clock.elapsed == 2.0  # paused: the clock stands still
    clock.resume()
    manual.advance(1.0)
    assert clock.elapsed == 3.0
    clock.end()
    manual.advance(5.0)
    assert clock.elapsed == 3.0


def test_the_clock_read_while_the_worker_pauses_and_resumes_never_fails_or_goes_back():
    """The page reads ``elapsed`` while the worker pauses and resumes: each read sees a whole
    pause or none (without the lock, reads raised TypeError and went backwards)."""
    clock, errors, stop = RunClock(), [], threading.Event()

    def worker():
        while not stop.is_set():
            clock.pause()
            clock.resume()

    thread = threading.Thread(target=worker)
    thread.start()
    last = clock.elapsed
    try:
        for _ in range(50_000):
            value = clock.elapsed
            if value < last - 1e-9:
                errors.append((last, value))
            last = value
    except TypeError as exc:
        errors.append(exc)
    finally:
        stop.set()
        thread.join()
    assert errors == []


def test_speeds_need_two_frames_after_the_start_frame_which_does_not_count():
    """The start frame comes after the set-up (and may be held on screen), not after an
    epoch: counting it made a run capped at 20 epochs a second read 21 and more."""
    manual = ManualClock(start=100.0)
    clock = RunClock(manual)
    clock.frame_kept(0.0)
    manual.advance(5.0)  # the start frame held on screen
    clock.frame_kept(1.0)
    assert clock.epochs_per_second() is None  # one frame after the held one
    manual.advance(2.0)
    clock.frame_kept(2.0)
    assert clock.epochs_per_second() == 0.5
    for done, busy in ((0.0, 3.0), (1.0, 4.0), (3.0, 5.0)):
        clock.frame_computed(done, busy)
    assert clock.compute_seconds_per_epoch() == 0.5  # the set-up's 3 s left out


def test_the_speed_can_leave_a_slow_motion_start_out():
    """MNIST's slow start shows 24 frames of 1/59 epoch 0.3 s apart (17.7 s an epoch), then
    trains at about 1.4 s an epoch: from there on, its speed is that of the frames after it."""
    manual = ManualClock(start=0.0)
    clock = RunClock(manual)
    clock.frame_kept(0.0)  # the start frame
    for frame in range(1, 60):
        manual.advance(0.3 if frame <= 24 else 1.4 / 59)
        clock.frame_kept(frame / 59)
    slow_end = 24 / 59
    assert clock.epochs_per_second() < 1 / 5  # the window still holds the slow frames
    assert abs(1 / clock.epochs_per_second(since=slow_end) - 1.4) < 1e-6
    assert clock.epochs_per_second(since=1.0) is None  # no two frames past it yet


def _computed_run(clock, epoch_costs, frames_per_epoch=4, first_share=0.25):
    """Feed the clock a run's frames: each epoch's cost, its first frame taking
    ``first_share`` of it (a candidate search) and the others the rest evenly."""
    busy = 2.0  # the set-up before the start frame
    clock.frame_computed(0.0, busy)
    for epoch, cost in enumerate(epoch_costs):
        for frame in range(1, frames_per_epoch + 1):
            share = first_share if frame == 1 else (1 - first_share) / (frames_per_epoch - 1)
            busy += cost * share
            clock.frame_computed(epoch + frame / frames_per_epoch, busy)


def test_the_time_left_shrugs_off_a_busy_moment_and_keeps_each_epochs_own_work():
    """100 epochs of 1 s whose 12th stalls 10 s while the machine is busy elsewhere: at 15 %
    of the run, the stream's seconds per epoch stay within 1.5x of the 1 s the rest of the
    run takes (over the latest 10 s they read 3 s and more). Work each epoch does once, a
    search at its start taking a quarter of it, stays in the estimate."""
    clock = RunClock()
    _computed_run(clock, [1.0] * 11 + [11.0] + [1.0] * 3)
    assert 1.0 <= clock.compute_seconds_per_epoch() <= 1.5
    steady = RunClock()
    _computed_run(steady, [2.0] * 6, first_share=0.6)
    assert steady.compute_seconds_per_epoch() == pytest.approx(2.0)


def test_before_three_whole_epochs_the_speed_is_the_runs_mean_so_far():
    clock = RunClock()
    _computed_run(clock, [4.0, 4.0], frames_per_epoch=8, first_share=1 / 8)
    assert clock.compute_seconds_per_epoch() == pytest.approx(4.0)
