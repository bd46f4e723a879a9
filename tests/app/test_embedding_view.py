"""The Train page's embedding (app_pages/ui/train/embedding_view.py)."""


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
    (first_points,) = [layer for layer in first_spec["layer"] if "shape" in layer["encoding"]]
    wait_for(app, lambda at: len(run.snapshots) >= 2)
    assert run.job.state == "running"  # at pace 5 a digits run takes many seconds
    spec, tables = vega_chart(app, "embedding")
    (points,) = [layer for layer in spec["layer"] if "shape" in layer["encoding"]]
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


def lines_caption(at) -> str | None:
    found = [c.value for c in at.caption if c.value.startswith("Lines from training point")]
    return found[0] if found else None


def test_the_caption_under_the_picture_says_what_the_lines_of_a_clicked_point_are(app):
    """While the run trains, after it ends (pointing to the Inspect tab) and never while
    presenting, where the notice beside the picture says it in a few words."""
    from apptest_helpers import button, click_vega, vega_chart, wait_for

    from nca_core.plots.colours import OTHER_CLASS_LINE, SAME_CLASS_LINE

    app.sidebar.slider(key="rings-epochs-linear-2").set_value(300)
    app.sidebar.slider(key="pace").set_value(5)
    button(app, "Train").click().run()
    run = app.session_state["train_run"]
    wait_for(app, lambda at: len(run.snapshots) >= 2)
    assert lines_caption(app) is None  # nothing clicked yet
    click_vega(app, "embedding", {"pick": [{"row": 6}]})
    drawn = len(vega_chart(app, "embedding")[1]["links"])
    which = "its 8 likeliest picks" if drawn == 8 else f"its {drawn} picks with p_ij of 0.005 or more"
    words = f"to {which} among the points drawn, as wide as p_ij"
    assert 1 < drawn <= 8 and run.job.alive
    assert words in lines_caption(app) and "Inspect" not in lines_caption(app)
    assert f"{SAME_CLASS_LINE[1]} to its own class, {OTHER_CLASS_LINE[1]} to another" in lines_caption(app)
    button(app, "Stop").click().run()
    wait_for(app, lambda at: not run.job.alive)
    app.run()
    assert lines_caption(app).startswith(f"Lines from training point #{run.run.display_index[6]} to its")
    assert "The Inspect a point tab below lists its 8 likeliest, with p_i." in lines_caption(app)
    app.toggle(key="present").set_value(True).run()
    assert not vega_chart(app, "embedding")[1]["links"].empty and lines_caption(app) is None
    app.toggle(key="present").set_value(False).run()
    click_vega(app, "embedding", {"pick": []})  # a click on the background
    assert lines_caption(app) is None


def finished_rings_run(app, epochs: int = 3, drawn: str = "700"):
    from apptest_helpers import button, wait_for

    app.sidebar.select_slider(key="rings-display_size").set_value(drawn)
    app.sidebar.slider(key="rings-epochs-linear-2").set_value(epochs)
    app.sidebar.slider(key="pace").set_value(0)
    app.sidebar.toggle(key="slow-start").set_value(False)
    button(app, "Train").click().run()
    active = app.session_state["train_run"]
    wait_for(app, lambda at: not active.job.alive)
    app.run()
    return active


def inspected_heading(at) -> str:
    (heading,) = [m.value for m in at.markdown if m.value.startswith("Training point **#")]
    return heading


def test_a_point_is_chosen_by_its_number_or_by_previous_and_next_as_a_click_chooses_it(app):
    import numpy as np
    from apptest_helpers import button, click_vega, vega_chart

    active = finished_rings_run(app)
    points, Z = active.run.display_index, active.snapshots[-1].embedding
    assert app.number_input(key="inspect-number").value is None
    number = int(np.sort(points)[10])
    app.number_input(key="inspect-number").set_value(number).run()
    row = int(np.flatnonzero(points == number)[0])
    assert inspected_heading(app).startswith(f"Training point **#{number}**")
    _, tables = vega_chart(app, "embedding")  # its lines in the picture, as for a click
    assert tables["anchor"][["z1", "z2"]].to_numpy().tolist() == [Z[row, :2].tolist()]
    assert not tables["links"].empty
    button(app, "Next").click().run()
    after = int(np.sort(points)[11])
    assert inspected_heading(app).startswith(f"Training point **#{after}**")
    assert app.number_input(key="inspect-number").value == after
    button(app, "Previous").click().run()
    button(app, "Previous").click().run()
    assert app.number_input(key="inspect-number").value == int(np.sort(points)[9])
    click_vega(app, "embedding", {"pick": [{"row": 5}]})  # a click sets the number
    assert app.number_input(key="inspect-number").value == int(points[5])
    assert inspected_heading(app).startswith(f"Training point **#{points[5]}**")
    assert not app.exception


def test_next_unsure_steps_to_points_more_likely_to_pick_another_class_and_a_number_not_drawn_says_so(app):
    import numpy as np
    from apptest_helpers import button

    from nca_core.runs.picks import point_picks

    active = finished_rings_run(app, epochs=1, drawn="500")  # one epoch: the rings still mix
    snap, y, points = active.snapshots[-1], active.run.display_labels, active.run.display_index
    unsure = [r for r in np.argsort(points) if point_picks(snap, y, r).p_i < 0.5]
    assert len(unsure) >= 2
    button(app, "Next unsure").click().run()
    assert app.number_input(key="inspect-number").value == int(points[unsure[0]])
    button(app, "Next unsure").click().run()
    assert app.number_input(key="inspect-number").value == int(points[unsure[1]])
    (p_i,) = [m for m in app.metric if m.label == "p_i (same class)"]
    assert float(p_i.value) < 0.5
    missing = min(set(range(int(points.max()))) - set(points.tolist()))  # 500 of the 700 are drawn
    app.number_input(key="inspect-number").set_value(missing).run()
    assert any(f"Training point #{missing} is not among the {len(points):,} points drawn" in w.value for w in app.warning)
    assert app.number_input(key="inspect-number").value == int(points[unsure[1]])  # the point before stays
    assert not app.exception
