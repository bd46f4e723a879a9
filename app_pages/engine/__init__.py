"""The app's training engine: jobs that train in threads of the server, the slots and turns
they share, the pace of their frames, runs that pages read together, and their clocks.

Nothing here imports Streamlit: the pages hand a job what it needs (a stream of frames, a
check that the tab is still there) and draw what it keeps. Nothing here changes the process
at import either: ``process.start()``, called once by the app's entry point, applies the
process-wide settings the engine needs.
"""
