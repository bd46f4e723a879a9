"""What the Compare page draws: a panel per method (its picture, then its k-NN scores),
linked brushing between the panels, and the table of every method's scores.

A 2-D panel is a Vega-Lite chart: a box or a click in it becomes the brush, whose points
stand out in every panel; a 3-D panel is a Plotly figure and takes no selection.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.ui import thumbnails
from app_pages.ui.app_data import dataset_title
from nca_core.datasets import Dataset
from nca_core.plots import axes, descriptions, edges, figures, live_charts
from nca_core.runs.comparison import MethodResult, class_mix, subset_rows

BRUSH = "compare-brush"  # session key: {"dataset", "panel", "rows"}, rows of the display subset
# Session key: how often Clear selection was pressed. It is part of the panels' keys, so a
# cleared panel is drawn afresh without its box (and at its first zoom): a box left in the
# browser was sent back with the next redraw now and then, and brought the selection back.
CLEARS = "compare-clears"
SELECTION_PARAMS = (live_charts.BOX, live_charts.PICK)  # a 2-D panel's Vega-Lite selections
PANEL_HEIGHT = 380


def display_pictures(name: str, data: Dataset, display_index: np.ndarray) -> pd.DataFrame | None:
    """The drawn points' pictures for image data (None for tabular data), keyed by their
    place among the drawn points, which is what the panels' rows call "point";
    ``display_index`` indexes the scored data (``compare.scored_data``)."""
    rows = subset_rows(data)[display_index]
    pictures = thumbnails.for_points(name, data, rows)
    return None if pictures is None else pictures.assign(point=np.arange(len(rows)))


ACCURACY_FORMAT = "{:.1%}"  # accuracies and errors, in the table and the panels alike
MISSING = "—"  # a fit time not known (a cached model saved without it), a missing test set


def fit_time(seconds: float) -> str:
    """A fit time in seconds to two decimals, and "< 0.01" rather than "0.00" for a fit
    (PCA, LDA on small sets) too quick to show that way."""
    return "< 0.01" if seconds < 0.005 else f"{seconds:.2f}"


def results_table(results: list[MethodResult], k: int) -> None:
    """Every method's dimensions, k-NN accuracies and fit time, numbers kept for sorting but
    shown one way: accuracies as in the panels, an unknown value as a dash."""
    table = pd.DataFrame(
        [
            {
                "method": r.name,
                "dimensions": r.dimensions,
                f"{k}-NN train (leave-one-out)": r.train_accuracy,
                f"{k}-NN test": r.test_accuracy,
                "fit time (s)": r.fit_seconds,
            }
            for r in results
        ]
    )
    accuracy = {f"{k}-NN train (leave-one-out)": ACCURACY_FORMAT, f"{k}-NN test": ACCURACY_FORMAT}
    shown = table.style.format({**accuracy, "fit time (s)": fit_time}, na_rep=MISSING)
    # the browser draws a missing number from ``placeholder``, not from the Styler
    st.dataframe(shown, hide_index=True, placeholder=MISSING)


def subset_note(data: Dataset, scored: Dataset) -> str | None:
    """Says in words when Compare works on a subset of the training set."""
    n, m = len(data.y_train), len(scored.y_train)
    if m == n:
        return None
    return (
        f"{n:,} training points: PCA, LDA and a fresh NCA are fitted, and every method scored, on a "
        f"stratified subset of {m:,} (and all {len(data.y_test):,} test points), which bounds the work "
        "whatever the set's size. The kNN speed page searches them all."
    )


# A panel's width: three fit side by side at 1440 pixels beside the sidebar, two at 1024.
PANEL_WIDTH = 320


def panel_grid(n: int) -> list:
    """Panels of ``PANEL_WIDTH`` in one row that wraps: three side by side on a 1440-pixel
    screen, two a row on a 1024-pixel one. Each cell is a container drawn into later (so a
    slow panel never holds up the others)."""
    row = st.container(horizontal=True, gap="small")
    return [row.container(width=PANEL_WIDTH).empty() for _ in range(n)]


def shared_ranges(results: list[MethodResult]) -> list[list[float]] | None:
    """One set of axis ranges covering every drawn panel: in 2-D, the bulk of each panel's
    points (the few past it are drawn on the edge, ``edges``); in 3-D, all of them."""
    drawn = [r.embedding[:, : min(r.embedding.shape[1], 3)] for r in results if r.embedding.shape[1] >= 2]
    dims = {e.shape[1] for e in drawn}
    if len(dims) != 1:
        return None
    return axes.bulk_ranges(drawn) if dims == {2} else axes.padded_ranges(drawn)


# --- linked brushing -------------------------------------------------------------------------
def brushed_rows(name: str) -> np.ndarray | None:
    """Rows of the display subset chosen in any panel for dataset ``name``, else None."""
    brush = st.session_state.get(BRUSH)
    return brush["rows"] if brush is not None and brush["dataset"] == name else None


def _selected_rows(event, points: np.ndarray) -> np.ndarray:
    """Display rows picked in a panel drawn at ``points``: inside its box, else clicked."""
    try:
        selection = event["selection"]
    except (KeyError, TypeError):
        return np.empty(0, dtype=np.int64)
    return live_charts.chosen_points(selection, points)


def _take_selection(chart_key: str, panel: str, name: str, points: np.ndarray) -> None:
    """A panel's selection changed: it becomes the brush every panel shows (none: cleared)."""
    rows = _selected_rows(st.session_state.get(chart_key), points)
    if len(rows):
        st.session_state[BRUSH] = {"dataset": name, "panel": panel, "rows": rows}
    else:
        st.session_state.pop(BRUSH, None)


def _clear_brush() -> None:
    st.session_state.pop(BRUSH, None)
    st.session_state[CLEARS] = st.session_state.get(CLEARS, 0) + 1


def brush_summary(name: str, labels: np.ndarray, classes, three_d: bool) -> None:
    """How many points are chosen, in which panel, their class mix, and a way to clear them;
    without a selection, how to make one."""
    rows = brushed_rows(name)
    if three_d:
        st.caption("Pick 2-D to select points in one panel and see the same points in the others.")
        return
    if rows is None:
        st.caption(
            "Drag a box over points in any panel: the same points stand out in every panel, the "
            "others fade. A click picks one point, a double click clears. Shift-drag pans, "
            "ctrl-scroll zooms."
        )
        return
    mix = class_mix(labels, rows, classes)
    shown = " · ".join(f"{count / len(rows):.0%} {cls}" for cls, count in mix[:6])
    if len(mix) > 6:
        shown += f" · {len(mix) - 6} more classes"
    line = st.container(horizontal=True, vertical_alignment="center")
    line.markdown(
        f"**{len(rows):,} of {len(labels):,} points** selected in {st.session_state[BRUSH]['panel']}: {shown}"
    )
    line.button(
        "Clear selection", key="compare-clear", icon=":material/deselect:", on_click=_clear_brush,
        help="Every point in colour again; the panels' zoom goes back to the start too.",
    )  # fmt: skip


def panel(
    cell,
    label: str,
    points: np.ndarray,
    labels,
    classes,
    k: int,
    result: MethodResult | Callable[[], MethodResult],
    ranges=None,
    *,
    dataset: str = "",
    pictures: pd.DataFrame | None = None,
    hidden: bool = False,
) -> MethodResult:
    """One method in ``cell`` (an ``st.empty``, replacing what it held): its picture of
    ``points`` (the display subset) at once, one scale on both axes, the brushed points
    standing out; then its kNN accuracies and fit time, once ``result()`` has measured them
    (k-NN on thousands of points takes a moment: the picture need not wait for it).
    ``result`` may also be the measured result itself. Returns it. ``hidden``: the
    accuracies are measured but not shown, so a class guesses the ranking first."""
    with cell.container():
        st.subheader(label)
        dims = min(points.shape[1], 3)
        if dims == 1:
            st.info("LDA found a single direction (two classes): nothing to draw in 2-D.")
        else:
            _picture(label, points, labels, classes, ranges, dataset, dims, pictures)
        if callable(result):
            with st.spinner(f"Scoring {k}-NN…"):
                result = result()
        _scores(result, k, hidden)
    return result


def _scores(result: MethodResult, k: int, hidden: bool = False) -> None:
    if hidden:
        line = f"{k}-NN scores: hidden until Reveal"
    else:
        line = f"{k}-NN leave-one-out: **{ACCURACY_FORMAT.format(result.train_accuracy)}**"
        if result.test_accuracy is not None:
            line += f" · test: **{ACCURACY_FORMAT.format(result.test_accuracy)}**"
    if np.isfinite(result.fit_seconds):
        line += " · " + f"fit {fit_time(result.fit_seconds)} s".replace(" ", "\u00a0")  # on one line
    st.markdown(line)
    if result.note:
        st.warning(result.note, icon=":material/info:")


def _picture(
    label: str, points: np.ndarray, labels, classes, ranges, dataset: str, dims: int, pictures
) -> None:
    key = f"compare-{label}"
    if dims == 3:  # Vega-Lite has no 3-D; a 3-D panel takes no selection
        fig = figures.embedding_scatter(points[:, :3], labels, classes, height=PANEL_HEIGHT, ranges=ranges,
                                        uirevision=key, legend_above=True, title=f"{label}, 3-D")  # fmt: skip
        st.plotly_chart(fig, key=key)
        return
    fresh_after_clears = f"{key}-{st.session_state.get(CLEARS, 0)}"  # see CLEARS
    _brushing_chart(fresh_after_clears, label, points[:, :2], labels, classes, ranges, dataset, pictures)


def _brushing_chart(
    key: str, label: str, points: np.ndarray, labels, classes, ranges, dataset: str, pictures
) -> None:
    """A 2-D panel as a Vega-Lite chart (its chunk loads far faster than Plotly's): a box or
    a click in it becomes the brush, whose rows stand out in every panel; ``pictures``
    (``display_pictures``) show on hover. Its axes follow the bulk of the points, the few
    past them drawn on the edge."""
    ranges = ranges if ranges is not None else axes.bulk_ranges([points])
    of = dataset_title(dataset) if dataset else "the data"
    words = descriptions.embedding_description(f"{label}'s picture of {of}", classes, len(points))
    spec = live_charts.embedding_spec(
        classes, ranges, height=PANEL_HEIGHT, brushing=True, thumbnails=pictures, description=words
    )
    spec = edges.with_edges(spec, ranges, live_charts.POINT_AREA)
    rows = live_charts.brushing_rows(points, labels, classes, brushed_rows(dataset))
    on_select = partial(_take_selection, key, label, dataset, points)
    st.vega_lite_chart(
        None,
        live_charts.embedding_data(spec, rows),
        key=key,
        on_select=on_select,
        selection_mode=SELECTION_PARAMS,
    )
