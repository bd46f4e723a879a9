"""NCA Explorer's Streamlit app: ``main.py`` is the script Streamlit runs, one module per page beside it.

The app's files travel inside the package, so an installed app finds them from any folder:
its icon and sample data in ``assets/``, and its server settings in ``.streamlit/config.toml``,
which Streamlit reads from the folder of the script it runs (as well as the current one).
"""

from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "assets"
