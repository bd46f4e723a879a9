"""The Train page's run buttons and pace controls.

Pause, Resume, Step and Stop act in ``on_click`` callbacks, which Streamlit runs before the
page script: the buttons are then drawn from the job's new state (a click acted on during
the script would leave the label one click behind).
"""

from __future__ import annotations

import streamlit as st

from app_pages.engine.pacing import Pace
from app_pages.ui.train import runs

# How long a click on Stop waits for the worker to reach its next frame before the page
# moves on (it then says "stopping" until the worker ends).
STOP_WAIT_SECONDS = 1.0


def pace_controls() -> Pace:
    """The sidebar's pace: a frame cap and a slow-motion start (both off: full speed)."""
    with st.sidebar:
        st.subheader("Pace")
        slow = st.toggle(
            "Slow-motion start",
            value=True,
            key="slow-start",
            help="Hold the starting picture, then show the first frames slowly (a few epochs "
            "of a small set, the first minibatches of a large one): fast runs (the rings "
            "separate in two epochs) are seen happening.",
        )
        cap = st.slider(
            "Frames per second cap",
            0,
            30,
            10,
            key="pace",
            help="Slows a small set's fast runs down so every epoch can be seen (a large "
            "set trains at its own pace); 0 with the slow-motion start off trains at full speed.",
        )
    return Pace(float(cap), slow)


def _request_training() -> None:
    st.session_state[runs.TRAIN_REQUEST] = True


def train_requested() -> bool:
    """Whether Train was pressed and its run has not started yet: asked before the buttons
    are drawn, so that they are drawn for the run (Pause enabled) in the same page run.
    The request stays until ``runs.start`` takes it: a page run cut short by a click
    before it started the run leaves it to the next."""
    return bool(st.session_state.get(runs.TRAIN_REQUEST, False))


def _pause_or_resume(action: str) -> None:
    """``action`` is what the button said when clicked ("pause" or "resume"), not a toggle:
    a callback that runs twice for one click (a replayed trigger) cannot undo it."""
    if action == "resume":
        runs.control("resume", lambda job: job.resume())
    else:
        runs.control("pause", lambda job: job.pause())


def _step() -> None:
    runs.control("step", lambda job: job.step())


def _stop() -> None:
    job = runs.control("stop", lambda job: job.stop())
    if job is not None:
        job.join(timeout=STOP_WAIT_SECONDS)


def run_buttons(running: bool, paused: bool, *, ready: bool = True) -> None:
    """Train, Pause/Resume, Step and Stop in one row as wide as their labels, which wraps
    as a whole (see ``train_requested`` for Train; disabled until the data is ``ready``)."""
    row = st.container(horizontal=True, vertical_alignment="center", width="content")
    row.button(
        "Train",
        type="primary",
        icon=":material/play_arrow:",
        disabled=running or not ready,
        on_click=_request_training,
        key="train",
    )
    row.button(
        "Resume" if paused else "Pause",
        icon=":material/play_circle:" if paused else ":material/pause:",
        disabled=not running,
        on_click=_pause_or_resume,
        args=("resume" if paused else "pause",),
        key="pause-resume",
    )
    row.button(
        "Step",
        icon=":material/skip_next:",
        disabled=not paused,
        help="Train one more epoch, then pause again.",
        on_click=_step,
        key="step",
    )
    row.button("Stop", icon=":material/stop:", disabled=not running, on_click=_stop, key="stop")
