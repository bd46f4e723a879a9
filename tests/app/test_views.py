"""The live view's redraw policy (app_pages/ui/train/live_status.py)."""

from app_pages.ui.train.live_status import (
    CURVES_SECONDS,
    FIRST_FRAME_POLL_SECONDS,
    RESTING_POLL_SECONDS,
    SERVER_REDRAWS_PER_SECOND,
    THREE_D_REDRAW_SECONDS,
    redraw_seconds,
)


def test_small_sets_redraw_ten_times_a_second_and_large_ones_once():
    """The curves keep within half a second of the metrics (drawn with the picture): a
    second behind, a rings run showed 98% beside a curve still at 50%."""
    assert redraw_seconds(700, 2) == (0.1, CURVES_SECONDS) and CURVES_SECONDS <= 0.5
    assert redraw_seconds(7291, 2) == (0.2, CURVES_SECONDS)
    assert redraw_seconds(60000, 2) == (1.0, 1.0)


def test_a_class_of_runs_under_way_shares_the_servers_redraws():
    assert redraw_seconds(700, 2, runs_under_way=2) == redraw_seconds(700, 2)  # a quiet server
    for runs in (8, 16, 30):
        picture, curves = redraw_seconds(700, 2, runs_under_way=runs)
        assert runs / picture <= SERVER_REDRAWS_PER_SECOND + 1e-9 and curves >= picture
    assert redraw_seconds(700, 2, runs_under_way=16)[0] > 2 * redraw_seconds(700, 2)[0]
    assert redraw_seconds(60000, 2, runs_under_way=16) == redraw_seconds(60000, 2)  # already slower
    assert redraw_seconds(700, 2, first_frame=True, runs_under_way=16)[0] == FIRST_FRAME_POLL_SECONDS


def test_a_live_3d_view_polls_slower_whatever_the_size():
    assert redraw_seconds(700, 3)[0] == THREE_D_REDRAW_SECONDS > redraw_seconds(60000, 2)[0]


def test_a_slow_run_gives_seconds_per_epoch_not_zero_epochs_per_second():
    from types import SimpleNamespace

    import numpy as np

    from app_pages.ui.train.live_status import status_text
    from nca_core.training.loop import Snapshot

    latest = Snapshot(1, 0.4, 9.0, None, np.zeros((2, 2), np.float32), fraction=0.19)
    job = SimpleNamespace(
        state="running", alive=True, stop_requested=False, pause_requested=False, latest=latest,
        elapsed=9.6, seconds_left=None, epochs_per_second=0.025,
    )  # fmt: skip
    run = SimpleNamespace(config=SimpleNamespace(max_iter=15, device="cpu"), model=None)
    text = status_text(SimpleNamespace(job=job, run=run))
    assert "40.0 s per epoch" in text and "epochs/s" not in text
    job.epochs_per_second = 2.5
    assert "2.5 epochs/s" in status_text(SimpleNamespace(job=job, run=run))


def test_the_slow_motion_start_says_so_instead_of_a_speed_the_page_sets():
    """While a run shows its first frames slowly, the status says so instead of a speed
    (MNIST read "17.1 s per epoch" there); past them, and once the run has ended, it gives
    the speed of the frames after the slow start (``RunClock.epochs_per_second``)."""
    from types import SimpleNamespace

    import numpy as np

    from app_pages.engine.jobs import JobState
    from app_pages.engine.pacing import Pace, frames_per_epoch
    from app_pages.ui.train.live_status import status_text
    from nca_core.training.loop import Snapshot

    pace = Pace(0.0, slow_start=True, large=True, frames_per_epoch=frames_per_epoch(60000, 1024, True))
    job = SimpleNamespace(
        state=JobState.RUNNING, alive=True, stop_requested=False, pause_requested=False, elapsed=9.1,
        seconds_left=67.0, pace=pace,
    )  # fmt: skip
    run = SimpleNamespace(config=SimpleNamespace(max_iter=40, device="cpu"), model=None)

    def status(fraction, state=JobState.RUNNING, epochs_per_second=None):
        job.latest = Snapshot(1, 0.4, 9.0, None, np.zeros((2, 2), np.float32), fraction=fraction)
        job.state, job.epochs_per_second = state, epochs_per_second
        return status_text(SimpleNamespace(job=job, run=run))

    slow = status(0.36)  # MNIST's slow start: 24 of 59 frames
    assert "slow-motion start" in slow and "per epoch" not in slow and "about 1 min 07 s left" in slow
    after = status(0.5, epochs_per_second=1 / 1.4)
    assert "slow-motion start" not in after and "1.4 s per epoch" in after
    stopped = status(0.36, JobState.STOPPED)  # no frames past the slow start: no speed
    assert "stopped" in stopped and "slow-motion start" not in stopped and "per epoch" not in stopped
    # About to stop or pause: no time left or pace, which no longer apply; the line stays short
    # enough for one line of a 1440-pixel page (a second line pushed the picture down)
    job.stepping_to = None
    for asked, says in (("stop_requested", "stopping at the next frame"), ("pause_requested", "pausing at the next frame")):
        setattr(job, asked, True)
        for halting in (status(0.36), status(0.5, epochs_per_second=1 / 1.4)):
            assert says in halting and "left" not in halting, halting
            assert "slow-motion start" not in halting and "per epoch" not in halting, halting
        setattr(job, asked, False)


def test_until_the_start_frame_exists_every_run_polls_fast():
    assert redraw_seconds(60000, 2, first_frame=True) == (FIRST_FRAME_POLL_SECONDS, 1.0)
    assert redraw_seconds(700, 3, first_frame=True)[0] == FIRST_FRAME_POLL_SECONDS < THREE_D_REDRAW_SECONDS
    assert redraw_seconds(700, 2, first_frame=True)[0] == 0.1  # already faster: kept


def test_a_paused_run_at_rest_polls_seldom_whatever_the_size():
    """Its picture changes only after a click, which reruns the page anyway."""
    for n, d in ((700, 2), (7291, 2), (60000, 2), (700, 3)):
        picture, curves = redraw_seconds(n, d, resting=True)
        assert picture == max(RESTING_POLL_SECONDS, redraw_seconds(n, d)[0]) and curves >= RESTING_POLL_SECONDS
    assert redraw_seconds(700, 2, resting=True)[0] == RESTING_POLL_SECONDS > redraw_seconds(700, 2)[0]


def test_a_first_frame_is_polled_fast_even_for_a_run_paused_before_it():
    """Pause clicked before the start frame exists: the frame still shows at once."""
    assert redraw_seconds(60000, 2, first_frame=True, resting=True)[0] == FIRST_FRAME_POLL_SECONDS


def test_a_step_under_way_says_where_it_pauses_again():
    from types import SimpleNamespace

    import numpy as np

    from app_pages.engine.jobs import JobState
    from app_pages.ui.train.live_status import status_text
    from nca_core.training.loop import Snapshot

    job = SimpleNamespace(
        state=JobState.RUNNING, alive=True, stop_requested=False, pause_requested=True, elapsed=3.0,
        seconds_left=None, epochs_per_second=None, stepping_to=6.75,
        latest=Snapshot(5, 0.4, 9.0, None, np.zeros((2, 2), np.float32), fraction=0.75),
    )  # fmt: skip
    run = SimpleNamespace(config=SimpleNamespace(max_iter=300, device="cpu"), model=None)
    assert " · stepping to epoch 6.75 · " in status_text(SimpleNamespace(job=job, run=run))
    job.stepping_to = 12.25  # written as the status writes epochs, not rounded to 12.2
    assert " · stepping to epoch 12.25 · " in status_text(SimpleNamespace(job=job, run=run))
    job.stepping_to = 13.0
    assert " · stepping to epoch 13 · " in status_text(SimpleNamespace(job=job, run=run))
    job.stepping_to = None  # Pause clicked, the run not yet at its next frame
    assert " · pausing at the next frame · " in status_text(SimpleNamespace(job=job, run=run))
