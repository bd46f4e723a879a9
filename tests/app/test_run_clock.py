"""A job's clock: pauses left out of its seconds, speeds over frames as they come."""

from __future__ import annotations

import threading
import time

from app_pages.ui.run_clock import RunClock


def test_a_pause_is_left_out_of_the_elapsed_seconds_and_the_end_freezes_them(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    clock = RunClock()
    now[0] += 2.0
    clock.pause()
    now[0] += 30.0
    assert clock.elapsed == 2.0  # paused: the clock stands still
    clock.resume()
    now[0] += 1.0
    assert clock.elapsed == 3.0
    clock.end()
    now[0] += 5.0
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


def test_speeds_need_two_frames_after_the_start_frame_which_does_not_count(monkeypatch):
    """The start frame comes after the set-up (and may be held on screen), not after an
    epoch: counting it made a run capped at 20 epochs a second read 21 and more."""
    now = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    clock = RunClock()
    clock.frame_kept(0.0)
    now[0] += 5.0  # the start frame held on screen
    clock.frame_kept(1.0)
    assert clock.epochs_per_second() is None  # one frame after the held one
    now[0] += 2.0
    clock.frame_kept(2.0)
    assert clock.epochs_per_second() == 0.5
    for done, busy in ((0.0, 3.0), (1.0, 4.0), (3.0, 5.0)):
        clock.frame_computed(done, busy)
    assert clock.compute_seconds_per_epoch() == 0.5  # the set-up's 3 s left out


def test_the_speed_can_leave_a_slow_motion_start_out(monkeypatch):
    """MNIST's slow start shows 24 frames of 1/59 epoch 0.3 s apart (17.7 s an epoch), then
    trains at about 1.4 s an epoch: from there on, its speed is that of the frames after it."""
    now = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    clock = RunClock()
    clock.frame_kept(0.0)  # the start frame
    for frame in range(1, 60):
        now[0] += 0.3 if frame <= 24 else 1.4 / 59
        clock.frame_kept(frame / 59)
    slow_end = 24 / 59
    assert clock.epochs_per_second() < 1 / 5  # the window still holds the slow frames
    assert abs(1 / clock.epochs_per_second(since=slow_end) - 1.4) < 1e-6
    assert clock.epochs_per_second(since=1.0) is None  # no two frames past it yet
