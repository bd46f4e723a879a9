"""Epochs side by side: chosen frames of a run as small multiples on one scale.

Small multiples let a class compare states at a glance, which an animation does not
(Robertson et al., 2008): the same points, the same colours and shapes, the same axes in
every panel, so what moved is what changed. Needs plotly (the ``app`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

try:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
except ImportError as exc:  # the library alone is installed without plotly
    raise ImportError("nca_core.plots.epoch_grid needs plotly: pip install 'nca-explorer[app]'") from exc

from ..training.loop import Snapshot
from ..util.formatting import percent
from .axes import bulk_ranges
from .figures import _class_traces

__all__ = ["DEFAULT_EPOCHS", "chosen_frames", "epoch_grid"]

# The epochs a grid shows unless asked: the start, the first steps, where most runs have
# found their shape, and the last frame.
DEFAULT_EPOCHS = (0, 1, 2, 5, 10)


def chosen_frames(snapshots: Sequence[Snapshot], epochs: Sequence[int] = DEFAULT_EPOCHS) -> list[Snapshot]:
    """The whole-epoch frames of ``epochs`` that the run has reached, and its latest frame,
    in order and each once."""
    whole = {s.epoch: s for s in snapshots if s.fraction >= 1.0}
    chosen = [whole[e] for e in epochs if e in whole]
    if snapshots and all(s is not snapshots[-1] for s in chosen):
        chosen.append(snapshots[-1])
    return chosen


def epoch_grid(
    frames: Sequence[Snapshot],
    y: np.ndarray,
    classes: Sequence[str],
    *,
    columns: int = 3,
    title: str = "",
    marker_size: float = 5.0,
) -> go.Figure:
    """The 2-D embeddings of ``frames`` (``chosen_frames``) in a grid of ``columns``, one
    scale for every panel and for both axes of each, one legend. ``y``: the display
    subset's class indices."""
    if not frames:
        raise ValueError("no frames to show")
    if frames[0].embedding.shape[1] < 2:
        raise ValueError("a grid of epochs needs embeddings of at least 2 dimensions")
    embeddings = [np.asarray(f.embedding[:, :2], dtype=np.float64) for f in frames]
    ranges = bulk_ranges(embeddings)
    rows = -(-len(frames) // columns)
    fig = make_subplots(
        rows=rows, cols=columns, horizontal_spacing=0.03, vertical_spacing=0.08,
        subplot_titles=[_panel_title(f) for f in frames],
    )  # fmt: skip
    for i, Z in enumerate(embeddings):
        row, col = divmod(i, columns)
        for trace in _class_traces(Z, np.asarray(y), classes, False, marker_size):
            trace.update(showlegend=i == 0)
            fig.add_trace(go.Scatter(**trace), row=row + 1, col=col + 1)
        axis = "" if i == 0 else str(i + 1)
        fig.update_layout({
            f"xaxis{axis}": {"range": ranges[0], "showticklabels": False, "constrain": "domain"},
            f"yaxis{axis}": {"range": ranges[1], "showticklabels": False, "scaleanchor": f"x{axis}", "scaleratio": 1},
        })  # fmt: skip
    fig.update_layout(
        title=title or None, height=300 * rows + 80, margin={"l": 10, "r": 10, "t": 60, "b": 10},
        # the legend's markers at a legible size, not the panels' few pixels: the key to the shapes
        legend={"orientation": "h", "y": -0.02, "yanchor": "top", "itemsizing": "constant"}, plot_bgcolor="white",
    )  # fmt: skip
    return fig


def _panel_title(frame: Snapshot) -> str:
    accuracy = frame.test_accuracy if frame.test_accuracy is not None else frame.train_accuracy
    label = "start" if frame.epoch == 0 else f"epoch {frame.epoch}"
    which = "test" if frame.test_accuracy is not None else "leave-one-out"
    return label if accuracy is None else f"{label} · {which} kNN {percent(accuracy)}"
