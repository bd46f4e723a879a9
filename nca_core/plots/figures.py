"""Plotly figure builders: pure functions from arrays (or snapshots) to ``go.Figure``.

Colours follow class order everywhere, so a class keeps its colour and legend slot on every
page and in every frame. Needs plotly, which comes with the ``app`` extra.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

try:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
except ImportError as exc:  # the library alone is installed without plotly
    raise ImportError("nca_core.plots.figures needs plotly: pip install 'nca-explorer[app]'") from exc

from ..search.costs import INDEX_LABELS, SearchCost, faster, smaller
from ..training.loop import Snapshot

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
    "picture_height",
    "search_cost_chart",
    "settled_ranges",
    "steady_ranges",
]

# Colour-blind-safe qualitative palette (Okabe-Ito, then Tableau-like extras).
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
    "#56B4E9", "#F0E442", "#000000", "#8C564B", "#7F7F7F",
    "#17BECF", "#BCBD22", "#9467BD", "#FF9896", "#98DF8A",
)  # fmt: skip


# Plotly's "RdBu" runs from red (low) to blue (high): with zmid=0, positive weights are blue.
DIVERGING_COLORSCALE = "RdBu"
DIVERGING_WORDS = {"positive": "blue", "negative": "red"}

# Points outside Compare's brush (``live_charts``): faint grey, so the chosen ones stand out.
DIMMED_MARKER = {"color": "#B4B4B4", "opacity": 0.15}

# The height of the band at a Plotly chart's top where its toolbar appears on hover: a
# title placed in it is hidden behind the buttons.
TOOLBAR_BAND = 34

# Lines from a chosen point in ``neighbour_links``, and the words captions use for them:
# black and grey, solid and dashed, so no line can be read as a class colour.
SAME_CLASS_LINE = ("#1A1A1A", "solid black")
OTHER_CLASS_LINE = ("#8C8C8C", "dashed grey")


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
        if hover_text is not None:  # the class in bold over the given text, short coordinates
            trace["text"] = [hover_text[i] for i in idx]
            where = "(%{x:.3g}, %{y:.3g}, %{z:.3g})" if three_d else "(%{x:.3g}, %{y:.3g})"
            trace["hovertemplate"] = f"<b>{name}</b><br>%{{text}}<br>{where}<extra></extra>"
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
    legend_above: bool = False,
) -> go.Figure:
    """Scatter of an embedding, one trace per class; 3-D when Z has three columns.

    Parameters
    ----------
    Z : ndarray of shape (n, 2) or (n, 3+); columns past the third are not drawn
    y : ndarray of shape (n,), class indices into ``classes``
    ranges : fixed axis ranges (see ``padded_ranges``) so frames do not jump
    uirevision : keeps the user's zoom across redraws with the same value
    legend_above : a horizontal legend above the plot, leaving a narrow panel its width
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
    )
    if legend_above:
        layout["legend"].update(orientation="h", x=0, y=1.02, xanchor="left", yanchor="bottom", title=None)
    if three_d:
        layout["scene"] = _scene(Z, labels, ranges)
    else:
        layout.update(_equal_axes(labels, ranges))
    traces = _class_traces(Z, np.asarray(y), classes, three_d, marker_size, hover_text)
    return _figure(traces, layout)


def _equal_axes(labels: Sequence[str], ranges: list[list[float]] | None) -> dict:
    """x and y axes at one scale (a unit is as long across as up: distances are what NCA
    learns), with room for their tick labels."""
    xaxis = dict(title=dict(text=labels[0]), automargin=True)
    yaxis = dict(title=dict(text=labels[1]), automargin=True, scaleanchor="x", scaleratio=1)
    if ranges is not None:
        xaxis["range"], yaxis["range"] = list(ranges[0]), list(ranges[1])
    return {"xaxis": xaxis, "yaxis": yaxis}


def _scene(Z: np.ndarray, labels: Sequence[str], ranges: list[list[float]] | None) -> dict:
    """A 3-D scene that orbits on drag, at one scale on every axis, seen from a direction
    that shows the structure: mostly along the points' direction of least spread (a flat
    structure is seen face-on rather than edge-on), tilted so depth still reads."""
    scene = {"dragmode": "turntable", "camera": {"eye": _camera_eye(Z[:, :3])}}
    for i, axis in enumerate(("xaxis", "yaxis", "zaxis")):
        scene[axis] = dict(title=dict(text=labels[i]))
        if ranges is not None:
            scene[axis].update(range=list(ranges[i]), autorange=False)
    if ranges is None:
        scene["aspectmode"] = "data"
    else:
        spans = np.array([hi - lo for lo, hi in ranges[:3]], dtype=np.float64)
        ratio = spans / max(spans.max(), 1e-12)
        scene["aspectmode"] = "manual"
        scene["aspectratio"] = dict(zip("xyz", (float(r) for r in np.maximum(ratio, 0.05))))
    return scene


def _camera_eye(Z: np.ndarray, distance: float = 2.0) -> dict:
    """Eye position (Plotly's unit box) along the direction of least spread, tilted by 30
    degrees towards the z axis so the view is not flat."""
    Z = np.asarray(Z, dtype=np.float64)
    Z = Z[np.isfinite(Z).all(1)]
    if len(Z) < 3:
        return dict(x=1.25, y=1.25, z=1.25)
    _, _, vt = np.linalg.svd(Z - Z.mean(0), full_matrices=False)
    normal = vt[-1] if vt[-1][2] >= 0 else -vt[-1]
    up = np.array([0.0, 0.0, 1.0])
    tilted = normal + 0.58 * (up - normal * normal @ up)  # tan(30 deg) towards z
    if np.linalg.norm(tilted) < 1e-9:
        tilted = np.array([1.0, 1.0, 1.0])
    eye = distance * tilted / np.linalg.norm(tilted)
    return dict(x=float(eye[0]), y=float(eye[1]), z=float(eye[2]))


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
    title: str = "",
    max_frames: int = 100,
    max_points: int = 3000,
    height: int = 640,
) -> go.Figure:
    """An animated replay of a run: play/pause, speed buttons and an epoch slider.

    Points keep their identity between frames (same trace and order per class); axes are
    fixed to cover every frame, at one scale. Each frame's title (``title`` then its epoch
    and objective) follows the slider. At most ``max_frames`` evenly spaced snapshots and
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
    fig = embedding_scatter(embeddings[-1], y, classes, ranges=ranges, uirevision="replay", height=height)
    fig.frames = [
        go.Frame(
            data=_class_traces(e, y, classes, three_d, 3 if three_d else 5),  # same order: same identity
            name=epoch_label(s),
            layout=dict(title=dict(text=_frame_title(title, s))),
        )
        for s, e in zip(chosen, embeddings)
    ]
    fig.update(data=fig.frames[0].data)  # open on the start, the camera chosen for the end
    fig.update_layout(
        title=dict(text=_frame_title(title, chosen[0]), x=0.02, xanchor="left"),
        margin=dict(l=10, r=10, t=80 if title else 50, b=110),
        updatemenus=[_play_buttons(three_d)],
        sliders=[_epoch_slider([epoch_label(s) for s in chosen])],
    )
    return fig


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


# Tick labels under the replay's slider: every frame's epoch made a smear of numbers
# under a run of 60 epochs or MNIST's fractional frames.
SLIDER_TICK_LABELS = 11


def _epoch_slider(labels: Sequence[str]) -> dict:
    """A slider with one step per frame (named by its epoch), below the buttons, full width,
    at most ``SLIDER_TICK_LABELS`` of them labelled; a jump redraws so that the title, which
    says the frame's epoch, follows."""
    jump = dict(mode="immediate", frame=dict(duration=0, redraw=True), transition=dict(duration=0))
    every = -(-len(labels) // SLIDER_TICK_LABELS)
    return dict(
        active=0,
        x=0.0,
        len=1.0,
        y=0.0,
        yanchor="top",
        pad=dict(t=80, b=0),
        currentvalue=dict(visible=False),  # it shows a step's label, blank for most steps
        steps=[
            dict(label=label if i % every == 0 else "", method="animate", args=[[label], jump])
            for i, label in enumerate(labels)
        ],
    )


# Lines from a chosen point to the points it picks: none below this p_ij (too faint to
# read), and widths from 0.5 to 8.5 pixels by p_ij over the largest.
LINK_MIN_PROBABILITY = 0.005


def link_widths(p: np.ndarray) -> np.ndarray:
    """Line widths, in pixels, for the probabilities ``p`` of one anchor's links."""
    p = np.asarray(p, dtype=np.float64)
    strongest = float(p.max()) if p.size and p.max() > 0 else 1.0
    return 0.5 + 8 * p / strongest


def neighbour_links(
    Z: np.ndarray,
    y: np.ndarray,
    classes: Sequence[str],
    anchor: int,
    probabilities: np.ndarray,
    *,
    title: str = "",
    min_probability: float = LINK_MIN_PROBABILITY,
    height: int = 420,
    uirevision: str | None = None,
) -> go.Figure:
    """The points, with a line from ``anchor`` to each j whose width is p_ij: solid for
    j in the anchor's class, dashed for another (``SAME_CLASS_LINE``, ``OTHER_CLASS_LINE``).

    Lines for p_ij below ``min_probability`` are left out to keep the figure readable.
    ``uirevision`` (default: the title) keeps the user's zoom while the title changes.
    """
    Z = np.asarray(Z, dtype=np.float64)
    fig = embedding_scatter(
        Z[:, :2], y, classes, title=title, height=height, uirevision=uirevision or title, legend_above=True
    )
    widths = link_widths(probabilities)
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
                    width=widths[j],
                    color=(SAME_CLASS_LINE if same else OTHER_CLASS_LINE)[0],
                    dash="solid" if same else "dash",
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
            colorscale=DIVERGING_COLORSCALE,
            zmid=0.0,
            zmin=-limit,
            zmax=limit,
            colorbar=dict(title=dict(text="weight")),
        )
    )
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=30, b=10), title=dict(text="learned map A"))
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
    """Flattened images (n, h*w) in a grid with one title each (``<br>`` breaks a line)."""
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
            trace = go.Heatmap(
                z=image, colorscale=DIVERGING_COLORSCALE, zmid=0, zmin=-limit, zmax=limit, showscale=False
            )
        else:
            trace = go.Heatmap(z=image, colorscale="gray_r", showscale=False)
        fig.add_trace(trace, row=i // cols + 1, col=i % cols + 1)
    fig.update_xaxes(visible=False, constrain="domain")
    fig.update_yaxes(visible=False, autorange="reversed", constrain="domain")
    for i in range(1, n + 1):  # square pixels: an 8x8 digit reads as a digit at any width
        suffix = "" if i == 1 else str(i)
        fig.layout[f"yaxis{suffix}"].update(scaleanchor=f"x{suffix}", scaleratio=1)
    top = 30 + 14 * max(str(t).count("<br>") for t in titles) if titles else 30  # room for two-line titles
    fig.update_layout(height=rows * tile + 10 + top, width=None, margin=dict(l=5, r=5, t=top, b=5))
    fig.update_annotations(font_size=11)
    return fig


# --- kNN search costs: exact and HNSW, raw against NCA --------------------------------------
def search_cost_chart(
    costs: Sequence[SearchCost], height: int = 380, noise_seconds: float = 0.0
) -> go.Figure:
    """Query time, index size and test error of each k-NN index, with ratios to the first.

    ``costs`` are ``search.timing.knn_search_cost`` results, the first being the reference
    (raw inputs searched exactly). Spaces (raw, NCA) run along each panel's x axis; each
    index kind (exact, HNSW) is one coloured bar series with a legend entry. Hovering a bar
    gives its value, and for times and sizes how it compares with the reference in words
    ("8.0x faster", "1.3x larger"; "too quick" where both times are under
    ``noise_seconds``). Where every time is under ``noise_seconds`` the time panel says so
    instead of drawing bars of timer noise. Error bars carry the error inside, hidden where
    it does not fit (side by side, two labels ran into one another).
    """
    ref = costs[0]

    def speed(c: SearchCost) -> str:
        if c is ref:
            return "reference"
        if max(c.query_seconds, ref.query_seconds) < noise_seconds:
            return "too quick"
        return faster(ref.query_seconds / c.query_seconds)

    def size(c: SearchCost) -> str:
        return "reference" if c is ref else smaller(ref.stored_bytes / c.stored_bytes)

    titles = ["query time (s)", "index size (MB)", "test error (%)"]  # short: a third of 1024 px each
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles, horizontal_spacing=0.08)
    all_noise = max(c.query_seconds for c in costs) < noise_seconds
    for i, kind in enumerate(dict.fromkeys(c.index for c in costs)):
        group = [c for c in costs if c.index == kind]
        panels = {  # column: values, the words on hover, the label on the bar, the hover's number
            1: ([c.query_seconds for c in group], [speed(c) for c in group], None, "%{y:.3g} s"),
            2: ([c.stored_bytes / 1e6 for c in group], [size(c) for c in group], None, "%{y:.3g} MB"),
            3: ([100 * c.error for c in group], None, [f"{100 * c.error:.2f}%" for c in group], "%{y:.2f}%"),
        }
        if all_noise:
            del panels[1]
        for col, (values, words, labels, number) in panels.items():
            bar = go.Bar(
                x=[c.name for c in group], y=values, text=labels, textposition="inside", textangle=0,
                insidetextanchor="end", hovertext=words, name=INDEX_LABELS[kind], legendgroup=kind,
                showlegend=col == min(panels), marker_color=PALETTE[i % len(PALETTE)],
                hovertemplate=f"%{{x}}: {number}" + ("<br>%{hovertext}" if words else ""),
            )  # fmt: skip
            fig.add_trace(bar, 1, col)
    if all_noise:
        _say_too_quick(fig, noise_seconds)
    fig.update_yaxes(rangemode="tozero", exponentformat="none")  # "0.0004", not "400μ"
    fig.update_layout(
        height=height, barmode="group", legend=dict(orientation="h", y=-0.15),
        margin=dict(l=10, r=10, t=TOOLBAR_BAND + 30, b=10), uniformtext=dict(mode="hide", minsize=9),
    )  # fmt: skip
    return fig


def _say_too_quick(fig: go.Figure, noise_seconds: float) -> None:
    """The time panel (the first) without axes, saying why it has no bars."""
    fig.update_xaxes(visible=False, row=1, col=1)
    fig.update_yaxes(visible=False, row=1, col=1)
    left, right = fig.layout.xaxis.domain
    fig.add_annotation(
        text=f"every search under<br>{noise_seconds * 1e3:.0f} ms: too quick<br>to tell apart",
        xref="paper", yref="paper", x=(left + right) / 2, y=0.5, showarrow=False,
    )  # fmt: skip
