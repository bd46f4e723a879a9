"""``streamlit run app.py`` in a clone (and hosts that look for an app.py at a repository's
root): the app that ``nca-explorer app`` serves, app_pages/main.py, with the same settings
(.streamlit/config.toml here links to app_pages/.streamlit/config.toml)."""

from app_pages.main import main

main()
