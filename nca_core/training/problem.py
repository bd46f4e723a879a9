"""What an epoch strategy trains: a ``Problem`` (an encoder and a kernel on class-sorted
data, with the objective, the weight decay and the augmentation), and the ``EpochStrategy``
protocol that the training loop (``loop.train``) drives."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

import torch
from torch import nn

from ..objective.engine import DEFAULT_BLOCK_ELEMENTS
from ..objective.kernels import GaussianKernel
from ..objective.workspace import Workspace
from ..util.device import block_elements
from .distributed import LOCAL
from .gradients import descend, evaluate_objective, objective_and_gradient, penalty_term

__all__ = ['EpochStrategy', 'Problem']


@dataclass
class Problem:
    """An encoder and a kernel to train on X, y sorted by class (``sorted_by_class`` sorts).

    ``augment`` (``augmentation``), if given, alters the anchors of every minibatch step of
    the strategies that encode anchors on their own (memory bank, batch-only neighbours).
    """

    encoder: nn.Module
    X: torch.Tensor
    y: torch.Tensor
    objective: str = "f"
    kernel: nn.Module = field(default_factory=GaussianKernel)
    weight_decay: float = 0.0
    block_elements: int | None = None  # None: the device's (``util.device.block_elements``)
    group: object = LOCAL
    augment: Callable | None = None
    _scratch: threading.local = field(default_factory=threading.local, init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.block_elements is None:
            self.block_elements = block_elements(DEFAULT_BLOCK_ELEMENTS, self.X.device)

    @classmethod
    def sorted_by_class(cls, encoder: nn.Module, X: torch.Tensor, y: torch.Tensor, **options) -> Problem:
        if bool((y[1:] >= y[:-1]).all()):  # sorted already: no copy of X
            return cls(encoder, X, y, **options)
        order = torch.argsort(y, stable=True)
        return cls(encoder, X[order], y[order], **options)

    @property
    def workspace(self) -> Workspace:
        """This thread's reused matrices: two runs on one Problem in two threads (or L-BFGS's
        worker beside its caller) never write into each other's."""
        if not hasattr(self._scratch, "workspace"):
            self._scratch.workspace = Workspace()
        return self._scratch.workspace

    @property
    def parameters(self) -> list[torch.Tensor]:
        return list(self.encoder.parameters()) + list(self.kernel.parameters())

    def value(self, generator: torch.Generator | None = None) -> float:
        """The objective of all points, no gradients (sampled anchors on very large sets)."""
        return evaluate_objective(
            self.encoder, self.kernel, self.X, self.y, self.objective, self.block_elements, generator,
            workspace=self.workspace,
        )  # fmt: skip

    def gradient(self, anchors: torch.Tensor | None = None) -> float:
        """Accumulate the gradient of -objective (+ L2) into .grad; return the objective."""
        return objective_and_gradient(
            self.encoder, self.X, self.y, self.objective, anchors,
            self.weight_decay, self.block_elements, self.kernel, self.group, self.workspace,
        )  # fmt: skip

    def anchor_inputs(self, anchors: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        """The inputs of these anchors for one step: augmented afresh, if augmenting."""
        X = self.X[anchors]
        return X if self.augment is None else self.augment(X, generator)

    def descend(self, Z: torch.Tensor, sums: tuple, count: int) -> float:
        """End a step: push the engine's sums for ``count`` anchors through the encoder as the
        gradient of -objective + weight decay (``gradients.descend``); the objective."""
        return descend(self.encoder, self.kernel, Z, sums, count, self.objective, self.weight_decay)

    def penalty(self) -> float:
        """The weight decay's part of the loss at the encoder's current weights."""
        term = penalty_term(self.encoder, self.weight_decay)
        return 0.0 if term is None else float(term.detach())


class EpochStrategy(Protocol):
    """What the training loop (``loop.train``) needs of a way to train a ``Problem``."""

    problem: Problem

    @property
    def converged(self) -> bool:
        """Ended by its own convergence test."""

    @property
    def stalled(self) -> bool:
        """Ended because it could not go on (no step lowered the loss)."""

    @property
    def message(self) -> str:
        """Why it ended, in words; "" while it goes on."""

    def start_value(self, generator: torch.Generator | None = None) -> float:
        """The objective before the first step."""

    def describe(self) -> str:
        """The optimiser and its step size, for messages."""

    def steps(self, epoch: int) -> Iterator[tuple[int, int, float]]:
        """Take one epoch's steps, yielding (steps done, steps in the epoch, mean objective so
        far); nothing when the strategy has already ended."""

    def finished(self, value: float, previous: float | None, tol: float) -> bool:
        """Whether training ends after an epoch with objective ``value``."""

    def close(self) -> None:
        """Release what the strategy holds (a worker thread); called once training ends."""
