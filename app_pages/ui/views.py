"""Rendering pieces of the Train page: live progress, replay, inspection, downloads."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import streamlit as st

from nca_core.config.rules import LARGE_SET_SAMPLES
from nca_core.config.settings import BY_NAME
from nca_core.datasets import Dataset
from nca_core.objective.function import selection_probabilities
from nca_core.plots import axes, colours, figures, live_charts, live_curves, live_picture, replay
from nca_core.plots.gif import replay_gif
from nca_core.plots.regions import DRAWN_WIDTHS, decision_regions, region_box
from nca_core.runs.demo import SEPARATED, DemoStart
from nca_core.runs.run import EVAL_POINTS, blow_up_note
from nca_core.util.formatting import percent

from . import notices, presentation, thumbnails
from .data import dataset_title
from .frames import progress as progress_of
from .jobs import JobState
from .state import ActiveRun

# A 3-D chart is a Plotly WebGL figure built afresh for each frame (about a second in
# headless Chromium without a GPU), so a live 3-D view is polled less often than 2-D.
THREE_D_REDRAW_SECONDS = 1.5
# Until a run's start frame exists the picture is polled this often, so that it shows, and
# training (which holds the start frame until it is drawn) goes on, as soon as they can.
FIRST_FRAME_POLL_SECONDS = 0.2
# A paused run's picture changes only after a click (which reruns the page), so it is
# polled this seldom: redrawing the same frame ten times a second kept most of a core busy.
# Pausing happens at the next frame, which the page then shows within this time.
RESTING_POLL_SECONDS = 0.5
# The metrics are drawn with the picture, the curves apart: they are redrawn this often, or
# with the picture where it is slower (a curve a second behind its metric, 98% beside 50%,
# read as a contradiction).
CURVES_SECONDS = 0.5


def redraw_seconds(
    n_train: int, n_components: int, first_frame: bool = False, resting: bool = False
) -> tuple[float, float]:
    """How often a live run polls its worker: (the picture with the metrics, the curves).

    Ten times a second for small sets, whose epochs take a few tens of milliseconds; larger
    ones take up to seconds per epoch, and redrawing thousands of points costs CPU that
    training needs (on 2 cores MNIST's epochs are far slower beside frequent redraws;
    benchmarks/RESULTS.md, "MNIST live on the Train page"). The curves, a few hundred
    points, are redrawn every ``CURVES_SECONDS``, or with the picture where it is slower.
    While a run waits for its ``first_frame`` (its start waits to be drawn), the picture is
    polled every ``FIRST_FRAME_POLL_SECONDS`` whatever the size; otherwise, while it is
    ``resting`` (paused, no step to take), at most every ``RESTING_POLL_SECONDS``.
    """
    picture = 0.1 if n_train <= 2000 else 0.2 if n_train <= LARGE_SET_SAMPLES else 1.0
    curves = max(CURVES_SECONDS, picture)
    picture = THREE_D_REDRAW_SECONDS if n_components == 3 else picture
    if first_frame:
        return min(picture, FIRST_FRAME_POLL_SECONDS), curves
    if resting:
        return max(picture, RESTING_POLL_SECONDS), max(curves, RESTING_POLL_SECONDS)
    return picture, curves


STATE_TEXT = {
    JobState.QUEUED: "waiting for a free training slot",
    JobState.RUNNING: "training",
    JobState.PAUSED: "paused",
    JobState.FINISHED: "finished",
    JobState.STOPPED: "stopped",
    JobState.FAILED: "stopped with an error",
}


def _fmt_seconds(seconds: float) -> str:
    seconds = max(0.0, seconds)
    return f"{seconds:.1f} s" if seconds < 60 else f"{int(seconds // 60)} min {int(seconds % 60):02d} s"


def _fmt_speed(epochs_per_second: float) -> str:
    """A slow run's speed as time per epoch: "40.0 s per epoch" rather than "0.0 epochs/s"."""
    if epochs_per_second >= 0.95:
        return f"{epochs_per_second:.1f} epochs/s"
    return f"{_fmt_seconds(1 / epochs_per_second)} per epoch"


def accuracy_metric(active: ActiveRun) -> None:
    """Presentation mode's one number: the latest k-NN accuracy and its change since the
    start (test set when there is one, else leave-one-out)."""
    scored = [s for s in active.snapshots if s.train_accuracy is not None]
    if not scored:
        return
    test = scored[0].test_accuracy is not None
    first, last = ((s.test_accuracy if test else s.train_accuracy) for s in (scored[0], scored[-1]))
    st.metric(
        f"{'Test' if test else 'Leave-one-out'} {active.run.config.k}-NN accuracy (start {percent(first)})",
        percent(last),
        f"{100 * (last - first):+.0f} points" if len(scored) > 1 else None,
    )


def status_text(active: ActiveRun) -> str:
    """One line: epoch, state, elapsed (frozen once the run ends), time left, speed, device."""
    job, config = active.job, active.run.config
    status = STATE_TEXT.get(job.state, job.state)
    if job.state == JobState.QUEUED:
        wait = job.queue_wait
        estimate = f", about {_fmt_seconds(wait)}" if wait is not None else ", estimating the wait"
        status += f" (place {job.queue_position} in line{estimate})"
    elif job.alive and job.stop_requested:
        status = "stopping at the next frame"
    elif job.state == JobState.RUNNING and job.pause_requested:
        step_to = job.stepping_to
        status = (
            "pausing at the next frame" if step_to is None else f"stepping to epoch {replay.epochs_text(step_to)}"
        )
    latest = job.latest
    if latest is None:  # no frame yet: say so rather than show "Epoch 0"
        return f"Preparing the run · {status} · {_fmt_seconds(job.elapsed)} elapsed"
    text = f"Epoch {replay.epoch_label(latest)} / {config.max_iter} · {status} · {_fmt_seconds(job.elapsed)} elapsed"
    if job.state == JobState.RUNNING:
        left = job.seconds_left
        text += " · estimating the time left" if left is None else f" · about {_fmt_seconds(left)} left"
    if _in_slow_start(job, latest):
        text += " · slow-motion start"  # its pace is the page's, not the training's
    elif job.epochs_per_second:
        text += f" · {_fmt_speed(job.epochs_per_second)}"
    device = getattr(active.run.model, "device_", config.device)
    return text + f" · device {device}"


def _in_slow_start(job, latest) -> bool:
    """Whether a training job is showing ``latest`` in its slow-motion start (``pacing.Pace``)."""
    in_slow_start = getattr(getattr(job, "pace", None), "in_slow_start", None)
    return job.state == JobState.RUNNING and in_slow_start is not None and in_slow_start(latest)


def progress(active: ActiveRun) -> None:
    """Progress bar with epoch count, elapsed time, ETA, speed and the device."""
    latest = active.job.latest
    done = progress_of(latest) if latest is not None else 0.0
    st.progress(min(1.0, done / max(active.run.config.max_iter, 1)), text=status_text(active))
    note = blow_up_note(active.snapshots)
    if note:
        st.warning(note, icon=":material/warning:")


def metrics(active: ActiveRun, demo: DemoStart | None = None) -> None:
    """Epoch, objective and accuracy of the latest frame (drawn with the picture, so they
    never lag it); accuracies from the latest whole epoch that has them. A start that
    already separates the classes gets a word on where to start instead (``demo``'s start
    when the dataset has one)."""
    snaps = active.snapshots
    latest = snaps[-1]
    config = active.run.config
    # Short labels, details in the help: three metrics share a third of a 1024-pixel screen.
    cols = st.columns(3)
    cols[0].metric("Epoch", replay.epoch_label(latest), help=f"Epochs done, of {config.max_iter}.")
    label = {"f": "mean pᵢ", "g": "mean log pᵢ", "mcml": "−KL"}[config.objective]
    # g and -KL are negative: a digit fewer keeps "-0.700" as wide as f's "0.9939", which a
    # third of a 1024-pixel screen shows whole
    decimals = 4 if config.objective == "f" else 3
    # The start frame's change, 0, has its badge too (greyed, no arrow): a badge that came
    # with the second frame made the row taller and the picture below jump down.
    delta = latest.objective - snaps[0].objective
    cols[1].metric(
        label,
        f"{latest.objective:.{decimals}f}",
        f"{delta:+.{decimals}f}",
        help="The objective per point, and its change since the start.",
        delta_color="normal" if delta else "off",
        delta_arrow="auto" if delta else "off",
    )
    scored = next((s for s in reversed(snaps) if s.train_accuracy is not None), None)
    if scored is not None and scored.test_accuracy is not None:
        sampled = len(active.run.data.y_test) > EVAL_POINTS
        where = f"a stratified sample of {EVAL_POINTS:,} test points" if sampled else "the test set"
        cols[2].metric(
            f"Test {config.k}-NN",
            percent(scored.test_accuracy, 1),
            help=f"{config.k}-NN accuracy on {where} (epoch {replay.epoch_label(scored)}).",
        )
    elif scored is not None:
        cols[2].metric(
            f"LOO {config.k}-NN",
            percent(scored.train_accuracy, 1),
            help=f"Leave-one-out {config.k}-NN accuracy on training points (epoch {replay.epoch_label(scored)}).",
        )
    start = snaps[0]
    if start.test_accuracy is not None and start.test_accuracy >= SEPARATED and config.init != "random":
        instead = demo.init if demo is not None and demo.init != config.init else "random"
        st.caption(
            f"What to notice: the {BY_NAME['init'].label_of(config.init)} start already scores "
            f"{percent(start.test_accuracy)}, "
            "so NCA has little to move. To watch it separate the classes by itself, choose "
            f"**Start from: {instead}**."
        )
    if latest.dof is not None:
        what = "learnt" if config.dof == "learn" else "fixed"
        st.caption(f"Student-t degrees of freedom: {latest.dof:.3g} ({what}).")


def curves(active: ActiveRun) -> None:
    """Objective and accuracy against epoch, whole epochs only."""
    snaps = [s for s in active.snapshots if s.fraction >= 1.0]
    config = active.run.config
    epochs = [s.epoch for s in snaps]
    st.vega_lite_chart(
        live_curves.objective_rows(epochs, [s.objective for s in snaps]),
        live_curves.objective_spec(config.objective),
        key="objective-curve",
    )
    st.vega_lite_chart(
        live_curves.accuracy_rows(
            epochs, [s.train_accuracy for s in snaps], [s.test_accuracy for s in snaps]
        ),
        live_curves.accuracy_spec(config.k),
        key="accuracy-curve",
    )


def embedding(
    active: ActiveRun, data: Dataset, *, select: bool = False, snapshot_index: int = -1, big: bool = False
) -> None:
    """The embedding of one frame; ``select``: the run has ended (regions can be shaded, a
    3-D view's points clicked). ``big``: presentation mode's size.

    A 2-D embedding is one Vega-Lite chart while the run trains and after it ends
    (``_picture``), so the last frame stays on screen as it is; a 3-D one is a Plotly figure.
    """
    snaps = active.snapshots
    snap = snaps[snapshot_index]
    if snap.embedding.shape[1] > 3:
        st.caption(f"d = {snap.embedding.shape[1]}: showing the first two coordinates of the embedding.")
    if snap.embedding.shape[1] != 3:
        _picture(active, data, snap, regions=select, big=big)
        return
    fig = figures.embedding_scatter(
        snap.embedding[:, :3],
        active.run.display_labels,
        data.classes,
        ranges=axes.steady_ranges([s.embedding[:, :3] for s in snaps]),
        uirevision=f"run-{active.job.ticket}",
        title=f"epoch {replay.epoch_label(snap)}",
        hover_text=_hover_text(active, data) if select else None,
        height=presentation.CHART_HEIGHT if big else 520,
    )
    if big:
        fig.update_layout(font=presentation.PLOTLY_FONT)
        fig.update_traces(marker_size=presentation.PLOTLY_MARKER)
    if select:
        st.plotly_chart(
            fig,
            key="final-embedding",
            on_select=lambda: _remember_plotly_click(active),
            selection_mode=("points",),
        )
        return
    st.caption(
        f"While training, the 3-D view is redrawn every {THREE_D_REDRAW_SECONDS:g} s (a 3-D chart takes "
        "longer to build than a 2-D one); the replay afterwards has every epoch."
    )
    st.plotly_chart(fig, key="live-embedding")


PICTURE_KEY = "embedding"  # the 2-D chart's key, live and final: one chart for the whole run
REGIONS_KEY = "regions"


def _first_draw(active: ActiveRun, ended: bool) -> bool:
    """Whether this is a live run's first picture, its start frame, which goes out without
    its hover pictures, encoded and sent in a good part of the wait for it on MNIST
    (benchmarks/RESULTS.md); they follow with the next redraw (of the same frame while a
    slow-motion start holds it)."""
    return not ended and len(active.snapshots) == 1 and not active.job.start_released


def _picture(active: ActiveRun, data: Dataset, snap, *, regions: bool, big: bool) -> None:
    """The 2-D picture: the points on settling axes, hover pictures for image data, and for
    a clicked point lines to the points it picks with width by p_ij, redrawn every frame.

    The spec depends only on the axes and the size; the frame, the lines and the regions are
    its tables, so from frame to frame, and from the last frame to the final chart, the
    browser keeps the chart and swaps the points (``live_picture.picture_spec``). After the
    run, a toggle below it shades the k-NN decision regions.
    """
    run = active.run
    ranges = axes.settled_ranges([s.embedding[:, :2] for s in active.snapshots])
    area = presentation.POINT_AREA if big else live_charts.POINT_AREA
    height = axes.picture_height(ranges)  # presenting, the window's (presentation.big_spec)
    pictures = thumbnails.for_points(
        active.dataset, data, run.display_index, with_pictures=not _first_draw(active, ended=regions)
    )
    names, values = _inputs_behind(active, data)
    spec = live_picture.picture_spec(
        data.classes, ranges, height=height, thumbnails=pictures, inputs=names, point_area=area
    )
    Z, labels = snap.embedding, run.display_labels
    tables = {}
    row = inspected_row(active)
    if row is not None and row < len(Z):
        p = selection_probabilities(Z, row, snap.dof)
        tables = {
            "links": live_picture.link_rows(Z, labels, row, p),
            "anchor": live_picture.anchor_rows(Z, row),
        }
    if regions and st.session_state.get(REGIONS_KEY):
        sizes = (presentation.PLOT_HEIGHTS, presentation.PLOT_WIDTHS) if big else ((height,), DRAWN_WIDTHS)
        tables["regions"] = _regions(active, snap, ranges, *sizes)
    rows = live_picture.picture_rows(Z, labels, data.classes, run.display_index, values)
    spec = live_picture.picture_data(spec, rows, **tables)
    with presentation.picture_container() if big else nullcontext():
        st.vega_lite_chart(
            None,
            presentation.big_spec(spec) if big else spec,
            height="stretch" if big else "content",
            key=PICTURE_KEY,
            on_select=lambda: _remember_click(active),
            selection_mode=[live_charts.PICK],
        )
    if regions:
        st.toggle(
            "Shade k-NN decision regions",
            key=REGIONS_KEY,
            help="Colour the plane by the class its k nearest points vote for, as a k-NN "
            "classifier in this embedding would.",
        )


def _regions(active: ActiveRun, snap, ranges, heights: tuple[int, ...], widths: tuple[int, ...]):
    """The regions layer's table for ``snap``, computed once per frame, axes and sizes the
    plot may take (clicks rerun the page), or None with a warning when no point is finite."""
    key = (active.job.ticket, id(snap), repr(ranges), heights, widths)
    kept = st.session_state.get("regions-picture")
    if kept is None or kept[0] != key:
        box = region_box(ranges, heights, widths)
        picture = decision_regions(
            snap.embedding,
            active.run.display_labels,
            len(active.run.data.classes),
            box,
            k=active.run.config.k,
        )
        rows = None if picture is None else live_picture.region_rows(picture.url, box)
        kept = st.session_state["regions-picture"] = (key, rows)
    if kept[1] is None:
        st.warning(
            "No point of this embedding is finite: there are no regions to shade.", icon=":material/warning:"
        )
    return kept[1]


def _inputs_behind(active: ActiveRun, data: Dataset) -> tuple[list[str], np.ndarray | None]:
    """For a linear map of tabular data, the two inputs it leans on most and their raw
    values at each drawn point, so a hover says why the point sits where it does."""
    run = active.run
    if data.image_shape is not None or not run.is_linear:
        return [], None
    top = run.top_features(2)
    return [data.feature_labels[j] for j in top], data.X_train[run.display_index][:, top]


def _hover_text(active: ActiveRun, data: Dataset) -> list[str]:
    """The 3-D view's hover: each point's training row and ``_inputs_behind``."""
    rows = [f"training point #{i}" for i in active.run.display_index]
    names, values = _inputs_behind(active, data)
    if values is None:
        return rows
    return [f"{r}<br>{names[0]} {a:.4g}<br>{names[1]} {b:.4g}" for r, (a, b) in zip(rows, values)]


INSPECTED_KEY = "inspected-point"


def inspected_row(active: ActiveRun) -> int | None:
    """The display row last clicked in ``active``'s picture (or final 3-D view), if any.

    Kept in session state by the chart's callback rather than read from the chart: the 2-D
    picture is drawn in a fragment while the run trains and in the page after it ends, and
    the Inspect tab, outside both, reads it too.
    """
    ticket, row = st.session_state.get(INSPECTED_KEY, (None, None))
    return row if ticket == active.job.ticket else None


def _remember_click(active: ActiveRun) -> None:
    """on_select of the 2-D picture: keep the clicked point for the lines and the Inspect
    tab; a click that selects nothing (on the background) forgets it."""
    event = st.session_state.get(PICTURE_KEY) or {}
    _remember(active, live_picture.picked_row(event.get("selection") or {}))


def _remember_plotly_click(active: ActiveRun) -> None:
    """on_select of the final 3-D view (a Plotly chart): as ``_remember_click``."""
    event = st.session_state.get("final-embedding")
    picked = [p for p in _points(event) if "customdata" in p]
    _remember(active, int(picked[0]["customdata"]) if picked else None)


def _remember(active: ActiveRun, row: int | None) -> None:
    if row is None:
        st.session_state.pop(INSPECTED_KEY, None)
    else:
        st.session_state[INSPECTED_KEY] = (active.job.ticket, row)


def _points(event) -> list:
    try:
        return list(event["selection"]["points"])
    except (KeyError, TypeError):
        return []


def replay_title(active: ActiveRun, data: Dataset) -> str:
    """Names the run in the replay and its HTML export: what, on which data, in how many d."""
    config = active.run.config
    kind = "deep NCA" if config.encoder == "mlp" else "NCA"
    return f"{kind} on {dataset_title(active.dataset)}, d = {config.n_components}"


def results(active: ActiveRun, data: Dataset) -> None:
    """After a run: replay, point inspection, the learned map and downloads."""
    run, snaps = active.run, active.snapshots
    tabs = st.tabs(["Replay", "Inspect a point", "Learned map", "Downloads"])
    with tabs[0]:
        st.caption(
            "Every epoch of the run (at most 100 frames). Press play, drag the slider, or pick a speed."
        )
        notice = notices.replay(snaps)
        if notice:
            st.caption(notice)
        st.plotly_chart(
            replay.animation(snaps, run.display_labels, data.classes, title=replay_title(active, data)),
            key="replay",
        )
    with tabs[1]:
        inspect(active, data, inspected_row(active))
    with tabs[2]:
        learned_map(active, data)
    with tabs[3]:
        downloads(active, data)


def inspect(active: ActiveRun, data: Dataset, row: int | None) -> None:
    run, snap = active.run, active.snapshots[-1]
    if row is None:
        st.info(
            "Click a point in the embedding above to see it and its nearest neighbours here.",
            icon=":material/ads_click:",
        )
        return
    neighbours = run.neighbours(snap, row, k=8)
    index = run.display_index
    labels = run.display_labels
    st.markdown(
        f"Training point **#{index[row]}**, class **{data.classes[labels[row]]}**; its 8 nearest "
        f"neighbours in the embedding (epoch {replay.epoch_label(snap)}):"
    )
    rows = np.concatenate([[row], neighbours])
    titles = [f"#{index[r]}: {data.classes[labels[r]]}" for r in rows]
    if data.image_shape is not None:
        titles[0] = "chosen<br>" + titles[0]  # a Plotly title; on one line it overflowed a ninth of the width
        st.plotly_chart(
            figures.image_grid(data.X_train[index[rows]], data.image_shape, titles, columns=9),
            key="neighbour-images",
            config={"displayModeBar": False},
        )
    else:
        import pandas as pd

        titles[0] = "chosen " + titles[0]
        table = pd.DataFrame(data.X_train[index[rows]], index=titles, columns=list(data.feature_labels))
        st.dataframe(table, width="stretch")


def learned_map(active: ActiveRun, data: Dataset) -> None:
    run = active.run
    if not run.is_linear:
        widths = " and ".join(str(h) for h in run.model.hidden_sizes)
        st.info(
            f"This map is a neural network ({data.n_features} inputs, hidden layers of {widths} units, "
            f"{run.model.n_components_} outputs): there is no single matrix to draw. Train a linear map to see A.",
            icon=":material/hub:",
        )
        return
    A = run.model.components_
    where = "standardised inputs" if run.scaler is not None else "the inputs as given"
    st.caption(f"Rows are output coordinates, columns input features; the map acts on {where}.")
    names = None if data.image_shape is not None else list(data.feature_labels)
    st.plotly_chart(figures.map_heatmap(A, names), key="map-heatmap")
    st.caption(notices.learned_map(active, data))
    if data.image_shape is not None:
        words = colours.DIVERGING_WORDS
        st.caption(
            f"Each row of A as an image: {words['positive']} pixels push a coordinate up, "
            f"{words['negative']} pull it down."
        )
        st.plotly_chart(
            figures.component_images(A, data.image_shape), key="map-images", config={"displayModeBar": False}
        )


def downloads(active: ActiveRun, data: Dataset) -> None:
    run, snaps = active.run, list(active.snapshots)  # files are built on click, from this list
    stem = f"nca-{data.name}-d{run.config.n_components}"
    classes = list(data.classes)

    def animation_html() -> bytes:
        fig = replay.animation(snaps, run.display_labels, classes, title=replay_title(active, data))
        return fig.to_html(include_plotlyjs=True, full_html=True, auto_play=False).encode()

    row = st.container(horizontal=True)  # wraps onto a second line on a narrow screen
    row.download_button(
        "Replay (GIF, for slides)",
        lambda: gif_file(active, data, snaps),
        file_name=f"{stem}-replay.gif",
        mime="image/gif",
        icon=":material/animated_images:",
        key="download-gif",
        help="An animated GIF (at most 60 frames, 800 x 600) that plays in any slide deck.",
        on_click="ignore",  # downloading changes nothing on the page
    )
    row.download_button(
        "Animation (HTML, plays offline)",
        animation_html,
        file_name=f"{stem}-replay.html",
        mime="text/html",
        icon=":material/movie:",
        key="download-html",
        on_click="ignore",  # downloading changes nothing on the page
    )
    row.download_button(
        "Final embedding (CSV)",
        lambda: run.embedding_csv(snaps[-1]),
        file_name=f"{stem}-embedding.csv",
        mime="text/csv",
        icon=":material/table:",
        key="download-csv",
        on_click="ignore",  # downloading changes nothing on the page
    )
    row.download_button(
        "Fitted model (.npz)",
        run.model_file,
        file_name=f"{stem}-model.npz",
        mime="application/octet-stream",
        icon=":material/download:",
        key="download-model",
        on_click="ignore",  # downloading changes nothing on the page
    )
    st.caption(
        "The model file holds plain arrays and JSON (no pickle); load it with "
        "`nca_core.load_model(path)`. Its `transform` takes raw inputs to the embedding drawn here "
        "(the CSV's coordinates): the run's centring and standardisation, if used, are part of it."
    )


def gif_file(active: ActiveRun, data: Dataset, snapshots=None) -> bytes:
    """The replay as an animated GIF for slides (``nca_core.plots.gif``); ``snapshots`` defaults
    to the run's."""
    run = active.run
    return replay_gif(
        list(active.snapshots if snapshots is None else snapshots),
        run.display_labels,
        data.classes,
        title=replay_title(active, data),
        total_epochs=run.config.max_iter,
        k=run.config.k,
    )
