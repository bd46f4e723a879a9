"""The training loop: an epoch strategy applied until done, yielding snapshots.

It knows nothing about datasets, estimators or user interfaces, nor which encoder or
epoch strategy it drives (see ``epochs``): each epoch it asks the strategy for one epoch's
steps, checks the result is finite, and yields a frozen ``Snapshot``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .problem import EpochStrategy, Problem

__all__ = ["Snapshot", "TrainingDiverged", "train"]

Evaluator = Callable[[nn.Module], tuple[float | None, float | None]]

class TrainingDiverged(FloatingPointError):
    """The objective or the map stopped being finite; the last finite state is kept.

    Raised by ``NCA.fit`` and ``NCA.fit_iter`` with the epoch and the optimiser's step in
    its message; the estimator's fitted attributes hold the last epoch whose objective and
    map were finite. Usually the learning rate is too large, or the inputs are not
    standardised. A ``FloatingPointError``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from nca_core import NCA, TrainingDiverged
    >>> X, y = load_iris(return_X_y=True)
    >>> nca = NCA(n_components=2, optimizer="sgd", learning_rate=1e30, random_state=0)
    >>> try:
    ...     nca.fit(X, y)
    ... except TrainingDiverged as error:
    ...     print(str(error).split(":")[0])
    training diverged at epoch 1
    >>> nca.n_iter_, bool(np.isfinite(nca.components_).all())
    (0, True)
    """


@dataclass(frozen=True)
class Snapshot:
    """The state of a run after one epoch (or one L-BFGS iteration); epoch 0 is the start.

    Made by ``NCA.fit_iter``, one per epoch; frozen, and its arrays are copies, so a list
    of snapshots replays a run.

    Attributes
    ----------
    epoch : int
        Epochs (or L-BFGS iterations) done; 0 is the starting map.
    objective : float
        The objective per anchor: mean p_i for "f" (expected leave-one-out accuracy),
        mean log p_i for "g", -KL(P || Q) for "mcml". For minibatch optimisers, the mean
        over the epoch's batches.
    elapsed : float
        Seconds of training since the run started (evaluation time excluded).
    components : ndarray of shape (n_components, n_features) or None
        A copy of the map A; None for a nonlinear encoder.
    embedding : ndarray of shape (n_display, n_components), float32
        The display subset (``NCA.display_index_``) mapped by A or the network, as
        ``NCA.transform`` maps it.
    train_accuracy : float or None
        kNN accuracy, leave-one-out on the training points, when ``eval_every`` asked for
        it at this epoch.
    test_accuracy : float or None
        kNN accuracy on the held-out set, when there is one and it was measured.
    dof : float or None
        The Student-t kernel's degrees of freedom (learnt or fixed); None for the Gaussian.
    fraction : float
        How much of ``epoch`` is done: 1.0 for a finished epoch (and the start); less for a
        frame taken part-way through a minibatch epoch (``train(frames_per_epoch=...)``),
        whose objective is the mean over the epoch's batches so far and which carries no
        accuracies.
    accuracy : float or None
        ``test_accuracy`` when measured, else ``train_accuracy``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from nca_core import NCA
    >>> X, y = load_iris(return_X_y=True)
    >>> nca = NCA(n_components=2, max_iter=5, random_state=0)
    >>> first, *_, last = nca.fit_iter(X, y, display_size=12, eval_every=5)
    >>> first.epoch, first.embedding.shape, first.embedding.dtype
    (0, (12, 2), dtype('float32'))
    >>> last.epoch, round(last.objective, 2), round(last.accuracy, 2)
    (5, 0.97, 0.97)
    """

    epoch: int
    objective: float
    elapsed: float
    components: np.ndarray | None
    embedding: np.ndarray
    train_accuracy: float | None = None
    test_accuracy: float | None = None
    dof: float | None = None
    fraction: float = 1.0

    @property
    def accuracy(self) -> float | None:
        """The k-NN accuracy to show: on the test set when measured, else leave-one-out."""
        return self.test_accuracy if self.test_accuracy is not None else self.train_accuracy


def train(
    epochs: EpochStrategy,
    *,
    max_iter: int = 50,
    tol: float = 1e-5,
    X_display: torch.Tensor | None = None,
    evaluate: Evaluator | None = None,
    eval_every: int = 1,
    generator: torch.Generator | None = None,
    frames_per_epoch: int = 1,
    should_stop: Callable[[], bool] | None = None,
) -> Iterator[Snapshot]:
    """Run ``epochs`` (a strategy from ``epochs.make_epochs``) and yield a Snapshot at the
    start and after each epoch.

    Stops after ``max_iter`` epochs or when the strategy says it has converged
    (``epochs.finished``: L-BFGS's own tests, or a minibatch mean that changes by less than
    ``tol`` relative to its size; ``tol=0``: never). Raises TrainingDiverged, with the encoder
    restored to its last finite state, when the objective or map stops being finite.
    Closing the generator simply stops; the encoder keeps what it learnt. ``evaluate``
    (called every ``eval_every`` epochs and at the last) gives the kNN accuracies. With
    ``frames_per_epoch`` = k > 1, a minibatch epoch also yields k - 1 evenly spaced partial
    snapshots (``Snapshot.fraction`` < 1), so long epochs show progress and can be stopped
    part-way; the time spent taking them is not counted in ``elapsed``. With ``eval_every``
    1, a partial snapshot carries accuracies too once ``PARTIAL_EVAL_SECONDS`` (and ten times
    the last evaluation's cost) have passed since the last one, the consumer's own waits
    between frames included.

    ``should_stop``, if given, is asked between minibatches and before each evaluation, for
    a consumer that another thread tells to stop (a Stop button): the generator itself is
    only told at its next snapshot, which can be a minibatch group or a kNN evaluation away.
    Once it says True the loop ends as a close would, the encoder keeping what it learnt; a
    frame part-way through the epoch, or the epoch's snapshot without accuracies, comes
    first, so the last snapshot is the map kept. The strategy is closed when the loop ends.
    """
    asked = should_stop if should_stop is not None else _never
    try:
        yield from _train(epochs, max_iter, tol, X_display, evaluate, eval_every, generator, frames_per_epoch, asked)
    finally:
        epochs.close()


def _never() -> bool:
    return False


# A long epoch's partial frames carry accuracies too, when ``evaluate`` is asked every epoch:
# at most once every this many seconds on the wall clock (a live view's pace included), and
# with no more than a tenth of that time spent on them, so the number keeps pace with the
# picture.
PARTIAL_EVAL_SECONDS = 2.0
PARTIAL_EVAL_SHARE = 0.1


class _Evaluations:
    """When a partial frame is evaluated: ``due()`` once enough seconds have passed since the
    last evaluation, as ``PARTIAL_EVAL_SECONDS`` and ``PARTIAL_EVAL_SHARE`` say."""

    def __init__(self, evaluate, eval_every: int):
        self.evaluate, self.eval_every = evaluate, eval_every
        self.last, self.cost = time.perf_counter(), 0.0

    def measured(self, encoder):
        start = time.perf_counter()
        accuracies = self.evaluate(encoder)
        self.last = time.perf_counter()
        self.cost = self.last - start
        return accuracies

    def due(self) -> bool:
        wait = max(PARTIAL_EVAL_SECONDS, self.cost / PARTIAL_EVAL_SHARE)
        return self.evaluate is not None and self.eval_every == 1 and time.perf_counter() - self.last >= wait


def _train(epochs, max_iter, tol, X_display, evaluate, eval_every, generator, frames_per_epoch, should_stop):
    problem: Problem = epochs.problem
    X_display = problem.X if X_display is None else X_display

    evaluations = _Evaluations(evaluate, eval_every)

    def snapshot(epoch: int, value: float, clock: float, stop: bool) -> Snapshot:
        accuracies = (None, None)
        if evaluate is not None and not stop and (epoch % eval_every == 0 or epoch == max_iter):
            accuracies = evaluations.measured(problem.encoder)
        return _snapshot(problem, X_display, epoch, value, clock, accuracies)

    start_value = epochs.start_value(generator)
    last_good = [p.detach().clone() for p in problem.parameters]
    previous = None
    clock = 0.0
    stop = should_stop()
    yield snapshot(0, start_value, clock, stop)
    if stop:
        return
    for epoch in range(1, max_iter + 1):
        tick, value = time.perf_counter(), None
        for done, steps, value in epochs.steps(epoch):
            if done == steps:
                continue  # the epoch's own snapshot follows
            stop = should_stop()
            # a frame each time another 1/frames_per_epoch of the epoch's steps is done
            due = done * frames_per_epoch // steps > (done - 1) * frames_per_epoch // steps
            if (due or stop) and math.isfinite(value):
                clock += time.perf_counter() - tick
                measure = not stop and evaluations.due()
                accuracies = evaluations.measured(problem.encoder) if measure else (None, None)
                yield _snapshot(problem, X_display, epoch, value, clock, accuracies, done / steps)
                tick = time.perf_counter()
            if stop:
                return
        clock += time.perf_counter() - tick
        if value is None:  # the strategy had already ended: no epoch was taken
            return
        if not (math.isfinite(value) and _all_finite(problem.encoder)):
            _restore(problem.parameters, last_good)
            raise TrainingDiverged(
                f"training diverged at epoch {epoch}: the objective became {value} "
                f"({epochs.describe()}). The map from epoch {epoch - 1} is kept. "
                "Lower the learning rate, or standardise the inputs."
            )
        last_good = [p.detach().clone() for p in problem.parameters]
        stop = should_stop()
        yield snapshot(epoch, value, clock, stop)
        if stop or epochs.finished(value, previous, tol):
            return
        previous = value


@torch.no_grad()
def _snapshot(problem: Problem, X_display, epoch, value, clock, accuracies, fraction=1.0) -> Snapshot:
    """Copies on the CPU: later steps never change a snapshot already handed out."""
    embedding = problem.encoder(X_display).detach().to("cpu", torch.float32).numpy().copy()
    components = problem.encoder.components
    if components is not None:
        components = components.detach().to("cpu", torch.float64).numpy().copy()
    dof = float(problem.kernel.dof.detach()) if hasattr(problem.kernel, "dof") else None
    return Snapshot(epoch, value, clock, components, embedding, *accuracies, dof, fraction)


def _all_finite(encoder: nn.Module) -> bool:
    return all(bool(torch.isfinite(p).all()) for p in encoder.parameters())


@torch.no_grad()
def _restore(params: list[torch.Tensor], saved: list[torch.Tensor]) -> None:
    for p, good in zip(params, saved):
        p.copy_(good)
