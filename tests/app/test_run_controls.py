"""AppTests of the Train page's Pause / Resume / Step / Stop buttons and its status line."""

import re
import time

import pytest
from apptest_helpers import button, wait_for

# The buttons act on a running job, and these tests watch it for real seconds.
pytestmark = pytest.mark.wall_clock


def start(app, epochs=300, pace=5, slow=False):
    app.sidebar.slider(key="rings-epochs-linear-2").set_value(epochs)
    app.sidebar.slider(key="pace").set_value(pace)
    app.sidebar.toggle(key="slow-start").set_value(slow)
    button(app, "Train").click().run()
    return app.session_state["train_run"]


def labels(at):
    return [b.label for b in at.button][:4]


def whole_epochs(run):
    return [s.epoch for s in run.snapshots if s.fraction >= 1.0]


def test_pause_relabels_at_once_step_advances_one_epoch_resume_goes_on(app):
    run = start(app)
    wait_for(app, lambda at: len(run.snapshots) >= 3)
    button(app, "Pause").click().run()
    assert labels(app) == ["Train", "Resume", "Step", "Stop"]  # the first click already says Resume
    assert not [m for m in app.markdown if m.value == "None"]  # no stray "None" on the page
    assert not button(app, "Step").disabled
    wait_for(app, lambda at: run.job.state == "paused")
    held = whole_epochs(run)
    time.sleep(0.5)
    assert whole_epochs(run) == held  # paused means paused
    button(app, "Step").click().run()
    wait_for(app, lambda at: whole_epochs(run) == [*held, held[-1] + 1] and run.job.state == "paused")
    time.sleep(0.6)
    assert whole_epochs(run)[-1] == held[-1] + 1  # exactly one epoch, then paused again
    assert labels(app) == ["Train", "Resume", "Step", "Stop"]
    button(app, "Resume").click().run()
    assert labels(app) == ["Train", "Pause", "Step", "Stop"]
    assert button(app, "Step").disabled
    wait_for(app, lambda at: whole_epochs(run)[-1] >= held[-1] + 3)
    assert run.job.state == "running"
    button(app, "Stop").click().run()
    assert not run.job.alive and run.job.state == "stopped"


def test_status_of_a_stopped_run_freezes_and_never_says_zero_speed(app):
    run = start(app, pace=0)
    wait_for(app, lambda at: len(run.snapshots) >= 1)
    button(app, "Stop").click().run()
    assert not run.job.alive
    first = next(p.proto.text for p in app.get("progress"))
    time.sleep(1.2)
    app.run()
    again = next(p.proto.text for p in app.get("progress"))
    assert re.search(r"· stopped · ", again)
    assert first == again  # the elapsed time stops with the run
    assert not re.search(r"(?<![\d.])0\.0 epochs/s", again)  # zero, not 40.0 (a substring test read that as 0.0)


def test_the_start_frame_is_on_screen_before_training_goes_on(app):
    run = start(app, epochs=60, pace=10, slow=True)
    # the start picture shows epoch 0 before the run has a frame: wait for the run's own
    wait_for(app, lambda at: len(run.snapshots) >= 1 and any(m.label == "Epoch" for m in at.metric))
    assert app.metric[0].value == "0"
    assert [s.epoch for s in run.snapshots] == [0]  # held until the page has drawn it
    wait_for(app, lambda at: len(run.snapshots) > 1, timeout=10)
    # then the first epochs come in slow motion, several frames each
    wait_for(app, lambda at: whole_epochs(run)[-1:] == [2] or whole_epochs(run)[-1] > 2, timeout=20)
    assert any(s.fraction < 1.0 for s in run.snapshots)
    button(app, "Stop").click().run()


def test_a_run_that_blows_up_says_so(app):
    app.sidebar.number_input(key="rings-lr-adam-linear-2").set_value(1000.0)
    run = start(app, epochs=15, pace=0)
    wait_for(app, lambda at: not run.job.alive)
    app.run()
    assert any("looks like it is diverging" in w.value for w in app.warning), [w.value for w in app.warning]


class _Job:
    """A job's control surface, for the callbacks alone."""

    def __init__(self):
        self.pause_requested, self.calls, self.alive = False, [], True

    def pause(self):
        self.pause_requested = True
        self.calls.append("pause")

    def resume(self):
        self.pause_requested = False
        self.calls.append("resume")


def test_a_pause_callback_run_twice_for_one_click_still_pauses(monkeypatch):
    """The button passes what it said when clicked: a replayed trigger repeats the pause
    instead of toggling it back (as a toggle read from the job's state would)."""
    from types import SimpleNamespace

    from app_pages.ui.train import buttons, runs

    job = _Job()
    monkeypatch.setattr(runs.st, "session_state", {runs.RUN_KEY: SimpleNamespace(job=job)})
    buttons._pause_or_resume("pause")
    buttons._pause_or_resume("pause")
    assert job.pause_requested and job.calls == ["pause", "pause"]


def test_a_pause_clicked_before_the_run_has_a_job_is_kept_for_it(monkeypatch):
    from app_pages.ui.train import buttons, runs

    session = {runs.TRAIN_REQUEST: True}
    monkeypatch.setattr(runs.st, "session_state", session)
    buttons._pause_or_resume("pause")
    assert runs.pending_pause()
    buttons._pause_or_resume("resume")
    assert not runs.pending_pause()
    buttons._stop()
    assert session[runs.PENDING] == "stop" and session[runs.TRAIN_REQUEST]


def test_a_click_is_kept_for_later_only_while_a_train_request_waits_for_its_job(monkeypatch):
    """A Pause with no run at all is not kept (the next Train would start paused), and a
    Train request left over while a job trains (a double click) does not swallow Pause."""
    from types import SimpleNamespace

    from app_pages.ui.train import buttons, runs

    session = {}
    monkeypatch.setattr(runs.st, "session_state", session)
    buttons._pause_or_resume("pause")
    assert not runs.pending_pause()
    job = _Job()
    session.update({runs.RUN_KEY: SimpleNamespace(job=job), runs.TRAIN_REQUEST: True})
    buttons._pause_or_resume("pause")
    assert job.calls == ["pause"] and not runs.pending_pause()
