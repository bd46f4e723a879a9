"""The app's pages, defined once: app_pages/main.py navigates with them and pages link to them."""

from pathlib import Path

import streamlit as st

PAGES_DIR = Path(__file__).resolve().parents[1]

# (file, title, icon) in the lesson's order (``lesson``): the idea first; Train stays the page an
# address without one opens.
_PAGES = (
    ("about.py", "How NCA works", ":material/school:"),
    ("train.py", "Train", ":material/model_training:"),
    ("compare.py", "Compare", ":material/compare:"),
    ("knn_speed.py", "kNN speed and storage", ":material/speed:"),
    ("your_data.py", "Your data", ":material/upload_file:"),
)
_DEFAULT = "train.py"


def pages() -> list:
    """The pages for ``st.navigation``, made anew for each run of the script.

    ``st.navigation`` marks the page it returns as callable once, on the page object itself.
    Page objects shared by every session let one session's run use up another's mark: two
    browsers opening the app at the same moment got "This page cannot be called directly".
    """
    return [
        st.Page(PAGES_DIR / name, title=title, icon=icon, default=name == _DEFAULT) for name, title, icon in _PAGES
    ]


# The same pages for links and switches (``st.page_link``, ``st.switch_page``, their url_path),
# which never run them.
ABOUT, TRAIN, COMPARE, KNN_SPEED, YOUR_DATA = pages()
