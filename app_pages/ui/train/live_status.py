"""Live pieces of the Train page: the progress line, the run's state for screen readers, the
metrics, the curves, and how often a live run is redrawn. The picture is ``embedding_view``;
what follows a run, ``run_results``."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from app_pages.engine.frames import progress as progress_of
from app_pages.engine.jobs import JobState
from app_pages.ui import page_style
from app_pages.ui.train.runs import ActiveRun
from nca_core.config.rules import LARGE_SET_SAMPLES
from nca_core.config.settings import BY_NAME
from nca_core.plots import descriptions, live_curves, replay
from nca_core.runs.demo import SEPARATED, DemoStart
from nca_core.runs.run import EVAL_POINTS, Run, blow_up_note
from nca_core.util.formatting import duration, percent

# A 3-D chart is a Plotly WebGL figure built afresh for each frame (about a second in
# headless Chromium without a GPU), so a live 3-D view is polled less often than 2-D.
THREE_D_REDRAW_SECONDS = 1.5
# Until a run's start frame exists the picture is polled this often, so that it shows, and
# training (which holds the start frame until it is drawn) goes on, as soon as they can.
FIRST_FRAME_POLL_SECONDS = 0.2
# A paused run's picture changes only after a click (which reruns the page), so it is
# polled this seldom: redrawing the same frame ten times a second kept most of a core busy.
# Pausing happens at the next frame, which the page then shows within this time.
RESTING_POLL_SECONDS = 0.5
# The metrics are drawn with the picture, the curves apart: they are redrawn this often, or
# with the picture where it is slower (a curve a second behind its metric, 98% beside 50%,
# read as a contradiction).
CURVES_SECONDS = 0.5
# The pictures every live page redraws are built on the server, in Python, under the one
# interpreter lock the training threads need too: 20 to 30 ms for MNIST's displayed points,
# less for smaller sets (benchmarks/app_device.py, "picture build"). With many runs under way
# at once (a class) their pages share this many redraws a second, about half that lock at
# most, so that each page is redrawn less often rather than training starved (at 40 a
# second a class of twelve trained a few epochs in ten minutes; benchmarks/load_test.py).
SERVER_REDRAWS_PER_SECOND = 20.0


def redraw_seconds(
    n_train: int, n_components: int, first_frame: bool = False, resting: bool = False, runs_under_way: int = 1
) -> tuple[float, float]:
    """How often a live run polls its worker: (the picture with the metrics, the curves).

    Ten times a second for small sets, whose epochs take a few tens of milliseconds; larger
    ones take up to seconds per epoch, and redrawing thousands of points costs CPU that
    training needs (on 2 cores MNIST's epochs are far slower beside frequent redraws;
    benchmarks/train_page_mnist.py times the page's run). The curves, a few hundred
    points, are redrawn every ``CURVES_SECONDS``, or with the picture where it is slower.
    While a run waits for its ``first_frame`` (its start waits to be drawn), the picture is
    polled every ``FIRST_FRAME_POLL_SECONDS`` whatever the size; otherwise, while it is
    ``resting`` (paused, no step to take), at most every ``RESTING_POLL_SECONDS``. With
    ``runs_under_way`` (on the whole server), each run's pages share
    ``SERVER_REDRAWS_PER_SECOND`` redraws a second with the others'. A run that several
    pages read (``shared_runs``) counts once: counting each of its pages made every picture
    move in steps of seconds and started none sooner (thirty pages of three runs,
    benchmarks/load_test.py).
    """
    picture = 0.1 if n_train <= 2000 else 0.2 if n_train <= LARGE_SET_SAMPLES else 1.0
    picture = max(picture, runs_under_way / SERVER_REDRAWS_PER_SECOND)
    curves = max(CURVES_SECONDS, picture)
    picture = THREE_D_REDRAW_SECONDS if n_components == 3 else picture
    if first_frame:
        return min(picture, FIRST_FRAME_POLL_SECONDS), curves
    if resting:
        return max(picture, RESTING_POLL_SECONDS), max(curves, RESTING_POLL_SECONDS)
    return picture, curves


STATE_TEXT = {
    JobState.QUEUED: "waiting for a free training slot",
    JobState.RUNNING: "training",
    JobState.PAUSED: "paused",
    JobState.FINISHED: "finished",
    JobState.STOPPED: "stopped",
    JobState.FAILED: "stopped with an error",
}


def _fmt_speed(epochs_per_second: float) -> str:
    """A slow run's speed as time per epoch: "40.0 s per epoch" rather than "0.0 epochs/s"."""
    if epochs_per_second >= 0.95:
        return f"{epochs_per_second:.1f} epochs/s"
    return f"{duration(1 / epochs_per_second)} per epoch"


def accuracy_metric(active: ActiveRun) -> None:
    """Presentation mode's one number: the latest k-NN accuracy and its change since the
    start (test set when there is one, else leave-one-out); and the run's state for screen
    readers (``announce``)."""
    accuracy_row(active.snapshots, active.run.config.k, lambda: announce(active))


def accuracy_row(snaps: list, k: int, say: Callable[[], None]) -> None:
    """``accuracy_metric`` of the frames ``snaps`` with ``k`` neighbours, ``say()`` drawing
    the live region (as ``metric_row``)."""
    say()
    scored = [s for s in snaps if s.train_accuracy is not None]
    if not scored:
        return
    test = scored[0].test_accuracy is not None
    first, last = ((s.test_accuracy if test else s.train_accuracy) for s in (scored[0], scored[-1]))
    st.metric(
        f"{'Test' if test else 'Leave-one-out'} {k}-NN accuracy (start {percent(first)})",
        percent(last),
        f"{100 * (last - first):+.0f} points" if len(scored) > 1 else None,
    )


def status_text(active: ActiveRun) -> str:
    """One line: epoch, state, elapsed (frozen once the run ends), time left, speed, device."""
    job, config = active.job, active.run.config
    status = STATE_TEXT.get(job.state, job.state)
    if job.state == JobState.QUEUED:
        wait = job.queue_wait
        estimate = f", about {duration(wait)}" if wait is not None else ", estimating the wait"
        status += f" (place {job.queue_position} in line{estimate})"
    elif job.alive and job.stop_requested:
        status = "stopping at the next frame"
    elif job.state == JobState.RUNNING and job.pause_requested:
        step_to = job.stepping_to
        status = (
            "pausing at the next frame" if step_to is None else f"stepping to epoch {replay.epochs_text(step_to)}"
        )
    latest = job.latest
    if latest is None:  # no frame yet: say so rather than show "Epoch 0"
        return f"Preparing the run · {status} · {duration(job.elapsed)} elapsed"
    text = f"Epoch {replay.epoch_label(latest)} / {config.max_iter} · {status} · {duration(job.elapsed)} elapsed"
    settling = job.alive and (job.stop_requested or job.pause_requested)
    if job.state == JobState.RUNNING and not settling:  # a run about to halt has no time left or pace
        left = job.seconds_left
        text += " · estimating the time left" if left is None else f" · about {duration(left)} left"
    if not settling and _in_slow_start(job, latest):
        text += " · slow-motion start"  # its pace is the page's, not the training's
    elif not settling and job.epochs_per_second:
        text += f" · {_fmt_speed(job.epochs_per_second)}"
    device = getattr(active.run.model, "device_", config.device)
    return text + f" · device {device}"


def _in_slow_start(job, latest) -> bool:
    """Whether a training job is showing ``latest`` in its slow-motion start (``pacing.Pace``)."""
    in_slow_start = getattr(getattr(job, "pace", None), "in_slow_start", None)
    return job.state == JobState.RUNNING and in_slow_start is not None and in_slow_start(latest)


def progress(active: ActiveRun) -> None:
    """Progress bar with epoch count, elapsed time, ETA, speed and the device."""
    latest = active.job.latest
    done = progress_of(latest) if latest is not None else 0.0
    st.progress(min(1.0, done / max(active.run.config.max_iter, 1)), text=status_text(active))
    note = blow_up_note(active.snapshots)
    if note:
        st.warning(note, icon=":material/warning:")


# A screen reader hears the run's state from a polite live region: at most once every
# ANNOUNCE_SECONDS of the run while it trains (a new epoch ten times a second would drown
# whatever the reader is reading), and at once when the state changes (paused, finished).
ANNOUNCE_SECONDS = 5.0
ANNOUNCED_KEY = "run-announcement"  # session key: (the run's ticket, its last Announcement)
# Out of sight but read: a live region must stay in the page to be heard, so it is not hidden.
_VISUALLY_HIDDEN = page_style.VISUALLY_HIDDEN


@dataclass(frozen=True)
class Announcement:
    """What the live region says, the run's state it says it of, and the run's elapsed
    seconds when it was made."""

    text: str
    state: str
    at: float


def announcement_text(state: str, epoch: str | None, max_iter: int, accuracy: str | None) -> str:
    """The run's state in a sentence: "Training: epoch 12 of 40, test 5-NN accuracy 97%."
    ``epoch``: epochs done (None before the first frame); ``accuracy``: the latest measured,
    with its name, if any."""
    if state == JobState.QUEUED:
        return "Waiting for a free training slot."
    if epoch is None:
        return "Preparing the run."
    where = f"epoch {epoch} of {max_iter}" + (f", {accuracy}" if accuracy else "")
    return {
        JobState.RUNNING: f"Training: {where}.",
        JobState.PAUSED: f"Paused at {where}.",
        JobState.FINISHED: f"Training finished: {where}.",
        JobState.STOPPED: f"Training stopped at {where}.",
        JobState.FAILED: f"Training stopped with an error at {where}.",
    }.get(state, f"{STATE_TEXT.get(state, state)}: {where}.")


def next_announcement(
    last: Announcement | None, text: str, state: str, now: float, every: float = ANNOUNCE_SECONDS
) -> Announcement:
    """What the live region says now, given what it said ``last``: ``text`` if nothing was
    said yet, if the run's ``state`` changed, or if ``every`` seconds of the run (``now``,
    its elapsed seconds) have passed since the last change; otherwise the last words."""
    if last is None or state != last.state or (text != last.text and now - last.at >= every):
        return Announcement(text, state, now)
    return last


def _latest_accuracy(active: ActiveRun) -> str | None:
    scored = next((s for s in reversed(active.snapshots) if s.train_accuracy is not None), None)
    if scored is None:
        return None
    k = active.run.config.k
    if scored.test_accuracy is not None:
        return f"test {k}-NN accuracy {percent(scored.test_accuracy, 1)}"
    return f"leave-one-out {k}-NN accuracy {percent(scored.train_accuracy, 1)}"


def announce(active: ActiveRun) -> None:
    """The run's state in a polite live region, out of sight (the progress line shows it),
    changed no more often than ``next_announcement`` allows. Drawn with the metrics, which
    every redraw of a run's picture draws, whether presenting or not."""
    job = active.job
    latest = job.latest
    epoch = replay.epoch_label(latest) if latest is not None else None
    text = announcement_text(job.state, epoch, active.run.config.max_iter, _latest_accuracy(active))
    ticket, last = st.session_state.get(ANNOUNCED_KEY, (None, None))
    said = next_announcement(last if ticket == job.ticket else None, text, job.state, job.elapsed)
    st.session_state[ANNOUNCED_KEY] = (job.ticket, said)
    live_region(said.text)


def live_region(text: str) -> None:
    """``text`` in a polite live region, out of sight but read. st.markdown keeps the same
    element from one redraw to the next, as a live region needs; the picture before Train
    says its start in the same place (``start_view``). Its container is out of the page's
    flow (``page_style.OUT_OF_FLOW``), so it never moves what is drawn around it."""
    with st.container(key=page_style.LIVE_REGION_KEY):
        st.markdown(
            f'<div aria-live="polite" role="status" style="{_VISUALLY_HIDDEN}">{html.escape(text)}</div>',
            unsafe_allow_html=True,
        )


def metrics(active: ActiveRun, demo: DemoStart | None = None) -> None:
    """Epoch, objective and accuracy of the latest frame (drawn with the picture, so they
    never lag it), and the run's state for screen readers (``announce``)."""
    metric_row(active.snapshots, active.run, demo, lambda: announce(active))


def metric_row(snaps: list, run: Run, demo: DemoStart | None, say: Callable[[], None]) -> None:
    """``metrics`` of the frames ``snaps`` of ``run``, ``say()`` drawing the live region;
    accuracies from the latest whole epoch that has them. A start that already separates
    the classes gets a word on where to start instead (``demo``'s start when the dataset has
    one). The picture before Train (``start_view``) draws its start frame's row with this."""
    latest = snaps[-1]
    config = run.config
    # Short labels, details in the help: three metrics share a third of a 1024-pixel screen.
    cols = st.columns(3)
    cols[0].metric("Epoch", replay.epoch_label(latest), help=f"Epochs done, of {config.max_iter}.")
    with cols[0]:  # under the shortest metric, its room taken from no other element
        say()
    label = {"f": "mean pᵢ", "g": "mean log pᵢ", "mcml": "−KL"}[config.objective]
    # g and -KL are negative: a digit fewer keeps "-0.700" as wide as f's "0.9939", which a
    # third of a 1024-pixel screen shows whole
    decimals = 4 if config.objective == "f" else 3
    # The start frame's change, 0, has its badge too (greyed, no arrow): a badge that came
    # with the second frame made the row taller and the picture below jump down.
    delta = latest.objective - snaps[0].objective
    cols[1].metric(
        label,
        f"{latest.objective:.{decimals}f}",
        f"{delta:+.{decimals}f}",
        help="The objective per point, and its change since the start.",
        delta_color="normal" if delta else "off",
        delta_arrow="auto" if delta else "off",
    )
    scored = next((s for s in reversed(snaps) if s.train_accuracy is not None), None)
    if scored is not None and scored.test_accuracy is not None:
        sampled = len(run.data.y_test) > EVAL_POINTS
        where = f"a stratified sample of {EVAL_POINTS:,} test points" if sampled else "the test set"
        cols[2].metric(
            f"Test {config.k}-NN",
            percent(scored.test_accuracy, 1),
            help=f"{config.k}-NN accuracy on {where} (epoch {replay.epoch_label(scored)}).",
        )
    elif scored is not None:
        cols[2].metric(
            f"LOO {config.k}-NN",
            percent(scored.train_accuracy, 1),
            help=f"Leave-one-out {config.k}-NN accuracy on training points (epoch {replay.epoch_label(scored)}).",
        )
    start = snaps[0]
    if start.test_accuracy is not None and start.test_accuracy >= SEPARATED and config.init != "random":
        instead = demo.init if demo is not None and demo.init != config.init else "random"
        st.caption(
            f"What to notice: the {BY_NAME['init'].label_of(config.init)} start already scores "
            f"{percent(start.test_accuracy)}, "
            "so NCA has little to move. To watch it separate the classes by itself, choose "
            f"**Start from: {instead}**."
        )
    if latest.dof is not None:
        what = "learnt" if config.dof == "learn" else "fixed"
        st.caption(f"Student-t degrees of freedom: {latest.dof:.3g} ({what}).")


def curves(active: ActiveRun) -> None:
    """Objective and accuracy against epoch, whole epochs only. Once the run has ended each
    says in words where its lines start and end; while it trains the charts' specs hold
    still (see ``live_charts``), and the run's announcements give the numbers."""
    snaps = [s for s in active.snapshots if s.fraction >= 1.0]
    config = active.run.config
    epochs = [s.epoch for s in snaps]
    train, test = [s.train_accuracy for s in snaps], [s.test_accuracy for s in snaps]
    ended = not active.job.alive
    objective = descriptions.curve_description(
        "the objective", epochs, {live_curves.OBJECTIVE_LABELS[config.objective]: [s.objective for s in snaps]}
    )
    accuracy = descriptions.curve_description(
        f"the {config.k}-NN accuracy", epochs, {"leave-one-out": train, "test": test}, fmt=percent
    )
    st.vega_lite_chart(
        live_curves.objective_rows(epochs, [s.objective for s in snaps]),
        live_curves.objective_spec(config.objective, description=objective if ended else None),
        key="objective-curve",
    )
    st.vega_lite_chart(
        live_curves.accuracy_rows(epochs, train, test),
        live_curves.accuracy_spec(config.k, description=accuracy if ended else None),
        key="accuracy-curve",
    )
