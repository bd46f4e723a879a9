"""Points past the edge of a Vega-Lite scatter, drawn on the edge.

The charts' axes follow the bulk of the points (``axes.bulk_ranges``, ``axes.settled_ranges``),
so a few far points lie outside them. Each is drawn on the plot's edge where a line from the
middle of the plot to it leaves, as a small open arrowhead in its class's colour pointing the
way to it; its tooltip says where it lies.

In a Vega-Lite chart the browser decides which rows those are from the chart's signals (the
rows outside the axes' domains as first drawn), and where each marker goes from the scales
as it is drawn, in pixels: a zoom or a pan moves the markers to the new edges, and a point
the view reaches again is drawn as a point, its marker hidden. (Vega runs a data transform
that reads the scales' domains before they have settled: the positions are worked out in
the encoding instead.) A Plotly figure (the replay) draws the rows that ``edge_points``
finds for its fixed ranges.
"""

from __future__ import annotations

import numpy as np

__all__ = ["EDGE_MARKER", "beyond_layer", "edge_points", "with_edges"]

# An arrowhead, its tip up before it is turned towards its point: a turned equilateral
# triangle shows no one tip, and read as pointing elsewhere.
EDGE_MARKER = "M0,-1L0.7,0.7L0,0.25L-0.7,0.7Z"
INSET_PIXELS = 7  # a marker's centre this far inside the edge, so that all of it shows
MARKER_OPACITY = 0.9

# On screen, in pixels from the plot's middle (y grows downwards), where each row lies:
_DX = "(scale('x', datum.z1) - width / 2)"
_DY = "(scale('y', datum.z2) - height / 2)"
# the share of the way to it at which the line from the middle meets the inset edge
_SHARE = (
    f"min((width / 2 - {INSET_PIXELS}) / max(abs({_DX}), 1e-9), "
    f"(height / 2 - {INSET_PIXELS}) / max(abs({_DY}), 1e-9))"
)
_ON_SCREEN = f"abs({_DX}) <= width / 2 && abs({_DY}) <= height / 2"


def _outside(ranges: list[list[float]]) -> str:
    """A filter keeping the rows outside the axes drawn for ``ranges`` (each domain centred on
    its range, ``units_per_pixel`` times the plot's size wide: see ``live_charts``)."""
    (x0, x1), (y0, y1) = ([float(v) for v in r] for r in ranges[:2])
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return (
        f"isFinite(datum.z1) && isFinite(datum.z2) && "
        f"(abs(datum.z1 - {cx!r}) > units_per_pixel * width / 2 || "
        f"abs(datum.z2 - {cy!r}) > units_per_pixel * height / 2)"
    )


def beyond_layer(points: dict, ranges: list[list[float]], area: int) -> dict:
    """A layer that draws the rows of ``points`` (a layer or a single-view spec of points on
    fields "z1" and "z2", with the ``units_per_pixel`` param of ``live_charts.embedding_spec``
    for ``ranges``) that lie outside the plot, on its edge (see the module docstring).

    It keeps the points' data and colour encodings (a faded point stays faded) and takes no
    clicks or selections."""
    encoding = points["encoding"]
    marker = {
        "type": "point", "shape": EDGE_MARKER, "filled": False, "strokeWidth": 1.5, "size": 1.5 * area,
        "clip": True,
    }  # fmt: skip
    faded = encoding.get("opacity", {}).get("value")  # a brushing chart's unchosen points
    shown = f"datum.chosen ? {MARKER_OPACITY} : {faded}" if faded is not None else str(MARKER_OPACITY)
    layer = {
        "transform": [{"filter": _outside(ranges)}],
        "mark": marker,
        "encoding": {
            "x": {"value": {"expr": f"width / 2 + min({_SHARE}, 1) * {_DX}"}},
            "y": {"value": {"expr": f"height / 2 + min({_SHARE}, 1) * {_DY}"}},
            "color": encoding["color"],
            "opacity": {"value": {"expr": f"{_ON_SCREEN} ? 0 : ({shown})"}},
            "angle": {"value": {"expr": f"atan2({_DX}, -{_DY}) * 180 / PI"}},  # clockwise from up
            "tooltip": [
                {"field": "class", "type": "nominal"},
                {"field": "z1", "type": "quantitative", "title": "beyond the edge, at z1", "format": ".4g"},
                {"field": "z2", "type": "quantitative", "title": "z2", "format": ".4g"},
            ],
        },
    }
    return {"data": points["data"], **layer} if "data" in points else layer


def with_edges(single: dict, ranges: list[list[float]], area: int) -> dict:
    """``single`` (a single-view spec of ``live_charts.embedding_spec`` for ``ranges``) as two
    layers: its points, then ``beyond_layer``. Its data, transforms, encoding and
    ``units_per_pixel`` stay at the top, shared by both layers (as the spec's tests and
    tables find them); its mark and selections go to the points' layer, so that a click or a
    box selects points and never an edge marker."""
    selections = [param for param in single["params"] if "select" in param]
    layered = {key: value for key, value in single.items() if key != "mark"}
    layered["params"] = [param for param in single["params"] if "select" not in param]
    points = {"mark": single["mark"], "params": selections}
    return {**layered, "layer": [points, beyond_layer(single, ranges, area)]}


def edge_points(
    Z: np.ndarray, ranges: list[list[float]], inset: float = 0.015
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For a picture of ``Z`` (first two columns) drawn on exactly ``ranges``: the finite
    rows outside them, where each is drawn (on the line from the middle of the ranges to it,
    ``inset`` of their span inside the edge) and its heading (degrees clockwise from up,
    towards the row)."""
    Z = np.asarray(Z, dtype=np.float64)[:, :2]
    (x0, x1), (y0, y1) = ranges[0], ranges[1]
    finite = np.isfinite(Z).all(1)
    outside = finite & ((Z[:, 0] < x0) | (Z[:, 0] > x1) | (Z[:, 1] < y0) | (Z[:, 1] > y1))
    rows = np.flatnonzero(outside)
    middle = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
    reach = np.array([x1 - x0, y1 - y0]) * (0.5 - inset)
    away = Z[rows] - middle
    share = np.min(reach / np.maximum(np.abs(away), 1e-300), axis=1, initial=1.0)
    headings = np.degrees(np.arctan2(away[:, 0], away[:, 1]))
    return rows, middle + share[:, None] * away, headings
