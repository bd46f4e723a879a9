"""AppTests of the Train page: render, train, stop, reset on dataset change, divergence."""

import io
import json

import numpy as np
import pytest
from apptest_helpers import button, click_vega, drawn_before_heavy_imports, vega_chart, wait_for

from nca_core.plots.axes import settled_ranges
from nca_core.plots.colours import class_colors
from nca_core.plots.figures import LINK_WIDEST
from nca_core.plots.replay import epoch_label


def active_run(at):
    return at.session_state["train_run"] if "train_run" in at.session_state else None


def finished_run(app, epochs: int, dataset: str = "rings"):
    """Train ``dataset`` for ``epochs`` at full speed and rerun the page once it has ended."""
    d = app.sidebar.select_slider(key=f"{dataset}-d").value
    app.sidebar.slider(key=f"{dataset}-epochs-linear-{d}").set_value(epochs)
    app.sidebar.slider(key="pace").set_value(0)
    app.sidebar.toggle(key="slow-start").set_value(False)
    button(app, "Train").click().run()
    wait_for(app, lambda at: not active_run(at).job.alive)
    app.run()
    return active_run(app)


def test_page_renders_with_rings_preselected(app):
    assert app.title[0].value == "Train NCA and watch it learn"
    assert app.selectbox(key="dataset").value == "rings"
    assert [b.label for b in app.button][:4] == ["Train", "Pause", "Step", "Stop"]
    assert not app.error


def test_a_short_run_produces_snapshots_and_metrics(app):
    app.sidebar.slider(key="rings-epochs-linear-2").set_value(8)
    app.sidebar.slider(key="pace").set_value(0)
    app.sidebar.toggle(key="slow-start").set_value(False)
    button(app, "Train").click().run()
    wait_for(app, lambda at: not active_run(at).job.alive)
    run = active_run(app)
    assert run.job.state == "finished" and run.job.error is None
    assert [s.epoch for s in run.snapshots] == list(range(9))
    assert run.snapshots[-1].objective > run.snapshots[0].objective
    app.run()
    labels = [m.label for m in app.metric]
    assert labels == ["Epoch", "mean pᵢ", "Test 5-NN"]
    assert app.metric[1].value == f"{run.snapshots[-1].objective:.4f}"
    assert app.metric[0].value == "8"
    assert [t.label for t in app.tabs] == ["Replay", "Epochs side by side", "Inspect a point", "Learned map", "Downloads"]
    assert not app.exception


def test_stop_keeps_the_snapshots(app):
    app.sidebar.slider(key="rings-epochs-linear-2").set_value(300)
    app.sidebar.slider(key="pace").set_value(5)
    button(app, "Train").click().run()
    wait_for(app, lambda at: len(active_run(at).snapshots) >= 3)
    button(app, "Stop").click().run()
    run = active_run(app)
    assert not run.job.alive and run.job.state == "stopped"
    kept = len(run.snapshots)
    assert 3 <= kept < 301
    app.run()
    assert len(active_run(app).snapshots) == kept
    assert app.metric[0].value == epoch_label(run.snapshots[-1])  # "12" or "12.25"


def test_changing_dataset_resets_the_run(app):
    app.sidebar.slider(key="rings-epochs-linear-2").set_value(3)
    app.sidebar.slider(key="pace").set_value(0)
    app.sidebar.toggle(key="slow-start").set_value(False)
    button(app, "Train").click().run()
    wait_for(app, lambda at: not active_run(at).job.alive)
    app.selectbox(key="dataset").set_value("wine").run()
    assert active_run(app) is None
    assert app.sidebar.toggle(key="wine-std").value is True  # wine's own defaults
    assert not app.exception


def test_a_dataset_that_cannot_load_says_why_and_nothing_says_it_loads_or_asks_for_train(app, monkeypatch):
    from app_pages.ui import app_data
    from nca_core.datasets import DatasetError

    def missing(name):
        raise DatasetError(f"{name}/train-images-idx3-ubyte.gz is missing.")

    monkeypatch.setattr(app_data, "_load_registered", missing)
    app.selectbox(key="dataset").set_value("fashion-mnist").run()
    assert not app.exception, app.exception
    assert [e.value for e in app.error] == [
        "**fashion-mnist** could not be loaded. fashion-mnist/train-images-idx3-ubyte.gz is missing."
    ]
    assert not [i.value for i in app.info if "Loading" in i.value or "Press **Train**" in i.value]
    assert button(app, "Train").disabled


def test_a_diverging_run_shows_the_message_and_keeps_the_last_good_frame(app):
    app.sidebar.selectbox(key="rings-optimizer").set_value("sgd").run()
    app.sidebar.radio(key="rings-objective-linear-2").set_value("g")
    app.sidebar.number_input(key="rings-lr-sgd-linear-2").set_value(100.0)
    app.sidebar.slider(key="pace").set_value(0)
    app.sidebar.toggle(key="slow-start").set_value(False)
    app.sidebar.slider(key="rings-epochs-linear-2").set_value(50)
    button(app, "Train").click().run()
    wait_for(app, lambda at: not active_run(at).job.alive)
    run = active_run(app)
    assert run.job.state == "failed"
    assert "Lower the learning rate" in run.job.error
    app.run()
    assert any("training diverged" in e.value for e in app.error)
    assert all(s.embedding.size and (abs(s.embedding) < float("inf")).all() for s in run.snapshots)


def test_picking_a_network_brings_the_deep_preset_and_picking_a_map_brings_it_back(app):
    """A user who only picks "neural network" gets what won in benchmarks/deep_nca.py:
    the Student-t kernel, objective g and a decaying step; back on a linear map, the
    Gaussian, f and a constant step."""

    def kernel_and_objective(encoder: str) -> tuple[str, str]:
        radio = app.sidebar.radio
        return radio(key=f"rings-kernel-{encoder}").value, radio(key=f"rings-objective-{encoder}-2").value

    assert kernel_and_objective("linear") == ("gaussian", "f")
    assert app.sidebar.radio(key="rings-schedule-linear").value == "constant"
    app.sidebar.selectbox(key="rings-encoder").set_value("mlp").run()
    assert kernel_and_objective("mlp") == ("student-t", "g")
    assert app.sidebar.radio(key="rings-schedule-mlp").value == "cosine"
    assert app.sidebar.slider(key="rings-epochs-mlp-2").value == 40  # the network's epochs, not the map's
    assert app.sidebar.select_slider(key="rings-hidden-mlp").value == "500,500"
    shift = app.sidebar.select_slider(key="rings-shift-mlp")
    assert shift.value == 0 and shift.disabled  # the rings are points, not images
    app.sidebar.selectbox(key="rings-encoder").set_value("linear").run()
    assert kernel_and_objective("linear") == ("gaussian", "f")
    assert app.sidebar.radio(key="rings-schedule-linear").value == "constant"


def test_a_networks_objective_and_step_follow_d_as_the_library_chooses_them(app):
    """For a network, a 2-D picture trains g at the network's step and a wide map MCML at a
    third of it (the plan of ``config.plan``): changing d on the sidebar brings them."""
    app.selectbox(key="dataset").set_value("digits").run()
    app.sidebar.selectbox(key="digits-encoder").set_value("mlp").run()
    assert app.sidebar.radio(key="digits-objective-mlp-2").value == "g"
    assert app.sidebar.number_input(key="digits-lr-adam-mlp-2").value == 0.003
    app.sidebar.select_slider(key="digits-d").set_value(32).run()
    assert app.sidebar.radio(key="digits-objective-mlp-32").value == "mcml"
    assert app.sidebar.number_input(key="digits-lr-adam-mlp-32").value == 0.001
    assert not app.exception


def test_a_deep_student_t_mcml_run_trains_and_explains_its_map(app):
    assert app.sidebar.selectbox(key="rings-init-linear").value == "pca"
    app.sidebar.selectbox(key="rings-encoder").set_value("mlp").run()
    assert not app.sidebar.select_slider(key="rings-hidden-mlp").disabled
    start = app.sidebar.selectbox(key="rings-init-mlp")
    assert start.disabled and start.value == "random"  # a network has no PCA or LDA start
    app.sidebar.toggle(key="rings-dof-learn").set_value(True).run()
    assert app.sidebar.number_input(key="rings-dof").disabled  # learnt, so not typed in
    app.sidebar.radio(key="rings-objective-mlp-2").set_value("mcml")
    app.sidebar.slider(key="rings-epochs-mlp-2").set_value(6)
    app.sidebar.slider(key="pace").set_value(0)
    app.sidebar.toggle(key="slow-start").set_value(False)
    button(app, "Train").click().run()
    wait_for(app, lambda at: not active_run(at).job.alive)
    run = active_run(app)
    assert run.job.error is None, run.job.error
    config = run.run.config
    assert (config.encoder, config.kernel, config.objective, config.dof == "learn") == (
        "mlp",
        "student-t",
        "mcml",
        True,
    )
    assert config.init == "random"
    assert run.snapshots[-1].components is None and run.snapshots[-1].dof > 0
    app.run()
    assert [m.label for m in app.metric][1] == "−KL"
    objective = app.metric[1].value  # negative, so a decimal fewer than f's: fits at 1024 px
    assert objective == f"{run.snapshots[-1].objective:.3f}" and len(objective) <= len("0.9939")
    assert any("Student-t degrees of freedom" in c.value and "learnt" in c.value for c in app.caption)
    assert any("no single matrix to draw" in i.value for i in app.info)
    assert not app.exception


def test_results_name_the_run_and_say_the_right_colours(app):
    import json

    app.selectbox(key="dataset").set_value("digits").run()
    finished_run(app, 2, "digits")
    charts = {c.proto.id: json.loads(c.proto.spec) for c in app.get("plotly_chart")}
    replay = next(fig for fig in charts.values() if fig.get("frames"))
    assert replay["layout"]["title"]["text"].startswith("NCA on ")
    assert replay["frames"][-1]["layout"]["title"]["text"].endswith(
        f"epoch 2   objective {active_run(app).snapshots[-1].objective:.4f}"
    )
    images = next(
        fig for fig in charts.values() if "yaxis2" in fig["layout"] and fig["data"][0]["type"] == "heatmap"
    )
    assert images["layout"]["yaxis2"]["scaleanchor"] == "x2"  # square pixels
    caption = next(c.value for c in app.caption if "Each row of A as an image" in c.value)
    assert "blue pixels push a coordinate up, red pull it down" in caption


def test_a_start_that_already_separates_the_classes_says_what_to_do(app):
    app.selectbox(key="dataset").set_value("wine").run()
    app.sidebar.selectbox(key="wine-init-linear").set_value("lda")
    finished_run(app, 2, "wine")
    assert any(
        "the LDA start already scores" in c.value and "Start from: identity" in c.value for c in app.caption
    )


def test_wine_opens_on_a_demo_start_that_leaves_something_to_watch_and_says_why(app):
    assert app.sidebar.selectbox(key="rings-init-linear").value == "pca"  # rings' own start stays
    assert not any("Demo start" in c.value for c in app.caption)
    app.selectbox(key="dataset").set_value("wine").run()
    assert app.sidebar.selectbox(key="wine-init-linear").value == "identity"
    line = next(c.value for c in app.caption if "Demo start" in c.value)
    assert "standardised alcohol and malic acid as the axes" in line
    assert "the usual LDA start already scores 100%" in line
    run = finished_run(app, 40, "wine")
    start, end = run.snapshots[0].test_accuracy, run.snapshots[-1].test_accuracy
    assert start < 0.9 and end >= 0.95


def test_each_figure_says_what_to_notice_in_the_datasets_own_names(app):
    app.selectbox(key="dataset").set_value("wine").run()
    run = finished_run(app, 6, "wine")
    captions = [c.value for c in app.caption if "What to notice" in c.value]
    assert any("Click a point to draw lines to the neighbours it is likeliest to pick" in c for c in captions)  # final embedding
    assert any("accuracy rose from" in c and "by epoch" in c for c in captions)  # replay
    names = app.session_state["train_run"].run.data.feature_names
    mapped = next(c for c in captions if "this map relies most on" in c)
    listed = mapped.split("relies most on ")[1].split(".")[0]
    assert sum(name in listed for name in names) == 3
    spec, tables = vega_chart(app, "embedding")
    (points,) = [layer for layer in spec["layer"] if "shape" in layer["encoding"]]
    assert points["encoding"]["color"]["scale"]["domain"] == ["cultivar 1", "cultivar 2", "cultivar 3"]
    inputs = [t["title"] for t in points["encoding"]["tooltip"] if t["field"].startswith("input")]
    assert len(inputs) == 2 and set(inputs) <= set(names)  # the two inputs the map leans on most
    top = run.run.top_features(2)
    drawn = tables["points"]
    np.testing.assert_allclose(drawn["input 1"], run.run.data.X_train[run.run.display_index][:, top[0]])
    heatmap = next(json.loads(c.proto.spec) for c in app.get("plotly_chart") if "map-heatmap" in c.proto.id)
    assert heatmap["data"][0]["x"] == list(names)


def test_the_replay_downloads_as_a_gif_for_slides(app):
    from PIL import Image

    from app_pages.ui.train import run_results

    run = finished_run(app, 4)
    labels = [b.proto.label for b in app.get("download_button")]
    assert "Replay (GIF, for slides)" in labels
    image = Image.open(io.BytesIO(run_results.gif_file(run, run.run.data)))
    assert image.format == "GIF" and image.size == (800, 600) and image.n_frames == len(run.snapshots)


def test_decision_regions_can_be_shaded_behind_the_final_embedding(app):
    """One picture of the k-NN vote, laid over a box that covers the axes at any width."""
    import base64

    from PIL import Image

    run = finished_run(app, 3)
    spec, tables = vega_chart(app, "embedding")
    assert tables["regions"].empty  # off until asked for
    app.toggle(key="regions").set_value(True).run()
    shaded, tables = vega_chart(app, "embedding")
    assert shaded == spec  # the same chart: only its tables change
    (regions,) = tables["regions"].to_dict("records")
    (x0, x1), (y0, y1) = settled_ranges([s.embedding[:, :2] for s in run.snapshots])
    height = spec["height"]  # the widest chart (1600 px) sets the box's width, the narrowest its height
    x_span, y_span = max(x1 - x0, (y1 - y0) * 1600 / height), max(y1 - y0, (x1 - x0) * height / 300)
    assert regions["z1"] == pytest.approx((x0 + x1 - x_span) / 2) and regions["z1_end"] == pytest.approx((x0 + x1 + x_span) / 2)
    assert regions["z2"] == pytest.approx((y0 + y1 - y_span) / 2) and regions["z2_end"] == pytest.approx((y0 + y1 + y_span) / 2)
    picture = Image.open(io.BytesIO(base64.b64decode(regions["url"].split(",", 1)[1])))
    colours = {tuple(c) for _, c in picture.convert("RGB").getcolors(10_000)}
    palette = class_colors(len(run.run.data.classes))
    assert colours == {tuple(int(h[i : i + 2], 16) for i in (1, 3, 5)) for h in palette}


def test_clicking_a_point_inspects_it_and_draws_its_p_ij_on_every_rerun(app):
    from nca_core.objective.function import selection_probabilities

    run = finished_run(app, 3)
    row = 17
    chosen = f"Training point **#{run.run.display_index[row]}**"
    click_vega(app, "embedding", {"pick": [{"row": row}]})
    Z = run.snapshots[-1].embedding
    p = selection_probabilities(Z, row)
    for _ in range(2):  # the click's rerun, then any later one
        assert any(chosen in m.value for m in app.markdown), [m.value for m in app.markdown]
        assert not any("Click a point in the embedding above" in i.value for i in app.info)
        _, tables = vega_chart(app, "embedding")
        links, anchor = tables["links"], tables["anchor"]
        assert anchor[["z1", "z2"]].to_numpy().tolist() == [Z[row, :2].tolist()]
        assert (links["p"].diff().dropna() <= 0).all() and links["p"].iloc[0] == pytest.approx(p.max())
        assert links["width"].iloc[0] == pytest.approx(LINK_WIDEST) and (links["p"] >= 0.005).all()
        (inspected,) = [d.value for d in app.dataframe if str(d.value.index[0]).startswith("chosen")]
        assert inspected.index[0] == f"chosen #{run.run.display_index[row]}: {run.run.data.classes[run.run.display_labels[row]]}"
        app.run()
    click_vega(app, "embedding", {"pick": []})  # a click on the background
    assert vega_chart(app, "embedding")[1]["links"].empty
    assert any("Click a point in the embedding above" in i.value for i in app.info)


def test_a_run_stopped_part_way_through_an_epoch_is_titled_with_its_real_progress(app):
    from dataclasses import replace

    run = finished_run(app, 2)
    run.job.snapshots[-1] = replace(run.snapshots[-1], epoch=1, fraction=0.46)  # as Stop at 0.46 leaves it
    app.run()
    assert app.metric[0].value == "0.46"
    click_vega(app, "embedding", {"pick": [{"row": 3}]})
    assert any("in the embedding (epoch 0.46)" in m.value for m in app.markdown)


def test_the_buttons_are_drawn_before_torch_and_scikit_learn_are_imported():
    """A first visit to a fresh server sees the page before those imports (seconds) end."""
    drawn = drawn_before_heavy_imports()
    assert drawn["titles"] == ["Train NCA and watch it learn"] and drawn["selectboxes"] == ["Dataset"]
    assert drawn["buttons"][:4] == ["Train", "Pause", "Step", "Stop"]
    assert len(drawn["errors"]) == 1 and "refused: drawn too early" in drawn["errors"][0]


def test_a_3d_run_ends_in_a_plotly_view_whose_clicked_point_is_inspected(app):
    from apptest_helpers import click_points

    app.sidebar.select_slider(key="rings-d").set_value(3).run()
    run = finished_run(app, 2)
    assert run.snapshots[-1].embedding.shape[1] == 3
    click_points(app, "final-embedding", [{"curve_number": 0, "point_index": 0, "customdata": 5}])
    assert any(f"Training point **#{run.run.display_index[5]}**" in m.value for m in app.markdown)


def test_a_point_clicked_while_training_keeps_its_lines_on_later_frames(app):
    """The click is taken while the run trains; later frames draw the ring where the point
    has moved to, and its lines from there."""
    from nca_core.objective.function import selection_probabilities

    app.sidebar.slider(key="rings-epochs-linear-2").set_value(300)
    app.sidebar.slider(key="pace").set_value(5)
    button(app, "Train").click().run()
    run = active_run(app)
    wait_for(app, lambda at: len(run.snapshots) >= 3)
    click_vega(app, "embedding", {"pick": [{"row": 4}]})
    clicked_at = vega_chart(app, "embedding")[1]["anchor"][["z1", "z2"]].to_numpy().tolist()
    assert run.job.state == "running" and len(clicked_at) == 1
    seen = len(run.snapshots)
    wait_for(app, lambda at: len(run.snapshots) >= seen + 3)
    button(app, "Pause").click().run()
    wait_for(app, lambda at: run.job.state == "paused")
    app.run()
    Z = run.snapshots[-1].embedding
    _, tables = vega_chart(app, "embedding")
    assert tables["anchor"][["z1", "z2"]].to_numpy().tolist() == [Z[4, :2].tolist()] != clicked_at
    assert tables["links"]["p"].iloc[0] == pytest.approx(selection_probabilities(Z, 4).max())
    button(app, "Stop").click().run()


def test_the_objective_metric_has_its_badge_from_the_start_frame_on(app):
    """At the start its change is 0, greyed and without an arrow: a badge that came only
    with the second frame made the metrics taller and the picture below jump down."""
    run = finished_run(app, 2)
    last = run.snapshots[-1]
    run.job.snapshots[-1] = run.snapshots[0]  # as far as a run gets by its start frame
    app.run()
    start = app.metric[1].proto
    assert start.delta == "+0.0000"
    assert start.direction == start.MetricDirection.NONE and start.color == start.MetricColor.GRAY
    run.job.snapshots[-1] = last
    app.run()
    moved = app.metric[1].proto
    assert moved.delta == f"{last.objective - run.snapshots[0].objective:+.4f}"
    assert moved.direction == moved.MetricDirection.UP and moved.color == moved.MetricColor.GREEN


def test_a_click_mid_run_sends_the_pictures_place_as_a_block_from_its_first_message_on(app, monkeypatch):
    """A page run's messages go out while it runs. A placeholder sent first where the picture
    and the curves stand, and replaced later in the run by their block, reached the browser
    on some Pause and Resume clicks: the browser then dropped the live picture and the curves
    and built them anew (no picture for a tenth of a second). So after such a click, each
    place where the page had a block gets a block again from its first message on."""
    from streamlit.runtime.forward_msg_queue import ForwardMsgQueue

    sent = []
    enqueue = ForwardMsgQueue.enqueue

    def recording(queue, msg):
        if msg.HasField("delta"):
            sent.append((tuple(msg.metadata.delta_path), msg.delta.WhichOneof("type")))
        return enqueue(queue, msg)

    monkeypatch.setattr(ForwardMsgQueue, "enqueue", recording)
    app.sidebar.slider(key="rings-epochs-linear-2").set_value(300)
    app.sidebar.slider(key="pace").set_value(5)
    button(app, "Train").click().run()
    run = active_run(app)
    wait_for(app, lambda at: len(run.snapshots) >= 2)
    assert vega_chart(app, "embedding")  # the picture is on the page
    blocks = {path for path, kind in dict(sent).items() if kind == "add_block"}  # the last run's
    sent.clear()
    button(app, "Pause").click().run()
    first = {}
    for path, kind in sent:
        first.setdefault(path, kind)
    assert (0, 2) in blocks  # the picture's and the curves' place, below the buttons' row
    assert {path: first.get(path) for path in blocks if first.get(path) != "add_block"} == {}
    button(app, "Stop").click().run()


def float64_p(Z, row) -> np.ndarray:
    """The Gaussian p_ij of ``row`` to every drawn point, written out in float64."""
    Z = np.asarray(Z, dtype=np.float64)
    sq = ((Z - Z[row]) ** 2).sum(1)
    sq[row] = np.inf
    w = np.exp(-(sq - sq.min()))
    return w / w.sum()


def crowded_wine_run(app):
    """A finished run on wine and its most crowded point: the one giving p_ij of 0.005 or
    more to the most others (dozens of lines used to merge into one dark patch around it)."""
    app.selectbox(key="dataset").set_value("wine").run()
    run = finished_run(app, 40, "wine")
    Z = run.snapshots[-1].embedding
    crowd = [(float64_p(Z, i) >= 0.005).sum() for i in range(len(Z))]
    row = int(np.argmax(crowd))
    assert crowd[row] > 16
    return run, row, float64_p(Z, row)


def test_a_click_in_a_crowd_draws_lines_to_its_eight_likeliest_picks_as_wide_as_p_ij(app):
    run, row, p = crowded_wine_run(app)
    Z, y = run.snapshots[-1].embedding, run.run.display_labels
    click_vega(app, "embedding", {"pick": [{"row": row}]})
    links = vega_chart(app, "embedding")[1]["links"]
    likeliest = np.argsort(-p, kind="stable")[:8]
    assert len(links) == 8
    np.testing.assert_array_equal(links[["z1_end", "z2_end"]].to_numpy(), Z[likeliest, :2])
    np.testing.assert_allclose(links["p"], p[likeliest], rtol=1e-9)
    assert links["same"].tolist() == (y[likeliest] == y[row]).tolist()
    widths = np.maximum(LINK_WIDEST * p[likeliest] / p[likeliest[0]], 1.0)  # proportional, at least a pixel
    np.testing.assert_allclose(links["width"], widths, rtol=1e-9)
    caption = next(c.value for c in app.caption if c.value.startswith("Lines from training point"))
    assert f"#{run.run.display_index[row]} to its 8 likeliest picks" in caption
    assert "solid black to its own class, dashed grey to another" in caption


def test_the_inspect_tab_lists_the_clicked_points_p_ij_and_p_i(app):
    run, row, p = crowded_wine_run(app)
    y, index, classes = run.run.display_labels, run.run.display_index, run.run.data.classes
    click_vega(app, "embedding", {"pick": [{"row": row}]})
    likeliest = np.argsort(-p, kind="stable")[:8]
    assert any(f"its 8 likeliest picks among the {len(index)} points drawn" in m.value for m in app.markdown)
    (table,) = [d.value for d in app.dataframe if "p_ij" in d.value.columns]
    assert list(table.columns) == ["training point", "class", "p_ij", "same class"]
    assert table["training point"].tolist() == index[likeliest].tolist()
    assert table["class"].tolist() == [classes[c] for c in y[likeliest]]
    np.testing.assert_allclose(table["p_ij"], p[likeliest], rtol=1e-9)
    assert table["same class"].tolist() == ["yes" if c == y[row] else "no" for c in y[likeliest]]
    (p_i,) = [m for m in app.metric if m.label == "p_i (same class)"]
    assert p_i.value == f"{p[y == y[row]].sum():.3f}"
    # the inputs below are those of the same eight, the chosen point first
    (inputs,) = [d.value for d in app.dataframe if str(d.value.index[0]).startswith("chosen")]
    assert [int(t.split(":")[0].split("#")[1]) for t in inputs.index] == [index[row], *index[likeliest]]


def test_a_point_sure_of_its_few_nearest_gets_lines_to_those_only_and_words_that_say_so(app):
    run = finished_run(app, 20)
    Z = run.snapshots[-1].embedding
    counts = [(float64_p(Z, i) >= 0.005).sum() for i in range(len(Z))]
    sure = int(np.argmin(counts))
    assert counts[sure] < 8
    click_vega(app, "embedding", {"pick": [{"row": sure}]})
    assert len(vega_chart(app, "embedding")[1]["links"]) == counts[sure]
    caption = next(c.value for c in app.caption if c.value.startswith("Lines from training point"))
    picks = "1 pick" if counts[sure] == 1 else f"{counts[sure]} picks"
    assert f"#{run.run.display_index[sure]} to its {picks} with p_ij of 0.005 or more among the points" in caption


def test_a_point_at_no_finite_distance_from_the_others_says_it_picks_no_neighbour(app):
    """A run that blew up may leave infinite coordinates: no lines, no table, and words."""
    from dataclasses import replace

    run = finished_run(app, 2)
    Z = run.snapshots[-1].embedding.copy()
    Z[5] = np.inf
    run.job.snapshots[-1] = replace(run.snapshots[-1], embedding=Z)
    click_vega(app, "embedding", {"pick": [{"row": 5}]})
    assert vega_chart(app, "embedding")[1]["links"].empty
    assert any(f"#{run.run.display_index[5]} is at no finite distance" in w.value for w in app.warning)
    assert not [d for d in app.dataframe if "p_ij" in d.value.columns]


def test_after_a_run_the_epochs_sit_side_by_side_on_one_scale(app):
    """The start, epochs 1, 2, 5, 10 and the last, one panel each on the same axes; a chosen
    epoch list draws those instead."""
    done = finished_run(app, epochs=12)
    (chart,) = [c for c in app.get("plotly_chart") if c.proto.id.endswith("-epoch-grid")]
    layout = json.loads(chart.proto.spec)["layout"]
    titles = [a["text"].split(" ·")[0] for a in layout["annotations"]]
    assert titles == ["start", "epoch 1", "epoch 2", "epoch 5", "epoch 10", "epoch 12"]
    ranges = {json.dumps(layout[k]["range"]) for k in layout if k[1:5] == "axis" and "range" in layout[k]}
    assert len(ranges) == 2  # one x range and one y range for all six panels
    app.multiselect(key="grid-epochs").set_value([0, 6]).run()
    (chart,) = [c for c in app.get("plotly_chart") if c.proto.id.endswith("-epoch-grid")]
    titles = [a["text"].split(" ·")[0] for a in json.loads(chart.proto.spec)["layout"]["annotations"]]
    assert titles == ["start", "epoch 6", "epoch 12"] and done.snapshots[-1].epoch == 12


def test_each_class_has_its_own_shape_in_the_picture_and_in_the_replay(app):
    from nca_core.plots.colours import class_shapes

    run = finished_run(app, 3)
    classes = list(run.run.data.classes)
    spec, _ = vega_chart(app, "embedding")
    (points,) = [layer for layer in spec["layer"] if "shape" in layer["encoding"]]
    assert points["encoding"]["shape"]["scale"] == {"domain": classes, "range": [s.vega for s in class_shapes(5)]}
    replay = next(json.loads(c.proto.spec) for c in app.get("plotly_chart") if "replay" in c.proto.id)
    drawn = [t["marker"]["symbol"] for t in replay["data"] if t.get("name") in classes]
    assert drawn == [s.plotly for s in class_shapes(5)]


def test_the_run_is_announced_at_most_once_every_few_seconds_of_the_run_and_at_once_when_it_ends():
    """A frame every tenth of a second for a minute of the run: its words change no more
    often than every ANNOUNCE_SECONDS, and the run's end is heard at once."""
    from app_pages.ui.train.live_status import ANNOUNCE_SECONDS, announcement_text, next_announcement

    said, changes = None, []
    for tick in range(600):
        now = tick / 10
        text = announcement_text("running", str(tick // 3), 200, f"test 5-NN accuracy {tick % 97}%")
        heard = next_announcement(said, text, "running", now)
        if heard != said:
            changes.append(now)
        said = heard
    gaps = np.diff(changes)
    assert len(changes) == 12 and gaps.min() >= ANNOUNCE_SECONDS  # 0, 5, ..., 55 s
    ended = next_announcement(said, announcement_text("finished", "200", 200, None), "finished", 60.1)
    assert ended.text == "Training finished: epoch 200 of 200." and ended.at == 60.1
    assert next_announcement(ended, "Training finished: epoch 200 of 200.", "finished", 90.0) is ended


def test_the_runs_state_reads_as_a_sentence():
    from app_pages.ui.train.live_status import announcement_text

    assert announcement_text("queued", None, 40, None) == "Waiting for a free training slot."
    assert announcement_text("running", None, 40, None) == "Preparing the run."
    assert announcement_text("running", "12.5", 40, "test 5-NN accuracy 97.1%") == (
        "Training: epoch 12.5 of 40, test 5-NN accuracy 97.1%."
    )
    assert announcement_text("paused", "12", 40, None) == "Paused at epoch 12 of 40."
    assert announcement_text("stopped", "12", 40, None) == "Training stopped at epoch 12 of 40."


def test_a_screen_reader_hears_the_runs_end_and_reads_each_chart_by_its_description(app):
    app.selectbox(key="dataset").set_value("wine").run()
    run = finished_run(app, 4, "wine")
    from nca_core.util.formatting import percent

    (region,) = [m.value for m in app.markdown if 'aria-live="polite"' in m.value]
    accuracy = percent(run.snapshots[-1].test_accuracy, 1)
    assert f">Training finished: epoch 4 of 4, test 5-NN accuracy {accuracy}.</div>" in region
    spec, _ = vega_chart(app, "embedding")
    assert spec["description"].startswith("Scatter plot of NCA's embedding of ")
    assert f"{len(run.run.display_index):,} points of 3 classes" in spec["description"]
    assert "cultivar 1 as circles, cultivar 2 as squares and cultivar 3 as triangles" in spec["description"]
    objective, accuracy_curve = [  # the curves, keyed but drawn without an id
        json.loads(c.proto.spec)["description"] for c in app.get("vega_lite_chart") if not c.proto.id
    ]
    first, last = run.snapshots[0].objective, run.snapshots[-1].objective
    assert objective == (
        f"Line chart of the objective against epoch: mean p_i (f / n) from {first:.3g} at epoch 0 "
        f"to {last:.3g} at epoch 4."
    )
    assert "leave-one-out from " in accuracy_curve and "; test from " in accuracy_curve
