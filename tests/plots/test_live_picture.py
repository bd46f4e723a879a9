"""The Train page's picture: one layered spec, live and final."""

import json

import altair as alt
import numpy as np
import pytest

from nca_core.plots import edges, live_charts, live_picture
from nca_core.plots.axes import settled_ranges
from tests.plots.vega_lite import CLASSES


def picture(rng, n=40, **tables):
    Z = rng.normal(size=(n, 2)) * 5
    y = np.arange(n) % 3
    spec = live_picture.picture_spec(CLASSES, settled_ranges([Z]), height=400)
    rows = live_picture.picture_rows(Z, y, CLASSES, np.arange(100, 100 + n))
    return Z, y, live_picture.picture_data(spec, rows, **tables)


def points_layer(spec: dict) -> dict:
    """The points' own layer (the edge markers' layer draws from the same table)."""
    (layer,) = [layer for layer in spec["layer"] if layer["mark"]["type"] == "circle"]
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


def test_picture_spec_layers_regions_points_edges_lines_and_rings_on_one_pair_of_axes(rng):
    Z, _, spec = picture(rng)
    valid_layered(spec)
    assert [layer["data"]["name"] for layer in spec["layer"]] == [
        "regions", "points", "points", "links", "links", "anchor"
    ]  # fmt: skip
    marks = ["image", "circle", "point", "rule", "point", "point"]
    assert [layer["mark"]["type"] for layer in spec["layer"]] == marks
    on_axes = [layer for layer in spec["layer"] if layer["mark"].get("shape") != edges.EDGE_MARKER]
    axes = {json.dumps([layer["encoding"]["x"], layer["encoding"]["y"]]) for layer in on_axes}
    assert len(on_axes) == 5 and len(axes) == 1  # every layer on the points' axes, at one scale
    edge = spec["layer"][2]  # the points past the edge, placed in pixels from those axes' scales
    assert "scale('x', datum.z1)" in edge["encoding"]["x"]["value"]["expr"]
    assert "scale('y', datum.z2)" in edge["encoding"]["y"]["value"]["expr"]
    points = spec["layer"][1]
    assert {p["name"] for p in points["params"]} == {"zoom", live_charts.PICK}
    assert spec["datasets"]["points"]["row"].tolist() == list(range(len(Z)))
    assert spec["datasets"]["points"]["point"].tolist() == list(range(100, 100 + len(Z)))
    assert all(spec["datasets"][name].empty for name in ("links", "anchor", "regions"))


def test_a_picture_with_lines_or_regions_has_the_same_spec_and_other_tables(rng):
    Z, y, plain = picture(rng)
    p = np.full(len(Z), 1.0 / (len(Z) - 1))
    p[0] = 0.0
    links = live_picture.link_rows(Z, y, 0, p)
    spec = {k: v for k, v in plain.items() if k != "datasets"}
    drawn = live_picture.picture_data(
        spec, plain["datasets"]["points"], links=links, anchor=live_picture.anchor_rows(Z, 0),
        regions=live_picture.region_rows("data:image/png;base64,", [[-1.0, 1.0], [-2.0, 2.0]]),
    )  # fmt: skip
    assert {k: v for k, v in drawn.items() if k != "datasets"} == spec
    assert len(drawn["datasets"]["links"]) == len(Z) - 1 and len(drawn["datasets"]["regions"]) == 1
    valid_layered(drawn)


def test_link_rows_keep_the_likeliest_neighbours_as_wide_as_p_ij():
    Z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [5.0, 5.0], [0.5, 0.5]])
    y = np.array([0, 0, 1, 1, 0])
    p = np.array([0.0, 0.5, 0.3, 0.001, 0.199])
    links = live_picture.link_rows(Z, y, 0, p, least=0.005)
    assert links["p"].tolist() == [0.5, 0.3, 0.199]  # likeliest first; 0.001 is too faint to draw
    assert links["width"].tolist() == pytest.approx([8.5, 0.5 + 8 * 0.6, 0.5 + 8 * 0.398])
    assert links["same"].tolist() == [True, False, True]
    assert links[["z1_end", "z2_end"]].to_numpy().tolist() == [[1.0, 0.0], [0.0, 2.0], [0.5, 0.5]]
    assert (links[["z1", "z2"]] == 0.0).all().all()
    assert len(live_picture.link_rows(Z, y, 0, p, most=2)) == 2


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
    (picked,) = [layer for layer in spec["layer"] if layer["data"]["name"] == "links" and layer["mark"]["type"] == "point"]
    ends = {t["as"]: t["calculate"] for t in picked["transform"]}
    assert ends["z1"] == "datum.z1_end" and ends["z2"] == "datum.z2_end"
    assert picked["mark"]["filled"] is False
    assert picked["encoding"]["strokeWidth"]["field"] == "ring" and "datum.width" in ends["ring"]
