"""The Train page's 2-D picture as one Vega-Lite chart, the same spec while a run trains
and after it ends: decision regions, the points, lines from a clicked point to the points
it picks, and rings, each layer fed by a table of its own (see ``live_charts`` for why the
spec stays the same).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..runs.picks import Picks
from .colours import OTHER_CLASS_LINE, SAME_CLASS_LINE
from .edges import beyond_layer
from .figures import LINK_MIN_PROBABILITY, link_widths
from .live_charts import (
    _PICTURE_LOOKUP,
    _PICTURE_TOOLTIP,
    PICK,
    POINT_AREA,
    POINTS,
    THUMBNAILS,
    embedding_rows,
    embedding_spec,
)

__all__ = ["link_rows", "picked_row", "picture_data", "picture_spec", "region_rows"]

# The named tables of the picture's other layers.
LINKS, ANCHOR, REGIONS = "links", "anchor", "regions"
REGION_OPACITY = 0.22


def picture_spec(
    classes: Sequence[str],
    ranges: list[list[float]],
    *,
    height: int = 520,
    thumbnails: pd.DataFrame | None = None,
    inputs: Sequence[str] = (),
    point_area: int = POINT_AREA,
    description: str | None = None,
    class_names: bool = False,
) -> dict:
    """The Train page's 2-D picture, the same spec while a run trains and after it ends.

    Five layers on the axes of ``embedding_spec``, each fed by a named table
    (``picture_data``): decision regions as one picture (``REGIONS``, ``region_rows``),
    lines from a clicked point to its likeliest picks, as wide as p_ij, under the points (so
    that the points stay in sight where the lines meet), and over them a ring on each pick
    (``LINKS``, ``link_rows``; a point mostly picks its nearest few, whose lines the points
    hide) and a ring on the clicked one (``ANCHOR``).
    A layer with no rows draws nothing, so showing regions or lines changes only the
    tables, and the browser keeps the chart. A click on a point fills the ``PICK``
    selection with its "row" in the points table (``picked_row``). ``thumbnails``
    (``thumbnail_rows``): each point's picture in its tooltip, a table of its own that
    stays the same from frame to frame (vega-tooltip shows a field named "image" holding a
    URL as a picture). ``inputs``: names of input features whose values the tooltips show,
    from the rows' "input 1", "input 2", ... columns (``picture_rows``). ``description``:
    what a screen reader reads for it (``descriptions.embedding_description``); it holds
    from the first frame to the last, as the spec does, so the run's epoch and accuracy are
    left to the page's words. ``class_names``: each class's name drawn at the centre (mean)
    of its points in the current frame, dark on a white halo so it reads over the points.
    """
    single = embedding_spec(classes, ranges, height=height, description=description)
    per_pixel, zoom = single["params"]
    x, y = single["encoding"]["x"], single["encoding"]["y"]
    points = _points_layer(single, zoom, point_area, inputs, thumbnails is not None)
    layers = [
        _regions_layer(x, y),
        _links_layer(x, y),
        points,
        beyond_layer(points, ranges, point_area),
        _picked_layer(x, y, point_area),
        _ring_layer(x, y, point_area),
        *(_class_name_layers(x, y) if class_names else []),
    ]
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


# A class name's type on the picture (pixels) and its halo's width
NAME_SIZE, NAME_HALO = 24, 6


def _class_name_layers(x: dict, y: dict) -> list[dict]:
    """Each class's name at the mean of its points in the frame shown: a white halo, then
    the name over it (Vega strokes a text over its fill, so the halo is a layer of its own)."""
    centres = [{"aggregate": [{"op": "mean", "field": "z1", "as": "z1"}, {"op": "mean", "field": "z2", "as": "z2"}],
                "groupby": ["class"]}]  # fmt: skip
    text = {"type": "text", "fontSize": NAME_SIZE, "fontWeight": "bold", "clip": True}
    encoding = {"x": x, "y": y, "text": {"field": "class", "type": "nominal"}}
    halo = {**text, "stroke": "white", "strokeWidth": NAME_HALO, "strokeJoin": "round", "fill": "white"}
    return [
        {"data": {"name": POINTS}, "transform": centres, "mark": halo, "encoding": encoding},
        {"data": {"name": POINTS}, "transform": centres, "mark": {**text, "fill": "#1A1A1A"}, "encoding": encoding},
    ]


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
    picks neighbours so near that the anchor's ring would hide their lines, not the points.

    A ring whose point lies inside the anchor's ring on screen is not drawn: on a dense set
    (3,000 of MNIST's digits) the likeliest picks sit within a pixel or two, where their
    rings would thicken the anchor's into one dark disk. Zoomed in, they come back."""
    encoding = {
        "x": x, "y": y,
        "strokeWidth": {"field": "ring", "type": "quantitative", "scale": None, "legend": None},
        "color": _LINK_COLOUR,
        "opacity": {"value": {"expr": f"{_PIXELS_FROM_ANCHOR} < {_ring_radius(area)!r} ? 0 : 0.9"}},
        "tooltip": _P_TOOLTIP,
    }  # fmt: skip
    at_ends = [{"calculate": "datum.z1", "as": "anchor_z1"}, {"calculate": "datum.z2", "as": "anchor_z2"},
               {"calculate": "datum.z1_end", "as": "z1"}, {"calculate": "datum.z2_end", "as": "z2"},
               {"calculate": "1 + datum.width / 8", "as": "ring"}]  # fmt: skip
    mark = {"type": "point", "filled": False, "size": 3 * area, "clip": True}
    return {"data": {"name": LINKS}, "transform": at_ends, "mark": mark, "encoding": encoding}


# How far a picked point lies from the anchor on screen, in pixels, at the current zoom.
_PIXELS_FROM_ANCHOR = (
    "sqrt(pow(scale('x', datum.z1) - scale('x', datum.anchor_z1), 2) + "
    "pow(scale('y', datum.z2) - scale('y', datum.anchor_z2), 2))"
)
_RING_AREA = 6  # the anchor's ring, in point areas


def _ring_radius(area: int) -> float:
    """The anchor's ring's radius in pixels (a Vega symbol's size is its area)."""
    return round(math.sqrt(_RING_AREA * area / math.pi), 2)


def _ring_layer(x: dict, y: dict, area: int) -> dict:
    # Opaque: at Vega-Lite's default 0.7 for points the black ring was a grey one, faint
    # beside the darker class colours.
    mark = {"type": "point", "filled": False, "color": "black", "opacity": 1, "size": _RING_AREA * area, "strokeWidth": 2.5}
    return {"data": {"name": ANCHOR}, "mark": mark, "encoding": {"x": x, "y": y}}


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


def link_rows(Z: np.ndarray, picks: Picks, *, least: float = LINK_MIN_PROBABILITY) -> pd.DataFrame:
    """Lines from ``picks.anchor`` to its likeliest picks (``picks.rows``, at most
    ``runs.picks.SHOWN``) with p_ij of at least ``least``, as wide as ``figures.link_widths`` (the
    How NCA works page's), and whether each j shares the anchor's class ("same").

    Z : array of shape (n, 2+), the drawn embedding; lines join its first two coordinates.
    """
    Z = np.asarray(Z, dtype=np.float64)
    p = picks.strongest
    kept = p >= least
    rows, p = picks.rows[kept], p[kept]
    return pd.DataFrame({
        "z1": Z[picks.anchor, 0], "z2": Z[picks.anchor, 1], "z1_end": Z[rows, 0], "z2_end": Z[rows, 1],
        "p": p, "width": link_widths(p), "same": picks.same[kept],
    }, columns=_COLUMNS[LINKS])  # fmt: skip


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
    row = picked[0] if picked else None
    return int(row) if isinstance(row, int | float) and math.isfinite(row) else None  # not a crafted "x"
