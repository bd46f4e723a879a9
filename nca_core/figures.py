"""Plotly figure builders: pure functions from arrays (or snapshots) to ``go.Figure``.

Colours follow class order everywhere, so a class keeps its colour and legend slot on every
page and in every frame. Needs plotly, which comes with the ``app`` extra.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

try:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
except ImportError as exc:  # the library alone is installed without plotly
    raise ImportError("nca_core.figures needs plotly: pip install 'nca-explorer[app]'") from exc

from .training import Snapshot

if TYPE_CHECKING:
    from .comparison import SearchCost

__all__ = [
    "PALETTE",
    "animation",
    "class_colors",
    "component_images",
    "embedding_scatter",
    "image_grid",
    "map_heatmap",
    "neighbour_links",
    "padded_ranges",
    "search_cost_bars",
    "steady_ranges",
]

# Colour-blind-safe qualitative palette (Okabe-Ito, then Tableau-like extras).
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
    "#56B4E9", "#F0E442", "#000000", "#8C564B", "#7F7F7F",
    "#17BECF", "#BCBD22", "#9467BD", "#FF9896", "#98DF8A",
)  # fmt: skip


def class_colors(n_classes: int) -> list[str]:
    """One colour per class index, cycling the palette past 15 classes."""
    return [PALETTE[i % len(PALETTE)] for i in range(n_classes)]


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


def _figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plain dicts without per-property validation: these builders run
    several times a second while a run is drawn live, and validation dominated their cost.
    The tests check the structure instead."""
    return go.Figure(dict(data=data, layout=layout), _validate=False)


def _class_traces(Z, y, classes, three_d: bool, marker_size: float, hover_text=None) -> list[dict]:
    colors = class_colors(len(classes))
    traces = []
    for c, name in enumerate(classes):
        idx = np.flatnonzero(y == c)
        trace = dict(
            type="scatter3d" if three_d else "scatter",
            mode="markers",
            name=str(name),
            legendgroup=str(name),
            customdata=idx,
            marker=dict(color=colors[c], size=marker_size, opacity=0.8),
            x=Z[idx, 0],
            y=Z[idx, 1],
        )
        if three_d:
            trace["z"] = Z[idx, 2]
        if hover_text is not None:
            trace["text"] = [hover_text[i] for i in idx]
        traces.append(trace)
    return traces


def embedding_scatter(
    Z: np.ndarray,
    y: np.ndarray,
    classes: Sequence[str],
    *,
    title: str | None = None,
    ranges: list[list[float]] | None = None,
    uirevision: str = "embedding",
    axis_label: str = "z",
    height: int = 520,
    hover_text: Sequence[str] | None = None,
) -> go.Figure:
    """Scatter of an embedding, one trace per class; 3-D when Z has three columns.

    Parameters
    ----------
    Z : ndarray of shape (n, 2) or (n, 3+); columns past the third are not drawn
    y : ndarray of shape (n,), class indices into ``classes``
    ranges : fixed axis ranges (see ``padded_ranges``) so frames do not jump
    uirevision : keeps the user's zoom across redraws with the same value
    """
    Z = np.asarray(Z)
    three_d = Z.shape[1] >= 3
    marker_size = 3 if three_d else (4 if len(Z) > 2000 else 6)
    labels = [f"{axis_label}{i + 1}" for i in range(3)]
    layout = dict(
        title=dict(text=title) if title else None,
        height=height,
        uirevision=uirevision,
        legend=dict(itemsizing="constant", title=dict(text="class")),
        margin=dict(l=10, r=10, t=40 if title else 10, b=10),
        clickmode="event+select",
        dragmode="pan" if three_d else "zoom",
    )
    if three_d:
        scene = {}
        for i, axis in enumerate(("xaxis", "yaxis", "zaxis")):
            scene[axis] = dict(title=dict(text=labels[i]))
            if ranges is not None:
                scene[axis].update(range=ranges[i], autorange=False)
        if ranges is not None:
            scene["aspectmode"] = "cube"
        layout["scene"] = scene
    else:
        for i, axis in enumerate(("xaxis", "yaxis")):
            layout[axis] = dict(title=dict(text=labels[i]))
            if ranges is not None:
                layout[axis]["range"] = ranges[i]
    return _figure(_class_traces(Z, np.asarray(y), classes, three_d, marker_size, hover_text), layout)


def _evenly_spaced(n: int, cap: int) -> np.ndarray:
    """At most ``cap`` indices from range(n), always keeping the first and the last."""
    if n <= cap:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, cap)).astype(int))


def animation(
    snapshots: Sequence[Snapshot],
    y: np.ndarray,
    classes: Sequence[str],
    *,
    max_frames: int = 100,
    max_points: int = 3000,
    height: int = 600,
) -> go.Figure:
    """An animated replay of a run: play/pause, speed buttons and an epoch slider.

    Points keep their identity between frames (same trace and order per class); axes are
    fixed to cover every frame. At most ``max_frames`` evenly spaced snapshots and
    ``max_points`` points per frame keep the figure light.
    """
    if not snapshots:
        raise ValueError("animation needs at least one snapshot")
    chosen = [snapshots[i] for i in _evenly_spaced(len(snapshots), max_frames)]
    y = np.asarray(y)
    points = _evenly_spaced(len(y), max_points)
    y = y[points]
    embeddings = [np.asarray(s.embedding)[points] for s in chosen]
    three_d = embeddings[0].shape[1] >= 3
    dims = 3 if three_d else 2
    ranges = padded_ranges([e[:, :dims] for e in embeddings])
    fig = embedding_scatter(embeddings[0], y, classes, ranges=ranges, uirevision="replay", height=height)
    fig.frames = [
        go.Frame(
            data=_class_traces(e, y, classes, three_d, 3 if three_d else 5),  # same order: same identity
            name=str(s.epoch),
            layout=go.Layout(title=_frame_title(s)),
        )
        for s, e in zip(chosen, embeddings)
    ]
    fig.update_layout(
        title=_frame_title(chosen[0]),
        margin=dict(l=10, r=10, t=40, b=10),
        updatemenus=[_play_buttons(three_d)],
        sliders=[_epoch_slider([s.epoch for s in chosen], three_d)],
    )
    return fig


def _frame_title(snapshot: Snapshot) -> str:
    return f"epoch {snapshot.epoch}   objective {snapshot.objective:.4f}"


def _play_args(duration_ms: int, redraw: bool) -> dict:
    """Animate from the current frame, ``duration_ms`` per frame. 3-D scenes need a redraw."""
    return dict(
        frame=dict(duration=duration_ms, redraw=redraw),
        transition=dict(duration=min(duration_ms, 300) * 0.8, easing="linear"),
        fromcurrent=True,
        mode="immediate",
    )


def _play_buttons(redraw: bool) -> dict:
    """Play, pause and two speeds, under the plot on the left."""
    pause = dict(frame=dict(duration=0, redraw=False), mode="immediate", transition=dict(duration=0))
    return dict(
        type="buttons",
        direction="left",
        x=0.0,
        y=-0.08,
        xanchor="left",
        yanchor="top",
        showactive=False,
        buttons=[
            dict(label="▶ Play", method="animate", args=[None, _play_args(200, redraw)]),
            dict(label="❚❚ Pause", method="animate", args=[[None], pause]),
            dict(label="slow", method="animate", args=[None, _play_args(600, redraw)]),
            dict(label="fast", method="animate", args=[None, _play_args(60, redraw)]),
        ],
    )


def _epoch_slider(epochs: Sequence[int], redraw: bool) -> dict:
    """A slider with one step per frame, named by its epoch, beside the buttons."""
    jump = dict(mode="immediate", frame=dict(duration=0, redraw=redraw))
    return dict(
        active=0,
        x=0.35,
        len=0.65,
        y=-0.04,
        yanchor="top",
        currentvalue=dict(prefix="epoch "),
        steps=[dict(label=str(e), method="animate", args=[[str(e)], jump]) for e in epochs],
    )


def neighbour_links(
    Z: np.ndarray,
    y: np.ndarray,
    classes: Sequence[str],
    anchor: int,
    probabilities: np.ndarray,
    *,
    title: str = "",
    min_probability: float = 0.005,
    height: int = 420,
) -> go.Figure:
    """The points, with a line from ``anchor`` to each j whose width is p_ij.

    Lines for p_ij below ``min_probability`` are left out to keep the figure readable.
    """
    Z = np.asarray(Z, dtype=np.float64)
    fig = embedding_scatter(Z[:, :2], y, classes, title=title, height=height, uirevision=title)
    strongest = float(probabilities.max()) or 1.0
    links = []
    for j in np.flatnonzero(probabilities >= min_probability):
        same = y[j] == y[anchor]
        links.append(
            dict(
                type="scatter",
                x=[Z[anchor, 0], Z[j, 0]],
                y=[Z[anchor, 1], Z[j, 1]],
                mode="lines",
                line=dict(
                    width=0.5 + 8 * probabilities[j] / strongest, color=PALETTE[2] if same else PALETTE[3]
                ),
                opacity=0.7,
                hoverinfo="text",
                text=f"p = {probabilities[j]:.3f}",
                showlegend=False,
            )
        )
    ring = dict(
        type="scatter",
        x=[Z[anchor, 0]],
        y=[Z[anchor, 1]],
        mode="markers",
        marker=dict(size=16, color="rgba(0,0,0,0)", line=dict(width=2, color="black")),
        showlegend=False,
        hoverinfo="skip",
    )
    return go.Figure(
        dict(data=[*links, *fig.to_dict()["data"], ring], layout=fig.to_dict()["layout"]), _validate=False
    )


def map_heatmap(
    components: np.ndarray, feature_names: Sequence[str] | None = None, height: int = 320
) -> go.Figure:
    """The learned map A (n_components x n_features) as a diverging heatmap."""
    A = np.asarray(components)
    limit = float(np.abs(A).max()) or 1.0
    fig = go.Figure(
        go.Heatmap(
            z=A,
            x=list(feature_names) if feature_names is not None else None,
            y=[f"z{i + 1}" for i in range(A.shape[0])],
            colorscale="RdBu",
            zmid=0.0,
            zmin=-limit,
            zmax=limit,
            colorbar=dict(title="weight"),
        )
    )
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=30, b=10), title="learned map A")
    fig.update_yaxes(autorange="reversed")
    return fig


def component_images(components: np.ndarray, image_shape: tuple[int, int], max_rows: int = 8) -> go.Figure:
    """Each row of A reshaped to the image grid: which pixels each output coordinate reads."""
    A = np.asarray(components)[:max_rows]
    return image_grid(A, image_shape, [f"z{i + 1}" for i in range(len(A))], diverging=True)


def image_grid(
    images: np.ndarray,
    image_shape: tuple[int, int],
    titles: Sequence[str],
    *,
    diverging: bool = False,
    columns: int = 8,
    tile: int = 110,
) -> go.Figure:
    """Flattened images (n, h*w) in a grid with one title each."""
    images = np.asarray(images, dtype=np.float64)
    n = len(images)
    cols = min(columns, max(n, 1))
    rows = int(np.ceil(n / cols))
    fig = make_subplots(
        rows=rows, cols=cols, subplot_titles=list(titles), horizontal_spacing=0.01, vertical_spacing=0.08
    )
    for i, flat in enumerate(images):
        image = flat.reshape(image_shape)
        if diverging:
            limit = float(np.abs(image).max()) or 1.0
            trace = go.Heatmap(z=image, colorscale="RdBu", zmid=0, zmin=-limit, zmax=limit, showscale=False)
        else:
            trace = go.Heatmap(z=image, colorscale="gray_r", showscale=False)
        fig.add_trace(trace, row=i // cols + 1, col=i % cols + 1)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, autorange="reversed")
    fig.update_layout(height=rows * tile + 40, width=None, margin=dict(l=5, r=5, t=30, b=5))
    fig.update_annotations(font_size=11)
    return fig


def search_cost_bars(costs: Sequence[SearchCost], height: int = 320) -> go.Figure:
    """Query time and index size of each k-NN index side by side, one bar per index.

    ``costs`` are ``comparison.knn_search_cost`` results (raw inputs, projections); sizes
    are drawn in MB so that the raw index and a small projection share a readable axis.
    """
    names = [c.name for c in costs]
    fig = make_subplots(rows=1, cols=2, subplot_titles=["query time (s)", "stored (MB)"])
    fig.add_trace(go.Bar(x=names, y=[c.query_seconds for c in costs], marker_color=PALETTE[0]), 1, 1)
    fig.add_trace(go.Bar(x=names, y=[c.stored_bytes / 1e6 for c in costs], marker_color=PALETTE[1]), 1, 2)
    fig.update_layout(height=height, showlegend=False, margin=dict(l=10, r=10, t=40, b=10))
    return fig
