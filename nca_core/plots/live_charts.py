"""Vega-Lite specs for charts redrawn many times a second while a run trains.

A Plotly figure carries its data, so every new frame is a new figure that the browser
builds from scratch (in Streamlit, a new chart element each time). A Vega-Lite spec here
holds only the encoding and fixed axes; the points travel as a separate table. While the
spec stays the same, the browser swaps the table into the chart it already has, which on
the Train page is what lets a 2-core machine draw every epoch of a small run (see
benchmarks/RESULTS.md, "The app's performance"). Colours, shapes and legend order come
from ``colours``, as in the Plotly figures.

This module holds the 2-D scatter of an embedding and its rows. The Train page's 2-D
picture (``live_picture.picture_spec``) layers that scatter with a clicked point's p_ij
lines, k-NN decision regions (``regions``) and hover pictures, each a table of its own,
and stays one chart from the first frame to the end of the run; the curves beside it are
``live_curves``. Compare's 2-D panels use the scatter with brushing
(``embedding_spec(..., brushing=True)``): Streamlit's Vega-Lite chunk is a sixth the size
of its Plotly one, which the browser must fetch and evaluate before a first picture.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .colours import DIMMED_MARKER, class_colors, class_shapes
from .descriptions import class_key

__all__ = [
    "brushing_rows",
    "chosen_points",
    "embedding_rows",
    "embedding_spec",
    "thumbnail_rows",
]

# The named tables of a chart's points and their hover pictures (``embedding_data``, and the
# Train page's picture, ``live_picture``).
POINTS, THUMBNAILS = "points", "thumbnails"
# A point's picture: joined by "point" from the THUMBNAILS table, first in its tooltip
# (vega-tooltip shows a field named "image" holding a URL as a picture).
_PICTURE_LOOKUP = {"lookup": "point", "from": {"data": {"name": THUMBNAILS}, "key": "point", "fields": ["image"]}}
_PICTURE_TOOLTIP = {"field": "image", "type": "nominal"}
# Square pixels of a drawn point's box: about 7 pixels across, where a shape still reads
# as itself (at 6 a star, a plus and a cross were one blur).
POINT_AREA = 50

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
    description: str | None = None,
) -> dict:
    """A 2-D scatter coloured and shaped by class on fixed axes at one scale; drag to pan,
    ctrl-scroll (or cmd-scroll) to zoom: a plain scroll over the chart scrolls the page on
    past it. ``description``: what a screen reader reads for the chart
    (``descriptions.embedding_description``); by default its axes and classes.

    ``ranges`` should hold still from frame to frame (``axes.settled_ranges``) so that the
    spec, and with it the chart, survives from one frame to the next. Both axes get the same
    units per pixel (a distance-based picture must not be stretched): the chart is as wide
    as its container, so the domains are Vega expressions of the ``width`` and ``height``
    signals, widened around the ranges' centres until each range fits.

    ``brushing`` makes a drag select instead (see ``_with_brushing``): the rows then need
    "point" and "chosen" columns (``brushing_rows``). ``thumbnails`` (``thumbnail_rows``,
    keyed by the rows' "point"): each point's picture in its tooltip.
    """
    if len(ranges) < 2:
        raise ValueError("embedding_spec needs ranges for two axes")
    (x0, x1), (y0, y1) = ([float(v) for v in r] for r in ranges[:2])
    per_pixel = {"name": "units_per_pixel", "expr": f"max({x1 - x0!r} / width, {y1 - y0!r} / height)"}
    spec = {
        "width": "container",
        "height": height,
        # room past the plot's right edge for half its last x label, which was cut off
        "padding": {"left": 5, "top": 5, "right": 16, "bottom": 5},
        # Canvas paints hundreds of points in one pass where SVG updates an element per point.
        "usermeta": {"embedOptions": {"renderer": "canvas"}},
        "description": description or _plain_description(classes, axis_label),
        # The description names the chart; marks drawn on a canvas have no element a screen
        # reader could reach, and labelling each point would only cost time every frame.
        "config": {"aria": False},
        "params": [
            per_pixel,
            {"name": "zoom", "select": {"type": "interval", "zoom": _ZOOM_WHEEL}, "bind": "scales"},
        ],
        "mark": {"type": "point", "filled": True, "size": POINT_AREA, "opacity": 0.8, "clip": True},
        "encoding": {
            "x": _axis(axis_label, 0, x0, x1, "width"),
            "y": _axis(axis_label, 1, y0, y1, "height"),
            **_class_marks(classes),
        },
    }
    if brushing:
        _with_brushing(spec)
    if thumbnails is not None:
        _with_pictures(spec, thumbnails)
    return spec


def _plain_description(classes: Sequence[str], axis_label: str) -> str:
    return (
        f"Scatter plot of an embedding on axes {axis_label}1 and {axis_label}2. "
        f"Each class has a colour and a shape: {class_key(classes)}."
    )


def _axis(axis_label: str, i: int, low: float, high: float, size: str) -> dict:
    """Axis ``i`` at ``units_per_pixel``: its domain centred on [low, high], as wide as the
    chart's ``size`` signal ("width" or "height") at that scale."""
    name = f"{axis_label}{i + 1}"
    centre, half = (low + high) / 2, f"units_per_pixel * {size} / 2"
    domain = [{"expr": f"{centre!r} - {half}"}, {"expr": f"{centre!r} + {half}"}]
    return {
        "field": name,
        "type": "quantitative",
        "title": name,
        "scale": {"domain": domain, "nice": False, "zero": False},
    }


def _class_marks(classes: Sequence[str]) -> dict:
    """Colour and shape by class, in class order (``colours``), in one legend: Vega-Lite
    merges the two channels' legends when they share the field and the legend's settings."""
    domain = [str(c) for c in classes]
    # Above the plot, in rows: the plot keeps the column's width on a small screen.
    legend = {"title": None, "orient": "top", "direction": "horizontal", "columns": _legend_columns(classes)}
    shapes = [shape.vega for shape in class_shapes(len(classes))]
    return {
        "color": {"field": "class", "type": "nominal", "scale": {"domain": domain, "range": class_colors(len(classes))},
                  "legend": legend},
        "shape": {"field": "class", "type": "nominal", "scale": {"domain": domain, "range": shapes},
                  "legend": dict(legend)},
    }  # fmt: skip


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


def embedding_data(spec: dict, rows: pd.DataFrame) -> dict:
    """``embedding_spec``'s spec with its points as the named table ``POINTS``, beside any
    other table (its pictures): in Chromium a panel given its points as the chart's data and
    its pictures as a named table drew no points."""
    return {**spec, "data": {"name": POINTS}, "datasets": {**spec.get("datasets", {}), POINTS: rows}}


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
