"""The Train page's picture before Train: the run the sidebar's settings make, at its start
(epoch 0: the start map applied to the data) with its k-NN accuracy, so that a class can
guess what training will do before it sees it.

It is drawn as the live run's first frame is (the same metrics, spec, shapes, colours and
legend, on the same axes), so that frame, which is the same picture, takes its place when
Train is pressed with no moment without a picture.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import streamlit as st

from app_pages.ui.app_data import dataset_title, shared_unless_upload
from app_pages.ui.train import embedding_view, live_status, presentation
from nca_core.config.settings import BY_NAME, RunConfig
from nca_core.datasets import Dataset
from nca_core.plots import axes, figures
from nca_core.runs.demo import DemoStart
from nca_core.runs.run import Run
from nca_core.training.loop import Snapshot
from nca_core.util.formatting import percent


@dataclass(frozen=True)
class StartPicture:
    """``run``, the run the sidebar's settings make for the dataset ``dataset``, and
    ``snapshot``, its first frame (epoch 0, before any training)."""

    dataset: str
    run: Run
    snapshot: Snapshot


def start_frame(run: Run) -> Snapshot:
    """``run``'s first frame, as its live run's first frame is made (the start map applied
    to the drawn points, scored by k-NN as every frame is); training stops there."""
    stream = run.stream()
    try:
        return next(stream)
    finally:
        stream.close()


def _made(name: str, config: RunConfig, data: Dataset) -> StartPicture:
    run = Run(config, data)
    return StartPicture(name, run, start_frame(run))


# One per dataset and settings, shared read-only by every session of a registered set: a
# class opening the page computes it once (under a second on MNIST on two cores).
@st.cache_resource(max_entries=32, show_spinner=False)
def _shared(name: str, request: str, _config: RunConfig, _data: Dataset) -> StartPicture:
    return _made(name, _config, _data)


def start_picture(name: str, data: Dataset, config: RunConfig) -> StartPicture | None:
    """The start of the run that ``config`` (the sidebar's request) makes on ``data``,
    remembered per (dataset, settings); None where the start cannot be made (Train then
    says why)."""
    request = json.dumps(config.as_dict(), sort_keys=True, default=str)
    try:
        return shared_unless_upload(
            name, ("start-picture", request),
            lambda: _shared(name, request, config, data), lambda: _made(name, config, data),
        )  # fmt: skip
    except (ValueError, RuntimeError):
        return None


def words(start: StartPicture) -> str:
    """The start in a sentence, also read by screen readers: "Epoch 0, before training:
    the PCA start, test 5-NN accuracy 39.3%."."""
    snap, config = start.snapshot, start.run.config
    test = snap.test_accuracy is not None
    accuracy = snap.test_accuracy if test else snap.train_accuracy
    scored = "" if accuracy is None else f", {'test' if test else 'leave-one-out'} {config.k}-NN accuracy {percent(accuracy, 1)}"
    return f"Epoch 0, before training: the {BY_NAME['init'].label_of(config.init)} start{scored}."


def _ignore_click() -> None:
    """A click on the start picture picks nothing: a point's picks are shown for a run."""


def _embedding(start: StartPicture, data: Dataset, big: bool) -> None:
    """The start frame as ``embedding_view.embedding`` draws a live run's first frame."""
    snap, run = start.snapshot, start.run
    d = snap.embedding.shape[1]
    if d > 3:
        st.caption(f"d = {d}: showing the first two coordinates of the embedding.")
    if d != 3:
        ranges = axes.SettlingRanges().ranges([snap], points=lambda s: s.embedding[:, :2])
        embedding_view.chart(
            start.dataset, run, data, snap, ranges, {}, with_pictures=False, big=big, on_select=_ignore_click
        )
        return
    fig = figures.embedding_scatter(
        snap.embedding, run.display_labels, data.classes, ranges=axes.steady_ranges([snap.embedding]),
        uirevision="start", title=f"3-D embedding of {dataset_title(start.dataset)}, epoch 0",
        height=presentation.CHART_HEIGHT if big else 520,
    )  # fmt: skip
    if big:
        fig.update_layout(font=presentation.PLOTLY_FONT)
        fig.update_traces(marker_size=presentation.PLOTLY_MARKER)
    st.plotly_chart(fig, key="live-embedding")


def draw(start: StartPicture, data: Dataset, demo: DemoStart | None, presenting: bool, waiting: bool) -> None:
    """The start picture in the live picture's place and layout; ``waiting`` for Train (no
    run is preparing, which would draw its own progress line), under a progress line at
    epoch 0 and with a question for the class."""
    config = start.run.config
    if waiting:
        st.progress(0.0, text=f"Epoch 0 / {config.max_iter} · before training")
    said = words(start)
    if waiting:
        guess = " What will training do to it? Press **Train** to see."
    else:
        guess = " The run is preparing: its first frame takes this picture's place."
    if not presenting:
        live_status.metric_row([start.snapshot], start.run, demo, lambda: live_status.live_region(said))
        _embedding(start, data, big=False)
        st.caption(said + guess)
        return
    chart, side = st.columns([3, 1])
    with side:
        live_status.accuracy_row([start.snapshot], config.k, lambda: live_status.live_region(said))
        st.caption(said + guess)
    with chart:
        _embedding(start, data, big=True)
