"""Axis ranges for pictures of embeddings: padded to the data or to the bulk of it, widened
to a coarse grid, or settling while a run trains, and the height that draws them at one
scale on both axes.

A linear map of MNIST flings a few points far out; axes that covered them left the other
points a fifth of the plot. ``bulk_ranges`` and ``settled_ranges`` fit the axes to the
points with the farthest ``1 - BULK_SHARE`` of them left out on each axis; the charts draw
those few on the plot's edge (``edges``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "BULK_SHARE",
    "SettlingRanges",
    "bulk_box",
    "bulk_ranges",
    "padded_ranges",
    "picture_height",
    "settled_ranges",
    "steady_ranges",
]

BULK_SHARE = 0.99  # of the points, per axis, that the axes are fitted to


def padded_ranges(arrays: Sequence[np.ndarray], pad: float = 0.05) -> list[list[float]]:
    """Axis ranges covering every array (each (n, d)), padded, one [lo, hi] per dimension."""
    stacked = np.concatenate([np.asarray(a, dtype=np.float64) for a in arrays])
    finite = stacked[np.isfinite(stacked).all(1)]
    if len(finite) == 0:
        return [[-1.0, 1.0]] * stacked.shape[1]
    lo, hi = finite.min(0), finite.max(0)
    span = np.maximum(hi - lo, 1e-9)
    return [[float(a - pad * s), float(b + pad * s)] for a, b, s in zip(lo, hi, span)]


def bulk_box(points: np.ndarray, share: float = BULK_SHARE) -> tuple[np.ndarray, np.ndarray] | None:
    """(lowest, highest) coordinate per axis of the finite rows of ``points`` (n, d) once the
    lowest and highest ``(1 - share) / 2`` of them on that axis are left out, in whole
    points (of fewer than 200 points none is left out at 0.99); None without a finite row."""
    points = np.asarray(points, dtype=np.float64)
    finite = points[np.isfinite(points).all(1)]
    if len(finite) == 0:
        return None
    tail = (1.0 - share) / 2
    return np.quantile(finite, tail, axis=0, method="lower"), np.quantile(
        finite, 1 - tail, axis=0, method="higher"
    )


def bulk_ranges(
    arrays: Sequence[np.ndarray], pad: float = 0.05, share: float = BULK_SHARE
) -> list[list[float]]:
    """Axis ranges covering the bulk (``bulk_box``) of each array, padded by ``pad`` of their
    span on each side: the frames of a replay, or the panels drawn on one scale."""
    boxes = [box for box in (bulk_box(a, share) for a in arrays) if box is not None]
    if not boxes:
        return [[-1.0, 1.0]] * np.asarray(arrays[0]).shape[1]
    lo, hi = np.min([b[0] for b in boxes], axis=0), np.max([b[1] for b in boxes], axis=0)
    span = np.maximum(hi - lo, 1e-9)
    return [[float(a - pad * s), float(b + pad * s)] for a, b, s in zip(lo, hi, span)]


def _grid_step(span: float, steps: int = 4) -> float:
    """The largest 1, 2 or 5 times a power of ten that fits ``steps`` times into ``span``."""
    quarter = max(span / steps, 1e-12)
    power = 10.0 ** math.floor(math.log10(quarter))
    return max(m * power for m in (1, 2, 5) if m * power <= quarter)


def steady_ranges(arrays: Sequence[np.ndarray], pad: float = 0.05) -> list[list[float]]:
    """``padded_ranges`` widened outward to a coarse grid (four to ten steps per axis).

    While a run spreads out, these ranges change only when a point crosses a grid line, so
    a live chart keeps its axes for many frames instead of shifting a little on each one.
    """
    return [_on_grid(lo, hi, steps=4) for lo, hi in padded_ranges(arrays, pad)]


def settled_ranges(arrays: Sequence[np.ndarray], **options) -> list[list[float]]:
    """Axis ranges for a live picture of a run's frames (``arrays``, in order), that settle.

    The ranges are fitted to a frame's bulk (``bulk_box``: all but its farthest points,
    which the picture draws on its edge) with ``headroom`` (a share of its span on each side)
    and widened outward to a grid of about ten steps, then kept while later frames' bulk
    stays inside them, at least ``margin`` of their span from each edge (a point on the edge
    is drawn half cut off), and fills at least ``refit_below`` of them on some axis; a frame
    that comes nearer the edges, or shrinks well inside them, is fitted afresh. A run that
    keeps spreading moves its axes a few times, in steps, instead of at every grid line; one
    that first spreads and then gathers (the rings' noise axis) is not drawn small in the
    ranges of its widest frame. The same frames give the same ranges, so a picture redrawn
    from them keeps its axes. ``options``: ``headroom``, ``refit_below``, ``margin`` and
    ``share``, as ``SettlingRanges`` takes them, which gives the same ranges frame by frame.
    """
    return SettlingRanges(**options).ranges(list(arrays))


def _settle(current, frame, headroom: float, refit_below: float, margin: float, share: float):
    """``settled_ranges``' ranges once ``frame`` follows the frames that gave ``current``."""
    box = bulk_box(frame, share)
    lo, hi = box if box is not None else (np.full(2, -1.0), np.full(2, 1.0))
    if current is not None:
        low, high = np.asarray(current).T
        edge = margin * (high - low)
        inside = (lo >= low + edge).all() and (hi <= high - edge).all()
        if inside and ((hi - lo) / (high - low) >= refit_below).any():
            return current
    flat = np.where(hi > lo, 0.0, np.maximum(np.abs(lo), 1.0) / 2)  # one point: a unit or more around it
    lo, hi = lo - flat, hi + flat
    span = hi - lo
    return [_on_grid(a - headroom * s, b + headroom * s, steps=10) for a, b, s in zip(lo, hi, span)]


class SettlingRanges:
    """``settled_ranges`` of a growing list of frames, each frame looked at once.

    A live picture is redrawn up to ten times a second from every frame so far (hundreds);
    taking each frame's bulk at every redraw cost tens of milliseconds of the server's core
    per redraw late in a run. ``ranges(frames)`` goes on from the frames it has seen while
    they begin ``frames`` (the same objects, in order), and starts over when they do not
    (a buffer that thinned its frames)."""

    def __init__(
        self, headroom: float = 0.25, refit_below: float = 0.4, margin: float = 0.015, share: float = BULK_SHARE
    ):
        self._options = {"headroom": headroom, "refit_below": refit_below, "margin": margin, "share": share}
        self._seen: list = []
        self._current: list[list[float]] | None = None

    def ranges(self, frames: Sequence, points=lambda frame: frame) -> list[list[float]]:
        """The settled ranges of ``frames``; ``points(frame)`` gives a frame's (n, 2) points.
        ``frames`` may be a list another thread appends to: what it holds now is read once."""
        frames = list(frames)
        seen = len(self._seen)
        if seen > len(frames) or any(a is not b for a, b in zip(self._seen, frames[:seen])):
            self._seen, self._current, seen = [], None, 0
        for frame in frames[seen:]:
            self._current = _settle(self._current, points(frame), **self._options)
        self._seen = frames
        return self._current if self._current is not None else [[-1.0, 1.0], [-1.0, 1.0]]


def _on_grid(low: float, high: float, steps: int) -> list[float]:
    """[low, high] widened outward to multiples of ``_grid_step(high - low, steps)``."""
    step = _grid_step(high - low, steps)
    return [math.floor(low / step) * step, math.ceil(high / step) * step]


def picture_height(
    ranges: Sequence[Sequence[float]], width: int = 600, least: int = 300, most: int = 480
) -> int:
    """Pixels of height for a 2-D picture of ``ranges`` drawn ``width`` pixels wide at one
    scale on both axes, kept within [least, most]: a flat set (iris) gets a flat chart, not
    a thin band in a tall box, and a round one no more than fits a screen below the
    controls."""
    (x0, x1), (y0, y1) = ranges[0], ranges[1]
    if x1 <= x0:
        return most
    return int(min(most, max(least, round(width * (y1 - y0) / (x1 - x0)))))
