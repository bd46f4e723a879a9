"""AppTests of the Compare page."""

from pathlib import Path

from apptest_helpers import button, wait_for
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def open_compare(app):
    app.switch_page("app_pages/compare.py").run()
    assert not app.exception, app.exception
    return app


def test_compare_renders_three_methods_and_the_raw_row(app):
    at = open_compare(app)
    assert at.title[0].value == "NCA against PCA and LDA"
    assert [h.value for h in at.subheader] == ["PCA", "LDA", "NCA"]
    table = at.dataframe[0].value
    assert list(table["method"]) == ["PCA", "LDA", "NCA", "raw inputs"]
    rows = table.set_index("method")
    # the paper's point: on the rings NCA beats both linear baselines by far
    assert rows.loc["NCA", "5-NN test"] > rows.loc["PCA", "5-NN test"] + 0.3
    assert rows.loc["NCA", "5-NN test"] > rows.loc["LDA", "5-NN test"] + 0.3
    assert any("a fresh fit with the default settings" in c.value for c in at.caption)


def test_compare_reuses_the_train_run_when_it_matches(app):
    app.sidebar.slider(key="rings-epochs").set_value(5)
    app.sidebar.slider(key="pace").set_value(0)
    app.sidebar.toggle(key="slow-start").set_value(False)
    button(app, "Train").click().run()
    wait_for(app, lambda at: not at.session_state["train_run"].job.alive)
    at = open_compare(app)
    assert any("the run from the Train page (5 epochs)" in c.value for c in at.caption)


def test_lda_limit_is_said_plainly(app):
    app.selectbox(key="dataset").set_value("wine").run()
    at = open_compare(app)
    at.radio(key="compare-d").set_value(3).run()
    assert any("LDA is limited to n_classes - 1 = 2 dimensions" in w.value for w in at.warning)


def test_deep_nca_joins_the_comparison_on_request(app):
    at = open_compare(app)
    at.toggle(key="compare-deep").set_value(True).run(timeout=120)
    assert not at.exception, at.exception
    assert [h.value for h in at.subheader] == ["PCA", "LDA", "NCA", "deep NCA"]
    rows = at.dataframe[0].value.set_index("method")
    assert rows.loc["deep NCA", "5-NN test"] > rows.loc["PCA", "5-NN test"] + 0.3
    assert any("Deep NCA is a fresh fit" in c.value and "Student-t" in c.value for c in at.caption)


def plotly_layouts(at):
    import json

    return [json.loads(chart.proto.spec)["layout"] for chart in at.get("plotly_chart")]


def test_panels_draw_one_scale_on_both_axes_and_can_share_one(app):
    at = open_compare(app)
    layouts = plotly_layouts(at)
    assert len(layouts) == 3
    assert all(lay["yaxis"]["scaleanchor"] == "x" and lay["yaxis"]["scaleratio"] == 1 for lay in layouts)
    at.toggle(key="compare-same-scale").set_value(True).run()
    layouts = plotly_layouts(at)
    assert len({(tuple(lay["xaxis"]["range"]), tuple(lay["yaxis"]["range"])) for lay in layouts}) == 1


def test_a_fresh_fit_is_saved_under_the_cache_directory_and_loaded_next_time(app, tmp_path, monkeypatch):
    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path))
    first = open_compare(app)
    before = first.dataframe[0].value.set_index("method").loc["NCA"]
    saved = list((tmp_path / "models").glob("compare-rings-*.npz"))
    assert len(saved) == 1
    again = AppTest.from_file(APP, default_timeout=60)  # another session, same server cache
    again.switch_page("app_pages/compare.py").run()
    assert any("loaded from the cache" in c.value for c in again.caption)
    after = again.dataframe[0].value.set_index("method").loc["NCA"]
    assert after["5-NN test"] == before["5-NN test"]
