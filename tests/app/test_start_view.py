"""The Train page's picture before Train (app_pages/ui/train/start_view.py): the start of the
run the sidebar makes, drawn as the page opens, the same as that run's first frame."""

import json

import numpy as np
from apptest_helpers import button, vega_chart, wait_for

from nca_core import datasets


def active_run(at):
    return at.session_state["train_run"] if "train_run" in at.session_state else None


def start_caption(at) -> str:
    (caption,) = [c.value for c in at.caption if c.value.startswith("Epoch 0, before training")]
    return caption


def live_region(at) -> str:
    (region,) = [m.value for m in at.markdown if 'aria-live="polite"' in m.value]
    return region


def test_the_page_opens_on_the_start_picture_with_its_accuracy_before_train_is_pressed(app):
    assert not any("Press **Train** to start" in i.value for i in app.info)
    assert (app.metric[0].label, app.metric[0].value) == ("Epoch", "0")
    accuracy = app.metric[2].value
    assert app.metric[2].label == "Test 5-NN" and accuracy.endswith("%")
    caption = start_caption(app)
    assert f"the PCA start, test 5-NN accuracy {accuracy}." in caption and "Press **Train**" in caption
    assert "Epoch 0, before training: the PCA start" in live_region(app)  # what a screen reader hears
    spec, tables = vega_chart(app, "embedding")
    rings = datasets.load("rings")
    assert len(tables["points"]) == len(rings.y_train) and set(tables["points"]["class"]) == set(rings.classes)
    assert '"shape"' in json.dumps(spec)  # each class a shape as well as a colour, as live


def chart_id(at, key: str) -> str:
    (chart,) = [c for c in at.get("vega_lite_chart") if c.proto.id.endswith(f"-{key}")]
    return chart.proto.id


def test_the_start_picture_is_the_runs_first_frame_which_takes_its_place_in_the_same_chart(app):
    spec_before, before = vega_chart(app, "embedding")
    id_before, accuracy_before = chart_id(app, "embedding"), app.metric[2].value
    app.sidebar.slider(key="rings-epochs-linear-2").set_value(3).run()
    assert vega_chart(app, "embedding")[1]["points"].equals(before["points"])  # epochs change no start
    button(app, "Train").click().run()  # the slow-motion start holds the first frame
    wait_for(app, lambda at: bool(active_run(at).snapshots))
    app.run()  # the page's next poll: the frame may have come after the run that saw it
    first = active_run(app).snapshots[0]
    assert first.epoch == 0 and accuracy_before == f"{100 * first.test_accuracy:.1f}%"
    np.testing.assert_allclose(before["points"][["z1", "z2"]].to_numpy(), first.embedding, rtol=1e-6)
    # the live first frame is the same chart (the browser keeps it) with the same spec
    spec_live, live = vega_chart(app, "embedding")
    assert chart_id(app, "embedding") == id_before and spec_live == spec_before
    assert len(active_run(app).snapshots) > 1 or live["points"].equals(before["points"])
    assert not [c for c in app.caption if c.value.startswith("Epoch 0, before training")]
    button(app, "Stop").click().run()


def test_the_start_picture_follows_the_dataset_d_and_the_start_in_the_sidebar(app):
    _, pca = vega_chart(app, "embedding")
    app.sidebar.selectbox(key="rings-init-linear").set_value("random").run()
    assert "the random start" in start_caption(app)
    _, random = vega_chart(app, "embedding")
    assert not np.allclose(random["points"][["z1", "z2"]], pca["points"][["z1", "z2"]])
    app.sidebar.select_slider(key="rings-d").set_value("3").run()
    (figure,) = [c for c in app.get("plotly_chart") if c.proto.id.endswith("-live-embedding")]
    assert "epoch 0" in figure.proto.spec
    app.selectbox(key="dataset").set_value("wine").run()
    wine = datasets.load("wine")
    _, tables = vega_chart(app, "embedding")
    assert set(tables["points"]["class"]) == set(wine.classes) and len(tables["points"]) == len(wine.y_train)
    assert start_caption(app).startswith("Epoch 0, before training: the ")
