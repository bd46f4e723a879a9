"""Glue for the Compare page: cached baselines, and NCA reused or fitted on a subset, each
scored with k-NN (what the page draws of them is ``compare_panels``).

Large sets are compared on ``comparison.training_subset`` (a stratified 5,000 training
points, every test point): PCA and LDA are fitted and every method scored on it, so a first
visit to MNIST takes seconds. NCA is the Train page's run when it matches, else
``comparison.quick_nca`` on the same subset, kept per session and, for registered datasets,
saved under the cache directory (the kNN page shares those files).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import streamlit as st

from app_pages.engine.jobs import JobState
from app_pages.ui.app_data import UPLOAD_NAME, session_cached, shared_unless_upload, still_loaded
from app_pages.ui.train import runs
from nca_core.datasets import Dataset
from nca_core.runs.comparison import (
    QUICK_TRAIN_POINTS,
    MethodResult,
    evaluate,
    fit_baseline,
    input_transform,
    model_cache_dir,
    quick_nca,
    training_subset,
)
from nca_core.runs.run import recommended_config
from nca_core.util.formatting import duration
from nca_core.util.threads import one_blas_thread


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
    active = runs.current()
    if (
        active is None
        or active.dataset != name
        or not still_loaded(name, active.run.data)
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


def fit_progress(label: str, epoch: int, epochs: int, elapsed: float) -> str:
    """The progress bar's words once ``epoch`` of ``epochs`` took ``elapsed`` seconds: the
    time left at the pace so far (a fit's epochs cost alike), which matches the wait on a
    large upload as on rings."""
    if epoch == 0:  # the start, measured before the first epoch: no pace yet
        return f"Training {label}: epoch 0 / {epochs}, estimating the time left"
    left = elapsed / epoch * (epochs - epoch)
    return f"Training {label}: epoch {epoch} / {epochs}, about {duration(left)} left"


def _quick_fit(name: str, data: Dataset, d: int, standardize: bool, deep: bool):
    """``quick_nca`` with a progress bar; saved under the cache directory unless uploaded."""
    label = "deep NCA" if deep else "NCA"
    n = min(len(data.y_train), QUICK_TRAIN_POINTS)
    bar = st.progress(
        0.0, text=f"Training {label} with the recommended settings on {n:,} points of {data.n_features} features…"
    )
    started = time.monotonic()

    def progress(epoch: int, epochs: int) -> None:
        bar.progress(epoch / epochs, text=fit_progress(label, epoch, epochs, time.monotonic() - started))

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
