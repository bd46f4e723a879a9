"""What the app lets go of once no tab has been open for a while (``engine.quiet``).

The caches every session shares (datasets, Compare's fits and scores, thumbnails, the Train
page's starts), the runs kept for a reload, and the sessions of closed tabs: Streamlit keeps
a closed tab's session two minutes for a reconnect, and drops it after that only when
another session is stored, without shutting it down, so an upload's file stays in its
upload manager. Past their two minutes this shuts them down itself.
"""

from __future__ import annotations

import logging
import os
import sys

import streamlit as st
from streamlit import runtime

from app_pages.engine.quiet import QUIET_SECONDS, QuietRelease
from app_pages.ui.train import runs

_LOG = logging.getLogger(__name__)

# The shared caches, by module and name: each entry a dataset's worth of memory or a part of
# one (MNIST: 220 MB of arrays, its fits and scores a few MB each). Looked up among the
# modules already loaded (a module a page has not imported has nothing cached), so the entry
# point that starts the watch loads no torch before the first page needs it.
SHARED_CACHES = (
    ("app_pages.ui.app_data", "_load_registered"),
    ("app_pages.ui.compare.fits", "_shared_fit"),
    ("app_pages.ui.compare.fits", "_shared_baseline"),
    ("app_pages.ui.compare.fits", "_shared_raw"),
    ("app_pages.ui.thumbnails", "_shared"),
    ("app_pages.ui.train.sidebar", "_demo_start"),
    ("app_pages.ui.train.start_view", "_shared"),  # each start picture's run holds its data
)


def _session_manager():
    """Streamlit's session manager (its runtime keeps it as a private attribute), or None
    outside a server."""
    return getattr(runtime.get_instance(), "_session_mgr", None) if runtime.exists() else None


def open_tabs(manager) -> int:
    """How many tabs are connected to the server now."""
    return len(manager.list_active_sessions())


def close_expired_sessions(manager) -> int:
    """Shut down the closed tabs' sessions past their time for a reconnect, as Streamlit
    would on a tab's close (their state, their uploaded files); how many."""
    storage = getattr(manager, "_session_storage", None)
    cache, lock = getattr(storage, "_cache", None), getattr(manager, "_storage_lock", None)
    if lock is None or not hasattr(cache, "expire"):
        _LOG.warning("this Streamlit keeps its closed sessions elsewhere: they are left to it")
        return 0
    with lock:  # the lock Streamlit takes to store and resume sessions
        expired = cache.expire()
    for _, info in expired:
        try:
            info.session.shutdown()
        except Exception:  # one session that fails to shut down leaves the others to be
            _LOG.exception("shutting down the closed session %s failed", info.session.id)
        _empty(info.session)
    return len(expired)


def _empty(session) -> None:
    """Let go of what a shut-down session held: its state (its runs, an upload's data), its
    widgets' callbacks and its fragments (each holds the page's namespace, the dataset in it). Something in Streamlit
    keeps a session object after its shutdown: three closed MNIST tabs' sessions kept their
    datasets and runs, 300 MB, after every release."""
    state = getattr(session, "session_state", None)
    if state is not None:
        state.clear()  # values only: each widget's metadata, its callbacks included, stays
        widgets = getattr(state, "_new_widget_state", None)  # Streamlit's, as _session_mgr is
        if widgets is not None:
            widgets.widget_metadata.clear()  # a chart's on_select closes over the page's run
    fragments = getattr(session, "_fragment_storage", None)  # Streamlit's, as _session_mgr is
    if fragments is not None:
        fragments.clear()
        fragments.clear_outside_wrappers()


def clear_shared_caches() -> None:
    for module, name in SHARED_CACHES:
        if module in sys.modules:
            getattr(sys.modules[module], name).clear()


def quiet_seconds() -> float:
    """How long the server waits with no tab open: $NCA_QUIET_SECONDS, else ``QUIET_SECONDS``."""
    return float(os.environ.get("NCA_QUIET_SECONDS", QUIET_SECONDS))


def release_for(manager) -> QuietRelease:
    """The server's ``QuietRelease``: closed sessions shut down, ended runs and shared
    caches let go, once no tab has been open for ``quiet_seconds()``."""
    return QuietRelease(
        lambda: open_tabs(manager),
        [lambda: close_expired_sessions(manager), runs.run_registry().let_go_ended, clear_shared_caches],
        quiet_seconds=quiet_seconds(),
    )


@st.cache_resource
def watch() -> QuietRelease | None:
    """Start the server's watch, once per process (the entry point calls this); None where
    there is no server (AppTest)."""
    manager = _session_manager()
    if manager is None:
        return None
    release = release_for(manager)
    release.watch()
    return release
