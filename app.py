"""NCA Explorer: the Streamlit entry point. The engine's start, page config and navigation only."""

from pathlib import Path

import streamlit as st

from app_pages.engine import process
from app_pages.ui import links, navigation

process.start()  # the training engine's process-wide settings (the interpreter's switch interval)
st.set_page_config(
    page_title="NCA Explorer",
    page_icon=str(Path(__file__).parent / "assets" / "icon.png"),
    layout="wide",
    menu_items={"About": "NCA Explorer: Neighbourhood Components Analysis, learnt live in PyTorch."},
)
page = st.navigation(navigation.ALL)
links.arrive(page.url_path)  # Back to a page brings its settings back (links.follow_address)
page.run()
