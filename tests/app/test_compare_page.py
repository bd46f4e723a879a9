"""AppTests of the Compare page."""

from apptest_helpers import button, wait_for


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
