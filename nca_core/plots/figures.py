"""Plotly figure builders: pure functions from arrays to ``go.Figure``: an embedding's
scatter, the links from a chosen point to the points it picks, the learned map and images.

Needs plotly, which comes with the ``app`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

try:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
except ImportError as exc:  # the library alone is installed without plotly
    raise ImportError("nca_core.plots.figures needs plotly: pip install 'nca-explorer[app]'") from exc

from .colours import DIVERGING_COLORSCALE, OTHER_CLASS_LINE, SAME_CLASS_LINE, class_colors, class_shapes

__all__ = [
    "component_images",
    "embedding_scatter",
    "image_grid",
    "link_widths",
    "map_heatmap",
    "neighbour_links",
]


def _figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plain dicts without per-property validation: these builders run
    several times a second while a run is drawn live, and validation dominated their cost.
    The tests check the structure instead."""
    return go.Figure(dict(data=data, layout=layout), _validate=False)


def _class_marker(colour: str, shape, size: float, three_d: bool) -> dict:
    """A class's marker: its colour and its shape (``colours.class_shapes``); a hollow one's
    rim as wide as a filled shape's edge reads at that size."""
    marker = dict(color=colour, size=size, opacity=0.8, symbol=shape.plotly_3d if three_d else shape.plotly)
    if shape.hole and not three_d:
        marker["line"] = dict(width=max(1.5, size / 4))
    return marker


def _class_traces(Z, y, classes, three_d: bool, marker_size: float, hover_text=None) -> list[dict]:
    colors, shapes = class_colors(len(classes)), class_shapes(len(classes))
    traces = []
    for c, name in enumerate(classes):
        idx = np.flatnonzero(y == c)
        trace = dict(
            type="scatter3d" if three_d else "scatter",
            mode="markers",
            name=str(name),
            legendgroup=str(name),
            customdata=idx,
            marker=_class_marker(colors[c], shapes[c], marker_size, three_d),
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


# Lines from a chosen point to the points it picks: none below this p_ij (too faint to
# read), and widths proportional to p_ij, LINK_WIDEST pixels for the likeliest: wider
# lines to neighbours a few pixels away merge into one dark patch, thinner than a pixel
# vanish on a projector.
LINK_MIN_PROBABILITY = 0.005
LINK_WIDEST = 5.0
_LINK_THINNEST = 1.0


def link_widths(p: np.ndarray) -> np.ndarray:
    """Line widths, in pixels, for the probabilities ``p`` of one anchor's links:
    ``LINK_WIDEST`` times p_ij over the largest, and at least one pixel."""
    p = np.asarray(p, dtype=np.float64)
    strongest = float(p.max()) if p.size and p.max() > 0 else 1.0
    return np.maximum(LINK_WIDEST * p / strongest, _LINK_THINNEST)


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
    title = "rows of A as images: the pixels each output coordinate reads"
    return image_grid(A, image_shape, [f"z{i + 1}" for i in range(len(A))], diverging=True, title=title)


def image_grid(
    images: np.ndarray,
    image_shape: tuple[int, int],
    titles: Sequence[str],
    *,
    diverging: bool = False,
    columns: int = 8,
    tile: int = 110,
    title: str | None = None,
) -> go.Figure:
    """Flattened images (n, h*w) in a grid with one title each (``<br>`` breaks a line),
    under the figure's ``title``, the first words a screen reader reads of it."""
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
    top += 30 if title else 0
    fig.update_layout(height=rows * tile + 10 + top, width=None, margin=dict(l=5, r=5, t=top, b=5))
    if title:
        fig.update_layout(title=dict(text=title, x=0.01, xanchor="left", font_size=14))
    fig.update_annotations(font_size=11)
    return fig
