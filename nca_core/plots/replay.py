"""A run's replay as an animated Plotly figure: play, pause, speeds and an epoch slider.

Frames are named by the epochs done (``epoch_label``), as the app's progress line and the
replay GIF name them. Needs plotly, which comes with the ``app`` extra.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

try:
    import plotly.graph_objects as go
except ImportError as exc:  # the library alone is installed without plotly
    raise ImportError("nca_core.plots.replay needs plotly: pip install 'nca-explorer[app]'") from exc

from ..training.loop import Snapshot
from .axes import bulk_ranges, padded_ranges
from .colours import class_colors
from .edges import edge_points
from .figures import _class_traces, embedding_scatter

__all__ = ["animation", "epoch_label", "epochs_text", "frames_to_show"]


def _evenly_spaced(n: int, cap: int) -> np.ndarray:
    """At most ``cap`` indices from range(n), always keeping the first and the last."""
    if n <= cap:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, cap)).astype(int))


def _progress(snapshot: Snapshot) -> float:
    """Epochs done at a snapshot, as a number (``epoch_label``'s)."""
    return float(snapshot.epoch) if snapshot.fraction >= 1.0 else snapshot.epoch - 1 + snapshot.fraction


# Steps between the epochs the slider names: the smallest that names at most
# SLIDER_TICK_LABELS of them (under a run of 60 epochs, every frame's epoch made a smear).
_TICK_STEPS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000)
SLIDER_TICK_LABELS = 11


def _ticks(snapshots: Sequence[Snapshot]) -> dict[int, str]:
    """The snapshots the slider names, by index: the ends of whole epochs at an even step
    (0, 5, 10, ...), at most ``SLIDER_TICK_LABELS`` of them."""
    last = max(s.epoch for s in snapshots)
    step = next((t for t in _TICK_STEPS if last // t + 1 <= SLIDER_TICK_LABELS), _TICK_STEPS[-1])
    return {i: str(s.epoch) for i, s in enumerate(snapshots) if s.fraction >= 1.0 and s.epoch % step == 0}


def frames_to_show(snapshots: Sequence[Snapshot], cap: int) -> np.ndarray:
    """Indices of at most ``cap`` snapshots, evenly spaced in epochs done rather than in
    their order (a live run draws frames as the clock allows, unevenly), always the first,
    the last and the epochs the slider names (``_ticks``)."""
    n = len(snapshots)
    if n <= cap:
        return np.arange(n)
    progress = np.array([_progress(s) for s in snapshots])
    kept = {0, n - 1, *_ticks(snapshots)}
    targets = np.linspace(progress[0], progress[-1], max(cap, 2))
    nearest = np.abs(progress[None, :] - targets[:, None]).argmin(1)
    chosen = sorted(kept | set(nearest.tolist()))
    while len(chosen) > cap:  # drop the frame nearest its neighbour that is not kept
        gaps = [(progress[b] - progress[a], j) for j, (a, b) in enumerate(itertools.pairwise(chosen), 1)]
        _, j = min((g, j) for g, j in gaps if chosen[j] not in kept or chosen[j - 1] not in kept)
        chosen.pop(j if chosen[j] not in kept else j - 1)
    return np.array(chosen)


# A frame whose points spread over less than this share of the widest frame's is one dot on
# the replay's axes (which hold every frame): a dozen pixels of a 640-pixel plot.
DOT_SHARE = 0.02


def opening_frame(embeddings: Sequence[np.ndarray], share: float = DOT_SHARE) -> int:
    """The first frame whose points spread over at least ``share`` of the widest frame's
    spread: a network starts from random weights with every point in one dot, nothing to
    look at on the axes of the whole run; a map starts from its first frame."""
    spreads = [float(np.ptp(e, axis=0).max()) if len(e) else 0.0 for e in embeddings]
    widest = max(spreads)
    return next(i for i, spread in enumerate(spreads) if spread >= share * widest)


def animation(
    snapshots: Sequence[Snapshot],
    y: np.ndarray,
    classes: Sequence[str],
    *,
    title: str = "",
    max_frames: int = 100,
    max_points: int = 3000,
    height: int = 640,
) -> go.Figure:
    """An animated replay of a run: play/pause, speed buttons and an epoch slider.

    Points keep their identity between frames (same trace and order per class); axes are
    fixed, at one scale: in 2-D they cover the bulk of every frame (``axes.bulk_ranges``) and
    the few points past them are drawn on the edge (``_edge_trace``), in 3-D every point.
    Each frame's title (``title`` then its epoch
    and objective) follows the slider. At most ``max_frames`` evenly spaced snapshots and
    ``max_points`` points per frame keep the figure light.
    """
    if not snapshots:
        raise ValueError("animation needs at least one snapshot")
    chosen = [snapshots[i] for i in frames_to_show(snapshots, max_frames)]
    y = np.asarray(y)
    points = _evenly_spaced(len(y), max_points)
    y = y[points]
    embeddings = [np.asarray(s.embedding)[points] for s in chosen]
    three_d = embeddings[0].shape[1] >= 3
    dims = 3 if three_d else 2
    ranges = (padded_ranges if three_d else bulk_ranges)([e[:, :dims] for e in embeddings])
    fig = embedding_scatter(embeddings[-1], y, classes, ranges=ranges, uirevision="replay", height=height)
    if not three_d:  # the plot shrinks to the ranges' shape rather than widen one of them
        fig.add_trace(_edge_trace(embeddings[-1], y, classes, ranges))
        fig.update_xaxes(constrain="domain")
        fig.update_yaxes(constrain="domain")

    def traces(e: np.ndarray) -> list[dict]:
        drawn = _class_traces(e, y, classes, three_d, 3 if three_d else 5)  # same order: same identity
        return drawn if three_d else [*drawn, _edge_trace(e, y, classes, ranges)]

    fig.frames = [
        go.Frame(
            data=traces(e),
            name=epoch_label(s),
            layout=dict(title=dict(text=_frame_title(title, s))),
        )
        for s, e in zip(chosen, embeddings)
    ]
    first = opening_frame([e[:, :dims] for e in embeddings])
    fig.update(data=fig.frames[first].data)  # open on the first telling frame, the camera chosen for the end
    fig.update_layout(
        title=dict(text=_frame_title(title, chosen[first]), x=0.02, xanchor="left"),
        margin=dict(l=10, r=10, t=80 if title else 50, b=110),
        updatemenus=[_play_buttons(three_d)],
        sliders=[_epoch_slider([epoch_label(s) for s in chosen], _ticks(chosen), first)],
    )
    return fig


def _edge_trace(Z: np.ndarray, y: np.ndarray, classes: Sequence[str], ranges: list[list[float]]) -> dict:
    """The points of ``Z`` past ``ranges``, on the edge as open arrowheads in their class's
    colour, each pointing the way to its point (``edges.edge_points``), its place on hover."""
    rows, drawn, headings = edge_points(Z, ranges)
    colours = np.asarray(class_colors(len(classes)), dtype=object)[y[rows]]
    return dict(
        type="scatter", mode="markers", name="past the edge", showlegend=False,
        x=drawn[:, 0], y=drawn[:, 1], customdata=Z[rows, :2], text=[str(classes[c]) for c in y[rows]],
        marker=dict(symbol="arrow-open", size=8, color=colours, angle=headings, line=dict(width=1.5)),
        hovertemplate="<b>%{text}</b><br>past the edge, at (%{customdata[0]:.3g}, %{customdata[1]:.3g})<extra></extra>",
    )  # fmt: skip


def epoch_label(snapshot: Snapshot) -> str:
    """Epochs done at a snapshot: "12" after epoch 12, "12.25" a quarter into epoch 13."""
    if snapshot.fraction >= 1.0:
        return str(snapshot.epoch)
    return epochs_text(snapshot.epoch - 1 + snapshot.fraction)


def epochs_text(epochs: float) -> str:
    """A number of epochs to two decimals at most: "12", "12.25", "12.5"."""
    return f"{epochs:.2f}".rstrip("0").rstrip(".")


def _frame_title(title: str, snapshot: Snapshot) -> str:
    """The run's name over its epoch and objective (two lines: narrow screens and slides)."""
    where = f"epoch {epoch_label(snapshot)}   objective {snapshot.objective:.4f}"
    return f"{title}<br>{where}" if title else where


def _play_args(duration_ms: int) -> dict:
    """Animate from the current frame, ``duration_ms`` per frame, redrawn so that the
    title (epoch, objective) follows the frames."""
    return dict(
        frame=dict(duration=duration_ms, redraw=True),
        transition=dict(duration=0),
        fromcurrent=True,
        mode="immediate",
    )


def _play_buttons(three_d: bool) -> dict:
    """Play, pause and two speeds, under the plot on the left, above the slider."""
    pause = dict(frame=dict(duration=0, redraw=False), mode="immediate", transition=dict(duration=0))
    return dict(
        type="buttons",
        direction="left",
        x=0.0,
        y=0.0,
        xanchor="left",
        yanchor="top",
        pad=dict(t=45 if not three_d else 10),
        showactive=False,
        buttons=[
            dict(label="▶ Play", method="animate", args=[None, _play_args(200)]),
            dict(label="❚❚ Pause", method="animate", args=[[None], pause]),
            dict(label="slow", method="animate", args=[None, _play_args(600)]),
            dict(label="fast", method="animate", args=[None, _play_args(60)]),
        ],
    )


def _epoch_slider(labels: Sequence[str], ticks: dict[int, str], active: int) -> dict:
    """A slider with one step per frame (named by its epoch), below the buttons, full width,
    the ``ticks`` labelled (whole epochs at an even step); a jump redraws so that the title,
    which says the frame's epoch, follows. It starts at frame ``active``."""
    jump = dict(mode="immediate", frame=dict(duration=0, redraw=True), transition=dict(duration=0))
    return dict(
        active=active,
        x=0.0,
        len=1.0,
        y=0.0,
        yanchor="top",
        pad=dict(t=80, b=0),
        currentvalue=dict(visible=False),  # it shows a step's label, blank for most steps
        steps=[
            dict(label=ticks.get(i, ""), method="animate", args=[[label], jump])
            for i, label in enumerate(labels)
        ],
    )
