"""NCA Explorer: the Streamlit entry point. Page config and navigation only."""

from pathlib import Path

import streamlit as st

from app_pages.ui import navigation

st.set_page_config(
    page_title="NCA Explorer",
    page_icon=str(Path(__file__).parent / "assets" / "icon.png"),
    layout="wide",
    menu_items={"About": "NCA Explorer: Neighbourhood Components Analysis, learnt live in PyTorch."},
)
st.navigation(navigation.ALL).run()
