"""The Train page's one-line explanations: a "what to notice" beside each main figure and
the word on the demonstration start.

Each sentence is about the run on screen: its numbers come from its snapshots and its
names from the dataset, so a line never describes something the figure does not show.
"""

from __future__ import annotations

from collections.abc import Sequence

from app_pages.ui.train.runs import ActiveRun
from nca_core import Snapshot
from nca_core.config.settings import BY_NAME
from nca_core.datasets import Dataset
from nca_core.runs.demo import SEPARATED, DemoStart
from nca_core.runs.run import RunConfig
from nca_core.util.formatting import percent

PICK_HINT = (
    "Click a point to draw lines to the neighbours it is likeliest to pick, each as wide as the "
    "chance p_ij of picking it (among the points drawn); Inspect a point lists them."
)
# Presenting, the notice shares a narrow column in large type: the lecturer says the rest.
BRIEF_PICK_HINT = "Click a point: lines to its likeliest picks."


def live(three_d: bool, brief: bool = False) -> str:
    """Beside the embedding while it trains; a 2-D picture also says what a click does
    (``brief``: in a few words)."""
    text = (
        "**What to notice:** points of one colour pull together while the classes move apart; "
        "the picture also grows, because a larger map makes each point rely on fewer, closer "
        "neighbours."
    )
    if three_d:
        return text
    return f"{text} {_pick_hint(brief)}" + ("" if brief else " The lines follow it as the map learns.")


def _pick_hint(brief: bool) -> str:
    return BRIEF_PICK_HINT if brief else PICK_HINT


def _listed(names: Sequence[str]) -> str:
    names = [str(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def final(active: ActiveRun, three_d: bool, brief: bool = False) -> str:
    """Beside the embedding after training: what the k-NN accuracy counts, and the click
    (``brief``: in a few words); "most points sit among their own colour" only when the
    accuracy says so."""
    k = active.run.config.k
    scored = [s.accuracy for s in active.snapshots if s.accuracy is not None]
    wrong = "a point inside another colour is one it gets wrong."
    if not scored:
        text = f"**What to notice:** a point among its own colour is one the {k}-NN vote gets right; {wrong}"
    elif scored[-1] >= SEPARATED:  # most points sit among their own colour
        text = (
            "**What to notice:** most points now sit among their own colour, which is what the "
            f"{k}-NN accuracy counts; {wrong}"
        )
    else:
        text = (
            f"**What to notice:** the colours still overlap ({k}-NN accuracy {percent(scored[-1])}): {wrong}"
        )
    return text + (" Drag to turn the view." if three_d else f" {_pick_hint(brief)}")


def replay(snapshots: Sequence[Snapshot]) -> str | None:
    """When the run did its learning: the epoch by which accuracy made 90% of its gain."""
    scored = [s for s in snapshots if s.accuracy is not None]
    if len(scored) < 2:
        return None
    start, end, last = scored[0].accuracy, scored[-1].accuracy, scored[-1].epoch
    if end - start < 0.01:
        return (
            f"**What to notice:** accuracy hardly changed ({percent(start)} to {percent(end)}): the start "
            "already separated the classes as well as this map can, and the points mostly spread out."
        )
    by = next(s for s in scored if s.accuracy >= start + 0.9 * (end - start))
    # "of 2 trained": a stopped run has fewer epochs than it was set to
    rise = f"accuracy rose from {percent(start)} to {percent(by.accuracy)} by epoch {by.epoch} of {last} trained"
    if by.epoch > last / 2:
        return (
            f"**What to notice:** the learning goes on through the run: {rise} and ended at {percent(end)}."
        )
    return (
        f"**What to notice:** most of the learning comes early: {rise} and ended at {percent(end)}; "
        "after that the groups mostly tighten and drift apart."
    )


def learned_map(active: ActiveRun, data: Dataset, count: int = 3) -> str:
    """Which inputs the map leans on most (``Run.feature_influence``), by name, and a word
    when the strongest colour sits on an input that hardly varies."""
    run, names = active.run, data.feature_labels
    weights, top = run.map_weights(), run.top_features(count)
    strongest = max(range(len(weights)), key=lambda i: weights[i])
    text = (
        "**What to notice:** a colour is a weight, and a weight counts as far as its input "
        f"varies; allowing for that, this map relies most on {_listed([names[i] for i in top])}."
    )
    if strongest not in top:
        text += f" The strongest colour, on {names[strongest]}, weighs an input that hardly varies."
    return text


def demo_start(demo: DemoStart, config: RunConfig, data: Dataset) -> str:
    """Why the page starts where it does, and how to get the library's start back."""
    label, usual = (BY_NAME["init"].label_of(v) for v in (demo.init, demo.replaced))
    axes = ""
    if demo.init == "identity":
        scale = "standardised " if config.standardize else ""
        axes = f", with {scale}{_listed(data.feature_labels[: config.n_components])} as the axes"
    return (
        f"Demo start: **{label}**{axes}, {percent(demo.accuracy)} {config.k}-NN before training: the "
        f"usual {usual} start already scores {percent(demo.replaced_accuracy)} and would leave nothing "
        f"to watch. Start from {usual} for the quickest result."
    )
