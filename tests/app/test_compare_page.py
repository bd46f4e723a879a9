"""AppTests of the Compare page."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from apptest_helpers import button, drawn_before_heavy_imports, vega_chart, wait_for
from streamlit.testing.v1 import AppTest

from app_pages.ui.compare.panels import BRUSH, _selected_rows
from nca_core import datasets
from nca_core.datasets import Dataset

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def open_compare(app):
    app.switch_page("app_pages/compare.py").run()
    assert not app.exception, app.exception
    return app


def test_compare_renders_three_methods_and_the_raw_row(app):
    at = open_compare(app)
    assert at.title[0].value == "NCA against PCA and LDA"
    assert [h.value for h in at.subheader] == ["NCA", "PCA", "LDA"]  # NCA first, on the first screen
    table = at.dataframe[0].value
    assert list(table["method"]) == ["NCA", "PCA", "LDA", "raw inputs"]  # as the panels
    rows = table.set_index("method")
    # the paper's point: on the rings NCA beats both linear baselines by far
    assert rows.loc["NCA", "5-NN test"] > rows.loc["PCA", "5-NN test"] + 0.3
    assert rows.loc["NCA", "5-NN test"] > rows.loc["LDA", "5-NN test"] + 0.3
    assert any(
        "a fit on all 700 training points" in c.value and "trained on this visit" in c.value
        for c in at.caption
    )


def test_compare_reuses_the_train_run_when_it_matches(app):
    app.sidebar.slider(key="rings-epochs-linear-2").set_value(5)
    app.sidebar.slider(key="pace").set_value(0)
    app.sidebar.toggle(key="slow-start").set_value(False)
    button(app, "Train").click().run()
    wait_for(app, lambda at: not at.session_state["train_run"].job.alive)
    at = open_compare(app)
    assert any("the run from the Train page (5 epochs)" in c.value for c in at.caption)


def test_a_stopped_train_run_is_not_passed_off_as_the_nca_fit(app, tmp_path, monkeypatch):
    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path))
    app.sidebar.slider(key="rings-epochs-linear-2").set_value(300)
    app.sidebar.slider(key="pace").set_value(5)
    button(app, "Train").click().run()
    wait_for(app, lambda at: len(at.session_state["train_run"].snapshots) >= 3)
    button(app, "Stop").click().run()
    stopped = app.session_state["train_run"]
    assert stopped.job.state == "stopped"
    epoch = max(s.epoch for s in stopped.snapshots if s.fraction >= 1)
    at = open_compare(app)
    captions = [c.value for c in at.caption]
    assert not any("the run from the Train page" in c for c in captions)
    assert any(
        f"The Train page's run was stopped after {epoch} of 300 epochs" in c
        and "NCA here is a fit on all 700" in c
        for c in captions
    ), captions


def test_lda_limit_is_said_plainly(app):
    app.selectbox(key="dataset").set_value("wine").run()
    at = open_compare(app)
    at.radio(key="compare-d").set_value(3).run()
    assert any("LDA is limited to n_classes - 1 = 2 dimensions" in w.value for w in at.warning)


def test_deep_nca_joins_the_comparison_on_request(app):
    at = open_compare(app)
    at.toggle(key="compare-deep").set_value(True).run(timeout=120)
    assert not at.exception, at.exception
    assert [h.value for h in at.subheader] == ["NCA", "deep NCA", "PCA", "LDA"]
    rows = at.dataframe[0].value.set_index("method")
    assert rows.loc["deep NCA", "5-NN test"] > rows.loc["PCA", "5-NN test"] + 0.3
    assert any("Deep NCA is a fit of an MLP with the Student-t kernel" in c.value for c in at.caption)


def vega_specs(at):
    return [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]


def vega_rows(at) -> list[pd.DataFrame]:
    """Each 2-D panel's table of points, as the browser receives it."""
    return [
        pa.ipc.open_stream(table.data.data).read_all().to_pandas()
        for chart in at.get("vega_lite_chart")
        for table in chart.proto.datasets
        if table.name == "points"
    ]


def test_2d_panels_are_vega_lite_charts_that_brush_and_3d_panels_stay_plotly(app):
    """Vega-Lite's chunk loads in a fraction of Plotly's 4.7 MB; Vega-Lite draws no 3-D."""
    at = open_compare(app)
    charts = at.get("vega_lite_chart")
    assert len(charts) == 3 and not at.get("plotly_chart")
    assert all(list(c.proto.selection_mode) == ["box", "pick"] for c in charts)  # events, not the zoom
    assert all(list(rows.columns) == ["z1", "z2", "class", "point", "chosen"] for rows in vega_rows(at))
    at.radio(key="compare-d").set_value(3).run()
    assert len(at.get("plotly_chart")) == 3 and not at.get("vega_lite_chart")


def test_panels_draw_one_scale_on_both_axes_and_can_share_one(app):
    at = open_compare(app)
    specs = vega_specs(at)
    assert len(specs) == 3
    for spec in specs:  # each axis's domain is its range's centre -/+ the same units per pixel
        (per_pixel,) = [p for p in spec["params"] if p["name"] == "units_per_pixel"]
        assert per_pixel["expr"].startswith("max(")
        x, y = (spec["encoding"][a]["scale"]["domain"] for a in ("x", "y"))
        assert all(b["expr"].endswith("units_per_pixel * width / 2") for b in x)
        assert all(b["expr"].endswith("units_per_pixel * height / 2") for b in y)
    assert len({json.dumps(spec["encoding"]["x"]) for spec in specs}) == 3  # each panel its own
    at.toggle(key="compare-same-scale").set_value(True).run()
    specs = vega_specs(at)
    assert len(specs) == 3
    assert len({json.dumps([s["params"][0], s["encoding"]["x"], s["encoding"]["y"]]) for s in specs}) == 1


def test_a_fresh_fit_is_saved_under_the_cache_directory_and_loaded_next_time(app, tmp_path, monkeypatch):
    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path))
    first = open_compare(app)
    before = first.dataframe[0].value.set_index("method").loc["NCA"]
    saved = list((tmp_path / "models").glob("quick-rings-*.npz"))  # shared with the kNN page
    assert len(saved) == 1
    again = AppTest.from_file(APP, default_timeout=60)  # another session, same server cache
    again.switch_page("app_pages/compare.py").run()
    assert any("loaded from the cache" in c.value for c in again.caption)
    after = again.dataframe[0].value.set_index("method").loc["NCA"]
    assert after["5-NN test"] == before["5-NN test"]


def test_points_selected_in_one_panel_stand_out_in_every_panel_until_cleared(app):
    at = open_compare(app)
    assert any("Drag a box" in c.value for c in at.caption)  # says how to select
    assert all(rows["chosen"].all() for rows in vega_rows(at))  # nothing faded yet
    rows = np.arange(0, 700, 7)  # 100 display rows, as a box over one panel would give
    at.session_state[BRUSH] = {"dataset": "rings", "panel": "PCA", "rows": rows}
    at.run()
    assert not at.exception, at.exception
    panels = vega_rows(at)
    assert len(panels) == 3
    for table in panels:  # the same rows in PCA, LDA and NCA, whatever their positions
        assert table["point"].tolist() == list(range(700))
        assert table.loc[table["chosen"], "point"].tolist() == rows.tolist()
    # the others fade: the spec greys and dims every row not chosen
    assert all(spec["encoding"]["opacity"]["value"] < 0.5 for spec in vega_specs(at))
    summary = next(m.value for m in at.markdown if "selected in PCA" in m.value)
    assert summary.startswith("**100 of 700 points** selected in PCA: ")
    assert "ring" in summary and "%" in summary  # the class mix
    drawn = [chart.proto.id for chart in at.get("vega_lite_chart")]
    at.run()
    assert [chart.proto.id for chart in at.get("vega_lite_chart")] == drawn  # a rerun keeps the charts
    button(at, "Clear selection").click().run()
    assert BRUSH not in at.session_state
    assert all(table["chosen"].all() for table in vega_rows(at))
    # drawn afresh: a box left in the browser's chart cannot send the selection back
    assert not set(drawn) & {chart.proto.id for chart in at.get("vega_lite_chart")}


def test_a_selection_belongs_to_its_dataset(app):
    at = open_compare(app)
    at.session_state[BRUSH] = {"dataset": "wine", "panel": "LDA", "rows": np.arange(5)}
    at.run()
    assert all(table["chosen"].all() for table in vega_rows(at))
    assert not any("selected in LDA" in m.value for m in at.markdown)


def test_a_panel_selection_event_gives_display_rows():
    points = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 0.0], [9.0, 9.0]])
    box = {"selection": {"box": {"z1": [0.5, 3.5], "z2": [-0.5, 2.5]}, "pick": {}}}
    assert _selected_rows(box, points).tolist() == [1, 2, 3]  # computed from the panel's positions
    click = {"selection": {"box": {}, "pick": [{"point": 4}, {"point": 2}, {"point": 4}]}}
    assert _selected_rows(click, points).tolist() == [2, 4]
    assert _selected_rows({"selection": {"box": {}, "pick": {}}}, points).tolist() == []
    assert _selected_rows(None, points).tolist() == []


def test_a_large_set_is_compared_on_a_stated_stratified_subset(app):
    rng = np.random.default_rng(0)
    y = np.arange(7000) % 3
    X = (rng.normal(size=(7000, 4)) + y[:, None] * [2.0, 0, 0, 0]).astype(np.float32)
    app.session_state["uploaded_dataset"] = Dataset(
        "uploaded", X[:6000], y[:6000], X[6000:], y[6000:], ("a", "b", "c")
    )
    app.session_state["dataset_choice"] = "uploaded"
    at = open_compare(app)
    assert not at.exception, at.exception
    assert any(
        "6,000 training points" in c.value and "stratified subset of 5,000" in c.value for c in at.caption
    )
    assert any(
        "NCA here is a fit on a stratified subset of 5,000 of the 6,000 training points" in c.value
        for c in at.caption
    )
    assert [len(table) for table in vega_rows(at)] == [2000, 2000, 2000]


def test_image_data_shows_each_drawn_points_own_picture_on_hover(app):
    """On a set larger than the scored subset, panel point i is the subset's display point
    i, a row of the whole set: its picture must be that row's image."""
    from nca_core.plots.thumbnails import png_data_urls
    from nca_core.runs.comparison import subset_rows, training_subset
    from nca_core.util.sampling import stratified_subsample

    rng = np.random.default_rng(0)
    y = np.arange(6500) % 3
    X = (rng.random((6500, 16)) + y[:, None] * 0.5).astype(np.float32)
    data = Dataset("uploaded", X[:6000], y[:6000], X[6000:], y[6000:], ("a", "b", "c"), image_shape=(4, 4))
    app.session_state["uploaded_dataset"] = data
    app.session_state["dataset_choice"] = "uploaded"
    at = open_compare(app)
    assert not at.exception, at.exception
    spec, tables = vega_chart(at, "compare-PCA-0")
    pictures = tables["thumbnails"]
    assert pictures["point"].tolist() == list(range(2000))
    assert spec["transform"][0]["lookup"] == "point"
    shown = stratified_subsample(training_subset(data).y_train, 2000, seed=0)
    rows = subset_rows(data)[shown]  # grey levels are scaled over the whole batch of pictures
    assert pictures["image"].tolist() == png_data_urls(data.X_train[rows], (4, 4))


def shown_table(at) -> pd.DataFrame:
    """The results table as the reader sees it: the Styler's display strings."""
    styler = at.dataframe[0].proto.arrow_data.styler
    assert styler.display_values, "the table carries no display format"
    return pa.ipc.open_stream(styler.display_values).read_all().to_pandas()


def test_the_table_shows_accuracies_one_way_and_no_stray_none(app, tmp_path, monkeypatch):
    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path))
    open_compare(app)  # fits NCA and saves it with its fit time
    for times in (tmp_path / "models").glob("quick-rings-*.json"):
        times.unlink()  # a model saved by an older version, without its fit time
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page("app_pages/compare.py").run()
    shown = shown_table(at).set_index("method")
    for column in ("5-NN train (leave-one-out)", "5-NN test"):
        assert all(re.fullmatch(r"\d{1,3}\.\d%", v) for v in shown[column]), list(shown[column])
    panel_lines = [m.value for m in at.markdown if "leave-one-out:" in m.value]
    nca_line = panel_lines[0]
    assert f"**{shown.loc['NCA', '5-NN test']}**" in nca_line  # the panel and table agree
    assert shown.loc["NCA", "fit time (s)"] == "—"
    assert at.dataframe[0].proto.placeholder == "—"  # what the browser draws for a missing number
    assert all(re.fullmatch(r"\d+\.\d\d|< 0\.01", shown.loc[m, "fit time (s)"]) for m in ("PCA", "LDA"))
    times = [shown.loc[m, "fit time (s)"] for m in ("PCA", "LDA")]
    times += [line.split(" · fit")[-1].strip("\u00a0") for line in panel_lines]
    assert not any(t.startswith("0.00") for t in times), times  # a quick fit reads "< 0.01", not "0.00"
    assert any("fit time was not saved" in c.value for c in at.caption)


def test_a_second_upload_is_not_answered_from_the_first(app):
    """Every upload is called "uploaded": the session's results must follow the file."""
    rng = np.random.default_rng(1)
    y = np.arange(300) % 3
    separated = (rng.normal(size=(300, 4)) + y[:, None] * [6.0, 0, 0, 0]).astype(np.float32)
    noise = rng.normal(size=(300, 4)).astype(np.float32)

    def upload(X):
        app.session_state["uploaded_dataset"] = Dataset(
            "uploaded", X[:200], y[:200], X[200:], y[200:], ("a", "b", "c")
        )
        app.session_state["dataset_choice"] = "uploaded"
        return open_compare(app).dataframe[0].value.set_index("method").loc["raw inputs", "5-NN test"]

    assert upload(separated) > 0.95
    assert upload(noise) < 0.6  # three classes in pure noise: near chance, not the first file's score


def test_an_uploads_models_stay_in_its_session_and_never_reach_the_disk(app, tmp_path, monkeypatch):
    """A registered set's NCA is saved under the cache directory for the next visit; a
    visitor's upload is fitted for its session alone, so no visitor can fill the disk."""
    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(2)
    y = np.arange(300) % 3
    X = (rng.normal(size=(300, 4)) + y[:, None] * [4.0, 0, 0, 0]).astype(np.float32)
    app.session_state["uploaded_dataset"] = Dataset("uploaded", X[:200], y[:200], X[200:], y[200:], ("a", "b", "c"))
    app.session_state["dataset_choice"] = "uploaded"
    at = open_compare(app)
    assert not at.exception, at.exception
    assert any("trained on this visit" in c.value for c in at.caption)
    assert not (tmp_path / "models").exists()


def test_the_title_and_dataset_are_drawn_before_torch_and_scikit_learn_are_imported():
    drawn = drawn_before_heavy_imports("app_pages/compare.py")
    assert drawn["titles"] == ["NCA against PCA and LDA"] and drawn["selectboxes"] == ["Dataset"]
    assert len(drawn["errors"]) == 1 and "refused: drawn too early" in drawn["errors"][0]


def test_baselines_are_fitted_and_scored_on_one_blas_thread(monkeypatch):
    from threadpoolctl import threadpool_info

    from app_pages.ui.compare import fits

    def blas_threads():
        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    seen = []

    def fit_baseline(method, data, d, standardize):
        seen.append(blas_threads())
        return (lambda X: X[:, :d]), 0.0, ""

    monkeypatch.setattr(fits, "fit_baseline", fit_baseline)
    monkeypatch.setattr(fits, "evaluate", lambda *args: seen.append(blas_threads()))
    data = datasets.load("wine")
    fits.score("PCA", fits._fit("pca", data, 2, False), data, 5, None)
    assert seen == [{1}, {1}]


def test_the_raw_row_starts_from_the_inputs_every_method_starts_from(app):
    """With "Standardise inputs" on, every projection sees standardised inputs, and so does
    the reference row (it scored unstandardised wine, 81% against the methods' 95-100%)."""
    from sklearn.preprocessing import StandardScaler

    from nca_core.search.knn import knn_accuracy

    app.selectbox(key="dataset").set_value("wine").run()
    at = open_compare(app)
    data = datasets.load("wine")  # all of wine is scored (no subset)
    for standardize in (True, False):
        at.toggle(key="compare-std-wine").set_value(standardize).run()
        assert not at.exception, at.exception
        shown = at.dataframe[0].value.set_index("method").loc["raw inputs", "5-NN test"]
        scaler = StandardScaler().fit(data.X_train)
        X_train, X_test = (scaler.transform(X) if standardize else X for X in (data.X_train, data.X_test))
        expected = knn_accuracy(X_train.astype(np.float32), data.y_train, X_test.astype(np.float32), data.y_test, 5)
        assert shown == pytest.approx(expected), standardize
        said = any("inputs themselves, standardised" in c.value for c in at.caption)
        assert said == standardize
        if not standardize:
            assert shown < 0.9  # unstandardised wine: kNN is led by one large feature (proline)


def test_on_wine_the_nca_panel_is_centred_as_pca_and_lda_are(app):
    """Every panel draws all of wine's training rows about the origin, standardised or not:
    NCA's model maps raw inputs as its run drew them, centred as the baselines centre."""
    app.selectbox(key="dataset").set_value("wine").run()
    at = open_compare(app)
    for standardize in (True, False):
        at.toggle(key="compare-std-wine").set_value(standardize).run()
        assert not at.exception, at.exception
        assert [h.value for h in at.subheader] == ["NCA", "PCA", "LDA"]
        for method, rows in zip(("NCA", "PCA", "LDA"), vega_rows(at)):
            points = rows[["z1", "z2"]].to_numpy(dtype=np.float64)
            assert len(points) == 125  # wine's training rows, all drawn
            assert np.abs(points.mean(0)).max() < 1e-4 * np.abs(points).max(), (method, standardize)


def test_the_fit_progress_says_the_wait_left_at_the_pace_so_far():
    """A fresh NCA fit on a 35,000-row upload took 0.9 s an epoch over 40 epochs: each line of
    the progress bar says the time that was actually left, where the page used to promise
    "ready in seconds" for the whole 36 s."""
    from app_pages.ui.compare.fits import fit_progress

    pace, epochs = 0.9, 40
    for epoch in (1, 10, 39):
        text = fit_progress("NCA", epoch, epochs, elapsed=pace * epoch)
        left = float(text.split("about ")[1].split(" s left")[0])
        assert text.startswith(f"Training NCA: epoch {epoch} / {epochs}, about ")
        assert left == pytest.approx(pace * (epochs - epoch), abs=0.05)
    assert fit_progress("NCA", 1, 200, elapsed=0.9).endswith("about 2 min 59 s left")
    assert fit_progress("NCA", 0, 40, elapsed=0.01).endswith("estimating the time left")  # the start


def _score_words(at) -> list[str]:
    """Every text on the page that states an accuracy (a percentage)."""
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    return [t for t in texts if re.search(r"\d%", t)]


def test_a_link_with_hide_draws_the_pictures_without_scores_until_reveal():
    """Predict, then reveal: with ?hide=1 every method's picture is drawn, no accuracy nor
    ranking is shown (panels, table, what to notice), and Reveal the scores shows them all."""
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update(dataset="rings", hide="1")
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert at.toggle(key="compare-hide").value is True and at.query_params["hide"] == "1"
    assert [h.value for h in at.subheader] == ["NCA", "PCA", "LDA"]
    assert len(at.get("vega_lite_chart")) == 3  # the pictures are all there
    assert _score_words(at) == []
    assert not at.dataframe  # the table would rank them
    assert not any("What to notice" in m.value for m in at.markdown)
    guess = [m.value for m in at.markdown if "Guess first" in m.value]
    assert guess and "NCA, PCA and LDA" in guess[0]
    button(at, "Reveal the scores").click().run()
    assert not at.exception, at.exception
    assert list(at.dataframe[0].value["method"]) == ["NCA", "PCA", "LDA", "raw inputs"]
    assert any("What to notice" in m.value for m in at.markdown)
    assert sum("5-NN leave-one-out" in m.value for m in at.markdown) == 3
    assert not [b for b in at.button if b.label == "Reveal the scores"]
    # another k is another question: its scores are hidden again until revealed
    at.select_slider(key="compare-k").set_value(3).run()
    assert _score_words(at) == [] and not at.dataframe
    assert [b for b in at.button if b.label == "Reveal the scores"]


def test_hidden_scores_stay_hidden_on_one_scale_and_the_toggle_shows_them(app):
    at = open_compare(app)
    assert _score_words(at) and at.dataframe and "hide" not in at.query_params
    at.toggle(key="compare-same-scale").set_value(True).run()
    at.toggle(key="compare-hide").set_value(True).run()
    assert not at.exception, at.exception
    assert at.query_params["hide"] == "1"
    assert len(at.get("vega_lite_chart")) == 3
    assert _score_words(at) == [] and not at.dataframe
    at.toggle(key="compare-hide").set_value(False).run()
    assert _score_words(at) and at.dataframe and "hide" not in at.query_params
