"""A lesson path through the pages, each ending with the next step: How NCA works, the
paper's rings on Train, Compare, a set of images on Train, kNN speed, then your own data."""

from __future__ import annotations

import streamlit as st

from . import app_data

# Image sets, whose hundreds of pixels show what a small map saves (the kNN speed page).
IMAGES = ("mnist", "usps", "fashion-mnist", "digits")
# A page's name in the lesson -> its page (``navigation``)
PAGES = {
    "about": "ABOUT", "train": "TRAIN", "compare": "COMPARE", "knn_speed": "KNN_SPEED", "your_data": "YOUR_DATA",
}  # fmt: skip


def next_step(page: str, dataset: str | None = None, images: str = "mnist") -> tuple[str, str, dict[str, str]]:
    """(the next page's name, its words, the settings of its address) after ``page`` (a name
    of ``PAGES``) showing ``dataset``; ``images`` is the image set this server has."""
    if page == "about":
        return "train", "Next: watch NCA learn the paper's rings", {"dataset": "rings"}
    if page == "train" and dataset not in IMAGES:
        return "compare", "Next: compare NCA with PCA and LDA on this data", {"dataset": dataset or "rings"}
    if page == "compare":
        return "train", "Next: train NCA on images of handwritten digits", {"dataset": images}
    if page == "train":
        return "knn_speed", "Next: see how much faster and smaller kNN search gets", {"dataset": dataset}
    return "your_data", "Next: try NCA on a CSV file of your own", {}


def show_next_step(page: str, dataset: str | None = None) -> None:
    """The page's last line: a link to the next step of the lesson."""
    from . import navigation  # its pages are made in the app's run: not when a test imports this

    target, words, address = next_step(page, dataset, app_data.best_high_dimensional())
    st.divider()
    st.page_link(getattr(navigation, PAGES[target]), label=words, icon=":material/arrow_forward:",
                 query_params=address or None)  # fmt: skip
