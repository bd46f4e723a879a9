"""An animated GIF of a run's replay, for slides: frames drawn with Pillow, no browser.

A slide deck plays a GIF anywhere, with no Plotly and no network, so each frame is drawn
here: the embedding at one scale on both axes (a distance-based picture must not be
stretched), axes that stay put from the first frame to the last, a class legend, and a
title naming the run with the frame's epoch. Colours and shapes are ``colours``', so a
class looks the same as in the app. A 3-D run is drawn face-on: every frame is projected
onto the plane of the last frame's two directions of largest spread (one fixed
projection, so the motion is the training's, not a turning camera). Past three
dimensions the first two coordinates are drawn, as in the app. Needs Pillow, which comes
with the ``app`` extra.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..training.loop import Snapshot
from ..util.formatting import percent
from .axes import _grid_step, steady_ranges
from .colours import Shape, class_colors, class_shapes
from .replay import _evenly_spaced, epoch_label, frames_to_show

__all__ = ["replay_gif"]

# Frame timing: the start is held so an audience sees the mixed classes, the end longer
# still; the frames between come fast enough to read as motion.
FIRST_FRAME_MS = 1200
LAST_FRAME_MS = 3000
FRAME_MS = 150

_INK, _MUTED, _GRID, _PAPER = (34, 34, 34), (96, 96, 96), (228, 228, 228), (255, 255, 255)


def replay_gif(
    snapshots: Sequence[Snapshot],
    y: np.ndarray,
    classes: Sequence[str],
    *,
    title: str = "",
    total_epochs: int | None = None,
    k: int | None = None,
    max_frames: int = 60,
    max_points: int = 2000,
    width: int = 800,
    frame_ms: int = FRAME_MS,
) -> bytes:
    """A looping GIF of the run, one frame per chosen snapshot.

    Parameters
    ----------
    snapshots : the run's snapshots in order; at most ``max_frames`` evenly spaced ones are
        drawn, always the first and the last
    y : ndarray of shape (n,), class indices into ``classes`` of the snapshots' points
    title : the run's name, the first line of every frame
    total_epochs : shown as "epoch 12 of 40"
    k : names the accuracy shown ("test 5-NN accuracy")
    max_points : at most this many evenly spaced points are drawn
    width : in pixels; the height is three quarters of it

    Returns
    -------
    bytes : the GIF file
    """
    if not snapshots:
        raise ValueError("replay_gif needs at least one snapshot")
    chosen = [snapshots[i] for i in frames_to_show(snapshots, max_frames)]
    points = _evenly_spaced(len(y), max_points)
    labels = np.asarray(y)[points]
    embeddings, axis_names = _planar([np.asarray(s.embedding, dtype=np.float64)[points] for s in chosen])
    layout = _Layout.make(width, classes, steady_ranges(embeddings), axis_names)
    base = _background(layout, classes)
    order = np.random.default_rng(0).permutation(len(labels))  # no class always on top
    colors = [_rgb(c) for c in class_colors(len(classes))]
    marks = list(zip(colors, class_shapes(len(classes))))
    captions = _captions(chosen, total_epochs, k)
    frames = [
        _frame(base, layout, title, caption, Z[order], labels[order], marks, s)
        for Z, caption, s in zip(embeddings, captions, _progress(chosen, total_epochs))
    ]
    durations = [frame_ms] * len(frames)
    durations[0], durations[-1] = FIRST_FRAME_MS, LAST_FRAME_MS
    return _encode(frames, durations, colors)


def _planar(embeddings: list[np.ndarray]) -> tuple[list[np.ndarray], tuple[str, str]]:
    """Two columns per frame, and the names of the axes they stand for."""
    dims = embeddings[0].shape[1]
    if dims == 2:
        return embeddings, ("z1", "z2")
    if dims > 3:
        return [Z[:, :2] for Z in embeddings], ("z1", f"z2   (first 2 of d = {dims} coordinates)")
    last = embeddings[-1][:, :3]
    last = last[np.isfinite(last).all(1)]
    centre = last.mean(0) if len(last) else np.zeros(3)
    _, _, vt = np.linalg.svd(last - centre, full_matrices=False)
    plane = vt[:2] * np.sign(vt[:2, np.abs(vt[:2]).argmax(1)].diagonal())[:, None]  # fixed signs
    flat = [(Z[:, :3] - centre) @ plane.T for Z in embeddings]
    return flat, ("u1", "u2   (the 3-D embedding seen face-on)")


def _rgb(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i : i + 2], 16) for i in (1, 3, 5))


def _font(size: float) -> ImageFont.FreeTypeFont:
    """Pillow's bundled font (Latin letters, digits and common signs): the same on every
    machine, with no font files to find."""
    return ImageFont.load_default(size=max(8, round(size)))


@dataclass(frozen=True)
class _Layout:
    """Where things go on a frame, in pixels, and the one data-to-pixel scale.

    ``box`` is the plot area (left, top, right, bottom); ``origin`` the data point at its
    bottom-left corner; ``scale`` pixels per data unit on both axes.
    """

    size: tuple[int, int]
    unit: float  # pixels per "point" of type: everything scales with the width
    box: tuple[int, int, int, int]
    origin: tuple[float, float]
    scale: float
    axis_names: tuple[str, str]
    legend_x: int

    @classmethod
    def make(cls, width, classes, ranges, axis_names) -> _Layout:
        unit = width / 800
        height = round(width * 3 / 4)
        font = _font(17 * unit)
        legend_width = min(230 * unit, max(font.getlength(str(c)) for c in classes) + 44 * unit)
        box = (
            round(64 * unit),
            round(116 * unit),
            round(width - legend_width - 24 * unit),
            round(height - 58 * unit),
        )
        origin, scale = _fit(ranges, box)
        return cls((width, height), unit, box, origin, scale, axis_names, round(box[2] + 20 * unit))

    def pixels(self, Z: np.ndarray) -> np.ndarray:
        """(n, 2) data coordinates to pixel centres; y grows upwards in data, down in pixels."""
        x = self.box[0] + (Z[:, 0] - self.origin[0]) * self.scale
        y = self.box[3] - (Z[:, 1] - self.origin[1]) * self.scale
        return np.stack([x, y], 1)


def _fit(ranges: list[list[float]], box: tuple[int, int, int, int]) -> tuple[tuple[float, float], float]:
    """The bottom-left data corner and the single scale that fit both ranges into ``box``:
    the tighter axis sets the scale and the other range widens about its centre."""
    (x0, x1), (y0, y1) = ranges[:2]
    width, height = box[2] - box[0], box[3] - box[1]
    scale = min(width / max(x1 - x0, 1e-12), height / max(y1 - y0, 1e-12))
    return ((x0 + x1 - width / scale) / 2, (y0 + y1 - height / scale) / 2), scale


def _ticks(low: float, high: float, step: float) -> list[float]:
    first = math.ceil(low / step - 1e-9)
    return [i * step for i in range(first, math.floor(high / step + 1e-9) + 1)]


def _tick_text(value: float, step: float) -> str:
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    text = f"{value:.{decimals}f}"
    return "0" if float(text) == 0 else text


def _background(layout: _Layout, classes: Sequence[str]) -> Image.Image:
    """What every frame shares: grid, ticks, axis names and the legend."""
    image = Image.new("RGB", layout.size, _PAPER)
    draw = ImageDraw.Draw(image)
    _axes(draw, layout)
    _legend(draw, layout, classes)
    return image


def _axes(draw: ImageDraw.ImageDraw, layout: _Layout) -> None:
    left, top, right, bottom = layout.box
    u, font = layout.unit, _font(15 * layout.unit)
    x0, y0 = layout.origin
    x1, y1 = x0 + (right - left) / layout.scale, y0 + (bottom - top) / layout.scale
    step = _grid_step(min(x1 - x0, y1 - y0))  # one step on both axes: equal units read as equal
    for value in _ticks(x0, x1, step):
        x = left + (value - x0) * layout.scale
        draw.line([(x, top), (x, bottom)], fill=_GRID)
        draw.text((x, bottom + 6 * u), _tick_text(value, step), fill=_MUTED, font=font, anchor="mt")
    for value in _ticks(y0, y1, step):
        y = bottom - (value - y0) * layout.scale
        draw.line([(left, y), (right, y)], fill=_GRID)
        draw.text((left - 6 * u, y), _tick_text(value, step), fill=_MUTED, font=font, anchor="rm")
    draw.rectangle(layout.box, outline=_MUTED)
    names = _font(17 * u)
    draw.text(((left + right) / 2, bottom + 30 * u), layout.axis_names[0], fill=_INK, font=names, anchor="mt")
    draw.text((left, top - 10 * u), layout.axis_names[1], fill=_INK, font=names, anchor="ld")


def _legend(draw: ImageDraw.ImageDraw, layout: _Layout, classes: Sequence[str]) -> None:
    """Each class's marker and name, in class order, beside the plot."""
    u, top, bottom = layout.unit, layout.box[1], layout.box[3]
    font = _font(17 * u)
    draw.text((layout.legend_x, top), "class", fill=_MUTED, font=font, anchor="lt")
    row = min(28 * u, (bottom - top - 30 * u) / max(len(classes), 1))
    styles = zip(classes, class_colors(len(classes)), class_shapes(len(classes)))
    for i, (name, color, shape) in enumerate(styles):
        y = top + 30 * u + (i + 0.5) * row
        r = min(7 * u, row / 2.5)
        x = layout.legend_x + 8 * u
        _marker(draw, shape, x, y, r, _rgb(color))
        draw.text((x + 16 * u, y), str(name), fill=_INK, font=font, anchor="lm")


def _marker(draw: ImageDraw.ImageDraw, shape: Shape, x: float, y: float, r: float, fill, rim=None) -> None:
    """``shape`` centred on (x, y), its box (``colours.Shape.outline``'s) ``r`` pixels from
    the centre to each side: filled, with a ``rim``, or hollow, a band as wide as its hole
    leaves."""
    band = max(1, round(r * _inradius(shape.outline) * (1 - shape.hole))) if shape.hole else 0
    paint = {"outline": fill, "width": band} if band else {"fill": fill, "outline": rim}
    if shape.outline:
        draw.polygon([(x + r * u, y + r * v) for u, v in shape.outline], **paint)
    else:
        draw.ellipse([x - r, y - r, x + r, y + r], **paint)


def _inradius(outline) -> float:
    """How far a convex ``outline`` (a circle's when empty) reaches from its centre at its
    nearest: a hollow shape's band is that share of it (Pillow draws an outline's width
    inwards, square to each edge)."""
    if not outline:
        return 1.0
    corners = np.asarray(outline, dtype=np.float64)
    edges = np.roll(corners, -1, axis=0) - corners
    cross = corners[:, 0] * edges[:, 1] - corners[:, 1] * edges[:, 0]
    return float(np.min(np.abs(cross) / np.linalg.norm(edges, axis=1)))


def _captions(chosen: Sequence[Snapshot], total_epochs: int | None, k: int | None) -> list[str]:
    """Each frame's second title line: its epoch and the latest accuracy measured so far."""
    captions, accuracy = [], ""
    neighbours = f"{k}-NN" if k else "k-NN"
    for snap in chosen:
        if snap.test_accuracy is not None:
            accuracy = f"test {neighbours} accuracy {percent(snap.test_accuracy)}"
        elif snap.train_accuracy is not None:
            accuracy = f"leave-one-out {neighbours} accuracy {percent(snap.train_accuracy)}"
        epoch = f"epoch {epoch_label(snap)}" + (f" of {total_epochs}" if total_epochs else "")
        captions.append(f"{epoch}   ·   {accuracy}" if accuracy else epoch)
    return captions


def _progress(chosen: Sequence[Snapshot], total_epochs: int | None) -> list[float]:
    """How far through the run each frame is, for the bar under the title."""
    last = total_epochs or max(chosen[-1].epoch, 1)
    return [min(1.0, max(0.0, (s.epoch - 1 + s.fraction) / last if s.epoch else 0.0)) for s in chosen]


def _frame(base, layout, title, caption, Z, labels, marks, done) -> Image.Image:
    image = base.copy()
    draw = ImageDraw.Draw(image)
    u, width = layout.unit, layout.size[0]
    draw.text((20 * u, 14 * u), _fitted(title, _font(24 * u), width - 40 * u), fill=_INK, font=_font(24 * u))
    draw.text((20 * u, 48 * u), caption, fill=_MUTED, font=_font(19 * u))
    bar = (20 * u, 80 * u, width - 20 * u, 84 * u)
    draw.rectangle(bar, fill=_GRID)
    draw.rectangle((bar[0], bar[1], bar[0] + (bar[2] - bar[0]) * done, bar[3]), fill=_MUTED)
    _points(draw, layout, Z, labels, marks)
    return image


def _fitted(text: str, font, room: float) -> str:
    """``text`` cut with an ellipsis to fit ``room`` pixels."""
    if font.getlength(text) <= room:
        return text
    while text and font.getlength(text + "...") > room:
        text = text[:-1]
    return text + "..."


def _points(draw, layout: _Layout, Z: np.ndarray, labels: np.ndarray, marks) -> None:
    """Each point in its class's colour and shape (``marks``, by class), a white rim where
    they are large enough to keep overlapping ones apart."""
    n = len(labels)
    r = layout.unit * (6 if n <= 300 else 5 if n <= 1500 else 4.5)  # a shape reads as itself
    left, top, right, bottom = layout.box
    rim = _PAPER if r >= 4 else None
    for (x, y), c in zip(layout.pixels(Z), labels):
        if left <= x <= right and top <= y <= bottom:  # also drops non-finite points
            _marker(draw, marks[c][1], x, y, r, marks[c][0], rim)


def _palette(colors) -> Image.Image:
    """One palette for every frame: paper, greys for text edges, the class colours."""
    greys = [(v, v, v) for v in np.linspace(0, 255, 40).astype(int)]
    entries = [_PAPER, _INK, _MUTED, _GRID, *colors, *greys][:256]
    image = Image.new("P", (1, 1))
    image.putpalette([channel for rgb in entries for channel in rgb])
    return image


def _encode(frames: list[Image.Image], durations: list[int], colors) -> bytes:
    """Frames quantised to one shared palette without dithering (flat colours compress
    well and do not shimmer), looping forever."""
    palette = _palette(colors)
    indexed = [f.quantize(palette=palette, dither=Image.Dither.NONE) for f in frames]
    buffer = io.BytesIO()
    indexed[0].save(buffer, "GIF", save_all=True, append_images=indexed[1:], duration=durations, loop=0)
    return buffer.getvalue()
