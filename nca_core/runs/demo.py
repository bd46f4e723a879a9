"""A start for demonstrations: one that leaves training something to show.

The library starts where scikit-learn does (LDA when d allows, ``rules.auto_init``), and on
a set such as wine that start already separates the classes: an audience pressing
Train would watch a finished picture grow. ``demo_start`` measures the recommended start
and, when it already separates the classes, picks the first of PCA, the identity (the first
d measurements as the axes) and a random map whose start leaves them mixed. The estimator's
defaults and ``runs.run.recommended_config`` stay as they are; the app offers this as the Train
page's default, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..datasets import Dataset
from .run import Run, RunConfig, recommended_config

__all__ = ["DEMO_MAX_SAMPLES", "SEPARATED", "DemoStart", "demo_start", "start_accuracy"]

# A start at least this accurate (k-NN, test set) leaves little for training to show.
SEPARATED = 0.9
# Larger sets take long enough per epoch to show their own journey, and measuring their
# start would cost a noticeable wait.
DEMO_MAX_SAMPLES = 3000
_ALTERNATIVES = ("pca", "identity", "random")


@dataclass(frozen=True)
class DemoStart:
    """``init`` replaces the recommended ``replaced`` start; both with their k-NN accuracy
    before training (on the test set when there is one, else leave-one-out)."""

    init: str
    accuracy: float
    replaced: str
    replaced_accuracy: float


def start_accuracy(config: RunConfig, data: Dataset) -> float:
    """k-NN accuracy of ``config``'s starting map on ``data``, before any training step."""
    stream = Run(config, data).stream()
    try:
        start = next(stream)
    finally:
        stream.close()
    return start.accuracy


def demo_start(data: Dataset, config: RunConfig | None = None) -> DemoStart | None:
    """A start that leaves the classes mixed, when ``config``'s (default: the recommended
    one) already separates them; None when it leaves room to learn, for networks (which
    start at random anyway) and for sets above ``DEMO_MAX_SAMPLES`` training points."""
    config = config or recommended_config(data)
    if config.encoder != "linear" or len(data.y_train) > DEMO_MAX_SAMPLES:
        return None
    accuracy = start_accuracy(config, data)
    if accuracy < SEPARATED:
        return None
    for init in _ALTERNATIVES:
        if init != config.init:
            candidate = start_accuracy(config.replace(init=init), data)
            if candidate < SEPARATED:
                return DemoStart(init, candidate, config.init, accuracy)
    return None
