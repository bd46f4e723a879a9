"""Epochs side by side as one PNG for slides: the grid of ``epoch_grid``, drawn with Pillow.
``panels_png`` draws any maps of the same points the same way (PCA, LDA and NCA).

A slide takes a picture file, not a chart, so the panels are drawn here as the replay's GIF
draws its frames (``gif``): the same class colours and shapes, one scale on both axes. All
panels share that scale and the same axes, so a map that grows is seen growing; each
panel names its epoch and its k-NN accuracy, and one legend names the classes. A 3-D run
is drawn face-on, as in the GIF.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from ..training.loop import Snapshot
from ..util.formatting import percent
from .axes import _grid_step, bulk_ranges
from .colours import class_colors, class_shapes
from .gif import _INK, _MUTED, _PAPER, _fit, _fitted, _font, _marker, _planar, _rgb, _tick_text, _ticks

__all__ = ["GridLayout", "epoch_grid_png", "grid_layout", "panel_caption", "panels_png"]

_GRID = (225, 225, 225)


@dataclass(frozen=True)
class GridLayout:
    """Where a grid's parts go, in pixels: ``boxes`` are the panels' plot areas (left, top,
    right, bottom), row by row; ``legend_top`` is where the legend's rows start."""

    size: tuple[int, int]
    unit: float
    boxes: tuple[tuple[int, int, int, int], ...]
    legend_top: int
    legend_rows: int


def grid_layout(
    n_panels: int, classes: Sequence[str], *, columns: int = 3, width: int = 1600, gap: float = 40
) -> GridLayout:
    """The layout of a grid of ``n_panels`` square panels, ``columns`` a row, ``width``
    pixels wide, ``gap`` (of 1600) between them, with a legend of ``classes`` below them."""
    if n_panels < 1:
        raise ValueError("no frames to show")
    columns = max(1, min(columns, n_panels))
    u = width / 1600
    left, right, top, gap_x, gap_y = 70 * u, 30 * u, 80 * u, gap * u, 90 * u
    side = (width - left - right - gap_x * (columns - 1)) / columns
    boxes = []
    for i in range(n_panels):
        row, col = divmod(i, columns)
        x0, y0 = left + col * (side + gap_x), top + 44 * u + row * (side + gap_y)
        boxes.append((round(x0), round(y0), round(x0 + side), round(y0 + side)))
    legend_top = round(boxes[-1][3] + 50 * u)
    per_row = _legend_per_row(classes, width, u)
    legend_rows = -(-len(classes) // per_row) if classes else 0
    height = round(legend_top + (legend_rows + 0.5) * 40 * u + 20 * u)
    return GridLayout((width, height), u, tuple(boxes), legend_top, legend_rows)


def _legend_per_row(classes: Sequence[str], width: int, u: float) -> int:
    longest = max((_font(26 * u).getlength(str(c)) for c in classes), default=0)
    return max(1, int((width - 100 * u) // (longest + 70 * u)))


def epoch_grid_png(
    frames: Sequence[Snapshot],
    y: np.ndarray,
    classes: Sequence[str],
    *,
    columns: int = 3,
    title: str = "",
    k: int | None = None,
    width: int = 1600,
) -> bytes:
    """A PNG of ``frames`` (``epoch_grid.chosen_frames``) side by side on one scale.

    Parameters
    ----------
    frames : the snapshots to draw, in order; embeddings of shape (n, d), d >= 2
    y : ndarray of shape (n,), class indices into ``classes``
    columns : panels a row
    title : the run's name, above the panels
    k : names each panel's accuracy ("test 5-NN 93%")
    width : in pixels; the height follows from the rows and the legend

    Returns
    -------
    bytes : the PNG file
    """
    if not frames:
        raise ValueError("no frames to show")
    captions = [panel_caption(frame, k) for frame in frames]
    return panels_png([f.embedding for f in frames], y, classes, captions, columns=columns, title=title, width=width)


def panels_png(
    embeddings: Sequence[np.ndarray],
    y: np.ndarray,
    classes: Sequence[str],
    captions: Sequence[str],
    *,
    columns: int = 3,
    title: str = "",
    width: int = 1600,
    one_scale: bool = True,
) -> bytes:
    """A PNG of several maps of the same points side by side on one scale, each under its
    caption (an epoch of a run, or PCA, LDA and NCA), with one legend of the classes.
    With ``one_scale=False`` each panel has its own scale and tick values (a network's map
    beside a linear one's, ten times wider); within a panel both axes always share one.

    Parameters
    ----------
    embeddings : arrays of shape (n, d), d >= 2, the same n points in each
    y : ndarray of shape (n,), class indices into ``classes``
    captions : one a panel, above it
    columns : panels a row
    title : above the panels
    width : in pixels; the height follows from the rows and the legend
    one_scale : the same scale in every panel

    Returns
    -------
    bytes : the PNG file
    """
    if not embeddings:
        raise ValueError("no frames to show")
    if len(captions) != len(embeddings):
        raise ValueError(f"{len(embeddings)} panels and {len(captions)} captions")
    if np.asarray(embeddings[0]).shape[1] < 2:
        raise ValueError("a grid of epochs needs embeddings of at least 2 dimensions")
    planar, _ = _planar([np.asarray(Z, dtype=np.float64) for Z in embeddings])
    layout = grid_layout(len(planar), classes, columns=columns, width=width, gap=40 if one_scale else 90)
    shared = _fit(bulk_ranges(planar), layout.boxes[0])  # one scale: every box is the same size
    image = Image.new("RGB", layout.size, _PAPER)
    draw = ImageDraw.Draw(image)
    u = layout.unit
    if title:
        draw.text((30 * u, 20 * u), _fitted(title, _font(34 * u), width - 60 * u), fill=_INK, font=_font(34 * u))
    labels = np.asarray(y)
    order = np.random.default_rng(0).permutation(len(labels))  # no class always on top
    marks = list(zip([_rgb(c) for c in class_colors(len(classes))], class_shapes(len(classes))))
    columns = max(1, min(columns, len(planar)))
    for i, (caption, Z, box) in enumerate(zip(captions, planar, layout.boxes)):
        outer_left, bottom_row = i % columns == 0 or not one_scale, i + columns >= len(planar) or not one_scale
        origin, scale = shared if one_scale else _fit(bulk_ranges([Z]), box)
        _panel_axes(draw, box, origin, scale, u, ticks_left=outer_left, ticks_below=bottom_row)
        caption = _fitted(caption, _font(26 * u), box[2] - box[0])
        draw.text((box[0], box[1] - 10 * u), caption, fill=_INK, font=_font(26 * u), anchor="ld")
        _panel_points(draw, box, origin, scale, Z[order], labels[order], marks, u)
    _legend(draw, layout, classes)
    buffer = io.BytesIO()
    image.save(buffer, "PNG", optimize=True)
    return buffer.getvalue()


def panel_caption(frame: Snapshot, k: int | None = None) -> str:
    """A panel's epoch and k-NN accuracy: the test set's where measured, else leave-one-out."""
    label = "start" if frame.epoch == 0 else f"epoch {frame.epoch}"
    if frame.fraction < 1.0:
        label += f" ({frame.fraction:.0%} through)"
    neighbours = f"{k}-NN" if k else "kNN"
    if frame.test_accuracy is not None:
        return f"{label} · test {neighbours} {percent(frame.test_accuracy)}"
    if frame.train_accuracy is not None:
        return f"{label} · leave-one-out {neighbours} {percent(frame.train_accuracy)}"
    return label


def _panel_axes(draw, box, origin, scale, u, *, ticks_left: bool, ticks_below: bool) -> None:
    """Grid lines at one step on both axes (the same in every panel), tick values on the
    grid's outer edges only: every panel shares them."""
    left, top, right, bottom = box
    x0, y0 = origin
    x1, y1 = x0 + (right - left) / scale, y0 + (bottom - top) / scale
    step = _grid_step(min(x1 - x0, y1 - y0))
    font = _font(20 * u)
    for value in _ticks(x0, x1, step):
        x = left + (value - x0) * scale
        draw.line([(x, top), (x, bottom)], fill=_GRID)
        if ticks_below:
            draw.text((x, bottom + 6 * u), _tick_text(value, step), fill=_MUTED, font=font, anchor="mt")
    for value in _ticks(y0, y1, step):
        y = bottom - (value - y0) * scale
        draw.line([(left, y), (right, y)], fill=_GRID)
        if ticks_left:
            draw.text((left - 6 * u, y), _tick_text(value, step), fill=_MUTED, font=font, anchor="rm")
    draw.rectangle(box, outline=_MUTED)


def _panel_points(draw, box, origin, scale, Z, labels, marks, u) -> None:
    """Each point in its class's colour and shape with a white rim; points off the panel
    (the few past the bulk, and non-finite ones) are left out."""
    left, top, right, bottom = box
    n = len(labels)
    r = u * (8 if n <= 300 else 6.5 if n <= 1500 else 5.5)
    x = left + (Z[:, 0] - origin[0]) * scale
    y = bottom - (Z[:, 1] - origin[1]) * scale
    inside = (x >= left + r) & (x <= right - r) & (y >= top + r) & (y <= bottom - r)
    for px, py, c in zip(x[inside], y[inside], labels[inside]):
        _marker(draw, marks[c][1], px, py, r, marks[c][0], _PAPER)


def _legend(draw, layout: GridLayout, classes: Sequence[str]) -> None:
    """Each class's marker and name in rows under the panels, in class order."""
    u = layout.unit
    per_row = _legend_per_row(classes, layout.size[0], u)
    column = (layout.size[0] - 100 * u) / per_row
    font = _font(26 * u)
    for i, (name, color, shape) in enumerate(zip(classes, class_colors(len(classes)), class_shapes(len(classes)))):
        row, col = divmod(i, per_row)
        x, y = 70 * u + col * column, layout.legend_top + (row + 0.5) * 40 * u
        _marker(draw, shape, x, y, 11 * u, _rgb(color), _PAPER)
        draw.text((x + 22 * u, y), str(name), fill=_INK, font=font, anchor="lm")
