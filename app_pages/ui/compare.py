"""Glue for the Compare page: cached baselines, reused or fresh NCA fits."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st

from nca_core import figures
from nca_core.comparison import MethodResult, evaluate, fit_baseline
from nca_core.datasets import Dataset
from nca_core.model_io import ModelFileError, load_model
from nca_core.runs import Run, recommended_config

from . import state
from .data import UPLOAD_NAME


@dataclass(frozen=True)
class Fitted:
    """An NCA fit as Compare uses it: a map from raw inputs, its fit time, its model file."""

    transform: Callable[[np.ndarray], np.ndarray]
    fit_seconds: float
    model_bytes: bytes | None
    from_disk: bool = False


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


def _model_file(name: str, config) -> Path:
    """Where a fresh Compare fit of a registered dataset is kept between server runs, named
    by its settings: $NCA_CACHE_DIR/models (beside the decoded datasets), else the user
    cache."""
    digest = hashlib.sha256(json.dumps(config.as_dict(), sort_keys=True).encode()).hexdigest()[:16]
    cache = os.environ.get("NCA_CACHE_DIR")
    root = Path(cache) if cache else Path.home() / ".cache" / "nca-explorer"
    return root / "models" / f"compare-{name}-{digest}.npz"


def _train_here(config, data: Dataset, label: str) -> Fitted:
    run = Run(config, data)
    bar = st.progress(0.0, text=f"Training {label} with the default settings…")
    for snap in run.stream(eval_every=None):
        bar.progress(
            snap.epoch / config.epochs, text=f"Training {label}: epoch {snap.epoch} / {config.epochs}"
        )
    bar.empty()
    return Fitted(run.transform, run.fit_seconds, run.model_file())


def _fresh_fit(name: str, data: Dataset, config, label: str) -> Fitted:
    """Train (or, for a registered dataset, load the model a previous visit saved)."""
    if name == UPLOAD_NAME:  # a user's own data is never written to disk
        return _train_here(config, data, label)
    path = _model_file(name, config)
    seconds_file = path.with_suffix(".json")
    if path.exists() and seconds_file.exists():
        try:
            model = load_model(path)
            seconds = float(json.loads(seconds_file.read_text())["fit_seconds"])
            return Fitted(model.transform, seconds, None, from_disk=True)
        except (ModelFileError, OSError, ValueError, KeyError):
            pass  # an unreadable file is simply trained again
    fitted = _train_here(config, data, label)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(fitted.model_bytes)
    tmp.replace(path)
    seconds_file.write_text(json.dumps({"fit_seconds": fitted.fit_seconds}))
    return fitted


def train_page_fit(name: str, d: int, standardize: bool, deep: bool = False) -> tuple[Fitted, str] | None:
    """The Train page's finished run when it matches (same data, d, standardisation, linear
    or deep), with where it came from in words; else None."""
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
    run = active.run
    epochs = max(s.epoch for s in active.snapshots if s.fraction >= 1)
    return Fitted(run.transform, run.fit_seconds, None), f"the run from the Train page ({epochs} epochs)"


def nca_run(name: str, data: Dataset, d: int, standardize: bool, deep: bool = False) -> tuple[Fitted, str]:
    """The Train page's run when it matches (same data, d, standardisation, linear or deep),
    else a fit with the default settings: trained here with a progress bar the first time,
    kept per session, and for registered datasets saved under the cache directory so later
    visits (any session, after a restart too) load it in a moment."""
    from_train_page = train_page_fit(name, d, standardize, deep)
    if from_train_page is not None:
        return from_train_page
    encoder = "mlp" if deep else "linear"
    config = recommended_config(data, n_components=d, encoder=encoder).replace(standardize=standardize)
    label = "deep NCA" if deep else "NCA"
    key = ("compare-nca", name, d, standardize, deep)
    if key not in st.session_state:
        st.session_state[key] = _fresh_fit(name, data, config, label)
    what = "an MLP with the Student-t kernel and a memory bank, " if deep else ""
    fitted = st.session_state[key]
    source = f"a fresh fit with the default settings ({what}{config.epochs} epochs of {config.optimizer})"
    if fitted.from_disk:
        source += ", saved by an earlier visit and loaded from the cache"
    return fitted, source


def nca(
    name: str, data: Dataset, d: int, k: int, standardize: bool, display_index, deep: bool = False
) -> tuple[MethodResult, str]:
    """NCA (linear, or deep) from the Train page when its run matches, else a fresh fit."""
    fitted, source = nca_run(name, data, d, standardize, deep)
    label = "deep NCA" if deep else "NCA"
    return evaluate(label, fitted.transform, data, k, display_index, fitted.fit_seconds), source


def panel_grid(n: int) -> list:
    """Two panels a row, so each stays wide enough to read on a 1024-pixel screen; each
    cell is a container drawn into later (so a slow panel never holds up the others)."""
    cells = []
    for start in range(0, n, 2):
        row = st.columns(2)
        cells.extend(col.empty() for col in row[: min(2, n - start)])
    return cells


def shared_ranges(results: list[MethodResult]) -> list[list[float]] | None:
    """One set of axis ranges covering every drawn panel (2-D or 3-D alike)."""
    drawn = [r.embedding[:, : min(r.embedding.shape[1], 3)] for r in results if r.embedding.shape[1] >= 2]
    dims = {e.shape[1] for e in drawn}
    return figures.padded_ranges(drawn) if len(dims) == 1 else None


def panel(cell, result: MethodResult, labels, classes, k: int, ranges=None) -> None:
    """One method in ``cell`` (an ``st.empty``, replacing what it held): its picture, one
    scale on both axes, its kNN accuracies and fit time."""
    with cell.container():
        _panel(result, labels, classes, k, ranges)


def _panel(result: MethodResult, labels, classes, k: int, ranges) -> None:
    st.subheader(result.name)
    dims = min(result.embedding.shape[1], 3)
    if dims == 1:
        st.info("LDA found a single direction (two classes): nothing to draw in 2-D.")
    else:
        fig = figures.embedding_scatter(
            result.embedding[:, :dims], labels, classes, height=460, ranges=ranges,
            uirevision=f"compare-{result.name}", legend_above=True,
        )  # fmt: skip
        st.plotly_chart(fig, key=f"compare-{result.name}")
    line = f"{k}-NN leave-one-out: **{result.train_accuracy:.1%}**"
    if result.test_accuracy is not None:
        line += f" · test: **{result.test_accuracy:.1%}**"
    st.markdown(line + f" · fit {result.fit_seconds:.2f} s")
    if result.note:
        st.warning(result.note, icon=":material/info:")
