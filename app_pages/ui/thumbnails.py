"""Hover pictures for the live embedding of an image dataset: encoded once, then reused.

A run draws the same display subset in every frame, so its pictures are encoded once, with
its second picture (the first, the start frame, goes out without them so that it comes
sooner), and kept: shared between sessions for a registered dataset (the same pixels for
everyone, read-only), per session for an upload (a user's data never enters a shared cache).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.ui.app_data import UPLOAD_NAME
from nca_core.datasets import Dataset
from nca_core.plots.live_charts import thumbnail_rows
from nca_core.plots.thumbnails import png_data_urls


def _rows(data: Dataset, points: np.ndarray) -> pd.DataFrame:
    return thumbnail_rows(points, png_data_urls(data.X_train[points], data.image_shape))


@st.cache_resource(max_entries=8, show_spinner=False)
def _shared(name: str, digest: str, _data: Dataset, _points: np.ndarray) -> pd.DataFrame:
    return _rows(_data, _points)


def for_points(
    name: str, data: Dataset, points: np.ndarray, with_pictures: bool = True
) -> pd.DataFrame | None:
    """``live_charts.thumbnail_rows`` for the training points ``points`` of an image
    dataset (None for tabular data); without pictures: the same table, empty, so a chart's
    spec stays the same while its pictures come later."""
    if data.image_shape is None:
        return None
    if not with_pictures:
        return thumbnail_rows(np.arange(0), [])
    points = np.asarray(points, dtype=np.int64)
    digest = hashlib.sha1(points.tobytes()).hexdigest()
    if name != UPLOAD_NAME:
        return _shared(name, digest, data, points)
    kept = st.session_state.get("thumbnails")
    if kept is None or kept[0] is not data or kept[1] != digest:  # another upload or subset
        kept = st.session_state["thumbnails"] = (data, digest, _rows(data, points))
    return kept[2]
