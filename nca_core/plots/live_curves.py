"""Vega-Lite specs of the curves drawn beside a training run: the objective and the k-NN
accuracies against epoch (see ``live_charts`` for why a spec that stays the same)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .colours import PALETTE

__all__ = ["accuracy_rows", "accuracy_spec", "objective_rows", "objective_spec"]

OBJECTIVE_LABELS = {"f": "mean p_i (f / n)", "g": "mean log p_i (g / n)", "mcml": "-KL(P || Q)"}


CURVE_EDGE_PIXELS = 6  # a point's radius and a little: the room a curve's end points get


def _curve_spec(
    title: str, y_title: str, height: int, *, y_format: str | None = None, y_domain=None, legend: bool
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
        "mark": {"type": "line", "point": True},
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


def objective_spec(objective: str, height: int = 240) -> dict:
    """The objective per point against epoch (one line); f, a mean probability, on [0, 1]."""
    domain = (0, 1) if objective == "f" else None
    spec = _curve_spec("objective", OBJECTIVE_LABELS[objective], height, y_domain=domain, legend=False)
    spec["encoding"]["color"]["scale"] = {"range": [PALETTE[0]]}
    return spec


def objective_rows(epochs: Sequence[int], values: Sequence[float]) -> pd.DataFrame:
    return pd.DataFrame({"epoch": list(epochs), "value": list(values), "series": "objective"})


ACCURACY_SERIES = ("train (LOO)", "test")


def accuracy_spec(k: int, height: int = 260) -> dict:
    """Leave-one-out training and test kNN accuracy against epoch."""
    spec = _curve_spec(
        f"{k}-NN accuracy", f"{k}-NN accuracy", height, y_format=".0%", y_domain=(0, 1), legend=True
    )
    # No title above the legend: in Streamlit both come out of the chart's height.
    del spec["title"]
    spec["encoding"]["color"]["scale"] = {"domain": list(ACCURACY_SERIES), "range": [PALETTE[0], PALETTE[3]]}
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
