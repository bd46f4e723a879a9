"""k-NN decision regions of a 2-D embedding as one picture to lay behind its points.

Each pixel of the picture is coloured by the class its k nearest points vote for, as a
k-NN classifier in the embedding would (the picture of scikit-learn's "nearest neighbours
with and without NCA" example). One small PNG travels to the browser instead of a grid of
thousands of cells, and it covers the whole plot however wide the browser draws it
(``region_box``). Encoded by Pillow (the app extra's imaging package, as for ``gif``).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import numpy as np
from PIL import Image

from .colours import class_colors

__all__ = ["RegionPicture", "decision_regions", "region_box"]

# The widths, in pixels, a picture may be drawn at: a narrow column to a projector's width.
DRAWN_WIDTHS = (300, 1600)


def region_box(
    ranges: Sequence[Sequence[float]], heights: Sequence[int], widths: Sequence[int] = DRAWN_WIDTHS
) -> list[list[float]]:
    """The area a chart of ``ranges`` at one scale on both axes, any of ``heights`` pixels
    tall and any of ``widths`` wide, can show: the ranges widened about their centres so
    that regions drawn over it reach every edge of the plot."""
    (x0, x1), (y0, y1) = ranges[0], ranges[1]
    x_span = max(x1 - x0, (y1 - y0) * max(widths) / min(heights))
    y_span = max(y1 - y0, (x1 - x0) * max(heights) / min(widths))
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return [[cx - x_span / 2, cx + x_span / 2], [cy - y_span / 2, cy + y_span / 2]]


class RegionPicture:
    """Decision regions over ``box``: ``votes`` (rows from the top of the box down, one
    class index per pixel) and ``url``, the picture as a PNG data URL in class colours."""

    def __init__(self, votes: np.ndarray, box: list[list[float]], n_classes: int):
        self.votes, self.box = votes, box
        colours = np.array(
            [[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in class_colors(n_classes)], np.uint8
        )
        buffer = io.BytesIO()
        Image.fromarray(colours[votes], "RGB").save(buffer, "PNG", optimize=True)
        self.url = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def decision_regions(
    Z: np.ndarray, y: np.ndarray, n_classes: int, box: list[list[float]], *, k: int = 5, pixels: int = 120_000
) -> RegionPicture | None:
    """The k-NN vote of the points ``Z`` (first two columns) labelled ``y`` at about
    ``pixels`` square cells over ``box`` (see ``region_box``). Points with a NaN or an
    infinity do not vote; None when no point is finite."""
    from ..search.knn import knn_predict

    (x0, x1), (y0, y1) = box
    cell = np.sqrt((x1 - x0) * (y1 - y0) / pixels)
    columns, rows = (max(2, int(round(span / cell))) for span in (x1 - x0, y1 - y0))
    xs = x0 + (np.arange(columns) + 0.5) * (x1 - x0) / columns  # cell centres
    ys = y1 - (np.arange(rows) + 0.5) * (y1 - y0) / rows  # top row first, as a picture is stored
    grid = np.stack(np.meshgrid(xs, ys), -1).reshape(-1, 2)
    Z = np.asarray(Z, dtype=np.float64)[:, :2]
    finite = np.isfinite(Z).all(1)
    if not finite.any():
        return None
    votes = knn_predict(grid, Z[finite], np.asarray(y)[finite], k=k, index="exact")
    return RegionPicture(votes.reshape(rows, columns).astype(np.intp), box, n_classes)
