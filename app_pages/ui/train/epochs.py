"""Epochs side by side on the Train page: chosen frames of the run as small multiples on one
scale, after a run (a tab), while it trains (growing as epochs are reached) and in
presentation mode, with a PNG of them for slides (``nca_core.plots.epoch_png``)."""

from __future__ import annotations

import streamlit as st

from app_pages.ui.train import presentation, runs
from app_pages.ui.train.runs import ActiveRun
from nca_core.datasets import Dataset
from nca_core.plots import epoch_grid
from nca_core.plots.epoch_png import epoch_grid_png

CHOSEN_KEY = "grid-epochs"  # the epochs chosen after a run
LIVE_KEY = "grid-live"  # the toggle that shows the grid while a run trains
# The grid is redrawn at most this often while a run trains: each drawing sends every
# panel's points, and a new chosen epoch is reached seconds apart at most.
LIVE_SECONDS = 3.0
# Projector-sized text for the Plotly grid (pixels): panel titles, the legend, the title.
BIG_TEXT = {"font": {"size": 20}, "legend": {"font": {"size": 22}}, "title": {"font": {"size": 24}}}


def side_by_side(active: ActiveRun, data: Dataset, title: str, *, choose: bool = True, big: bool = False) -> None:
    """The grid of ``active``'s chosen epochs and a button that saves it as one PNG.
    ``choose``: the epochs can be picked (once the run has ended: while it trains the epochs
    reached change under the picker); else the default ones reached so far, and the latest
    frame. ``big``: presentation mode's sizes."""
    snaps = list(active.snapshots)
    if active.job.alive:  # whole epochs only: the grid changes as an epoch ends, not every frame
        snaps = [s for s in snaps if s.fraction >= 1.0]
    if not snaps:
        st.caption("The grid starts with the run's first whole epoch.")
        return
    reached = sorted({s.epoch for s in snaps if s.fraction >= 1.0})
    wanted = [e for e in epoch_grid.DEFAULT_EPOCHS if e in reached]
    if choose:
        wanted = st.multiselect("Epochs", reached, default=wanted, key=CHOSEN_KEY,
                                help="The last frame is always shown, after these.")  # fmt: skip
    frames = epoch_grid.chosen_frames(snaps, sorted(wanted))
    if frames[0].embedding.shape[1] < 2:
        st.info("A 1-D map has no picture side by side: train with 2 or 3 dimensions.", icon=":material/info:")
        return
    labels, classes = active.run.display_labels, list(data.classes)
    fig = _grid(frames, labels, classes, title, big)
    camera = {"toImageButtonOptions": {"filename": "epochs-side-by-side", "scale": 2}}
    st.plotly_chart(fig, key="present-epoch-grid" if big else "epoch-grid", config={"displayModeBar": False} if big else camera)
    k = active.run.config.k
    st.download_button(
        "Epochs side by side (PNG, for slides)",
        lambda: epoch_grid_png(frames, labels, classes, title=title, k=k),
        file_name=f"nca-{data.name}-d{active.run.config.n_components}-epochs.png",
        mime="image/png", icon=":material/grid_view:", key="present-download-grid" if big else "download-grid",
        help="One picture of these panels, 1600 pixels wide: one scale, each epoch's accuracy, a legend.",
        on_click="ignore",  # downloading changes nothing on the page
    )  # fmt: skip


def during_run(data: Dataset, title: str) -> None:
    """Under the live picture while a run trains: a toggle, and once on, the epochs reached
    so far side by side, growing as the run goes (drawn in a fragment of its own, at
    ``LIVE_SECONDS``)."""
    on = st.toggle(
        "Epochs side by side as it trains", key=LIVE_KEY,
        help="The start and epochs 1, 2, 5 and 10 once reached, and the latest frame, on one scale.",
    )  # fmt: skip
    shown = runs.shown()
    if on and shown is not None and shown.snapshots:
        side_by_side(shown, data, title, choose=False)


FIGURE = "_epoch-grid-figure"  # session key: (what it shows, the grid's figure)


def _grid(frames, labels, classes, title: str, big: bool):
    """The grid's figure, built again only when its frames change: while a run trains the
    grid is drawn at every redraw, and a new frame joins it once an epoch ends."""
    shows = (tuple(id(f) for f in frames), id(labels), tuple(classes), title, big)
    kept = st.session_state.get(FIGURE)
    if kept is not None and kept[0] == shows:
        return kept[1]
    fig = epoch_grid.epoch_grid(frames, labels, classes, title=title)
    if big:
        fig.update_layout(**BIG_TEXT, height=presentation.CHART_HEIGHT)
        fig.update_annotations(font_size=BIG_TEXT["font"]["size"])  # the panels' titles
    st.session_state[FIGURE] = (shows, fig)
    return fig
