"""Compare's "what to notice": the numbers on the screen, read in words for a class."""

from __future__ import annotations

from nca_core.runs.comparison import MethodResult
from nca_core.util.formatting import percent

# Points of accuracy under which two scores read as the same
CLOSE = 0.02


def what_to_notice(projections: list[MethodResult], raw: MethodResult, k: int) -> str:
    """One paragraph on the table: which projection kNN does best on, how far the
    projections stay from kNN on all the inputs, and what a leave-one-out score above the
    test score says. Scores are the test set's where there is one."""
    test = raw.test_accuracy is not None
    score = (lambda r: r.test_accuracy) if test else (lambda r: r.train_accuracy)
    best = max(projections, key=score)
    words = [f"**What to notice:** {k}-NN does best on {best.name}'s {best.dimensions}-D map ({percent(score(best), 1)})."]
    gap = score(raw) - score(best)
    inputs = f"all {raw.dimensions} inputs"
    if gap > CLOSE:
        words.append(
            f"On {inputs} it reaches {percent(score(raw), 1)}: a map to {best.dimensions} dimensions keeps "
            "what a picture can show, and gives up the rest; a larger d keeps more (the kNN speed page "
            "maps to 32)."
        )
    elif gap < -CLOSE:
        words.append(f"That beats {inputs} ({percent(score(raw), 1)}): the map leaves out what misleads kNN.")
    else:
        words.append(f"{inputs.capitalize()} give about the same ({percent(score(raw), 1)}), in far fewer numbers.")
    if test and best.train_accuracy - best.test_accuracy > CLOSE:
        words.append(
            f"Its leave-one-out score on the training points ({percent(best.train_accuracy, 1)}) is above "
            "the test score: those points are the ones the map was learnt on, so the test score is "
            "the one to trust."
        )
    return " ".join(words)


def guess_first(names: list[str], k: int) -> str:
    """While the scores are hidden: what to look at, and what to guess, without the answer.
    ``names``: the projections' names, in the panels' order."""
    listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
    return (
        f"**Guess first:** rank {listed} by how well {k}-NN classifies on each map. "
        f"{k}-NN gives a point the class most of its {k} nearest neighbours have, so look for the map "
        "whose classes sit in tight groups, each apart from the others, and for where colours mix. "
        "Then press **Reveal the scores**."
    )
