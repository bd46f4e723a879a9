"""AppTests of what one session holds on the Train page: one run at a time, none of a file
it no longer uses, and no clicked point it cannot draw."""

import numpy as np
from apptest_helpers import APP, button, click_vega, wait_for
from streamlit.testing.v1 import AppTest
from test_train_page import active_run, finished_run


def test_a_session_trains_one_run_at_a_time(app):
    """A Train click while the session's run trains starts no second job and leaves no
    request behind, whether it is a click on the greyed button that a crafted client sends
    (Streamlit discards it) or the second click of a double click, which reaches the page
    as a request: a session holds one place in the server's line at most."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    app.sidebar.slider(key="rings-epochs-linear-2").set_value(300)
    app.sidebar.slider(key="pace").set_value(5)
    button(app, "Train").click().run()
    first = active_run(app)
    assert first.job.alive
    states = app._tree.get_widget_states()
    states.widgets.append(WidgetState(id=button(app, "Train").id, trigger_value=True))
    app._run(states)
    assert active_run(app) is first
    app.session_state["train-requested"] = True  # the double click's second request
    app.run()
    assert active_run(app) is first and first.job.alive
    assert "train-requested" not in app.session_state
    first.job.stop()


def test_a_new_upload_resets_the_run_of_the_previous_one(app):
    """Every upload is called "uploaded": a run of the previous file, kept under that name,
    must not be drawn with the new file's rows (an IndexError on a narrower file)."""
    from nca_core.datasets import Dataset

    def upload(n_features):
        rng = np.random.default_rng(n_features)
        X, y = rng.normal(size=(300, n_features)).astype(np.float32), np.arange(300) % 3
        app.session_state["uploaded_dataset"] = Dataset("uploaded", X[:200], y[:200], X[200:], y[200:], ("a", "b", "c"))
        app.session_state["dataset_choice"] = "uploaded"

    upload(6)
    app.run()  # the selector offers the upload
    app.selectbox(key="dataset").set_value("uploaded").run()
    app.run()  # the dataset loaded: Train is ready
    app.sidebar.slider(key="pace").set_value(0)
    app.sidebar.toggle(key="slow-start").set_value(False)
    button(app, "Train").click().run()
    wait_for(app, lambda at: not active_run(at).job.alive)
    app.run()
    assert active_run(app).run.data.n_features == 6 and not app.exception
    assert active_run(app).job.shared is None  # a user's file is shared with no other session
    upload(3)
    app.run()
    assert not app.exception, app.exception
    assert active_run(app) is None


def test_a_crafted_click_on_a_point_that_is_not_drawn_is_a_click_on_nothing(app):
    """A chart event names the clicked row; one naming no drawn point (what a crafted
    client can send) must not leave a row that every later page run fails to draw."""
    run = finished_run(app, 3)
    for row in (10**9, -1, "x", float("nan")):
        click_vega(app, "embedding", {"pick": [{"row": row}]})
        assert not app.exception, (row, app.exception)
        app.run()
        assert not app.exception, (row, app.exception)
        assert any("Click a point in the embedding above" in i.value for i in app.info)
    click_vega(app, "embedding", {"pick": [{"row": 17}]})  # a real click still inspects
    assert any(f"Training point **#{run.run.display_index[17]}**" in m.value for m in app.markdown)


def test_two_sessions_asking_for_the_same_run_watch_one(app):
    """A second page's Train with the same settings reads the run the first page started,
    and stopping it leaves the first page's run training."""
    other = AppTest.from_file(APP, default_timeout=180).run()
    for at in (app, other):
        at.sidebar.slider(key="rings-epochs-linear-2").set_value(300)
        button(at, "Train").click().run()
    first, second = active_run(app), active_run(other)
    assert second.job.shared.source is first.job.shared.source and second.trained is first.trained
    wait_for(other, lambda at: len(active_run(at).snapshots) >= 3)
    button(other, "Stop").click().run()
    assert not second.job.alive and first.job.alive
    button(app, "Stop").click().run()
    assert not other.exception and not app.exception
