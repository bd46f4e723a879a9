"""The Train page's picture: one layered spec, live and final."""

import json

import altair as alt
import numpy as np
import pytest

from nca_core.plots import colours, edges, live_charts, live_picture
from nca_core.plots.axes import settled_ranges
from nca_core.plots.figures import LINK_MIN_PROBABILITY, LINK_WIDEST
from nca_core.runs.picks import SHOWN, Picks, point_picks
from tests.plots.snapshots import snap
from tests.plots.vega_lite import CLASSES


def picture(rng, n=40, **tables):
    Z = rng.normal(size=(n, 2)) * 5
    y = np.arange(n) % 3
    spec = live_picture.picture_spec(CLASSES, settled_ranges([Z]), height=400)
    rows = live_picture.picture_rows(Z, y, CLASSES, np.arange(100, 100 + n))
    return Z, y, live_picture.picture_data(spec, rows, **tables)


def points_layer(spec: dict) -> dict:
    """The points' own layer (the edge markers' layer draws from the same table)."""
    (layer,) = [layer for layer in spec["layer"] if "shape" in layer["encoding"]]
    return layer


def valid_layered(spec: dict) -> None:
    tables = {name: table.to_dict("records") for name, table in spec["datasets"].items()}
    alt.LayerChart.from_dict({**spec, "datasets": tables}).to_dict(validate=True)


def test_thumbnails_go_in_the_tooltip_through_a_named_table_looked_up_by_point(rng):
    Z, y = rng.normal(size=(4, 2)), np.array([0, 1, 2, 0])
    points = np.array([11, 5, 7, 30])
    pictures = live_charts.thumbnail_rows(points, [f"data:image/png;base64,{i}" for i in range(4)])
    spec = live_picture.picture_spec(CLASSES, [[-3, 3], [-3, 3]], thumbnails=pictures)
    rows = live_picture.picture_rows(Z, y, CLASSES, points)
    assert rows["point"].tolist() == [11, 5, 7, 30] and rows["row"].tolist() == [0, 1, 2, 3]
    layer = points_layer(spec)
    assert layer["transform"] == [
        {"lookup": "point", "from": {"data": {"name": "thumbnails"}, "key": "point", "fields": ["image"]}}
    ]
    # vega-tooltip draws a field named "image" holding a URL as a picture, above the others
    assert [t["field"] for t in layer["encoding"]["tooltip"]] == ["image", "class", "point"]
    drawn = live_picture.picture_data(spec, rows)
    assert drawn["datasets"]["points"] is rows and drawn["datasets"]["thumbnails"] is pictures
    assert "points" not in spec["datasets"]  # the spec itself is left as it was
    valid_layered(drawn)


def test_without_thumbnails_the_points_carry_no_picture(rng):
    spec = live_picture.picture_spec(CLASSES, [[-3, 3], [-3, 3]])
    layer = points_layer(spec)
    assert "transform" not in layer and "datasets" not in spec
    assert [t["field"] for t in layer["encoding"]["tooltip"]] == ["class", "point"]


def test_picture_spec_layers_regions_lines_points_edges_and_rings_on_one_pair_of_axes(rng):
    """The lines go under the points: over them, where a clicked point's lines meet, they
    hid it and its nearest picks under one dark patch. The rings stay on top."""
    Z, _, spec = picture(rng)
    valid_layered(spec)
    assert [layer["data"]["name"] for layer in spec["layer"]] == [
        "regions", "links", "points", "points", "links", "anchor"
    ]  # fmt: skip
    marks = ["image", "rule", "point", "point", "point", "point"]
    assert [layer["mark"]["type"] for layer in spec["layer"]] == marks
    on_axes = [layer for layer in spec["layer"] if layer["mark"].get("shape") != edges.EDGE_MARKER]
    axes = {json.dumps([layer["encoding"]["x"], layer["encoding"]["y"]]) for layer in on_axes}
    assert len(on_axes) == 5 and len(axes) == 1  # every layer on the points' axes, at one scale
    edge = spec["layer"][3]  # the points past the edge, placed in pixels from those axes' scales
    assert "scale('x', datum.z1)" in edge["encoding"]["x"]["value"]["expr"]
    assert "scale('y', datum.z2)" in edge["encoding"]["y"]["value"]["expr"]
    points = spec["layer"][2]
    assert {p["name"] for p in points["params"]} == {"zoom", live_charts.PICK}
    assert spec["datasets"]["points"]["row"].tolist() == list(range(len(Z)))
    assert spec["datasets"]["points"]["point"].tolist() == list(range(100, 100 + len(Z)))
    assert all(spec["datasets"][name].empty for name in ("links", "anchor", "regions"))


def test_a_picture_with_lines_or_regions_has_the_same_spec_and_other_tables(rng):
    Z, y, plain = picture(rng)
    p = np.full(len(Z), 1.0 / (len(Z) - 1))
    p[0] = 0.0
    links = live_picture.link_rows(Z, Picks(0, p, np.arange(1, 1 + SHOWN), y[1 : 1 + SHOWN] == y[0], 1 / 3))
    spec = {k: v for k, v in plain.items() if k != "datasets"}
    drawn = live_picture.picture_data(
        spec, plain["datasets"]["points"], links=links, anchor=live_picture.anchor_rows(Z, 0),
        regions=live_picture.region_rows("data:image/png;base64,", [[-1.0, 1.0], [-2.0, 2.0]]),
    )  # fmt: skip
    assert {k: v for k, v in drawn.items() if k != "datasets"} == spec
    assert len(drawn["datasets"]["links"]) == SHOWN and len(drawn["datasets"]["regions"]) == 1
    valid_layered(drawn)


def test_link_rows_keep_the_likeliest_picks_as_wide_as_p_ij():
    Z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [5.0, 5.0], [0.5, 0.5]])
    y = np.array([0, 0, 1, 1, 0])
    p = np.array([0.0, 0.5, 0.3, 0.001, 0.199])
    same = np.array([True, False, True, False])
    picks = Picks(0, p, rows=np.array([1, 2, 4, 3]), same=same, p_i=0.699)
    links = live_picture.link_rows(Z, picks, least=0.005)
    assert links["p"].tolist() == [0.5, 0.3, 0.199]  # likeliest first; 0.001 is too faint to draw
    assert links["width"].tolist() == pytest.approx([LINK_WIDEST, LINK_WIDEST * 0.6, LINK_WIDEST * 0.398])
    assert links["same"].tolist() == [True, False, True]
    assert links[["z1_end", "z2_end"]].to_numpy().tolist() == [[1.0, 0.0], [0.0, 2.0], [0.5, 0.5]]
    assert (links[["z1", "z2"]] == 0.0).all().all()
    assert len(live_picture.link_rows(Z, point_picks(snap(1, Z), y, 0, count=2))) == 2


def test_in_a_crowd_lines_go_to_the_shown_picks_only_as_wide_as_p_ij(rng):
    """A point in a dense cluster gives p_ij above the drawing threshold to dozens of
    points; a line to each of them merged into one dark patch around it."""
    Z = (rng.normal(size=(300, 2)) * 0.6).astype(np.float32)
    y = np.arange(300) % 3
    crowded = max(
        range(len(Z)), key=lambda i: (point_picks(snap(1, Z), y, i).p >= LINK_MIN_PROBABILITY).sum()
    )
    picks = point_picks(snap(1, Z), y, crowded)
    assert (picks.p >= LINK_MIN_PROBABILITY).sum() > 3 * SHOWN
    links = live_picture.link_rows(Z, picks)
    assert len(links) == SHOWN
    np.testing.assert_array_equal(links[["z1_end", "z2_end"]].to_numpy(), Z[picks.rows])
    assert links["p"].tolist() == picks.strongest.tolist() and links["same"].tolist() == picks.same.tolist()
    assert links["width"].iloc[0] == pytest.approx(LINK_WIDEST)
    visible = links["width"] > 1.0  # the thinnest are held at a pixel
    np.testing.assert_allclose(
        links["width"][visible] / links["p"][visible], LINK_WIDEST / links["p"].iloc[0]
    )


def test_a_point_that_picks_nobody_draws_no_lines():
    Z = np.array([[np.inf, 0.0], [0.0, 0.0], [1.0, 0.0]])
    links = live_picture.link_rows(Z, point_picks(snap(1, Z), np.array([0, 0, 1]), 0))
    assert links.empty and list(links.columns) == ["z1", "z2", "z1_end", "z2_end", "p", "width", "same"]


def test_picked_row_reads_a_click_and_a_click_on_nothing():
    assert live_picture.picked_row({"pick": [{"row": 17}]}) == 17
    assert live_picture.picked_row({"pick": []}) is None
    assert live_picture.picked_row({}) is None
    for crafted in ("x", None, float("nan"), [3]):  # what no chart sends: a click on nothing
        assert live_picture.picked_row({"pick": [{"row": crafted}]}) is None


def test_the_points_a_clicked_point_picks_get_rings_as_heavy_as_their_lines(rng):
    """A point mostly picks neighbours within a few pixels, whose lines the clicked point's
    own ring hides: each picked point gets a ring where its line ends."""
    _, _, spec = picture(rng)
    (picked,) = [
        layer
        for layer in spec["layer"]
        if layer["data"]["name"] == "links" and layer["mark"]["type"] == "point"
    ]
    ends = {t["as"]: t["calculate"] for t in picked["transform"]}
    assert ends["z1"] == "datum.z1_end" and ends["z2"] == "datum.z2_end"
    assert picked["mark"]["filled"] is False
    assert picked["encoding"]["strokeWidth"]["field"] == "ring" and "datum.width" in ends["ring"]


def shown_opacity(expr: str, row: dict, scales: dict) -> float:
    """Evaluate a Vega ``cond ? a : b`` opacity expression of ``pow``, ``sqrt``, ``scale``
    and ``datum`` fields for one row, with linear ``scales`` {"x": f, "y": f}."""
    import math
    import re

    condition, rest = expr.split(" ? ")
    when_true, when_false = rest.split(" : ")
    python = re.sub(r"scale\('(\w)', ", r"scales['\1'](", condition).replace("datum.", "row.")
    python = python.replace("sqrt(", "math.sqrt(")
    names = {"scales": scales, "row": type("Row", (), row), "math": math, "pow": pow}
    return float(when_true if eval(python, names) else when_false)  # the spec's own, in Python's syntax


@pytest.mark.parametrize("area", [live_charts.POINT_AREA, 70])
def test_a_picked_ring_inside_the_clicked_points_ring_is_hidden_until_zoomed_in(rng, area):
    """3,000 MNIST digits drawn: the likeliest picks sit a pixel or two from the clicked
    point, where their rings would thicken its ring into one dark disk."""
    spec = live_picture.picture_spec(CLASSES, [[-10, 10], [-10, 10]], point_area=area)
    (picked,) = [
        layer
        for layer in spec["layer"]
        if layer["data"]["name"] == "links" and layer["mark"]["type"] == "point"
    ]
    (anchor_ring,) = [layer for layer in spec["layer"] if layer["data"]["name"] == "anchor"]
    radius = (anchor_ring["mark"]["size"] / np.pi) ** 0.5  # a Vega symbol's size is its area
    expr = picked["encoding"]["opacity"]["value"]["expr"]
    row = {"anchor_z1": 0.0, "anchor_z2": 0.0}
    for calc in picked["transform"]:  # the layer's own transform places the ring where its line ends
        if calc["as"] in ("z1", "z2"):
            row[calc["as"]] = {"datum.z1_end": 0.1, "datum.z2_end": 0.05}[calc["calculate"]]
    # the pick lies 0.112 units away: 2.2 pixels, half the ring's radius, then three radii
    for pixels_per_unit, shown in [(20, 0.0), (radius / 0.2, 0.0), (3 * radius / 0.1, 0.9)]:
        scales = {
            "x": lambda v, k=pixels_per_unit: 300 + k * v,
            "y": lambda v, k=pixels_per_unit: 200 - k * v,
        }
        assert shown_opacity(expr, row, scales) == shown, pixels_per_unit


def test_the_pictures_points_have_their_class_shapes_and_the_edge_markers_keep_theirs(rng):
    _, _, spec = picture(rng)
    points = points_layer(spec)
    assert points["encoding"]["shape"]["scale"]["range"] == [s.vega for s in colours.class_shapes(3)]
    assert points["mark"]["size"] == live_charts.POINT_AREA and points["mark"]["filled"] is True
    (edge,) = [layer for layer in spec["layer"] if layer["mark"].get("shape") == edges.EDGE_MARKER]
    assert "shape" not in edge["encoding"]  # an arrowhead pointing the way, in the class's colour


def test_the_pictures_description_holds_whatever_its_tables_say(rng):
    Z = rng.normal(size=(10, 2))
    spec = live_picture.picture_spec(CLASSES, settled_ranges([Z]), description="NCA's embedding of rings")
    assert spec["description"] == "NCA's embedding of rings" and spec["config"]["aria"] is False
    rows = live_picture.picture_rows(Z, np.arange(10) % 3, CLASSES, np.arange(10))
    drawn = live_picture.picture_data(spec, rows, anchor=live_picture.anchor_rows(Z, 0))
    assert drawn["description"] == spec["description"]


def test_the_clicked_points_ring_is_opaque_black_whatever_the_class_colours(rng):
    """At Vega-Lite's default opacity for points (0.7) the black ring drew as a grey one."""
    _, _, spec = picture(rng)
    (ring,) = [layer for layer in spec["layer"] if layer["data"]["name"] == "anchor"]
    assert ring["mark"]["color"] == "black" and ring["mark"]["opacity"] == 1
