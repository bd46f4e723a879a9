"""Minibatches whose anchors take neighbours from a memory bank of every point's embedding,
refreshed with momentum (Wu et al., 2018)."""

from __future__ import annotations

import torch

from ..config.plan import Plan
from ..objective.blocks import kernel_block_gradients
from .minibatch import MinibatchEpochs
from .problem import Problem

__all__ = ['BankEpochs', 'MemoryBank']


class MemoryBank:
    """Embeddings of all training points, refreshed with momentum (Wu et al., 2018).

    Row i holds a running average of z_i over the steps where i was an anchor:
    ``bank[i] = momentum * bank[i] + (1 - momentum) * z_i``. Rows carry no gradient.
    """

    def __init__(self, initial: torch.Tensor, momentum: float = 0.5):
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"bank momentum must be in [0, 1), got {momentum!r}")
        self.embeddings = initial.detach().clone()
        self.momentum = momentum

    @torch.no_grad()
    def update(self, index: torch.Tensor, Z: torch.Tensor) -> None:
        rows = self.embeddings[index]
        self.embeddings[index] = rows.mul_(self.momentum).add_(Z.detach(), alpha=1.0 - self.momentum)


class BankEpochs(MinibatchEpochs):
    """Minibatches whose anchors take neighbours from a memory bank of every point.

    Gradients flow through the anchors only, so each step's gradient comes from the closed
    form against the bank (``blocks.kernel_block_gradients``) without autograd over the
    (batch, n) matrix.
    """

    steps_use_engine = False

    def __init__(self, problem: Problem, plan: Plan, generator: torch.Generator | None = None, bank=None):
        super().__init__(problem, plan, generator)
        if bank is None:
            with torch.no_grad():
                bank = MemoryBank(problem.encoder(problem.X), plan.bank_momentum)
        self.bank = bank

    def step(self, anchors: torch.Tensor) -> float:
        p = self.problem
        self.optimizer.zero_grad()
        Z_a = p.encoder(p.anchor_inputs(anchors, self.generator))
        value, grad_a, _, grad_dof = kernel_block_gradients(
            Z_a.detach(), p.y[anchors], self.bank.embeddings, p.y, anchors, p.objective, p.kernel,
            ref_grad=False,
        )  # fmt: skip
        value = p.descend(Z_a, (grad_a, grad_dof or 0.0, value), len(anchors))
        self.bank.update(anchors, Z_a)
        self.optimizer.step()
        return value
