"""NCA Explorer: the Streamlit entry point. Page config and navigation only."""

from pathlib import Path

import streamlit as st

HERE = Path(__file__).parent

st.set_page_config(
    page_title="NCA Explorer",
    page_icon=str(HERE / "assets" / "icon.png"),
    layout="wide",
    menu_items={"About": "NCA Explorer: Neighbourhood Components Analysis, learnt live in PyTorch."},
)

pages = [
    st.Page(HERE / "pages" / "train.py", title="Train", icon=":material/model_training:", default=True),
    st.Page(HERE / "pages" / "compare.py", title="Compare", icon=":material/compare:"),
    st.Page(HERE / "pages" / "knn_speed.py", title="kNN speed and storage", icon=":material/speed:"),
    st.Page(HERE / "pages" / "your_data.py", title="Your data", icon=":material/upload_file:"),
    st.Page(HERE / "pages" / "about.py", title="How NCA works", icon=":material/school:"),
]
st.navigation(pages).run()
