"""Datasets for the app: loaded once per process, shared read-only between sessions."""

from __future__ import annotations

import streamlit as st

from nca_core import datasets
from nca_core.datasets import Dataset, DatasetError

from . import share

UPLOAD_KEY = "uploaded_dataset"
UPLOAD_NAME = "uploaded"


@st.cache_resource(show_spinner="Loading the dataset…", max_entries=8)
def _load_registered(name: str) -> Dataset:
    data = datasets.load(name, download=True)
    for array in (data.X_train, data.y_train, data.X_test, data.y_test):
        array.flags.writeable = False  # shared by every session: nobody may change it
    return data


# File signatures of what people upload by mistake, in words.
_SIGNATURES = {
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"%PDF": "a PDF document",
    b"PK\x03\x04": "a ZIP archive (an .xlsx spreadsheet is one: save it as CSV first)",
    b"\xd0\xcf\x11\xe0": "an old Office document (save it as CSV first)",
    b"\x1f\x8b": "a gzip archive (unpack it first)",
}


def not_text(raw: bytes) -> str | None:
    """Why ``raw`` cannot be a CSV file, in words, when it is plainly binary; else None."""
    for signature, what in _SIGNATURES.items():
        if raw.startswith(signature):
            return f"this is {what}, not a CSV text file"
    head = raw[:65536]
    if b"\x00" in head:
        return "this is a binary file, not a CSV text file"
    try:
        head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not merely a character cut at the 64 KiB boundary
            return (
                f"this file is not UTF-8 text (byte {exc.start + 1} cannot be read); save it "
                "as CSV UTF-8 from your spreadsheet"
            )
    return None


def dataset_names() -> list[str]:
    """Registered names, plus the session's uploaded set when there is one."""
    names = list(datasets.REGISTRY)
    if UPLOAD_KEY in st.session_state:
        names.append(UPLOAD_NAME)
    return names


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
    share.read_once(names)
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
