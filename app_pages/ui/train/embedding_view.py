"""The Train page's embedding, live and after the run: a 2-D picture (one Vega-Lite chart
from the first frame to the end) or a 3-D Plotly view, and the point last clicked in it."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import streamlit as st

from app_pages.ui import thumbnails
from app_pages.ui.app_data import dataset_title
from app_pages.ui.train import presentation
from app_pages.ui.train.live_status import THREE_D_REDRAW_SECONDS
from app_pages.ui.train.runs import ActiveRun
from nca_core.datasets import Dataset
from nca_core.plots import axes, colours, descriptions, figures, live_charts, live_picture, replay
from nca_core.plots.regions import DRAWN_WIDTHS, decision_regions, region_box
from nca_core.runs.picks import SHOWN, class_chances, point_picks, step_point


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
        title=f"3-D embedding of {dataset_title(active.dataset)}, epoch {replay.epoch_label(snap)}",
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
    (measured in commit 4133db9); they follow with the next redraw (of the same frame while a
    slow-motion start holds it)."""
    return not ended and len(active.snapshots) == 1 and not active.job.start_released


def _picture(active: ActiveRun, data: Dataset, snap, *, regions: bool, big: bool) -> None:
    """The 2-D picture: the points on settling axes, hover pictures for image data, and for
    a clicked point lines to its likeliest picks, as wide as p_ij, redrawn every frame.

    The spec depends only on the axes and the size; the frame, the lines and the regions are
    its tables, so from frame to frame, and from the last frame to the final chart, the
    browser keeps the chart and swaps the points (``live_picture.picture_spec``). After the
    run, a toggle below it shades the k-NN decision regions.
    """
    ranges = active.axes.ranges(active.snapshots, points=lambda s: s.embedding[:, :2])
    if big and not active.job.alive:  # presented once it has ended, the picture fills its plot
        ranges = axes.bulk_ranges([snap.embedding[:, :2]])
    tables = _lines(active, snap)
    if regions and st.session_state.get(REGIONS_KEY):
        height = axes.picture_height(ranges)
        sizes = (presentation.PLOT_HEIGHTS, presentation.PLOT_WIDTHS) if big else ((height,), DRAWN_WIDTHS)
        tables["regions"] = _regions(active, snap, ranges, *sizes)
    chart(
        active.dataset, active.run, data, snap, ranges, tables,
        with_pictures=not _first_draw(active, ended=regions), big=big, on_select=lambda: _remember_click(active),
    )  # fmt: skip
    if "links" in tables and not big:
        _lines_caption(active, tables["links"], with_tab=regions)
    if regions:
        st.toggle(
            "Shade k-NN decision regions",
            key=REGIONS_KEY,
            help="Colour the plane by the class its k nearest points vote for, as a k-NN "
            "classifier in this embedding would.",
        )


def chart(
    dataset: str, run, data: Dataset, snap, ranges, tables: dict, *, with_pictures: bool, big: bool, on_select
) -> None:
    """The 2-D picture's one Vega-Lite chart (``PICTURE_KEY``) of ``snap``, a frame of
    ``run``, on ``ranges``, with ``tables`` (lines, ring, regions): the picture before
    Train (``start_view``) is drawn by this too, so that the live run's first frame, the
    same spec, replaces it in place."""
    area = presentation.POINT_AREA if big else live_charts.POINT_AREA
    height = axes.picture_height(ranges)  # presenting, the window's (presentation.big_spec)
    pictures = thumbnails.for_points(dataset, data, run.display_index, with_pictures=with_pictures)
    names, values = inputs_behind(run, data)
    spec = live_picture.picture_spec(
        data.classes, ranges, height=height, thumbnails=pictures, inputs=names, point_area=area,
        description=picture_description(dataset, data, len(run.display_index)),
        class_names=big and presentation.class_names_on(),
    )  # fmt: skip
    rows = live_picture.picture_rows(snap.embedding, run.display_labels, data.classes, run.display_index, values)
    spec = live_picture.picture_data(spec, rows, **tables)
    with presentation.picture_container(ranges, data.classes) if big else nullcontext():
        st.vega_lite_chart(
            None,
            presentation.big_spec(spec) if big else spec,
            height="stretch" if big else "content",
            key=PICTURE_KEY,
            on_select=on_select,
            selection_mode=[live_charts.PICK],
        )


def picture_description(dataset: str, data: Dataset, n_drawn: int) -> str:
    """What a screen reader reads for the 2-D picture: the same from the first frame to the
    last, as its spec is (the metrics above it and the run's announcements give the epoch
    and the accuracy)."""
    what = f"NCA's embedding of {dataset_title(dataset)}"
    shown = descriptions.embedding_description(what, data.classes, n_drawn)
    return f"{shown} The epoch and the accuracy are above the picture."


def _lines(active: ActiveRun, snap) -> dict:
    """The tables of the lines from the inspected point to its likeliest picks and of the
    ring on it, at ``snap``; none when no point is inspected."""
    row = inspected_row(active)
    if row is None or row >= len(snap.embedding):
        return {}
    picks = point_picks(snap, active.run.display_labels, row)
    return {
        "links": live_picture.link_rows(snap.embedding, picks),
        "anchor": live_picture.anchor_rows(snap.embedding, row),
    }


def _lines_caption(active: ActiveRun, links, *, with_tab: bool) -> None:
    """What the lines under the picture are, in the words of their colours and widths."""
    if links.empty:
        return
    point = active.run.display_index[inspected_row(active)]
    same, other = colours.SAME_CLASS_LINE[1], colours.OTHER_CLASS_LINE[1]
    which = f"its {SHOWN} likeliest picks"
    if len(links) < SHOWN:  # the others among its likeliest are too unlikely to draw
        picks = "1 pick" if len(links) == 1 else f"{len(links)} picks"
        which = f"its {picks} with p_ij of {figures.LINK_MIN_PROBABILITY:g} or more"
    tab = f" The Inspect a point tab below lists its {SHOWN} likeliest, with p_i." if with_tab else ""
    st.caption(
        f"Lines from training point #{point} to {which} among the points drawn, as wide as p_ij: "
        f"{same} to its own class, {other} to another.{tab}"
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


def inputs_behind(run, data: Dataset) -> tuple[list[str], np.ndarray | None]:
    """For a linear map of tabular data, the two inputs ``run``'s map leans on most and
    their raw values at each drawn point, so a hover says why the point sits where it does."""
    if data.image_shape is not None or not run.is_linear:
        return [], None
    top = run.top_features(2)
    return [data.feature_labels[j] for j in top], data.X_train[run.display_index][:, top]


def _hover_text(active: ActiveRun, data: Dataset) -> list[str]:
    """The 3-D view's hover: each point's training row and ``inputs_behind``."""
    rows = [f"training point #{i}" for i in active.run.display_index]
    names, values = inputs_behind(active.run, data)
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
    picked = [p["customdata"] for p in _points(event) if isinstance(p, dict) and "customdata" in p]
    _remember(active, picked[0] if picked else None)


def _remember(active: ActiveRun, row) -> None:
    """Keep ``row`` as the inspected point, and its number in the Point number box;
    anything but a drawn point's row (None, or what a crafted event sends) forgets it, so
    that no later page run meets a row it cannot draw."""
    if not (isinstance(row, int | float) and 0 <= row < len(active.run.display_index)):
        st.session_state.pop(INSPECTED_KEY, None)
        st.session_state[NUMBER_KEY] = None
    else:
        st.session_state[INSPECTED_KEY] = (active.job.ticket, int(row))
        st.session_state[NUMBER_KEY] = int(active.run.display_index[int(row)])


# The point to inspect by keyboard: its number, Previous and Next, and the next unsure point.
NUMBER_KEY = "inspect-number"
NOTICE_KEY = "inspect-notice"  # what the last keyboard choice could not do, said once
UNSURE_P_I = 0.5


def keyboard_picker(active: ActiveRun) -> None:
    """Choose the inspected point without the mouse: by its number (the training point's,
    as hovers and the Inspect tab name it), or with Previous and Next through the drawn
    points in the order of their numbers, or Next unsure, to the next point more likely to
    pick a neighbour of another class than of its own. Each sets the point a click sets,
    and a click sets the number."""
    row, points = inspected_row(active), active.run.display_index
    st.session_state[NUMBER_KEY] = None if row is None else int(points[row])  # this run's point
    bar = st.container(horizontal=True, vertical_alignment="bottom")
    bar.number_input(
        "Point number", width=220, min_value=0, max_value=int(points.max()), step=1, key=NUMBER_KEY,
        on_change=_number_entered, args=(active,), placeholder=f"one of {len(points):,} drawn",
        help="A training point's number, as the picture's hover shows it; Enter shows its picks.",
    )  # fmt: skip
    bar.button("Previous", icon=":material/arrow_back:", key="inspect-previous", on_click=_step, args=(active, -1))
    bar.button("Next", icon=":material/arrow_forward:", key="inspect-next", on_click=_step, args=(active, 1))
    bar.button(
        "Next unsure", icon=":material/help:", key="inspect-unsure", on_click=_step, args=(active, 1, True),
        help=f"The next point whose p_i is below {UNSURE_P_I:g}: more likely to pick a neighbour of "
        "another class than of its own, where the map still mixes the classes.",
    )  # fmt: skip
    notice = st.session_state.pop(NOTICE_KEY, None)
    if notice:
        st.warning(notice, icon=":material/warning:")


def _number_entered(active: ActiveRun) -> None:
    """on_change of the Point number box: inspect that point if it is drawn; else say so
    and keep the point inspected before."""
    number, points = st.session_state.get(NUMBER_KEY), active.run.display_index
    if number is None:
        _remember(active, None)
        return
    rows = np.flatnonzero(points == int(number))
    if len(rows):
        _remember(active, int(rows[0]))
        return
    st.session_state[NOTICE_KEY] = (
        f"Training point #{int(number)} is not among the {len(points):,} points drawn. Pick a number "
        "from the picture's hover, or step to one with Previous and Next."
    )
    _remember(active, inspected_row(active))


def _step(active: ActiveRun, step: int, unsure: bool = False) -> None:
    """on_click of Previous, Next and Next unsure: move the inspected point ``step`` drawn
    points on by number, among the unsure ones (p_i below ``UNSURE_P_I``) if asked."""
    run = active.run
    among = class_chances(active.snapshots[-1], run.display_labels) < UNSURE_P_I if unsure else None
    row = step_point(run.display_index, inspected_row(active), step, among)
    if row is None:
        st.session_state[NOTICE_KEY] = (
            f"No drawn point is unsure: every one has p_i of {UNSURE_P_I:g} or more, more likely to "
            "pick a neighbour of its own class than of another."
        )
        return
    _remember(active, row)


def _points(event) -> list:
    try:
        return list(event["selection"]["points"])
    except (KeyError, TypeError):
        return []
