"""Axis ranges for pictures of embeddings: padded to the data, widened to a coarse grid, or
settling while a run trains, and the height that draws them at one scale on both axes."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["padded_ranges", "picture_height", "settled_ranges", "steady_ranges"]


def padded_ranges(arrays: Sequence[np.ndarray], pad: float = 0.05) -> list[list[float]]:
    """Axis ranges covering every array (each (n, d)), padded, one [lo, hi] per dimension."""
    stacked = np.concatenate([np.asarray(a, dtype=np.float64) for a in arrays])
    finite = stacked[np.isfinite(stacked).all(1)]
    if len(finite) == 0:
        return [[-1.0, 1.0]] * stacked.shape[1]
    lo, hi = finite.min(0), finite.max(0)
    span = np.maximum(hi - lo, 1e-9)
    return [[float(a - pad * s), float(b + pad * s)] for a, b, s in zip(lo, hi, span)]


def _grid_step(span: float) -> float:
    """The largest 1, 2 or 5 times a power of ten that fits four times into ``span``."""
    quarter = max(span / 4, 1e-12)
    power = 10.0 ** math.floor(math.log10(quarter))
    return max(m * power for m in (1, 2, 5) if m * power <= quarter)


def steady_ranges(arrays: Sequence[np.ndarray], pad: float = 0.05) -> list[list[float]]:
    """``padded_ranges`` widened outward to a coarse grid (four to ten steps per axis).

    While a run spreads out, these ranges change only when a point crosses a grid line, so
    a live chart keeps its axes for many frames instead of shifting a little on each one.
    """
    steady = []
    for lo, hi in padded_ranges(arrays, pad):
        step = _grid_step(hi - lo)
        steady.append([math.floor(lo / step) * step, math.ceil(hi / step) * step])
    return steady


def settled_ranges(
    arrays: Sequence[np.ndarray], headroom: float = 0.25, refit_below: float = 0.4, margin: float = 0.015
) -> list[list[float]]:
    """Axis ranges for a live picture of a run's frames (``arrays``, in order), that settle.

    The ranges are fitted to a frame with ``headroom`` (a share of its span on each side)
    and widened to ``steady_ranges``' grid, then kept while later frames stay inside them,
    at least ``margin`` of their span from each edge (a point on the edge is drawn half cut
    off), and fill at least ``refit_below`` of them on some axis; a frame that comes nearer
    the edges, or shrinks well inside them, is fitted afresh. A run that keeps spreading
    moves its axes a few times, in steps, instead of at every grid line; one that first
    spreads and then gathers (the rings' noise axis) is not drawn small in the ranges of
    its widest frame. The same frames give the same ranges, so a picture redrawn from them
    keeps its axes.
    """
    current: list[list[float]] | None = None
    for frame in arrays:
        lo, hi = np.asarray(padded_ranges([frame], pad=0.0)).T
        if current is not None:
            low, high = np.asarray(current).T
            edge = margin * (high - low)
            inside = (lo >= low + edge).all() and (hi <= high - edge).all()
            if inside and ((hi - lo) / (high - low) >= refit_below).any():
                continue
        flat = np.where(hi > lo, 0.0, np.maximum(np.abs(lo), 1.0) / 2)  # one point: a unit or more around it
        lo, hi = lo - flat, hi + flat
        span = hi - lo
        current = steady_ranges([np.stack([lo - headroom * span, hi + headroom * span])], pad=0.0)
    return current if current is not None else [[-1.0, 1.0], [-1.0, 1.0]]


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
