"""The colours and shapes every picture shares: figures, live charts, replay GIFs and regions.

Colours and shapes follow class order everywhere, so a class keeps its colour, its shape and
its legend slot on every page and in every frame. A shape as well as a colour: a reader who
cannot tell two colours apart, or sees them on a washed-out projector, tells the classes
apart by their shapes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["PALETTE", "SHAPES", "Shape", "class_colors", "class_shapes"]

# Ten class colours that every viewer can tell apart, chosen by a search over sRGB for the
# largest least difference (tests/plots/test_colours.py checks each bound):
# - every pair at least LEAST_DIFFERENCE apart in CIEDE2000 (about 1 is just noticeable side
#   by side), with normal vision and under simulated deuteranopia, protanopia and tritanopia
#   (Machado, Oliveira and Fernandes 2009, full severity); the closest pairs, at about 12.7,
#   are maroon and brown (deuteranopia), orange and green (protanopia), plum and indigo
#   (tritanopia); with normal vision every pair is at least 19.8 apart;
# - each at least LEAST_CONTRAST against the white page (WCAG 2.1's floor for graphical
#   objects; the green is the lightest, at 3.01), so no mark fades into the paper as
#   Okabe-Ito's yellow did (1.3);
# - none black or grey, and each more than 25 (CIE76) from the colours of the lines from a
#   clicked point, under every simulation.
# Small marks need more than colour whatever the palette: each class has a shape too
# (SHAPES); past ten classes the colours repeat and the shapes tell those classes apart.
LEAST_DIFFERENCE, LEAST_CONTRAST = 12.0, 3.0
PALETTE = (
    "#2932FF", "#EA6800", "#820000", "#68415B", "#D05CFD",
    "#275B41", "#1A759C", "#91570D", "#21AA5F", "#4E0079",
)  # fmt: skip


# Plotly's "RdBu" runs from red (low) to blue (high): with zmid=0, positive weights are blue.
DIVERGING_COLORSCALE = "RdBu"
DIVERGING_WORDS = {"positive": "blue", "negative": "red"}

# Points outside Compare's brush (``live_charts``): faint grey, so the chosen ones stand out.
DIMMED_MARKER = {"color": "#B4B4B4", "opacity": 0.15}

# Lines from a chosen point (``figures.neighbour_links``, ``live_picture``), and the words
# captions use for them: black and grey, solid and dashed, colours no class has.
SAME_CLASS_LINE = ("#1A1A1A", "solid black")
OTHER_CLASS_LINE = ("#8C8C8C", "dashed grey")


def class_colors(n_classes: int) -> list[str]:
    """One colour per class index, cycling the palette past ten classes."""
    return [PALETTE[i % len(PALETTE)] for i in range(n_classes)]


@dataclass(frozen=True)
class Shape:
    """A class's marker, as each library that draws one names or draws it.

    ``outline``: its vertices in the box [-1, 1] x [-1, 1], y downwards, the box Vega-Lite
    scales a shape's path into (sqrt(size) pixels across); empty for a circle of radius 1.
    The GIF (``gif``) draws these with Pillow. ``hole``: a hollow shape's hole, as a share of
    its size (0: filled).
    """

    name: str  # in words, for legends' text alternatives
    plotly: str
    plotly_3d: str  # Plotly's 3-D scatter draws eight symbols only
    vega: str  # a Vega-Lite shape name, or an SVG path in the box
    outline: tuple[tuple[float, float], ...] = ()
    hole: float = 0.0


def _regular(corners: int, outer: float, inner: float | None = None) -> tuple[tuple[float, float], ...]:
    """A polygon (or a star, with ``inner`` radius between its points) with a corner up."""
    radii = [outer] if inner is None else [outer, inner]
    count = corners * len(radii)
    return tuple(
        (round(radii[i % len(radii)] * math.sin(2 * math.pi * i / count), 4),
         round(-radii[i % len(radii)] * math.cos(2 * math.pi * i / count), 4))
        for i in range(count)
    )  # fmt: skip


def _path(outline, hole: float = 0.0) -> str:
    """An SVG path of ``outline``, with its hole drawn the other way round (so that the
    nonzero fill rule leaves it empty); a circle's by two arcs."""

    def ring(scale: float, sweep: int) -> str:
        if not outline:
            r = f"{scale:g}"
            return f"M{r},0A{r},{r},0,1,{sweep},-{r},0A{r},{r},0,1,{sweep},{r},0Z"
        points = outline if sweep else outline[::-1]
        return "M" + "L".join(f"{x * scale:g},{y * scale:g}" for x, y in points) + "Z"

    return ring(1.0, 1) + (ring(hole, 0) if hole else "")


_SQUARE = ((-1, -1), (1, -1), (1, 1), (-1, 1))
_DIAMOND = ((0, -1), (1, 0), (0, 1), (-1, 0))
_TRIANGLE = ((0, -0.866), (1, 0.866), (-1, 0.866))  # Vega's: equilateral, as wide as its box
_T = 0.4  # a cross's arms' half width, as Vega's
_CROSS = ((-_T, -1), (_T, -1), (_T, -_T), (1, -_T), (1, _T), (_T, _T), (_T, 1), (-_T, 1), (-_T, _T),
          (-1, _T), (-1, -_T), (-_T, -_T))  # fmt: skip
_A = 0.45  # an x's arms, along the diagonals
_X = ((-1 + _A, -1), (0, -_A), (1 - _A, -1), (1, -1 + _A), (_A, 0), (1, 1 - _A), (1 - _A, 1), (0, _A),
      (-1 + _A, 1), (-1, 1 - _A), (-_A, 0), (-1, -1 + _A))  # fmt: skip
# Past the box, and fatter than a drawn star (0.38): its thin points left it half a circle's
# area, a speck beside the others at a few pixels across.
_STAR = _regular(5, 1.3, 0.65)
_HOLE = 0.5

# Filled shapes first, each unlike the others at a few pixels across; then hollow ones.
# Eleven shapes beside ten colours: class k and class k + 10 share a colour, never a shape,
# and no two of the first 110 classes share both.
SHAPES = (
    Shape("circle", "circle", "circle", "circle"),
    Shape("square", "square", "square", "square", _SQUARE),
    Shape("triangle", "triangle-up", "diamond-open", "triangle-up", _TRIANGLE),
    Shape("diamond", "diamond", "diamond", "diamond", _DIAMOND),
    Shape("plus", "cross", "cross", "cross", _CROSS),
    Shape("down triangle", "triangle-down", "square-open", "triangle-down", tuple((x, -y) for x, y in _TRIANGLE)),
    Shape("star", "star", "circle-open", _path(_STAR), _STAR),
    Shape("cross", "x", "x", _path(_X), _X),
    Shape("ring", "circle-open", "circle-open", _path((), _HOLE), (), _HOLE),
    Shape("hollow square", "square-open", "square-open", _path(_SQUARE, _HOLE), _SQUARE, _HOLE),
    Shape("hollow diamond", "diamond-open", "diamond-open", _path(_DIAMOND, _HOLE), _DIAMOND, _HOLE),
)


def class_shapes(n_classes: int) -> list[Shape]:
    """One shape per class index, cycling ``SHAPES`` past eleven classes."""
    return [SHAPES[i % len(SHAPES)] for i in range(n_classes)]
