"""The Train page's run buttons and pace controls.

Pause, Resume, Step and Stop act in ``on_click`` callbacks, which Streamlit runs before the
page script: the buttons are then drawn from the job's new state (a click acted on during
the script would leave the label one click behind).
"""

from __future__ import annotations

import streamlit as st

from . import state
from .pacing import Pace

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


TRAIN_REQUEST = "train-requested"


def _request_training() -> None:
    st.session_state[TRAIN_REQUEST] = True


def train_requested() -> bool:
    """Whether Train was pressed: asked before the buttons are drawn, so that the run
    starts first and the buttons are drawn for it (Pause enabled) in the same run."""
    return bool(st.session_state.pop(TRAIN_REQUEST, False))


def _job():
    """The session's training job; None when the run asked for has not started (its page
    run was cut short by this click, before the run's settings were read)."""
    active = state.current()
    return active.job if active is not None else None


def _pause_or_resume() -> None:
    job = _job()
    if job is not None and job.pause_requested:
        job.resume()
    elif job is not None:
        job.pause()


def _step() -> None:
    if (job := _job()) is not None:
        job.step()


def _stop() -> None:
    if (job := _job()) is not None:
        job.stop()
        job.join(timeout=STOP_WAIT_SECONDS)


def run_buttons(running: bool, paused: bool, *, step: bool = True):
    """Train, Pause/Resume, Step (unless ``step`` is false) and Stop in one row sized to
    their labels (see ``train_requested`` for Train); returns the row, for more controls."""
    row = st.container(horizontal=True, vertical_alignment="center")
    row.button(
        "Train",
        type="primary",
        icon=":material/play_arrow:",
        disabled=running,
        on_click=_request_training,
        key="train",
    )
    row.button(
        "Resume" if paused else "Pause",
        icon=":material/play_circle:" if paused else ":material/pause:",
        disabled=not running,
        on_click=_pause_or_resume,
        key="pause-resume",
    )
    if step:
        row.button(
            "Step",
            icon=":material/skip_next:",
            disabled=not paused,
            help="Train one more epoch, then pause again.",
            on_click=_step,
            key="step",
        )
    row.button("Stop", icon=":material/stop:", disabled=not running, on_click=_stop, key="stop")
    return row
