"""Glue for the Compare page: cached baselines, reused or fresh NCA fits."""

from __future__ import annotations

import streamlit as st

from nca_core.comparison import MethodResult, evaluate, fit_baseline
from nca_core.datasets import Dataset
from nca_core.runs import Run, recommended_config

from . import state
from .data import UPLOAD_NAME


def _baseline(method: str, data: Dataset, d: int, k: int, standardize: bool, display_index) -> MethodResult:
    transform, seconds, note = fit_baseline(method, data, d, standardize)
    return evaluate(method.upper(), transform, data, k, display_index, seconds, note)


@st.cache_resource(max_entries=32, show_spinner="Fitting PCA and LDA…")
def _shared_baseline(
    method: str, name: str, d: int, k: int, standardize: bool, _data: Dataset, _display_index
):
    """Registered datasets are the same for everyone, so their baselines are shared (read-only)."""
    return _baseline(method, _data, d, k, standardize, _display_index)


def baseline(
    method: str, name: str, data: Dataset, d: int, k: int, standardize: bool, display_index
) -> MethodResult:
    if name == UPLOAD_NAME:  # a user's own data never goes into a cache shared between sessions
        key = ("compare-baseline", method, d, k, standardize)
        if key not in st.session_state:
            st.session_state[key] = _baseline(method, data, d, k, standardize, display_index)
        return st.session_state[key]
    return _shared_baseline(method, name, d, k, standardize, data, display_index)


def raw_inputs(name: str, data: Dataset, k: int) -> MethodResult:
    key = ("compare-raw", name, k)
    if key not in st.session_state:
        st.session_state[key] = evaluate("raw inputs", lambda X: X, data, k, None, 0.0)
    return st.session_state[key]


def recommended_standardize(data: Dataset) -> bool:
    return recommended_config(data).standardize


def nca_run(name: str, data: Dataset, d: int, standardize: bool) -> tuple[Run, str]:
    """The Train page's run when it matches (same data, d, standardisation), else a fresh
    fit with the default settings, trained here with a progress bar and kept per session."""
    active = state.current()
    if (
        active is not None
        and active.dataset == name
        and not active.job.alive
        and active.snapshots
        and active.run.config.n_components == d
        and active.run.config.standardize == standardize
    ):
        return active.run, f"the run from the Train page ({active.snapshots[-1].epoch} epochs)"
    config = recommended_config(data, n_components=d).replace(standardize=standardize)
    key = ("compare-nca", name, d, standardize)
    if key not in st.session_state:
        run = Run(config, data)
        bar = st.progress(0.0, text="Training NCA with the default settings…")
        for snap in run.stream():
            bar.progress(
                snap.epoch / config.epochs, text=f"Training NCA: epoch {snap.epoch} / {config.epochs}"
            )
        bar.empty()
        st.session_state[key] = run
    source = f"a fresh fit with the default settings ({config.epochs} epochs of {config.optimizer})"
    return st.session_state[key], source


def nca(
    name: str, data: Dataset, d: int, k: int, standardize: bool, display_index
) -> tuple[MethodResult, str]:
    """NCA from the Train page when its run matches, else a fresh fit with the defaults."""
    run, source = nca_run(name, data, d, standardize)
    return evaluate("NCA", run.transform, data, k, display_index, run.fit_seconds), source
