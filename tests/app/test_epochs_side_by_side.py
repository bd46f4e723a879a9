"""Epochs side by side on the Train page while a run trains: the epochs reached so far, on
one scale, growing as the run goes (after a run: tests/app/test_train_page.py)."""

import json

from apptest_helpers import button, wait_for

from app_pages.ui.train import epochs, presentation


def grid(at) -> dict | None:
    """The layout of the epoch grid on the page, if one is drawn."""
    charts = [c for c in at.get("plotly_chart") if c.proto.id.endswith(("-epoch-grid", "-present-epoch-grid"))]
    return json.loads(charts[0].proto.spec)["layout"] if charts else None


def titles(at) -> list[str]:
    layout = grid(at)
    return [] if layout is None else [a["text"].split(" ·")[0] for a in layout["annotations"]]


def slow_run(app):
    """A rings run of 300 epochs at 2 frames a second: it trains for minutes."""
    app.sidebar.slider(key="rings-epochs-linear-2").set_value(300)
    app.sidebar.slider(key="pace").set_value(2)
    app.sidebar.toggle(key="slow-start").set_value(False)
    button(app, "Train").click().run()
    return app.session_state["train_run"]


def test_during_a_run_the_grid_grows_with_the_epochs_reached_on_one_scale(app):
    run = slow_run(app)
    assert grid(app) is None  # off until asked: it costs nothing then
    app.toggle(key=epochs.LIVE_KEY).set_value(True).run()
    wait_for(app, lambda at: "epoch 1" in titles(at))
    early = titles(app)
    assert run.job.alive and early[:2] == ["start", "epoch 1"]
    latest = int(early[-1].split()[-1])
    wait_for(app, lambda at: "epoch 10" in titles(at) and int(titles(at)[-1].split()[-1]) > max(latest, 10))
    later = titles(app)  # the chosen epochs as they were reached, then the latest
    assert run.job.alive and later[:5] == ["start", "epoch 1", "epoch 2", "epoch 5", "epoch 10"] and len(later) == 6
    layout = grid(app)
    ranges = {json.dumps(layout[k]["range"]) for k in layout if k[1:5] == "axis" and "range" in layout[k]}
    assert len(ranges) == 2  # one x range and one y range for every panel
    assert "Epochs side by side (PNG, for slides)" in [b.label for b in app.get("download_button")]
    button(app, "Stop").click().run()


def test_presenting_a_run_shows_the_epochs_reached_so_far_in_the_pictures_place(app):
    run = slow_run(app)
    app.toggle(key="present").set_value(True).run()
    wait_for(app, lambda at: any(r.key == presentation.VIEW_KEY for r in at.radio))
    app.radio(key=presentation.VIEW_KEY).set_value(presentation.EPOCHS).run()
    wait_for(app, lambda at: "epoch 2" in titles(at))
    assert run.job.alive and titles(app)[:3] == ["start", "epoch 1", "epoch 2"]
    assert not app.get("vega_lite_chart")  # the grid in the picture's place
    app.radio(key=presentation.VIEW_KEY).set_value(presentation.REPLAY).run()
    assert any("replay is ready once the run has ended" in i.value for i in app.info)
    button(app, "Stop").click().run()
