"""Vega-Lite specs of the curves drawn beside a training run: the objective and the k-NN
accuracies against epoch (see ``live_charts`` for why a spec that stays the same).

Each is read by a screen reader as its ``description`` (``descriptions.curve_description``
once the run has ended: a new description is a new spec, which the browser draws afresh),
and the two accuracies differ in their dashes and point shapes as well as their colours."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .colours import PALETTE, SHAPES

__all__ = ["accuracy_rows", "accuracy_spec", "objective_rows", "objective_spec"]

OBJECTIVE_LABELS = {"f": "mean p_i (f / n)", "g": "mean log p_i (g / n)", "mcml": "-KL(P || Q)"}


CURVE_EDGE_PIXELS = 6  # a point's radius and a little: the room a curve's end points get


def _curve_spec(
    title: str, y_title: str, height: int, *, y_format: str | None = None, y_domain=None, legend: bool,
    description: str,
) -> dict:
    scale = {"zero": False} if y_domain is None else {"domain": list(y_domain)}
    y = {"field": "value", "type": "quantitative", "title": y_title, "scale": scale}
    if y_format:
        y["axis"] = {"format": y_format}
    color = {"field": "series", "type": "nominal", "title": None, "sort": None}
    # Above the plot, never over it: a curve can sit in any corner (a failing run's is low).
    # One short row: in Streamlit the chart's height includes its legend.
    color["legend"] = {"orient": "top", "direction": "horizontal", "title": None} if legend else None
    return {
        "height": height,
        "title": title,
        "description": description,
        # the description alone: Vega-Lite's defaults read out every point and tick, and the
        # marks' groups, left with a role but no name, are an unnamed image to a screen reader
        "config": {"aria": False},
        "mark": {"type": "line", "point": {"aria": False}, "aria": False},
        "encoding": {
            "x": {
                "field": "epoch",
                "type": "quantitative",
                "title": "epoch",
                "axis": {"tickMinStep": 1, "format": "d"},
                # the last point whole, not cut by the edge; Vega-Lite rounds the padded
                # domain to nice numbers unless told not to, and showed an epoch of -5
                "scale": {"padding": CURVE_EDGE_PIXELS, "nice": False},
            },
            "y": y,
            "color": color,
        },
    }


def objective_spec(objective: str, height: int = 240, description: str | None = None) -> dict:
    """The objective per point against epoch (one line); f, a mean probability, on [0, 1].
    ``description``: what a screen reader reads (by default, what the chart plots)."""
    domain = (0, 1) if objective == "f" else None
    label = OBJECTIVE_LABELS[objective]
    spec = _curve_spec(
        "objective", label, height, y_domain=domain, legend=False,
        description=description or f"Line chart of the objective, {label}, against epoch.",
    )  # fmt: skip
    spec["encoding"]["color"]["scale"] = {"range": [PALETTE[0]]}
    return spec


def objective_rows(epochs: Sequence[int], values: Sequence[float]) -> pd.DataFrame:
    return pd.DataFrame({"epoch": list(epochs), "value": list(values), "series": "objective"})


ACCURACY_SERIES = ("train (LOO)", "test")
# Solid with circles, dashed with squares: the two lines differ in more than colour.
_SERIES_DASHES = [[1, 0], [6, 3]]


def accuracy_spec(k: int, height: int = 260, description: str | None = None) -> dict:
    """Leave-one-out training and test kNN accuracy against epoch, in one legend of colour,
    dash and point shape. ``description``: as ``objective_spec``'s."""
    spec = _curve_spec(
        f"{k}-NN accuracy", f"{k}-NN accuracy", height, y_format=".0%", y_domain=(0, 1), legend=True,
        description=description or f"Line chart of the leave-one-out and test {k}-NN accuracies against epoch.",
    )  # fmt: skip
    # No title above the legend: in Streamlit both come out of the chart's height.
    del spec["title"]
    color = spec["encoding"]["color"]
    color["scale"] = {"domain": list(ACCURACY_SERIES), "range": [PALETTE[0], PALETTE[1]]}
    series = {"field": "series", "type": "nominal", "title": None, "sort": None, "legend": color["legend"]}
    spec["encoding"]["strokeDash"] = {**series, "scale": {"domain": list(ACCURACY_SERIES), "range": _SERIES_DASHES}}
    shapes = [SHAPES[0].vega, SHAPES[1].vega]
    spec["encoding"]["shape"] = {**series, "scale": {"domain": list(ACCURACY_SERIES), "range": shapes}}
    return spec


def accuracy_rows(
    epochs: Sequence[int], train: Sequence[float | None], test: Sequence[float | None]
) -> pd.DataFrame:
    """Long format, epoch by epoch (a new epoch only appends rows); missing values left out."""
    rows = [
        (epoch, value, name)
        for epoch, *values in zip(epochs, train, test)
        for name, value in zip(ACCURACY_SERIES, values)
        if value is not None
    ]
    return pd.DataFrame(rows, columns=["epoch", "value", "series"])
