"""Vega-Lite specs for charts redrawn many times a second while a run trains.

A Plotly figure carries its data, so every new frame is a new figure that the browser
builds from scratch (in Streamlit, a new chart element each time). A Vega-Lite spec here
holds only the encoding and fixed axes; the points travel as a separate table. While the
spec stays the same, the browser swaps the table into the chart it already has, which on
the Train page is what lets a 2-core machine draw every epoch of a small run (see
benchmarks/RESULTS.md). Colours and legend order come from ``colours``, as in the Plotly figures.

The Train page's 2-D picture (``picture_spec``) layers that scatter with a clicked point's
p_ij lines, k-NN decision regions (``regions``) and hover pictures, each a table of its own,
and stays one chart from the first frame to the end of the run. Compare's 2-D panels use
the scatter with brushing (``embedding_spec(..., brushing=True)``): Streamlit's Vega-Lite
chunk is a sixth the size of its Plotly one, which the browser must fetch and evaluate
before a first picture.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .colours import DIMMED_MARKER, OTHER_CLASS_LINE, PALETTE, SAME_CLASS_LINE, class_colors
from .figures import LINK_MIN_PROBABILITY, link_widths

__all__ = [
    "accuracy_rows",
    "accuracy_spec",
    "brushing_rows",
    "chosen_points",
    "embedding_rows",
    "embedding_spec",
    "link_rows",
    "objective_rows",
    "objective_spec",
    "picked_row",
    "picture_data",
    "picture_spec",
    "region_rows",
    "thumbnail_rows",
]

OBJECTIVE_LABELS = {"f": "mean p_i (f / n)", "g": "mean log p_i (g / n)", "mcml": "-KL(P || Q)"}


# The named tables of the Train page's picture (``picture_spec``): its points, their hover
# pictures, and its other layers.
POINTS, THUMBNAILS = "points", "thumbnails"
# A point's picture: joined by "point" from the THUMBNAILS table, first in its tooltip
# (vega-tooltip shows a field named "image" holding a URL as a picture).
_PICTURE_LOOKUP = {"lookup": "point", "from": {"data": {"name": THUMBNAILS}, "key": "point", "fields": ["image"]}}
_PICTURE_TOOLTIP = {"field": "image", "type": "nominal"}
LINKS, ANCHOR, REGIONS = "links", "anchor", "regions"
POINT_AREA = 36  # square pixels of a drawn point
REGION_OPACITY = 0.22

# The selection params of a brushing spec (``embedding_spec(..., brushing=True)``): a box
# dragged over the plot and a clicked point. The app asks for events from these two only.
BOX, PICK = "box", "pick"


def embedding_spec(
    classes: Sequence[str],
    ranges: list[list[float]],
    *,
    axis_label: str = "z",
    height: int = 520,
    brushing: bool = False,
    thumbnails: pd.DataFrame | None = None,
) -> dict:
    """A 2-D scatter coloured by class on fixed axes at one scale; drag to pan, ctrl-scroll
    (or cmd-scroll) to zoom: a plain scroll over the chart scrolls the page on past it.

    ``ranges`` should come from ``axes.steady_ranges`` so that the spec, and with it the
    chart, survives from one frame to the next. Both axes get the same units per pixel
    (a distance-based picture must not be stretched): the chart is as wide as its container,
    so the domains are Vega expressions of the ``width`` and ``height`` signals, widened
    around the ranges' centres until each range fits.

    ``brushing`` makes a drag select instead (see ``_with_brushing``): the rows then need
    "point" and "chosen" columns (``brushing_rows``). ``thumbnails`` (``thumbnail_rows``,
    keyed by the rows' "point"): each point's picture in its tooltip.
    """
    if len(ranges) < 2:
        raise ValueError("embedding_spec needs ranges for two axes")
    (x0, x1), (y0, y1) = ([float(v) for v in r] for r in ranges[:2])
    per_pixel = {"name": "units_per_pixel", "expr": f"max({x1 - x0!r} / width, {y1 - y0!r} / height)"}

    def axis(i: int, low: float, high: float, size: str) -> dict:
        name = f"{axis_label}{i + 1}"
        centre, half = (low + high) / 2, f"units_per_pixel * {size} / 2"
        domain = [{"expr": f"{centre!r} - {half}"}, {"expr": f"{centre!r} + {half}"}]
        return {
            "field": name,
            "type": "quantitative",
            "title": name,
            "scale": {"domain": domain, "nice": False, "zero": False},
        }

    spec = {
        "width": "container",
        "height": height,
        # room past the plot's right edge for half its last x label, which was cut off
        "padding": {"left": 5, "top": 5, "right": 16, "bottom": 5},
        # Canvas paints hundreds of points in one pass where SVG updates an element per point.
        "usermeta": {"embedOptions": {"renderer": "canvas"}},
        "config": {"aria": False},
        "params": [
            per_pixel,
            {"name": "zoom", "select": {"type": "interval", "zoom": _ZOOM_WHEEL}, "bind": "scales"},
        ],
        "mark": {"type": "circle", "size": POINT_AREA, "opacity": 0.8, "clip": True},
        "encoding": {
            "x": axis(0, x0, x1, "width"),
            "y": axis(1, y0, y1, "height"),
            "color": {
                "field": "class",
                "type": "nominal",
                "scale": {"domain": [str(c) for c in classes], "range": class_colors(len(classes))},
                # Above the plot, in rows: the plot keeps the column's width on a small screen.
                "legend": {
                    "title": None,
                    "orient": "top",
                    "direction": "horizontal",
                    "columns": _legend_columns(classes),
                },
            },
        },
    }
    if brushing:
        _with_brushing(spec)
    if thumbnails is not None:
        _with_pictures(spec, thumbnails)
    return spec


def _with_pictures(spec: dict, thumbnails: pd.DataFrame) -> None:
    """Each point's picture first in its tooltip, from ``thumbnails`` (``_PICTURE_LOOKUP``)."""
    spec["datasets"] = {THUMBNAILS: thumbnails}
    spec["transform"] = [_PICTURE_LOOKUP]
    spec["encoding"]["tooltip"] = [_PICTURE_TOOLTIP, *spec["encoding"].get("tooltip", [])]


def _legend_columns(classes: Sequence[str]) -> dict:
    """As many legend entries a row as fit the chart (a Vega expression of its container's
    width, less room for the y axis): a fixed count ran past the right edge of a narrow
    panel. Not the plot's own width, which moves with the y axis's labels: MNIST's legend
    then wrapped differently from frame to frame and the chart jumped up and down."""
    entry = 30 + 7 * max((len(str(c)) for c in classes), default=1)  # symbol, label, gap (px)
    return {"expr": f"max(1, floor((containerSize()[0] - {_Y_AXIS_ROOM}) / {entry}))"}


_Y_AXIS_ROOM = 70  # pixels: the widest y axis, its title and labels such as "-1000"
_SHIFT = "event.shiftKey"
_ZOOM_WHEEL = "wheel![event.ctrlKey || event.metaKey]"  # a plain wheel scrolls the page


def _with_brushing(spec: dict) -> None:
    """Drag a box (param ``BOX``) or click a point (``PICK``); shift-drag pans, ctrl-scroll
    zooms (a plain scroll still scrolls the page past the chart) and a double click clears
    the box. Points whose "chosen" field is false are drawn faint and grey.

    Which points stand out comes from the data, not from the params: the app decides (one
    selection for every panel), and the spec stays the same whatever is chosen, so the
    browser keeps the chart, its zoom and the box, and only swaps the table."""
    # A scale-bound interval pans on its "translate" events (a plain drag by default, which
    # would take every drag from the box) and zooms on its "zoom" events.
    (zoom,) = [param for param in spec["params"] if param["name"] == "zoom"]
    zoom["select"] = {
        "type": "interval",
        "translate": f"[pointerdown[{_SHIFT}], window:pointerup] > window:pointermove!",
        "zoom": _ZOOM_WHEEL,
    }
    spec["params"] += [
        {"name": BOX, "select": {"type": "interval", "encodings": ["x", "y"],
                                 "on": f"[pointerdown[!{_SHIFT}], window:pointerup] > window:pointermove!",
                                 "zoom": False}},  # a scroll over the box scrolls the page
        {"name": PICK, "select": {"type": "point", "fields": ["point"], "on": "click"}},
    ]  # fmt: skip
    chosen = {"test": "datum.chosen"}
    spec["encoding"]["color"]["condition"] = {"test": "!datum.chosen", "value": DIMMED_MARKER["color"]}
    spec["encoding"]["opacity"] = {"condition": {**chosen, "value": 0.8}, "value": DIMMED_MARKER["opacity"]}
    spec["encoding"]["order"] = {"condition": {**chosen, "value": 1}, "value": 0}  # chosen on top
    spec["encoding"]["tooltip"] = [
        {"field": "class", "type": "nominal"},
        {"field": "point", "type": "quantitative", "title": "point"},
    ]


def picture_spec(
    classes: Sequence[str],
    ranges: list[list[float]],
    *,
    height: int = 520,
    thumbnails: pd.DataFrame | None = None,
    inputs: Sequence[str] = (),
    point_area: int = POINT_AREA,
) -> dict:
    """The Train page's 2-D picture, the same spec while a run trains and after it ends.

    Five layers on the axes of ``embedding_spec``, each fed by a named table
    (``picture_data``): decision regions as one picture (``REGIONS``, ``region_rows``), the
    points, lines from a clicked point to the points it picks with width by p_ij over them
    and a ring on each of those (``LINKS``, ``link_rows``; a point mostly picks its
    nearest few, which the points would hide), and a ring on the clicked one (``ANCHOR``).
    A layer with no rows draws nothing, so showing regions or lines changes only the
    tables, and the browser keeps the chart. A click on a point fills the ``PICK``
    selection with its "row" in the points table (``picked_row``). ``thumbnails``
    (``thumbnail_rows``): each point's picture in its tooltip, a table of its own that
    stays the same from frame to frame (vega-tooltip shows a field named "image" holding a
    URL as a picture). ``inputs``: names of input features whose values the tooltips show,
    from the rows' "input 1", "input 2", ... columns (``picture_rows``).
    """
    single = embedding_spec(classes, ranges, height=height)
    per_pixel, zoom = single["params"]
    x, y = single["encoding"]["x"], single["encoding"]["y"]
    points = _points_layer(single, zoom, point_area, inputs, thumbnails is not None)
    lines = [_links_layer(x, y), _picked_layer(x, y, point_area)]
    layers = [_regions_layer(x, y), points, *lines, _ring_layer(x, y, point_area)]
    layered = {key: value for key, value in single.items() if key not in ("params", "mark", "encoding")}
    if thumbnails is not None:
        layered["datasets"] = {THUMBNAILS: thumbnails}
    return {**layered, "params": [per_pixel], "layer": layers}


_ENDS = {"x2": {"field": "z1_end"}, "y2": {"field": "z2_end"}}  # where a line or a picture ends


def _points_layer(single: dict, zoom: dict, area: int, inputs: Sequence[str], pictures: bool) -> dict:
    """The points, clickable (``PICK``), with class, training index and ``inputs`` on hover,
    and each point's picture joined by "point" when there are ``pictures``."""
    tooltip = [
        {"field": "class", "type": "nominal"},
        {"field": "point", "type": "quantitative", "title": "training point"},
        *({"field": f"input {i + 1}", "type": "quantitative", "title": str(name), "format": ".4g"}
          for i, name in enumerate(inputs)),
    ]  # fmt: skip
    layer = {
        "data": {"name": POINTS},
        "params": [zoom, {"name": PICK, "select": {"type": "point", "fields": ["row"], "on": "click"}}],
        "mark": {**single["mark"], "size": area, "cursor": "pointer"},
        "encoding": {**single["encoding"], "tooltip": tooltip},
    }
    if pictures:
        layer["transform"] = [_PICTURE_LOOKUP]
        layer["encoding"]["tooltip"] = [_PICTURE_TOOLTIP, *tooltip]
    return layer


def _regions_layer(x: dict, y: dict) -> dict:
    mark = {"type": "image", "aspect": False, "smooth": False, "opacity": REGION_OPACITY, "clip": True}
    encoding = {"x": x, "y": y, **_ENDS, "url": {"field": "url", "type": "nominal"}}
    return {"data": {"name": REGIONS}, "mark": mark, "encoding": encoding}


# What the lines and the rings on the picked points share: dark to the anchor's class, grey
# to others (as ``figures.neighbour_links``), and p_ij on hover.
_SAME_CLASS = {"test": "datum.same"}
_LINK_COLOUR = {"condition": {**_SAME_CLASS, "value": SAME_CLASS_LINE[0]}, "value": OTHER_CLASS_LINE[0]}
_P_TOOLTIP = [{"field": "p", "type": "quantitative", "format": ".3f", "title": "p_ij"}]


def _links_layer(x: dict, y: dict) -> dict:
    """Solid dark lines to the anchor's class, dashed grey ones to others (as
    ``figures.neighbour_links``), each as wide as its "width"."""
    encoding = {
        "x": x, "y": y, **_ENDS,
        "strokeWidth": {"field": "width", "type": "quantitative", "scale": None, "legend": None},
        "color": _LINK_COLOUR,
        "strokeDash": {"condition": {**_SAME_CLASS, "value": [1, 0]}, "value": [5, 3]},
        "tooltip": _P_TOOLTIP,
    }  # fmt: skip
    return {
        "data": {"name": LINKS},
        "mark": {"type": "rule", "opacity": 0.7, "clip": True},
        "encoding": encoding,
    }


def _picked_layer(x: dict, y: dict, area: int) -> dict:
    """A ring on each point the lines end at, heavier for a heavier line: a point mostly
    picks neighbours so near that the anchor's ring would hide their lines, not the points."""
    encoding = {
        "x": x, "y": y,
        "strokeWidth": {"field": "ring", "type": "quantitative", "scale": None, "legend": None},
        "color": _LINK_COLOUR,
        "tooltip": _P_TOOLTIP,
    }  # fmt: skip
    at_ends = [{"calculate": "datum.z1_end", "as": "z1"}, {"calculate": "datum.z2_end", "as": "z2"},
               {"calculate": "1 + datum.width / 4", "as": "ring"}]  # fmt: skip
    mark = {"type": "point", "filled": False, "size": 3 * area, "opacity": 0.9, "clip": True}
    return {"data": {"name": LINKS}, "transform": at_ends, "mark": mark, "encoding": encoding}


def _ring_layer(x: dict, y: dict, area: int) -> dict:
    mark = {"type": "point", "filled": False, "color": "black", "size": 6 * area, "strokeWidth": 2.5}
    return {"data": {"name": ANCHOR}, "mark": mark, "encoding": {"x": x, "y": y}}


def embedding_data(spec: dict, rows: pd.DataFrame) -> dict:
    """``embedding_spec``'s spec with its points as the named table ``POINTS``, beside any
    other table (its pictures): in Chromium a panel given its points as the chart's data and
    its pictures as a named table drew no points."""
    return {**spec, "data": {"name": POINTS}, "datasets": {**spec.get("datasets", {}), POINTS: rows}}


def picture_data(
    spec: dict,
    points: pd.DataFrame,
    links: pd.DataFrame | None = None,
    anchor: pd.DataFrame | None = None,
    regions: pd.DataFrame | None = None,
) -> dict:
    """``picture_spec``'s spec with its tables; a layer left out (None) draws nothing."""
    given = {LINKS: links, ANCHOR: anchor, REGIONS: regions}
    tables = {
        name: table if table is not None else pd.DataFrame(columns=_COLUMNS[name])
        for name, table in given.items()
    }
    return {**spec, "datasets": {**spec.get("datasets", {}), POINTS: points, **tables}}


def picture_rows(
    Z: np.ndarray, y: np.ndarray, classes: Sequence[str], points: np.ndarray, inputs: np.ndarray | None = None
) -> pd.DataFrame:
    """``embedding_rows`` with each row's position ("row", what a click reports), its index
    in the training set ("point", for tooltips and pictures) and the values of the input
    features ``picture_spec``'s tooltips name (``inputs``, one column each)."""
    rows = embedding_rows(Z, y, classes, points=points)
    rows["row"] = np.arange(len(rows), dtype=np.int64)
    for i, values in enumerate(np.asarray(inputs).T if inputs is not None else []):
        rows[f"input {i + 1}"] = values
    return rows


def link_rows(
    Z: np.ndarray,
    y: np.ndarray,
    anchor: int,
    p: np.ndarray,
    *,
    least: float = LINK_MIN_PROBABILITY,
    most: int = 40,
) -> pd.DataFrame:
    """Lines from ``anchor`` to the points it picks as a neighbour: the ``most`` likeliest
    with p_ij of at least ``least``, as wide as ``figures.link_widths`` (the How NCA works
    page's), and whether each j shares the anchor's class ("same")."""
    Z, p, y = np.asarray(Z, dtype=np.float64), np.asarray(p, dtype=np.float64), np.asarray(y)
    order = np.argsort(-p, kind="stable")[:most]
    chosen = order[p[order] >= least]
    return pd.DataFrame({
        "z1": Z[anchor, 0], "z2": Z[anchor, 1], "z1_end": Z[chosen, 0], "z2_end": Z[chosen, 1],
        "p": p[chosen], "width": link_widths(p)[chosen], "same": y[chosen] == y[anchor],
    }, columns=["z1", "z2", "z1_end", "z2_end", "p", "width", "same"])  # fmt: skip


def anchor_rows(Z: np.ndarray, anchor: int) -> pd.DataFrame:
    """The ring's table: the clicked point's position."""
    return pd.DataFrame({"z1": [float(Z[anchor, 0])], "z2": [float(Z[anchor, 1])]})


def region_rows(url: str, box: list[list[float]]) -> pd.DataFrame:
    """The regions layer's table: one picture (``regions.RegionPicture.url``) over ``box``."""
    (x0, x1), (y0, y1) = box
    return pd.DataFrame({"z1": [x0], "z1_end": [x1], "z2": [y0], "z2_end": [y1], "url": [url]})


# Each layer's columns: its table with no rows draws nothing.
_COLUMNS = {
    LINKS: ["z1", "z2", "z1_end", "z2_end", "p", "width", "same"],
    ANCHOR: ["z1", "z2"],
    REGIONS: ["z1", "z1_end", "z2", "z2_end", "url"],
}


def picked_row(selection: dict) -> int | None:
    """The points-table row a click on ``picture_spec``'s chart chose, from Streamlit's
    selection (``{"pick": [{"row": 17}]}``); None when the click chose nothing."""
    picked = [p["row"] for p in selection.get(PICK) or [] if isinstance(p, dict) and "row" in p]
    return int(picked[0]) if picked else None


def thumbnail_rows(points: np.ndarray, urls: Sequence[str]) -> pd.DataFrame:
    """The table of pictures for ``embedding_spec``: each point's index and image URL."""
    return pd.DataFrame({"point": np.asarray(points, dtype=np.int64), "image": list(urls)})


def embedding_rows(
    Z: np.ndarray,
    y: np.ndarray,
    classes: Sequence[str],
    *,
    axis_label: str = "z",
    points: np.ndarray | None = None,
) -> pd.DataFrame:
    """The first two columns of ``Z`` with each row's class name, for ``embedding_spec``;
    with ``points`` (each row's index in the training set), a "point" column too."""
    Z = np.asarray(Z)
    names = np.asarray([str(c) for c in classes], dtype=object)
    rows = pd.DataFrame({f"{axis_label}1": Z[:, 0], f"{axis_label}2": Z[:, 1], "class": names[np.asarray(y)]})
    if points is not None:
        rows["point"] = np.asarray(points, dtype=np.int64)
    return rows


def brushing_rows(
    Z: np.ndarray, y: np.ndarray, classes: Sequence[str], chosen: np.ndarray | None, *, axis_label: str = "z"
) -> pd.DataFrame:
    """``embedding_rows`` for a brushing spec: each row's position in ``Z`` as "point" (what a
    click reports) and whether it is among the ``chosen`` rows (None: nothing is selected,
    every point is drawn as usual)."""
    rows = embedding_rows(Z, y, classes, axis_label=axis_label, points=np.arange(len(Z)))
    rows["chosen"] = True if chosen is None else np.isin(rows["point"], np.asarray(chosen, dtype=np.int64))
    return rows


def chosen_points(selection: dict, Z: np.ndarray, *, axis_label: str = "z") -> np.ndarray:
    """Rows of ``Z`` (shape (n, 2+), as drawn) that a brushing spec's selection holds.

    ``selection`` maps each param to Vega-Lite's value for it, as Streamlit reports it: a
    box is {"z1": [low, high], "z2": [low, high]} in the plot's units, a click is a list of
    {"point": row}; an empty param is {}. The box stays in the event after a later click,
    so a clicked point outside the box is the newer choice and wins; otherwise the box."""
    in_box = _rows_in_box(selection.get(BOX) or {}, np.asarray(Z), axis_label)
    picked = [int(p["point"]) for p in selection.get(PICK) or [] if isinstance(p, dict) and "point" in p]
    picked = np.unique(np.asarray(picked, dtype=np.int64))
    if in_box is None or (len(picked) and not np.isin(picked, in_box).all()):
        return picked
    return in_box


def _rows_in_box(box: dict, Z: np.ndarray, axis_label: str) -> np.ndarray | None:
    """Rows of ``Z`` inside a box param's value, edges included; None without a box."""
    names = (f"{axis_label}1", f"{axis_label}2")
    if not all(name in box for name in names):
        return None
    inside = np.ones(len(Z), dtype=bool)
    for column, name in enumerate(names):
        low, high = sorted(float(v) for v in box[name])
        inside &= (Z[:, column] >= low) & (Z[:, column] <= high)
    return np.flatnonzero(inside).astype(np.int64)


CURVE_EDGE_PIXELS = 6  # a point's radius and a little: the room a curve's end points get


def _curve_spec(
    title: str, y_title: str, height: int, *, y_format: str | None = None, y_domain=None, legend: bool
) -> dict:
    scale = {"zero": False} if y_domain is None else {"domain": list(y_domain)}
    y = {"field": "value", "type": "quantitative", "title": y_title, "scale": scale}
    if y_format:
        y["axis"] = {"format": y_format}
    color = {"field": "series", "type": "nominal", "title": None, "sort": None}
    # Above the plot, never over it: a curve can sit in any corner (a failing run's is low).
    # One short row: in Streamlit the chart's height includes its legend.
    color["legend"] = {"orient": "top", "direction": "horizontal", "title": None} if legend else None
    return {
        "height": height,
        "title": title,
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": {
                "field": "epoch",
                "type": "quantitative",
                "title": "epoch",
                "axis": {"tickMinStep": 1, "format": "d"},
                # the last point whole, not cut by the edge; Vega-Lite rounds the padded
                # domain to nice numbers unless told not to, and showed an epoch of -5
                "scale": {"padding": CURVE_EDGE_PIXELS, "nice": False},
            },
            "y": y,
            "color": color,
        },
    }


def objective_spec(objective: str, height: int = 240) -> dict:
    """The objective per point against epoch (one line); f, a mean probability, on [0, 1]."""
    domain = (0, 1) if objective == "f" else None
    spec = _curve_spec("objective", OBJECTIVE_LABELS[objective], height, y_domain=domain, legend=False)
    spec["encoding"]["color"]["scale"] = {"range": [PALETTE[0]]}
    return spec


def objective_rows(epochs: Sequence[int], values: Sequence[float]) -> pd.DataFrame:
    return pd.DataFrame({"epoch": list(epochs), "value": list(values), "series": "objective"})


ACCURACY_SERIES = ("train (LOO)", "test")


def accuracy_spec(k: int, height: int = 260) -> dict:
    """Leave-one-out training and test kNN accuracy against epoch."""
    spec = _curve_spec(
        f"{k}-NN accuracy", f"{k}-NN accuracy", height, y_format=".0%", y_domain=(0, 1), legend=True
    )
    # No title above the legend: in Streamlit both come out of the chart's height.
    del spec["title"]
    spec["encoding"]["color"]["scale"] = {"domain": list(ACCURACY_SERIES), "range": [PALETTE[0], PALETTE[3]]}
    return spec


def accuracy_rows(
    epochs: Sequence[int], train: Sequence[float | None], test: Sequence[float | None]
) -> pd.DataFrame:
    """Long format, epoch by epoch (a new epoch only appends rows); missing values left out."""
    rows = [
        (epoch, value, name)
        for epoch, *values in zip(epochs, train, test)
        for name, value in zip(ACCURACY_SERIES, values)
        if value is not None
    ]
    return pd.DataFrame(rows, columns=["epoch", "value", "series"])
