"""Datasets for the app: loaded once per process, shared read-only between sessions."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from app_pages.ui import links
from nca_core import datasets
from nca_core.datasets import Dataset, DatasetError

T = TypeVar("T")

UPLOAD_KEY = "uploaded_dataset"
UPLOAD_NAME = links.UPLOAD_NAME
# Session key: (the upload, {key: result}) for the results of the session's current upload
# (``session_cached``); a new upload replaces them all.
UPLOAD_RESULTS = "upload-results"


@st.cache_resource(show_spinner="Loading the dataset…", max_entries=8)
def _load_registered(name: str) -> Dataset:
    data = datasets.load(name, download=True)
    for array in (data.X_train, data.y_train, data.X_test, data.y_test):
        array.flags.writeable = False  # shared by every session: nobody may change it
    return data


def dataset_names() -> list[str]:
    """Registered names, plus the session's uploaded set when there is one."""
    names = list(datasets.REGISTRY)
    if UPLOAD_KEY in st.session_state:
        names.append(UPLOAD_NAME)
    return names


def session_cached(key: tuple, name: str, make: Callable[[], T]) -> T:
    """``make()``, remembered for this session under ``key``. An uploaded set's results are
    remembered with that upload alone (``UPLOAD_RESULTS``): a new file is never answered
    from the old one's (every upload is called ``UPLOAD_NAME``), and the old one's results,
    and the old file they were made of, are let go."""
    results = _upload_results() if name == UPLOAD_NAME else st.session_state
    if key not in results:
        results[key] = make()
    return results[key]


def forget(key: tuple, name: str) -> None:
    """Drop what ``session_cached`` remembers under ``key`` (for ``name``'s data)."""
    (_upload_results() if name == UPLOAD_NAME else st.session_state).pop(key, None)


def _upload_results() -> dict:
    """The current upload's remembered results, emptied when the upload changes."""
    upload = st.session_state.get(UPLOAD_KEY)
    owner, results = st.session_state.get(UPLOAD_RESULTS, (None, {}))
    if owner is not upload:
        results = {}
        st.session_state[UPLOAD_RESULTS] = (upload, results)
    return results


def shared_unless_upload(name: str, key: tuple, shared: Callable[[], T], make: Callable[[], T]) -> T:
    """A registered set's result from the cache all sessions share (``shared()``, read-only);
    an upload's from this session alone (``make()``, see ``session_cached``): a user's data
    never enters a shared cache."""
    if name != UPLOAD_NAME:
        return shared()
    return session_cached(key, name, make)


def still_loaded(name: str, data: Dataset) -> bool:
    """Whether ``data`` is still what ``name`` stands for: an upload is replaced by the next
    one under the same name, and a run of the old file must not meet the new one's rows."""
    return name != UPLOAD_NAME or st.session_state.get(UPLOAD_KEY) is data


def dataset_title(name: str) -> str:
    return "your uploaded CSV" if name == UPLOAD_NAME else datasets.REGISTRY[name].title


def dataset_label(name: str) -> str:
    if name == UPLOAD_NAME:
        return "Your uploaded CSV"
    ready = dict(datasets.available()).get(name, False)
    return dataset_title(name) + ("" if ready else "  (downloads on first use)")


def pick_dataset(default: str | None = None) -> str:
    """The dataset selector shared by every page; the choice follows the user across pages.

    ``default`` is used until the user has chosen a dataset in this session.
    """
    names = dataset_names()
    links.read_once(names)
    chosen = st.session_state.get("dataset_choice", default or names[0])
    name = st.selectbox(
        "Dataset",
        names,
        index=names.index(chosen) if chosen in names else 0,
        format_func=dataset_label,
        key="dataset",
    )
    st.session_state["dataset_choice"] = name
    return name


def best_high_dimensional() -> str:
    """MNIST when its files are here, else USPS, else scikit-learn's digits."""
    ready = dict(datasets.available())
    return next(name for name in ("mnist", "usps", "digits") if ready.get(name))


def load_dataset(name: str) -> Dataset | None:
    """The dataset, or None after showing a friendly error (never a traceback)."""
    if name == UPLOAD_NAME:
        return st.session_state.get(UPLOAD_KEY)
    try:
        return _load_registered(name)
    except DatasetError as exc:
        st.error(f"**{name}** could not be loaded. {exc}", icon=":material/cloud_off:")
        return None
