"""Following a run that trains on another page: a class opens the lecturer's run's address
and watches that run live, read-only, with a button for a run of its own.

A follower computes nothing: its page draws the frames the lecturer's job keeps (the
latest, with the whole epochs before it for the curves), redrawn at the live pace, sharing
the server's redraws with every other live page (``live_status.redraw_seconds``). Only the
page that started the run pauses, steps or stops it (``FollowedJob`` has no such control);
once it ends, a follower sees it as any visitor of a finished run does (``runs._taken_up``).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import streamlit as st

from app_pages.ui.train import runs

if TYPE_CHECKING:
    from collections.abc import Callable

    from app_pages.engine.jobs import TrainingJob

VIEW = "train-following-view"  # session key: this page's read-only view of the followed run
# A follower counts among the pages redrawing the server's pictures while it has polled
# within this many seconds (a closed tab stops polling).
FOLLOWER_SECONDS = 10.0

# What a follower reads of the job it follows: its frames and where it is, never its controls.
_READ = frozenset(
    {
        "alive", "at_rest", "elapsed", "epochs_per_second", "error", "latest", "pace", "pause_requested",
        "queue_position", "queue_wait", "run_clock", "seconds_left", "shared", "snapshots", "start_released",
        "state", "stepping_to", "stop_reason", "stop_requested", "ticket", "total_epochs", "waits_for_slot",
    }
)  # fmt: skip


class FollowedJob:
    """A read-only view of another page's ``TrainingJob``: what the page draws from it, and
    no Pause, Step, Stop or heartbeat (a follower's page keeps no run going)."""

    def __init__(self, job: TrainingJob):
        self.source = job

    def __getattr__(self, name: str):
        if name in _READ:
            return getattr(self.source, name)
        raise AttributeError(f"a followed run is read-only: only the page that started it may {name} it")

    def heartbeat(self) -> None:
        """Nothing: a follower's page never keeps a run going past its time limits."""

    def followed(self) -> None:
        """This page has drawn the run: while a class follows it, the run goes on even if the
        tab that started it drops its connection for a while (under a class's load the
        lecturer's tab was counted as closed and the run ended for everyone)."""
        self.source.watch.followed()

    def drawn(self) -> None:
        """Nothing: the start frame waits for the page that started the run alone."""


class _Followers:
    """When each following page last polled, by run token and session."""

    def __init__(self):
        self._seen: dict[str, dict[str, float]] = {}
        self._lock = threading.Lock()

    def seen(self, token: str, session: str) -> None:
        with self._lock:
            self._seen.setdefault(token, {})[session] = time.monotonic()

    def count(self, token: str) -> int:
        """The pages following the run ``token`` that polled within ``FOLLOWER_SECONDS``."""
        now = time.monotonic()
        with self._lock:
            recent = {s: t for s, t in self._seen.get(token, {}).items() if now - t <= FOLLOWER_SECONDS}
            if recent:
                self._seen[token] = recent
            else:
                self._seen.pop(token, None)
            return len(recent)


_followers = _Followers()


def follower_count(token: str) -> int:
    """How many pages follow the run ``token`` now."""
    return _followers.count(token)


def followed(name: str) -> runs.ActiveRun | None:
    """The run this page follows, as this page shows it (its own axes, a ``FollowedJob``),
    or None. A run that ended is shown from now on as a visitor of a finished run sees it;
    another dataset chosen ends the following."""
    active = st.session_state.get(runs.FOLLOWED)
    if active is None:
        return None
    if active.dataset != name or not active.job.alive:
        stop_following()
        if active.dataset == name:  # it ended: the same run, looked at from here
            st.session_state[runs.RUN_KEY] = runs.ActiveRun(
                active.dataset, active.trained, active.job, active.token, active.browser
            )
        return None
    view = st.session_state.get(VIEW)
    if view is None or view.token != active.token:
        view = runs.ActiveRun(
            active.dataset, active.trained, FollowedJob(active.job), active.token, active.browser
        )
        st.session_state[VIEW] = view
    return view


def stop_following() -> None:
    for key in (runs.FOLLOWED, VIEW):
        st.session_state.pop(key, None)


def _own_run() -> None:
    """Train my own run: this page stops following and trains the sidebar's settings, which
    the address gave it (an identical run still joinable is read, not computed again)."""
    stop_following()
    st.session_state[runs.TRAIN_REQUEST] = True


def own_run_button() -> None:
    """In the run buttons' place: a run of one's own, and why there is no Pause or Stop."""
    row = st.container(horizontal=True, vertical_alignment="center", width="content")
    row.button(
        "Train my own run", type="primary", icon=":material/play_arrow:", on_click=_own_run, key="own-run"
    )
    row.caption("Following a run live: the page that started it alone can pause or stop it.")


def show(stage, view: runs.ActiveRun, page: dict, picture: Callable[..., None]) -> None:
    """The followed run's progress, picture and curves in ``stage``, redrawn at the live
    pace; ``picture(view, **page)`` is the page's own live picture (presenting too)."""
    from app_pages.ui.train import live_status

    run, session = view.run, _session_id()
    if session is not None:
        _followers.seen(view.token, session)
    under_way = runs.job_slots().running + follower_count(view.token)
    every, curves_every = live_status.redraw_seconds(
        len(run.data.y_train), run.config.n_components, runs_under_way=under_way
    )
    live = st.fragment(_live, run_every=every)
    if page["presenting"]:
        with stage:
            live(view, page, picture)
        return
    left, right = stage.columns([3, 2])
    with left:
        live(view, page, picture)
    with right:
        st.fragment(_curves, run_every=curves_every)(view)


def _live(view: runs.ActiveRun, page: dict, picture: Callable[..., None]) -> None:
    from app_pages.ui.train import live_status

    session = _session_id()
    if session is not None:
        _followers.seen(view.token, session)
    view.job.followed()
    live_status.progress(view)
    if view.job.error:
        st.error(view.job.error, icon=":material/error:")
    if view.snapshots:
        picture(view, **{**page, "running": True})
    else:
        st.info(
            "Starting the run: the picture appears with its first frame.", icon=":material/hourglass_top:"
        )
    if not view.job.alive:
        st.rerun(scope="app")  # it ended: shown as a finished run (``followed``)


def _curves(view: runs.ActiveRun) -> None:
    from app_pages.ui.train import live_status

    if view.snapshots:
        live_status.curves(view)


def _session_id() -> str | None:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_id
