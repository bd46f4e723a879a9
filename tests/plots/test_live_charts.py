import math

import numpy as np
import pytest

from nca_core.plots import axes, colours, live_charts, live_curves
from tests.plots.vega_lite import CLASSES, valid_vega_lite


def test_embedding_spec_is_valid_vega_lite_with_fixed_axes_and_class_colours(rng):
    Z = rng.normal(size=(30, 2)) * 5
    y = np.repeat([0, 1, 2], 10)
    ranges = axes.steady_ranges([Z])
    spec = live_charts.embedding_spec(CLASSES, ranges)
    rows = live_charts.embedding_rows(Z, y, CLASSES)
    valid_vega_lite(spec, rows)
    for width in (300, 520, 900):  # the chart fills its column, whatever the screen
        x_domain, y_domain = shown_domains(spec, width)
        assert x_domain[0] <= ranges[0][0] and x_domain[1] >= ranges[0][1]
        assert y_domain[0] <= ranges[1][0] and y_domain[1] >= ranges[1][1]
    assert spec["encoding"]["color"]["scale"] == {"domain": CLASSES, "range": colours.class_colors(3)}
    assert spec["usermeta"]["embedOptions"]["renderer"] == "canvas"
    assert list(rows.columns) == ["z1", "z2", "class"]
    np.testing.assert_allclose(rows[["z1", "z2"]].to_numpy(), Z)
    assert rows["class"].tolist() == [CLASSES[c] for c in y]


def shown_domains(spec: dict, width: float) -> list[list[float]]:
    """The x and y domains the browser computes from the spec's expressions at ``width``
    pixels wide (the spec's own height): Vega's max() and arithmetic, evaluated here."""
    names = {"width": width, "height": spec["height"], "max": max, "__builtins__": {}}
    names["units_per_pixel"] = eval(spec["params"][0]["expr"], names)
    return [[eval(b["expr"], names) for b in spec["encoding"][a]["scale"]["domain"]] for a in ("x", "y")]


@pytest.mark.parametrize("width", [320, 600, 1000])
@pytest.mark.parametrize("ranges", [[[-1.5, 1.5], [-4.0, 4.0]], [[0.0, 10.0], [-1.0, 1.0]]])
def test_embedding_spec_draws_both_axes_at_one_scale(ranges, width):
    """A unit across is as many pixels as a unit up (rings were drawn as 3:1 ellipses)."""
    spec = live_charts.embedding_spec(CLASSES, ranges, height=480)
    (x0, x1), (y0, y1) = shown_domains(spec, width)
    assert (x1 - x0) / width == pytest.approx((y1 - y0) / 480)
    assert x0 <= ranges[0][0] and x1 >= ranges[0][1] and y0 <= ranges[1][0] and y1 >= ranges[1][1]
    assert spec["width"] == "container"


def test_embedding_spec_does_not_change_while_points_move_inside_the_axes(rng):
    """The property the live view relies on: same spec, only new rows, for many frames."""
    base = rng.normal(size=(50, 2)) * 10
    frames = [base * (1 + 0.01 * e) for e in range(30)]  # a run spreading out 1% per epoch

    def distinct(ranges) -> int:
        return len({repr(live_charts.embedding_spec(CLASSES, ranges(frames[: e + 1]))) for e in range(30)})

    assert distinct(axes.padded_ranges) == 30
    assert distinct(axes.steady_ranges) <= 6


def test_embedding_rows_ignore_columns_past_the_second(rng):
    rows = live_charts.embedding_rows(rng.normal(size=(4, 5)), np.zeros(4, int), ["only"])
    assert list(rows.columns) == ["z1", "z2", "class"]


def test_embedding_spec_needs_two_axes():
    with pytest.raises(ValueError, match="two axes"):
        live_charts.embedding_spec(CLASSES, [[0.0, 1.0]])


def test_no_legend_sits_on_top_of_the_data():
    """The accuracy legend covered the curves; the embedding's squeezed a narrow column."""
    for spec in (live_curves.accuracy_spec(5), live_charts.embedding_spec(CLASSES, [[0, 1], [0, 1]])):
        legend = spec["encoding"]["color"]["legend"]
        assert legend["orient"] == "top" and legend["direction"] == "horizontal"


def test_a_brushing_panel_shows_each_points_picture_first_on_hover():
    pictures = live_charts.thumbnail_rows(np.arange(3), [f"data:image/png;base64,{i}" for i in range(3)])
    spec = live_charts.embedding_spec(CLASSES, [[-3, 3], [-3, 3]], brushing=True, thumbnails=pictures)
    assert spec["datasets"] == {"thumbnails": pictures}
    assert spec["transform"] == [
        {"lookup": "point", "from": {"data": {"name": "thumbnails"}, "key": "point", "fields": ["image"]}}
    ]
    assert [t["field"] for t in spec["encoding"]["tooltip"]] == ["image", "class", "point"]
    plain = live_charts.embedding_spec(CLASSES, [[-3, 3], [-3, 3]], brushing=True)
    assert "datasets" not in plain and "transform" not in plain
    rows = live_charts.brushing_rows(np.zeros((3, 2)), np.array([0, 1, 2]), CLASSES, None)
    drawn = live_charts.embedding_data(spec, rows)  # the points too as a named table
    assert drawn["data"] == {"name": "points"} and set(drawn["datasets"]) == {"points", "thumbnails"}
    assert drawn["datasets"]["points"] is rows and "data" not in spec


def test_a_brushing_spec_is_valid_and_fades_the_rows_not_chosen(rng):
    """Compare's panels: which points stand out comes from the rows, so the spec (and with it
    the chart, its zoom and its box) stays the same whatever is selected."""
    Z, y = rng.normal(size=(6, 2)), np.array([0, 1, 2, 0, 1, 2])
    spec = live_charts.embedding_spec(CLASSES, [[-3, 3], [-3, 3]], brushing=True)
    rows = live_charts.brushing_rows(Z, y, CLASSES, np.array([1, 4]))
    valid_vega_lite(spec, rows)
    assert rows["point"].tolist() == list(range(6))  # what a click reports
    assert rows["chosen"].tolist() == [False, True, False, False, True, False]
    assert live_charts.brushing_rows(Z, y, CLASSES, None)["chosen"].all()  # no selection: all drawn as usual
    encoding = spec["encoding"]
    assert encoding["color"]["condition"] == {
        "test": "!datum.chosen",
        "value": colours.DIMMED_MARKER["color"],
    }
    assert encoding["color"]["scale"] == {"domain": CLASSES, "range": colours.class_colors(3)}
    assert encoding["opacity"] == {
        "condition": {"test": "datum.chosen", "value": 0.8},
        "value": colours.DIMMED_MARKER["opacity"],
    }
    assert [encoding["x"]["title"], encoding["y"]["title"]] == ["z1", "z2"]
    assert spec == live_charts.embedding_spec(CLASSES, [[-3, 3], [-3, 3]], brushing=True)


def test_a_brushing_spec_selects_on_a_drag_and_pans_on_a_shift_drag():
    """The box and panning both start with a drag; a plain scroll must still scroll the page."""
    params = {
        p["name"]: p for p in live_charts.embedding_spec(CLASSES, [[0, 1], [0, 1]], brushing=True)["params"]
    }
    zoom, box, pick = (
        params["zoom"]["select"],
        params[live_charts.BOX]["select"],
        params[live_charts.PICK]["select"],
    )
    assert params["zoom"]["bind"] == "scales"
    assert zoom["translate"].startswith("[pointerdown[event.shiftKey]")  # a plain drag's default
    assert box["on"].startswith("[pointerdown[!event.shiftKey]") and box["encodings"] == ["x", "y"]
    assert zoom["zoom"] == "wheel![event.ctrlKey || event.metaKey]" and box["zoom"] is False
    assert pick == {"type": "point", "fields": ["point"], "on": "click"}
    plain = {p["name"]: p for p in live_charts.embedding_spec(CLASSES, [[0, 1], [0, 1]])["params"]}
    assert set(plain) == {"units_per_pixel", "zoom"} and plain["zoom"]["bind"] == "scales"
    # the Train page's picture pans on a plain drag and, as here, zooms on ctrl-scroll only
    assert plain["zoom"]["select"] == {"type": "interval", "zoom": "wheel![event.ctrlKey || event.metaKey]"}


@pytest.mark.parametrize("width", [320, 700])
def test_a_brushing_spec_keeps_one_scale_on_both_axes(width):
    spec = live_charts.embedding_spec(CLASSES, [[0.0, 10.0], [-1.0, 1.0]], height=460, brushing=True)
    (x0, x1), (y0, y1) = shown_domains(spec, width)
    assert (x1 - x0) / width == pytest.approx((y1 - y0) / 460)


Z_GRID = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.5], [5.0, 5.0]])


@pytest.mark.parametrize(
    ("selection", "rows"),
    [
        ({"box": {"z1": [-0.5, 2.0], "z2": [1.0, -0.5]}, "pick": {}}, [0, 1, 2]),  # edges in, any order
        ({"box": {"z1": [0.5, 1.5], "z2": [0.5, 1.5]}}, [1]),
        ({"box": {}, "pick": [{"point": 3}, {"point": 1}, {"point": 3}]}, [1, 3]),  # shift-clicks
        ({"box": {"z1": [-1, 1.5], "z2": [-1, 1.5]}, "pick": [{"point": 3}]}, [3]),  # a click after the box
        ({"box": {"z1": [-1, 1.5], "z2": [-1, 1.5]}, "pick": [{"point": 1}]}, [0, 1]),  # a click inside it
        ({"box": {}, "pick": {}}, []),  # a double click cleared both
        ({}, []),
    ],
)
def test_chosen_points_are_the_rows_in_the_box_or_the_clicked_ones(selection, rows):
    assert live_charts.chosen_points(selection, Z_GRID).tolist() == rows


@pytest.mark.parametrize("container", [270, 344, 550])
def test_a_legend_row_fits_beside_the_y_axis_whatever_the_plots_width(container):
    """A fixed four columns cut "ring 4" off a 1024-pixel screen's narrow panel; a count
    that followed the plot's width (which moves with the y axis's labels) made MNIST's
    legend wrap differently from frame to frame."""
    classes = ["ring 1", "ring 2", "ring 3", "ring 4", "ring 5"]
    columns = live_charts.embedding_spec(classes, [[0, 1], [0, 1]])["encoding"]["color"]["legend"]["columns"]
    scope = {"max": max, "floor": math.floor, "containerSize": lambda: [container, 400], "__builtins__": {}}
    shown = eval(columns["expr"], scope)  # no "width" in scope: the count cannot depend on it
    entry = 16 + 7 * len("ring 1")  # a symbol and six characters of 11-pixel text, at the least
    y_axis = 55  # title, labels such as "-100" and ticks
    assert shown >= 1 and shown * entry <= container - y_axis


@pytest.mark.parametrize("brushing", [False, True])
def test_class_k_is_drawn_with_shape_k_and_colour_k_in_one_legend(brushing):
    classes = [f"digit {k}" for k in range(12)]
    spec = live_charts.embedding_spec(classes, [[0, 1], [0, 1]], brushing=brushing)
    assert spec["mark"]["type"] == "point" and spec["mark"]["filled"] is True  # a circle mark has one shape
    shape, colour = spec["encoding"]["shape"], spec["encoding"]["color"]
    assert shape["field"] == colour["field"] == "class"
    assert shape["scale"] == {"domain": classes, "range": [s.vega for s in colours.class_shapes(12)]}
    assert colour["scale"]["range"] == colours.class_colors(12)
    assert shape["legend"] == colour["legend"]  # Vega-Lite then draws one legend of both
    valid_vega_lite(spec, live_charts.brushing_rows(np.zeros((12, 2)), np.arange(12), classes, None))


def test_a_screen_reader_reads_the_charts_description_and_not_each_point():
    """Vega puts the description on the chart's container as its accessible name; with
    ``aria`` on, Vega-Lite would label every point and tick as well (a canvas has no element
    to carry them)."""
    plain = live_charts.embedding_spec(CLASSES, [[0, 1], [0, 1]])
    assert plain["config"]["aria"] is False
    assert plain["description"].startswith("Scatter plot of an embedding on axes z1 and z2")
    assert "ring 1 as circles, ring 2 as squares and ring 3 as triangles" in plain["description"]
    told = live_charts.embedding_spec(CLASSES, [[0, 1], [0, 1]], brushing=True, description="PCA of rings")
    assert told["description"] == "PCA of rings"
