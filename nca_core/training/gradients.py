"""The engine's objective pushed through an encoder.

``objective_and_gradient`` embeds every point once, takes d(loss)/dZ from the exact
engine (``objective.engine``, blocks of anchors against all points), then pushes it
through the encoder in one backward pass, data-parallel when a group says so.
``evaluate_objective`` is the same without gradients, on sampled anchors for very large
sets.
"""

from __future__ import annotations

import torch
from torch import nn

from ..objective.engine import DEFAULT_BLOCK_ELEMENTS, loss_gradient, objective_value
from ..objective.workspace import Workspace
from .distributed import LOCAL

__all__ = ["START_MAX_PAIRS", "backward", "evaluate_objective", "objective_and_gradient"]


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
    encoder's (and a learnable kernel's) ``.grad`` and returns the objective: the mean
    per anchor for "f" and "g", -KL for "mcml". ``y`` must be sorted ascending (the
    training loop sorts the data once); ``workspace`` keeps the engine's large matrices
    between calls. Cost per call: O(n_anchors * n * d) plus two passes of the encoder over X.

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
    grad, grad_dof, value = loss_gradient(
        Z_ref, y, group.my_anchors(anchors), objective, kernel, block_elements, len(anchors), workspace
    )
    if group.world_size > 1:
        grad = group.sum_(grad)
        scalars = group.sum_(torch.tensor([grad_dof, value], dtype=torch.float64, device=X.device))
        grad_dof, value = scalars.tolist()
    backward(encoder, kernel, Z_mine, grad[group.rows], grad_dof, weight_decay, group.world_size)
    return float(value)


def backward(encoder, kernel, Z, grad_Z, grad_dof, weight_decay, world_size=1) -> None:
    """Push d(loss)/dZ through the encoder, and d(loss)/d(dof) into a learnable kernel.

    Data-parallel, each process pushes its own rows' share and DDP averages over
    ``world_size`` processes, hence the factor that turns the average back into the sum.
    """
    loss = (Z * grad_Z).sum() * world_size
    if kernel is not None and kernel.learnable:
        loss = loss + kernel.dof * grad_dof
    if weight_decay:
        loss = loss + weight_decay * encoder.penalty()
    loss.backward()


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
