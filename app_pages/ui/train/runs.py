"""Per-session state of the Train page: the current run, its job, the previous result."""

from __future__ import annotations

import hashlib
import os
import secrets
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from app_pages.engine import shared_runs
from app_pages.engine.jobs import TrainingJob
from app_pages.engine.kept_runs import RELOAD_GRACE, RunRegistry
from app_pages.engine.pacing import EPOCH_FRAMES_MIN_SAMPLES, Pace, frames_per_epoch
from app_pages.engine.slots import JobSlots
from app_pages.ui import links
from app_pages.ui.app_data import UPLOAD_NAME
from nca_core.config.rules import LARGE_SET_SAMPLES
from nca_core.plots.axes import SettlingRanges
from nca_core.util.threads import usable_cores

if TYPE_CHECKING:  # the Train page draws its buttons, which need this module, before torch loads
    from collections.abc import Callable

    from nca_core import Snapshot
    from nca_core.runs.run import Run

RUN_KEY = "train_run"
# Train's request, kept until a run starts it (a page run cut short by another click leaves
# it for the next), and a control clicked before that run had a job, applied when it starts.
TRAIN_REQUEST = "train-requested"
PENDING = "pending-control"
# Streamlit starts a click's page run while the previous one is still winding down, so the
# run that starts a job and a click's callback may run at once: both go through this lock.
CONTROL_LOCK = threading.Lock()


@dataclass
class ActiveRun:
    """A run and the job training it; ``dataset`` is the name it was started on, ``token``
    what the page's address calls it by (``links.RUN_PARAM``), so that a reload finds it again.
    ``trained`` is the run training computes, which other pages may read too (``shared_runs``);
    ``run`` the run as this page shows it."""

    dataset: str
    trained: Run
    job: TrainingJob
    token: str = field(default_factory=lambda: secrets.token_urlsafe(12))
    browser: str | None = field(default_factory=lambda: browser_id(), repr=False, compare=False)
    # the live picture's axes, carried on from frame to frame (``embedding_view``)
    axes: SettlingRanges = field(default_factory=SettlingRanges, repr=False, compare=False)
    _at: Run | None = field(default=None, repr=False, compare=False)

    @property
    def run(self) -> Run:
        """The run as this page shows it: where training went on past the page's latest
        frame (a run other pages read on), the run as it stood at that frame (``Run.at``),
        so its results and files are of the frame on screen."""
        trained, latest = self.trained, self.job.latest
        if self.job.shared is None or latest is None or latest is trained.latest:
            return trained
        at = self._at
        if at is None or at.latest is not latest:
            at = self._at = trained.at(latest)
        return at

    @property
    def snapshots(self) -> list[Snapshot]:
        return self.job.snapshots


@st.cache_resource
def run_registry() -> RunRegistry:
    """The process's registry of runs, shared by every session (see ``RunRegistry``)."""
    return RunRegistry()


FOUND = "train-found-again"  # session key: what the page says about the run its address named
FOLLOWED = "train-followed"  # session key: another page's run that this page follows (``following``)


def find_again(token: str | None) -> None:
    """Show the run the page's address names, and keep in ``FOUND`` what to tell the user
    about it (nothing when the address names no run, or when it simply shows it)."""
    if token is not None:
        st.session_state[FOUND] = _taken_up(token)


def _taken_up(token: str) -> str | None:
    """The browser that started a run takes it up again once its tab is gone (a reload);
    any other page that opens its address follows it while it trains, read-only (``FOLLOWED``:
    the page that started it alone pauses or stops it), and sees it as it is once it ended.
    A run of an upload is shown to the uploader's browser alone: the file is theirs."""
    active = run_registry().find(token)
    if active is None:
        return "The run this page was showing is no longer on the server (it is kept only for a while); press Train for a new one."
    job = active.job
    own = active.browser is not None and active.browser == browser_id()
    if active.dataset == UPLOAD_NAME and not own:
        return None  # the link's word on uploads says why (``links.show_notices``)
    st.session_state["dataset_choice"] = active.dataset
    if job.alive and not (own and not (job.connected is not None and job.connected())):
        reset()  # this page's own run gives way to the one it follows
        st.session_state[FOLLOWED] = active
        return None
    if not own:  # a finished run, shown as it is: the same run, looked at from here
        st.session_state[RUN_KEY] = ActiveRun(active.dataset, active.trained, job, active.token, active.browser)
        return None
    job.adopt(_session_connected())
    st.session_state[RUN_KEY] = active
    where = f"epoch {job.latest.epoch}" if job.latest is not None else "its start"
    return f"Found the run this page was showing again: it {'trains on' if job.alive else 'ended'} ({where})."


XSRF_COOKIE = "_streamlit_xsrf"  # the cookie Streamlit gives each browser (server.enableXsrfProtection)


def browser_id() -> str | None:
    """A name for the browser this session runs in, the same across its tabs and reloads:
    a digest of the token in Streamlit's XSRF cookie (never the token itself); None where
    there is no cookie (AppTest, or a server without XSRF protection), which owns no run."""
    parts = (st.context.cookies.get(XSRF_COOKIE) or "").strip("\"'").split("|")
    if len(parts) != 4 or parts[0] != "2":
        return None
    try:
        mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
    except ValueError:
        return None
    if not mask:
        return None
    token = bytes(byte ^ mask[i % len(mask)] for i, byte in enumerate(masked))  # the mask repeats
    return hashlib.sha256(b"nca-explorer-browser|" + token).hexdigest()[:32]


def run_link() -> dict[str, str]:
    """The part of the page's address naming its run, or the run it follows (nothing without one)."""
    active = current() or st.session_state.get(FOLLOWED)
    return {} if active is None else {links.RUN_PARAM: active.token}


# Runs under way at once, sharing the cores frame by frame: a class pressing Train together
# sees every picture start within seconds rather than waiting for whole runs one by one; the
# rest wait in line. Each run holds its frames (a MNIST run about 10 MB) and its data's
# working copies, so the cap bounds the server's memory too.
RUNS_AT_ONCE = 16


def slot_capacity() -> int:
    """How many runs may be under way at once: $NCA_MAX_JOBS, else ``RUNS_AT_ONCE``."""
    return int(os.environ.get("NCA_MAX_JOBS", RUNS_AT_ONCE))


def turn_capacity() -> int:
    """How many runs compute at any moment: one core fewer than the process may use (the
    other serves the pages). A replica pinned to a share of a machine's cores plans its
    runs for that share."""
    return max(1, usable_cores() - 1)


@st.cache_resource
def job_slots() -> JobSlots:
    """Process-wide cap on the runs under way (not per-user state: just a counter)."""
    return JobSlots(slot_capacity())


@st.cache_resource
def job_turns() -> JobSlots:
    """Process-wide cap on the runs computing at one moment, taken a frame at a time."""
    return JobSlots(turn_capacity())


def threads_for(run: Run, turns: JobSlots) -> int:
    """torch threads for one job: one for small sets, whose tiny tensor operations lose more
    to thread hand-offs than they gain (rings trains faster on one thread, much faster
    beside a busy browser: measured in commit 847312f), else a fair share of the cores
    among the runs that compute at once."""
    if len(run.data.y_train) <= LARGE_SET_SAMPLES:
        return 1
    return max(1, usable_cores() // turns.capacity)


def _session_connected():
    """A thread-safe check that this session's browser tab is still connected."""
    ctx = get_script_run_ctx()
    session_id = ctx.session_id if ctx is not None else None

    def connected() -> bool:
        if session_id is None or not runtime.exists():  # bare mode and AppTest: no sessions
            return True
        return runtime.get_instance().is_active_session(session_id)

    return connected


def current() -> ActiveRun | None:
    return st.session_state.get(RUN_KEY)


def start(dataset: str, run: Run, pace: Pace) -> ActiveRun | None:
    """Start a job for ``run`` if Train's request is still open (another page run may have
    started it meanwhile: then that one), with any control clicked meanwhile applied.
    The previous run stays visible until this one has a frame."""
    with CONTROL_LOCK:
        if not st.session_state.pop(TRAIN_REQUEST, False):
            return current()
        active = _started(dataset, run, pace)
        pending = st.session_state.pop(PENDING, None)
        if pending == "pause":
            active.job.pause()
        elif pending == "stop":
            active.job.stop()
        return active


def control(action: str, act) -> TrainingJob | None:
    """Apply a Pause, Resume, Step or Stop click: ``act(job)`` on the current job (returned),
    or, while Train's request waits for its run to start, kept for that run (see ``start``)."""
    with CONTROL_LOCK:
        active = current()
        alive = active is not None and active.job.alive
        if st.session_state.get(TRAIN_REQUEST) and not alive:
            if action == "resume":
                st.session_state.pop(PENDING, None)
            elif action in ("pause", "stop"):
                st.session_state[PENDING] = action
            return None
        if active is None:
            return None
        act(active.job)
        return active.job


def drop_request() -> None:
    """Forget a Train click that no run will start (its data did not load)."""
    for key in (TRAIN_REQUEST, PENDING):
        st.session_state.pop(key, None)


def pending_pause() -> bool:
    """Whether Pause was clicked for a run that has not started yet."""
    return st.session_state.get(PENDING) == "pause"


def new_job(
    run: Run,
    pace: Pace,
    slots: JobSlots,
    connected: Callable[[], bool] | None = None,
    turns: JobSlots | None = None,
    share: str | None = None,
) -> TrainingJob:
    """The Train page's job for ``run`` at the sidebar's ``pace``, started (benchmarks
    build the same one without a page: benchmarks/app_device.py). ``turns``, if given,
    shares the cores with the other runs under way, frame by frame. ``share``, if given
    (the dataset's name, for a registered one), has the job read the run an identical
    request started, where one may still be joined (``shared_runs``): ``job.shared.run`` is
    then the one it shows."""
    n_train = len(run.data.y_train)
    frames = frames_per_epoch(n_train, run.config.batch_size, pace.slow_start)

    def make_stream(should_stop):
        return run.stream(frames_per_epoch=frames, should_stop=should_stop)

    key = None if share is None else shared_runs.share_key(share, run, frames)
    shared = None if key is None else shared_runs.join(key, run, make_stream)
    return TrainingJob(
        None if shared is not None else make_stream,
        slots,
        pace=Pace(
            pace.max_frames_per_second,
            pace.slow_start,
            large=n_train > EPOCH_FRAMES_MIN_SAMPLES,
            frames_per_epoch=frames,
        ),
        hold_first_frame=pace.hold_first_frame,
        total_epochs=run.config.max_iter,
        connected=connected,
        reload_grace=RELOAD_GRACE,
        threads=threads_for(run, turns or slots),
        turns=turns,
        shared=shared,
    )


def _started(dataset: str, run: Run, pace: Pace) -> ActiveRun:
    previous = current()
    if previous is not None:
        previous.job.stop()
        st.session_state[RUN_KEY + "_previous"] = previous
    # a user's upload is never shared with another session (``data.shared_unless_upload``)
    shared_as = None if dataset == UPLOAD_NAME else dataset
    job = new_job(run, pace, job_slots(), connected=_session_connected(), turns=job_turns(), share=shared_as)
    active = ActiveRun(dataset, job.shared.run if job.shared is not None else run, job)
    st.session_state[RUN_KEY] = active
    run_registry().add(active)
    st.query_params[links.RUN_PARAM] = active.token  # now: a reload before the next page run finds it
    return active


def shown() -> ActiveRun | None:
    """The run to draw: the current one once it has a frame, else the previous one."""
    active = current()
    if active is not None and active.snapshots:
        st.session_state.pop(RUN_KEY + "_previous", None)
        return active
    return st.session_state.get(RUN_KEY + "_previous", active)


def reset() -> None:
    """Forget every run of this session (for instance when the dataset changes), and any
    control clicked for a run that never started."""
    st.session_state.pop(PENDING, None)
    for key in (RUN_KEY, RUN_KEY + "_previous"):
        active = st.session_state.pop(key, None)
        if active is not None:
            active.job.stop()
