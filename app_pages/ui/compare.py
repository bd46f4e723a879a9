"""Glue for the Compare page: cached baselines, NCA reused or fitted on a subset, linked
brushing between the panels.

Large sets are compared on ``comparison.training_subset`` (a stratified 5,000 training
points, every test point): PCA and LDA are fitted and every method scored on it, so a first
visit to MNIST takes seconds. NCA is the Train page's run when it matches, else
``comparison.quick_nca`` on the same subset, kept per session and, for registered datasets,
saved under the cache directory (the kNN page shares those files).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from nca_core.datasets import Dataset
from nca_core.plots import axes, figures, live_charts
from nca_core.runs.comparison import (
    MethodResult,
    class_mix,
    evaluate,
    fit_baseline,
    input_transform,
    model_cache_dir,
    quick_nca,
    subset_rows,
    training_subset,
)
from nca_core.runs.run import recommended_config
from nca_core.util.threads import one_blas_thread

from . import state, thumbnails
from .data import UPLOAD_NAME, session_cached, shared_unless_upload
from .jobs import JobState

BRUSH = "compare-brush"  # session key: {"dataset", "panel", "rows"}, rows of the display subset
# Session key: how often Clear selection was pressed. It is part of the panels' keys, so a
# cleared panel is drawn afresh without its box (and at its first zoom): a box left in the
# browser was sent back with the next redraw now and then, and brought the selection back.
CLEARS = "compare-clears"
SELECTION_PARAMS = (live_charts.BOX, live_charts.PICK)  # a 2-D panel's Vega-Lite selections
PANEL_HEIGHT = 380


@dataclass(frozen=True)
class Fitted:
    """A fitted projection as Compare and the kNN page use it: a map from raw inputs, its
    fit time and what to say about it (``comparison.fit_baseline``'s note)."""

    transform: Callable[[np.ndarray], np.ndarray]
    fit_seconds: float
    note: str = ""


def scored_data(data: Dataset) -> Dataset:
    """What Compare fits baselines on and scores every method with (see the module docstring)."""
    return training_subset(data)




def display_pictures(name: str, data: Dataset, display_index: np.ndarray) -> pd.DataFrame | None:
    """The drawn points' pictures for image data (None for tabular data), keyed by their
    place among the drawn points, which is what the panels' rows call "point";
    ``display_index`` indexes the scored data (``scored_data``)."""
    rows = subset_rows(data)[display_index]
    pictures = thumbnails.for_points(name, data, rows)
    return None if pictures is None else pictures.assign(point=np.arange(len(rows)))


def _fit(method: str, data: Dataset, d: int, standardize: bool) -> Fitted:
    with one_blas_thread():  # the pages share two cores with training jobs and the browser
        return Fitted(*fit_baseline(method, data, d, standardize))


@st.cache_resource(max_entries=32, show_spinner="Fitting PCA and LDA…")
def _shared_fit(method: str, name: str, d: int, standardize: bool, _data: Dataset) -> Fitted:
    """Registered datasets are the same for everyone, so their baselines are shared (read-only)."""
    return _fit(method, _data, d, standardize)


def baseline_fit(method: str, name: str, data: Dataset, d: int, standardize: bool) -> Fitted:
    """PCA or LDA fitted on ``data`` (the scored subset)."""
    if name == UPLOAD_NAME:  # a user's own data never goes into a cache shared between sessions
        return session_cached(
            ("compare-fit", method, d, standardize), name, lambda: _fit(method, data, d, standardize)
        )
    return _shared_fit(method, name, d, standardize, data)


def score(label: str, fitted: Fitted, data: Dataset, k: int, display_index) -> MethodResult:
    """``fitted`` scored with k-NN on ``data`` (the scored subset), named ``label``."""
    with one_blas_thread():  # the pages share two cores with training jobs and the browser
        return evaluate(label, fitted.transform, data, k, display_index, fitted.fit_seconds, fitted.note)


@st.cache_resource(max_entries=32, show_spinner=False)
def _shared_baseline(
    method: str, name: str, d: int, k: int, standardize: bool, _data: Dataset, _display_index
) -> MethodResult:
    return score(method.upper(), _shared_fit(method, name, d, standardize, _data), _data, k, _display_index)


def baseline(
    method: str, name: str, data: Dataset, d: int, k: int, standardize: bool, display_index
) -> MethodResult:
    """PCA or LDA fitted on ``data`` (the scored subset) and scored with k-NN."""
    return shared_unless_upload(
        name, ("compare-baseline", method, d, k, standardize),
        lambda: _shared_baseline(method, name, d, k, standardize, data, display_index),
        lambda: score(method.upper(), baseline_fit(method, name, data, d, standardize), data, k, display_index),
    )  # fmt: skip


def display_points(fitted: Fitted, data: Dataset, display_index) -> np.ndarray:
    """The drawn points of ``data``'s training set mapped by ``fitted``, shape (n_display, d)."""
    return np.asarray(fitted.transform(data.X_train[display_index]), dtype=np.float32)


def _raw_scores(data: Dataset, k: int, standardize: bool) -> MethodResult:
    return evaluate("raw inputs", input_transform(data, standardize), data, k, None, 0.0)


@st.cache_resource(max_entries=16, show_spinner="Scoring k-NN on the raw inputs…")
def _shared_raw(name: str, k: int, standardize: bool, _data: Dataset) -> MethodResult:
    return _raw_scores(_data, k, standardize)


def raw_inputs(name: str, data: Dataset, k: int, standardize: bool) -> MethodResult:
    """k-NN on the inputs of ``data`` (the scored subset) that every method starts from,
    standardised when they are: shared for registered sets."""
    return shared_unless_upload(
        name, ("compare-raw", k, standardize),
        lambda: _shared_raw(name, k, standardize, data),
        lambda: _raw_scores(data, k, standardize),
    )  # fmt: skip


def recommended_standardize(data: Dataset) -> bool:
    return recommended_config(data).standardize


def _matching_train_run(name: str, d: int, standardize: bool, deep: bool):
    """The Train page's run if it has ended and has the same data, d, standardisation and
    kind (linear or deep), else None."""
    active = state.current()
    if (
        active is None
        or active.dataset != name
        or active.job.alive
        or not active.snapshots
        or active.run.config.n_components != d
        or active.run.config.standardize != standardize
        or (active.run.config.encoder == "mlp") != deep
    ):
        return None
    return active


def _full_epochs(active) -> int:
    return max((s.epoch for s in active.snapshots if s.fraction >= 1), default=0)


def train_page_fit(name: str, d: int, standardize: bool, deep: bool = False) -> tuple[Fitted, str] | None:
    """The Train page's run when it matches and finished (a stopped run is part-trained, so
    it would understate NCA), with where it came from in words; else None."""
    active = _matching_train_run(name, d, standardize, deep)
    if active is None or active.job.state != JobState.FINISHED:
        return None
    source = (
        f"the run from the Train page ({_full_epochs(active)} epochs), whose fit time counts training "
        "only, not the Train page's slow motion or scoring"
    )
    return Fitted(active.run.transform, active.run.fit_seconds), source


def train_page_note(name: str, d: int, standardize: bool, deep: bool = False) -> str | None:
    """Why a Train page run with these settings is not the one shown (it was stopped), if so."""
    active = _matching_train_run(name, d, standardize, deep)
    if active is None or active.job.state == JobState.FINISHED:
        return None
    return (
        f"The Train page's run was stopped after {_full_epochs(active)} of {active.run.config.max_iter} "
        "epochs, so it is not used here: a part-trained map would understate NCA."
    )


def _quick_fit(name: str, data: Dataset, d: int, standardize: bool, deep: bool):
    """``quick_nca`` with a progress bar; saved under the cache directory unless uploaded."""
    label = "deep NCA" if deep else "NCA"
    bar = st.progress(0.0, text=f"Training {label} with the recommended settings…")

    def progress(epoch: int, epochs: int) -> None:
        bar.progress(epoch / epochs, text=f"Training {label}: epoch {epoch} / {epochs}")

    cache = None if name == UPLOAD_NAME else model_cache_dir()  # an upload never goes to disk
    encoder = "mlp" if deep else "linear"
    quick = quick_nca(data, d, standardize, encoder=encoder, cache_dir=cache, progress=progress)
    bar.empty()
    return quick


def _quick_source(quick, n: int, deep: bool) -> str:
    what = "of an MLP with the Student-t kernel and a memory bank " if deep else ""
    points = f"a stratified subset of {quick.n_train:,} of the {n:,}" if quick.n_train < n else f"all {n:,}"
    source = f"a fit {what}on {points} training points ({quick.epochs} epochs, recommended settings)"
    if quick.from_cache and quick.fit_seconds is None:
        return source + ", saved by an earlier visit and loaded from the cache (its fit time was not saved)"
    if quick.from_cache:
        return source + ", saved by an earlier visit and loaded from the cache"
    return source + ", trained on this visit"


def nca_run(name: str, data: Dataset, d: int, standardize: bool, deep: bool = False) -> tuple[Fitted, str]:
    """(NCA acting on raw inputs, where it came from in words): the Train page's matching
    run, else ``quick_nca``'s fit on a stratified subset, kept for the session."""
    from_train_page = train_page_fit(name, d, standardize, deep)
    if from_train_page is not None:
        return from_train_page
    quick = session_cached(
        ("quick-nca", name, d, standardize, deep), name, lambda: _quick_fit(name, data, d, standardize, deep)
    )
    seconds = quick.fit_seconds if quick.fit_seconds is not None else float("nan")
    return Fitted(quick.model.transform, seconds), _quick_source(quick, len(data.y_train), deep)


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
        f"stratified subset of {m:,} (and all {len(data.y_test):,} test points), so the page is ready "
        "in seconds. The kNN speed page searches them all."
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
    """One set of axis ranges covering every drawn panel (2-D or 3-D alike)."""
    drawn = [r.embedding[:, : min(r.embedding.shape[1], 3)] for r in results if r.embedding.shape[1] >= 2]
    dims = {e.shape[1] for e in drawn}
    return axes.padded_ranges(drawn) if len(dims) == 1 else None


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
) -> MethodResult:
    """One method in ``cell`` (an ``st.empty``, replacing what it held): its picture of
    ``points`` (the display subset) at once, one scale on both axes, the brushed points
    standing out; then its kNN accuracies and fit time, once ``result()`` has measured them
    (k-NN on thousands of points takes a moment: the picture need not wait for it).
    ``result`` may also be the measured result itself. Returns it."""
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
        _scores(result, k)
    return result


def _scores(result: MethodResult, k: int) -> None:
    line = f"{k}-NN leave-one-out: **{ACCURACY_FORMAT.format(result.train_accuracy)}**"
    if result.test_accuracy is not None:
        line += f" · test: **{ACCURACY_FORMAT.format(result.test_accuracy)}**"
    if np.isfinite(result.fit_seconds):
        line += " · " + f"fit {fit_time(result.fit_seconds)} s".replace(" ", "\u00a0")  # on one line
    st.markdown(line)
    if result.note:
        st.warning(result.note, icon=":material/info:")


def _picture(label: str, points: np.ndarray, labels, classes, ranges, dataset: str, dims: int, pictures) -> None:
    key = f"compare-{label}"
    if dims == 3:  # Vega-Lite has no 3-D; a 3-D panel takes no selection
        fig = figures.embedding_scatter(points[:, :3], labels, classes, height=PANEL_HEIGHT, ranges=ranges,
                                        uirevision=key, legend_above=True)  # fmt: skip
        st.plotly_chart(fig, key=key)
        return
    fresh_after_clears = f"{key}-{st.session_state.get(CLEARS, 0)}"  # see CLEARS
    _brushing_chart(fresh_after_clears, label, points[:, :2], labels, classes, ranges, dataset, pictures)


def _brushing_chart(
    key: str, label: str, points: np.ndarray, labels, classes, ranges, dataset: str, pictures
) -> None:
    """A 2-D panel as a Vega-Lite chart (its chunk loads far faster than Plotly's): a box or
    a click in it becomes the brush, whose rows stand out in every panel; ``pictures``
    (``display_pictures``) show on hover."""
    ranges = ranges if ranges is not None else axes.padded_ranges([points])
    spec = live_charts.embedding_spec(classes, ranges, height=PANEL_HEIGHT, brushing=True, thumbnails=pictures)
    rows = live_charts.brushing_rows(points, labels, classes, brushed_rows(dataset))
    on_select = partial(_take_selection, key, label, dataset, points)
    st.vega_lite_chart(
        None, live_charts.embedding_data(spec, rows), key=key, on_select=on_select, selection_mode=SELECTION_PARAMS
    )
