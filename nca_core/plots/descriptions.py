"""What each chart shows, in words: the text a screen reader reads for a picture.

A Vega-Lite chart's ``description`` becomes its container's accessible name, the one line a
screen reader announces for it; the marks themselves stay out of the accessibility tree
(``config.aria`` false), where each point and tick would be read out one by one. A Plotly
figure's title is its first text. These builders are pure, so the words can be tested
without a browser.
"""

from __future__ import annotations

from collections.abc import Sequence

from .colours import class_shapes

__all__ = ["class_key", "curve_description", "embedding_description"]

# A longer key is no help read aloud: past this many classes the rest are counted.
NAMED_CLASSES = 12


def _plural(shape: str) -> str:
    return shape + ("es" if shape.endswith("s") else "s")  # pluses, crosses


def class_key(classes: Sequence[str]) -> str:
    """Each class with the shape it is drawn in: "ring 1 as circles, ring 2 as squares and
    ring 3 as triangles"; past ``NAMED_CLASSES``, the others counted."""
    named = [f"{c} as {_plural(s.name)}" for c, s in zip(classes[:NAMED_CLASSES], class_shapes(len(classes)))]
    rest = len(classes) - len(named)
    if rest:
        named.append(f"{rest} more class{'es' if rest > 1 else ''}")
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


def embedding_description(title: str, classes: Sequence[str], n_points: int, axes: Sequence[str] = ("z1", "z2")) -> str:
    """A scatter of an embedding: what it is, how many points of how many classes, its axes
    and each class's shape (each has a colour too)."""
    kinds = "class" if len(classes) == 1 else "classes"
    return (
        f"Scatter plot of {title}: {n_points:,} points of {len(classes)} {kinds} on axes "
        f"{' and '.join(axes)}, at one scale. Each class has a colour and a shape: {class_key(classes)}."
    )


def curve_description(
    what: str, epochs: Sequence[int], series: dict[str, Sequence[float | None]], fmt=lambda v: f"{v:.3g}"
) -> str:
    """A line chart of ``what`` against epoch: for each of ``series`` (name: a value per
    epoch, None where it was not measured) where it started and where it ended; ``fmt``
    writes a value."""
    lines = []
    for name, values in series.items():
        known = [(e, v) for e, v in zip(epochs, values) if v is not None]
        if known:
            (e0, v0), (e1, v1) = known[0], known[-1]
            lines.append(f"{name} from {fmt(v0)} at epoch {e0} to {fmt(v1)} at epoch {e1}")
    if not lines:
        return f"Line chart of {what} against epoch: no epoch yet."
    return f"Line chart of {what} against epoch: " + "; ".join(lines) + "."
