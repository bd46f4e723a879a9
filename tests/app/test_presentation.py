"""Presentation mode of the Train page: one big chart, the run buttons, large type."""

import json
from pathlib import Path

from apptest_helpers import wait_for
from streamlit.testing.v1 import AppTest

from app_pages.ui.train import notices, presentation

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def styles(at) -> list[str]:
    return [e.proto.body for e in at.get("html") if "<style>" in e.proto.body]


def presenting(at) -> bool:
    return any('data-testid="stSidebar"' in body for body in styles(at))


def test_the_toggle_hides_the_sidebar_enlarges_type_and_keeps_every_run_button(app):
    assert not presenting(app)
    assert [b.label for b in app.button][:4] == ["Train", "Pause", "Step", "Stop"]
    app.toggle(key="present").set_value(True).run()
    assert presenting(app) and "font-size: 20px" in styles(app)[0]
    # Step too (a lecture goes one epoch at a time; CSS leaves it out of narrow windows)
    assert [b.label for b in app.button] == ["Train", "Pause", "Step", "Stop"]
    assert not app.title and not app.expander and not app.tabs
    assert app.query_params["present"] == "1"  # bookmarkable
    assert app.sidebar.selectbox(key="rings-init-linear").value == "pca"  # settings survive
    app.toggle(key="present").set_value(False).run()
    assert not presenting(app) and "present" not in app.query_params
    # the page's compact margins take the mode's place at once (see presentation.style)
    assert len(styles(app)) == 1 and "font-size: 20px" not in styles(app)[0]
    assert "stMainBlockContainer" in styles(app)[0]
    assert [b.label for b in app.button][:4] == ["Train", "Pause", "Step", "Stop"]


def _place_of_train(at) -> tuple[int, ...]:
    """Where the Train button sits in the page's tree: the child indices down to it."""

    def search(node, path):
        for index, child in getattr(node, "children", {}).items():
            if getattr(child, "type", None) == "button" and child.label == "Train":
                return (*path, index)
            found = search(child, (*path, index))
            if found:
                return found
        return None

    return search(at.main, ())


def test_the_run_buttons_keep_their_place_when_the_mode_changes(app):
    """Streamlit redraws an element in place when a run draws one at the same place, and
    removes one drawn elsewhere only when the run ends: had the buttons moved, the page
    would show two Train buttons while the mode changed (a browser test clicked the stale
    one's twin and failed)."""
    outside = _place_of_train(app)
    assert outside is not None
    app.toggle(key="present").set_value(True).run()
    assert _place_of_train(app) == outside
    app.toggle(key="present").set_value(False).run()
    assert _place_of_train(app) == outside


def test_a_link_with_present_opens_the_page_presenting():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(present="1", dataset="wine")
    at.run()
    assert not at.exception, at.exception
    assert presenting(at) and at.toggle(key="present").value is True
    assert not any("were not used" in i.value for i in at.info)


def _finished_presented_run(app, epochs: int):
    """A rings run of ``epochs`` at full speed in presentation mode, run to its end."""
    app.sidebar.slider(key="rings-epochs-linear-2").set_value(epochs)
    app.sidebar.slider(key="pace").set_value(0)
    app.sidebar.toggle(key="slow-start").set_value(False)
    app.toggle(key="present").set_value(True).run()
    app.button(key="train").click().run()
    run = app.session_state["train_run"]
    wait_for(app, lambda at: not run.job.alive)
    return run


def test_a_run_in_presentation_draws_one_big_chart_with_large_labels(app):
    run = _finished_presented_run(app, 3)
    app.run()
    charts = [json.loads(c.proto.spec) for c in app.get("vega_lite_chart")]
    assert len(charts) == 1 and not app.get("plotly_chart")  # the embedding alone, no curves
    assert charts[0]["height"] == "container"  # the window's height (tests/e2e: the CSS)
    assert charts[0]["config"]["axis"]["labelFontSize"] == presentation.VEGA_CONFIG["axis"]["labelFontSize"]
    (points,) = [layer for layer in charts[0]["layer"] if "shape" in layer["encoding"]]
    assert points["mark"]["size"] == presentation.POINT_AREA
    first, last = (s.test_accuracy for s in (run.snapshots[0], run.snapshots[-1]))
    assert [m.label for m in app.metric] == [f"Test 5-NN accuracy (start {first:.0%})"] and not app.tabs
    assert app.metric[0].value == f"{last:.0%}" and app.metric[0].delta.endswith(" points")
    notice = next(c.value for c in app.caption if c.value.startswith("**What to notice:**"))
    assert notices.BRIEF_PICK_HINT in notice and notices.PICK_HINT not in notice  # a narrow column


def test_the_live_spec_gets_projector_sized_text():
    spec = {"height": 440, "config": {"aria": False}, "layer": []}
    big = presentation.big_spec(spec)
    assert big["height"] == "container" and big["config"]["aria"] is False
    assert big["config"]["axis"]["labelFontSize"] >= 16 and big["config"]["legend"]["labelFontSize"] >= 16
    assert "axis" not in spec["config"] and spec["height"] == 440  # the original is left alone


def test_presentation_does_not_round_an_almost_perfect_score_up_to_100(app):
    from dataclasses import replace

    run = _finished_presented_run(app, 2)
    run.job.snapshots[0] = replace(run.snapshots[0], test_accuracy=0.4)
    run.job.snapshots[-1] = replace(run.snapshots[-1], test_accuracy=0.997)
    app.run()
    assert app.metric[0].label == "Test 5-NN accuracy (start 40%)"
    assert app.metric[0].value == "99.7%"


def _view(app, view: str):
    app.radio(key=presentation.VIEW_KEY).set_value(view).run()
    assert not app.exception, app.exception
    return app


def test_the_curves_the_replay_and_the_epochs_are_at_hand_in_projector_type(app):
    """Beside the big picture: Picture / Curves / Replay / Epochs side by side, each drawn
    in the picture's place with text of 18 pixels or more."""
    _finished_presented_run(app, 12)
    app.run()
    picker = app.radio(key=presentation.VIEW_KEY)
    assert list(picker.options) == list(presentation.VIEWS) and picker.value == presentation.PICTURE
    _view(app, presentation.CURVES)
    specs = [json.loads(c.proto.spec) for c in app.get("vega_lite_chart")]
    assert len(specs) == 2 and specs[0]["title"] == "objective"  # no picture beside the curves
    assert '"format": ".0%"' in json.dumps(specs[1])  # the accuracy, in per cent
    for spec in specs:
        assert spec["config"]["axis"]["labelFontSize"] >= 18 and spec["config"]["legend"]["labelFontSize"] >= 18
    _view(app, presentation.REPLAY)
    (replay,) = app.get("plotly_chart")
    layout = json.loads(replay.proto.spec)["layout"]
    assert layout["font"]["size"] >= 18 and layout["sliders"] and not app.get("vega_lite_chart")
    _view(app, presentation.EPOCHS)
    (grid,) = app.get("plotly_chart")
    layout = json.loads(grid.proto.spec)["layout"]
    titles = [a["text"].split(" ·")[0] for a in layout["annotations"]]
    assert titles == ["start", "epoch 1", "epoch 2", "epoch 5", "epoch 10", "epoch 12"]
    assert min(a["font"]["size"] for a in layout["annotations"]) >= 18 and layout["legend"]["font"]["size"] >= 18
    assert [b.label for b in app.get("download_button")] == ["Epochs side by side (PNG, for slides)"]
    _view(app, presentation.PICTURE)
    assert len(app.get("vega_lite_chart")) == 1 and not app.get("plotly_chart")


def test_class_names_are_written_at_each_classes_centre_on_request(app):
    _finished_presented_run(app, 3)
    app.run()
    texts = lambda at: [la for la in json.loads(at.get("vega_lite_chart")[0].proto.spec)["layer"]  # noqa: E731
                        if la["mark"].get("type") == "text"]  # fmt: skip
    assert texts(app) == []
    app.toggle(key=presentation.NAMES_KEY + "-toggle").set_value(True).run()
    halo, name = texts(app)
    assert halo["encoding"]["text"]["field"] == name["encoding"]["text"]["field"] == "class"
    assert halo["mark"]["stroke"] == "white" and halo["mark"]["strokeWidth"] >= 4 and name["mark"]["fontSize"] >= 18
    (centres,) = name["transform"]
    assert centres["groupby"] == ["class"] and {a["op"] for a in centres["aggregate"]} == {"mean"}
    _view(app, presentation.CURVES)
    _view(app, presentation.PICTURE)
    assert len(texts(app)) == 2  # the names stay on while another view was shown


def test_a_presented_picture_is_as_wide_as_its_data_needs_at_one_scale(app):
    """Once the run has ended the picture's axes fit its last frame (a small margin), and its
    box is as wide as that data needs at the box's height, so the clusters fill the plot
    on a wide projector instead of a third of it (tests/e2e: the CSS in the browser)."""
    from nca_core.plots import axes

    run = _finished_presented_run(app, 3)
    app.run()
    (x0, x1), (y0, y1) = axes.bulk_ranges([run.snapshots[-1].embedding[:, :2]])
    (style,) = [body for body in styles(app) if "width: calc(" in body]
    assert f"* {(x1 - x0) / (y1 - y0):.4f} + {presentation.AXES_BESIDE}px" in style and "max-width: 100%" in style
    spec = json.loads(app.get("vega_lite_chart")[0].proto.spec)
    (per_pixel,) = [p["expr"] for p in spec["params"] if p["name"] == "units_per_pixel"]
    assert per_pixel == f"max({x1 - x0!r} / width, {y1 - y0!r} / height)"  # the last frame's, not the run's
