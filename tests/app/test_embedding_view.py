"""The Train page's embedding (app_pages/ui/embedding_view.py)."""


def test_an_image_run_carries_each_points_picture_for_its_tooltip_while_it_trains(app):
    """digits: the picture joins each point to a PNG of its digit, by training index. The
    start frame goes out first with the pictures' table empty; from the next redraw on the
    table is full and stays the same, and the points' layer changes only in its axes (which
    move in steps when a frame leaves them: ``axes.settled_ranges``)."""
    from apptest_helpers import button, vega_chart, wait_for

    def without_axes(layer: dict) -> dict:
        encoding = {k: v for k, v in layer["encoding"].items() if k not in ("x", "y")}
        return {**layer, "encoding": encoding}

    app.selectbox(key="dataset").set_value("digits").run()
    app.sidebar.slider(key="pace").set_value(5)
    button(app, "Train").click().run()
    run = app.session_state["train_run"]
    wait_for(app, lambda at: run.job.start_released)
    first_spec, first = vega_chart(app, "embedding")
    assert len(first["points"]) == len(run.run.display_index) and first["thumbnails"].empty
    (first_points,) = [layer for layer in first_spec["layer"] if layer["mark"]["type"] == "circle"]
    wait_for(app, lambda at: len(run.snapshots) >= 2)
    assert run.job.state == "running"  # at pace 5 a digits run takes many seconds
    spec, tables = vega_chart(app, "embedding")
    (points,) = [layer for layer in spec["layer"] if layer["mark"]["type"] == "circle"]
    assert without_axes(points) == without_axes(first_points)  # only the tables are swapped
    assert points["encoding"]["x"]["field"] == "z1" and points["encoding"]["y"]["field"] == "z2"
    assert points["transform"][0]["lookup"] == "point" and points["encoding"]["tooltip"][0]["field"] == "image"
    pictures = tables["thumbnails"]
    assert pictures["point"].tolist() == run.run.display_index.tolist()
    assert pictures["image"].str.startswith("data:image/png;base64,").all()
    assert tables["points"]["point"].tolist() == run.run.display_index.tolist()
    wait_for(app, lambda at: len(run.snapshots) >= 3)
    _, tables_later = vega_chart(app, "embedding")
    assert tables_later["thumbnails"].equals(pictures)
    button(app, "Stop").click().run()
