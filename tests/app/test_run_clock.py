"""A job's clock: pauses left out of its seconds, speeds over frames as they come."""

from __future__ import annotations

import time

from app_pages.ui.run_clock import RunClock


def test_a_pause_is_left_out_of_the_elapsed_seconds_and_the_end_freezes_them():
    clock = RunClock()
    time.sleep(0.05)
    clock.pause()
    time.sleep(0.3)
    clock.resume()
    assert 0.04 <= clock.elapsed < 0.2
    clock.end()
    frozen = clock.elapsed
    time.sleep(0.05)
    assert clock.elapsed == frozen


def test_speeds_need_two_frames_and_a_held_start_frame_does_not_count(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    clock = RunClock(skip_first_frame=True)
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
