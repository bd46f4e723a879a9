"""The app's pages, defined once: app_pages/main.py navigates with them and pages link to them."""

from pathlib import Path

import streamlit as st

PAGES_DIR = Path(__file__).resolve().parents[1]

TRAIN = st.Page(PAGES_DIR / "train.py", title="Train", icon=":material/model_training:", default=True)
COMPARE = st.Page(PAGES_DIR / "compare.py", title="Compare", icon=":material/compare:")
KNN_SPEED = st.Page(PAGES_DIR / "knn_speed.py", title="kNN speed and storage", icon=":material/speed:")
YOUR_DATA = st.Page(PAGES_DIR / "your_data.py", title="Your data", icon=":material/upload_file:")
ABOUT = st.Page(PAGES_DIR / "about.py", title="How NCA works", icon=":material/school:")

# The lesson's order (``lesson``): the idea first; Train stays the page an address without one opens.
ALL = [ABOUT, TRAIN, COMPARE, KNN_SPEED, YOUR_DATA]
