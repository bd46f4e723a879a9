"""Minibatch strategies whose anchors take their neighbours from all points
(``MinibatchEpochs``, exact) or from their own batch alone (``BatchEpochs``), and the
optimisers they step with."""

from __future__ import annotations

import collections
from collections.abc import Iterator

import torch

from ..config.plan import Plan
from ..objective.engine import anchor_sums
from .optimizers import SGD, Adam, cosine_factor
from .problem import Problem

__all__ = ['BatchEpochs', 'MinibatchEpochs', 'make_optimizer']


def make_optimizer(name: str, params, learning_rate: float):
    """A minibatch optimiser (``optimizers``): Adam, or SGD with Nesterov momentum."""
    if name == "adam":
        return Adam(params, lr=learning_rate)
    if name == "sgd":
        return SGD(params, lr=learning_rate, momentum=0.9)
    raise ValueError(f"minibatch optimizer must be 'adam' or 'sgd', got {name!r}")



class MinibatchEpochs:
    """A pass over all anchors in random batches; neighbours come from all of X.

    The value reported is the mean over the epoch's batches, each measured before its step.
    With ``decay_epochs``, the step size falls from ``learning_rate`` to 0 along a half
    cosine over that many epochs (``optimizers.cosine_factor``), step by step.
    """

    converged = stalled = False  # only the tolerance on the epoch means (``finished``) stops it early
    message = ""
    steps_use_engine = True  # the steps evaluate the exact engine, whose matrices the workspace keeps

    def __init__(self, problem: Problem, plan: Plan, generator: torch.Generator | None = None):
        self.problem = problem
        self.optimizer = make_optimizer(plan.optimizer, problem.parameters, plan.learning_rate)
        self.batch_size = plan.batch_size
        self.generator = generator
        self.learning_rate, self.decay_epochs = plan.learning_rate, plan.decay_epochs

    def start_value(self, generator=None) -> float:
        """The objective before the first step (sampled anchors on very large sets). A
        strategy whose steps do not use the exact engine lets its matrices go after it."""
        value = self.problem.value(generator)
        if not self.steps_use_engine:
            self.problem.workspace.clear()
        return value

    def describe(self) -> str:
        schedule = f" falling to 0 over {self.decay_epochs} epochs" if self.decay_epochs else ""
        return f"learning rate {self.learning_rate:g}{schedule}, optimizer {type(self.optimizer).__name__}"

    def finished(self, value: float, previous: float | None, tol: float) -> bool:
        """The epoch's mean changed by less than ``tol`` relative to its size. The first
        epoch's mean, measured while the map moves, is not compared with the start."""
        return (
            tol > 0 and previous is not None and abs(value - previous) <= tol * max(abs(value), abs(previous))
        )

    def batches(self) -> list[torch.Tensor]:
        X = self.problem.X
        order = torch.randperm(len(X), generator=self.generator).to(X.device)
        return [order[start : start + self.batch_size] for start in range(0, len(X), self.batch_size)]

    def step(self, anchors: torch.Tensor) -> float | None:
        """One optimiser step on these anchors; the batch's mean objective (None: skipped)."""
        self.optimizer.zero_grad()
        value = self.problem.gradient(anchors)
        self.optimizer.step()
        return value

    def prepare(self, epoch: int) -> None:
        """Work done once at the start of an epoch (nothing here)."""

    def close(self) -> None:
        """Nothing to release."""

    def run(self, epoch: int) -> float:
        """Take the epoch's steps; the mean value over its batches."""
        ((*_, value),) = collections.deque(self.steps(epoch), maxlen=1)
        return value

    def steps(self, epoch: int) -> Iterator[tuple[int, int, float]]:
        """Take the epoch's steps, yielding (steps done, steps in the epoch, mean value so far)."""
        self.prepare(epoch)
        batches = self.batches()
        total, seen = 0.0, 0
        for done, anchors in enumerate(batches, 1):
            if self.decay_epochs:
                progress = (epoch - 1 + (done - 1) / len(batches)) / self.decay_epochs
                self.optimizer.param_groups[0]["lr"] = self.learning_rate * cosine_factor(progress)
            value = self.step(anchors)
            if value is not None:
                total += value * len(anchors)
                seen += len(anchors)
            yield done, len(batches), (total / seen if seen else 0.0)



class BatchEpochs(MinibatchEpochs):
    """Minibatches whose anchors take neighbours from the batch alone: the exact engine with
    the batch as the whole set, each point an anchor and a neighbour (gradients through both).
    Its matrices are a batch's size, so the start's go once it is measured."""

    steps_use_engine = False

    def step(self, anchors: torch.Tensor) -> float | None:
        if len(anchors) < 2:
            return None
        p = self.problem
        anchors = anchors[torch.argsort(p.y[anchors], stable=True)]  # the engine takes classes in runs
        self.optimizer.zero_grad()
        Z = p.encoder(p.anchor_inputs(anchors, self.generator))
        rows = torch.arange(len(anchors), device=Z.device)
        sums = anchor_sums(Z.detach(), p.y[anchors], rows, p.objective, p.kernel, p.block_elements, p.workspace)
        value = p.descend(Z, sums, len(anchors))
        self.optimizer.step()
        return value
