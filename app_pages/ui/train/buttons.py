"""The Train page's run buttons and pace controls.

Pause, Resume, Step and Stop act in ``on_click`` callbacks, which Streamlit runs before the
page script: the buttons are then drawn from the job's new state (a click acted on during
the script would leave the label one click behind).

A pressed button that is disabled by its own click (Train, Stop) loses the keyboard focus to
the page, and Pause becomes Resume: each click names the button that keyboard focus goes
to next (``FOCUS_AFTER``), and the page's next run moves it there (``keep_focus``).
"""

from __future__ import annotations

import json
import secrets

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


# Where keyboard focus goes after each button: the button that takes the pressed one's
# place (Train is disabled while its run trains, Stop once the run stops), else the same.
FOCUS_AFTER = {"train": "pause-resume", "pause-resume": "pause-resume", "step": "step", "stop": "train"}
FOCUS_KEY = "run-button-focus"  # session key: (the button's key, a fresh word for each click)
RUN_BUTTONS = tuple(FOCUS_AFTER)
# Moves focus to the button once it is drawn and enabled (1.5 s at most), and only from the
# page itself or from a run button: a keyboard user who has moved on keeps their place.
_FOCUS_SCRIPT = """<script data-click="{click}">
(() => {{
  const target = {target}, buttons = {buttons};
  const stop = Date.now() + 1500;
  const move = () => {{
    const button = document.querySelector(".st-key-" + target + " button");
    const now = document.activeElement;
    const lost = !now || now === document.body || buttons.some((key) => now.closest(".st-key-" + key));
    if (!lost) return;
    if (button && !button.disabled) {{ if (now !== button) button.focus(); return; }}
    if (Date.now() < stop) setTimeout(move, 50);
  }};
  move();
}})();
</script>"""


def _pressed(key: str) -> None:
    """Remember that the run button ``key`` was pressed, for ``keep_focus``."""
    st.session_state[FOCUS_KEY] = (FOCUS_AFTER[key], secrets.token_hex(4))


def keep_focus() -> None:
    """After a run button's click, keyboard focus to the button ``FOCUS_AFTER`` names, by a
    script that runs once per click (Streamlit has no focus call of its own)."""
    pending = st.session_state.pop(FOCUS_KEY, None)
    if pending is None:
        return
    target, click = pending
    script = _FOCUS_SCRIPT.format(click=click, target=json.dumps(target), buttons=json.dumps(list(RUN_BUTTONS)))
    st.html(script, unsafe_allow_javascript=True, width="content")


def _request_training() -> None:
    _pressed("train")
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
    _pressed("pause-resume")
    if action == "resume":
        runs.control("resume", lambda job: job.resume())
    else:
        runs.control("pause", lambda job: job.pause())


def _step() -> None:
    _pressed("step")
    runs.control("step", lambda job: job.step())


def _stop() -> None:
    _pressed("stop")
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
