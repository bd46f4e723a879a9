"""AppTest of the kNN speed and storage page."""


def test_speed_page_measures_raw_against_nca(app):
    app.selectbox(key="dataset").set_value("digits").run()
    at = app.switch_page("app_pages/knn_speed.py").run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table["index"]) == ["raw 64-D", "NCA 32-D"]
    stored = table.set_index("index")["stored (MB)"]
    assert stored["raw 64-D"] == 2 * stored["NCA 32-D"]  # float32, same rows, half the columns
    assert (table["query time (s)"] > 0).all()
    assert [m.label for m in at.metric] == [
        "Query speed-up",
        "Index size reduction",
        "Test error (raw → NCA)",
    ]
    assert at.metric[1].value == "2.0x"
    assert any("a fresh fit with the default settings" in c.value for c in at.caption)
