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


def nca_run(name: str, data: Dataset, d: int, standardize: bool, deep: bool = False) -> tuple[Run, str]:
    """The Train page's run when it matches (same data, d, standardisation, linear or deep),
    else a fresh fit with the default settings, trained here with a progress bar and kept
    per session."""
    active = state.current()
    if (
        active is not None
        and active.dataset == name
        and not active.job.alive
        and active.snapshots
        and active.run.config.n_components == d
        and active.run.config.standardize == standardize
        and (active.run.config.encoder == "mlp") == deep
    ):
        return active.run, f"the run from the Train page ({active.snapshots[-1].epoch} epochs)"
    encoder = "mlp" if deep else "linear"
    config = recommended_config(data, n_components=d, encoder=encoder).replace(standardize=standardize)
    label = "deep NCA" if deep else "NCA"
    key = ("compare-nca", name, d, standardize, deep)
    if key not in st.session_state:
        run = Run(config, data)
        bar = st.progress(0.0, text=f"Training {label} with the default settings…")
        for snap in run.stream():
            bar.progress(
                snap.epoch / config.epochs, text=f"Training {label}: epoch {snap.epoch} / {config.epochs}"
            )
        bar.empty()
        st.session_state[key] = run
    what = "an MLP with the Student-t kernel and a memory bank, " if deep else ""
    source = f"a fresh fit with the default settings ({what}{config.epochs} epochs of {config.optimizer})"
    return st.session_state[key], source


def nca(
    name: str, data: Dataset, d: int, k: int, standardize: bool, display_index, deep: bool = False
) -> tuple[MethodResult, str]:
    """NCA (linear, or deep) from the Train page when its run matches, else a fresh fit."""
    run, source = nca_run(name, data, d, standardize, deep)
    label = "deep NCA" if deep else "NCA"
    return evaluate(label, run.transform, data, k, display_index, run.fit_seconds), source
