"""App-side glue between Streamlit pages and ``nca_core``: state, caching, widgets, jobs."""
