"""The engine's objective pushed through an encoder.

``objective_and_gradient`` embeds every point once, takes the sums of the anchors' terms
and their gradient from the exact engine (``objective.engine``, blocks of anchors against
all points), then pushes them through the encoder (``descend``, where every strategy's
step ends), data-parallel when a group says so.
``evaluate_objective`` is the same without gradients, on sampled anchors for very large
sets.
"""

from __future__ import annotations

import torch
from torch import nn

from ..objective.engine import DEFAULT_BLOCK_ELEMENTS, anchor_sums, objective_value
from ..objective.weights import terms_in_value
from ..objective.workspace import Workspace
from .distributed import LOCAL

__all__ = ["START_MAX_PAIRS", "descend", "evaluate_objective", "objective_and_gradient", "penalty_term"]


def objective_and_gradient(
    encoder: nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
    objective: str,
    anchors: torch.Tensor | None = None,
    weight_decay: float = 0.0,
    block_elements: int = DEFAULT_BLOCK_ELEMENTS,
    kernel: nn.Module | None = None,
    group=LOCAL,
    workspace: Workspace | None = None,
) -> float:
    """Mean objective of ``anchors`` (all points if None) against all of X; grads to encoder.

    Accumulates the gradient of ``-(objective) + weight_decay * penalty`` into the
    encoder's (and a learnable kernel's) ``.grad`` (``descend``) and returns the objective:
    the mean per anchor for "f" and "g", -KL for "mcml". ``y`` must be sorted ascending
    (the training loop sorts the data once); ``workspace`` keeps the engine's large
    matrices between calls. Cost per call: O(n_anchors * n * d) plus two passes of the
    encoder over X.

    ``group`` (see ``distributed``) shares the work between processes: each embeds its
    rows and takes its share of the anchors; the sums are all-reduced.
    """
    n = len(X)
    if bool((y[1:] < y[:-1]).any()):
        raise ValueError("objective_and_gradient needs X and y sorted by class")
    if anchors is None:
        anchors = torch.arange(n, device=X.device)
    else:
        anchors = anchors[torch.argsort(y[anchors], stable=True)]
    Z_mine, Z_ref = group.embed(encoder, X)
    grad, grad_dof, total = anchor_sums(
        Z_ref, y, group.my_anchors(anchors), objective, kernel, block_elements, workspace
    )
    if group.world_size > 1:
        grad = group.sum_(grad)
        scalars = group.sum_(torch.tensor([grad_dof, total], dtype=torch.float64, device=X.device))
        grad_dof, total = scalars.tolist()
    sums = (grad[group.rows], grad_dof, total)
    return descend(encoder, kernel, Z_mine, sums, len(anchors), objective, weight_decay, group.world_size)


def descend(encoder, kernel, Z, sums, count, objective, weight_decay=0.0, world_size=1) -> float:
    """Push one step's sums through the encoder; the objective they make.

    Every strategy ends its step here, whichever pairs it took: ``sums`` are the engine's
    (``engine.Schedule.sums``) for ``count`` anchors, d(sum of terms)/dZ for the rows Z (the
    encoder's output, in the graph), d(sum of terms)/d(dof) and the sum of terms. The loss
    is -objective (``weights.terms_in_value``: the mean over the anchors for f and g, MCML's
    -KL whole) plus the weight decay (``penalty_term``); its gradient is accumulated into
    the encoder's (and a learnable kernel's) ``.grad``. Data-parallel, each process pushes
    its own rows' share and DDP averages over ``world_size`` processes, hence the factor
    that turns the average back into the sum.
    """
    grad_Z, grad_dof, total = sums
    terms = terms_in_value(objective, count)
    loss = (Z * grad_Z).sum() * (-world_size / terms)
    if kernel is not None and kernel.learnable:
        loss = loss - kernel.dof * (grad_dof / terms)
    penalty = penalty_term(encoder, weight_decay)
    if penalty is not None:
        loss = loss + penalty
    loss.backward()
    return total / terms


def penalty_term(encoder, weight_decay: float) -> torch.Tensor | None:
    """The weight decay's part of every loss, ``weight_decay * encoder.penalty()`` (each
    encoder says what it penalises), for autograd; None without weight decay."""
    return weight_decay * encoder.penalty() if weight_decay else None


# Anchor-reference pairs beyond which the start's objective is estimated on sampled anchors,
# each against all points (about 1,700 anchors on MNIST; measured in commit 5935cc9: within
# 0.008 of the mean p_i over all anchors, in a third of the time of four times as many).
START_MAX_PAIRS = 1e8


@torch.no_grad()
def evaluate_objective(
    encoder,
    kernel,
    X,
    y,
    objective,
    block_elements=DEFAULT_BLOCK_ELEMENTS,
    generator=None,
    max_pairs=START_MAX_PAIRS,
    workspace: Workspace | None = None,
) -> float:
    """The objective of all points (X, y sorted by class), without gradients, in blocks.

    Beyond ``max_pairs`` anchor-reference pairs it is estimated on a random sample of
    anchors (still against all references), so the first frame of a large run is quick.
    """
    Z = encoder(X)
    n = len(X)
    anchors = torch.arange(n, device=X.device)
    if n * n > max_pairs:
        sample = torch.randperm(n, generator=generator)[: int(max_pairs // n)].to(X.device)
        anchors = torch.sort(sample).values
    return objective_value(Z, y, anchors, objective, kernel, block_elements, workspace)
