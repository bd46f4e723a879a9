"""NCA Explorer: the script Streamlit runs. The engine's start, page config and navigation only.

``nca-explorer app`` serves this file; so does ``streamlit run app.py`` in a clone.
"""

import streamlit as st

from app_pages import ASSETS
from app_pages.engine import process
from app_pages.ui import links, navigation, quiet_server


def main() -> None:
    process.start()  # process-wide settings: the interpreter's switch interval, Arrow's allocator
    quiet_server.watch()  # once no tab has been open for a while, the server lets go of what a class left
    st.set_page_config(
        page_title="NCA Explorer",
        page_icon=str(ASSETS / "icon.png"),
        layout="wide",
        menu_items={"About": "NCA Explorer: Neighbourhood Components Analysis, learnt live in PyTorch."},
    )
    page = st.navigation(navigation.pages())  # its own pages: see navigation.pages
    links.arrive(page.url_path)  # Back to a page brings its settings back (links.follow_address)
    page.run()


if __name__ == "__main__":  # Streamlit runs the script as __main__; an import runs nothing
    main()
