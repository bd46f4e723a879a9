"""The blockwise gradient engine: an objective over all points, never an n x n matrix.

``objective_and_gradient`` embeds every point once, walks the anchors in blocks against
all references, sums d(objective)/dZ block by block (closed forms from ``losses``), then
pushes it through the encoder in one backward pass. At most one (block, n) matrix is alive,
so memory stays bounded on 60,000 MNIST images. ``evaluate_objective`` is the same walk
without gradients.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..objective.kernels import GaussianKernel
from ..objective.losses import (
    PER_ANCHOR_OBJECTIVES,
    GaussianBlocks,
    kernel_block_gradients,
    log_class_mass,
    objective_terms,
    pair_log_kernel,
)
from .distributed import LOCAL

__all__ = ["DEFAULT_BLOCK_ELEMENTS", "START_MAX_PAIRS", "Workspace", "evaluate_objective", "objective_and_gradient"]

# Anchor-reference pairs per block: the Gaussian engine holds one (block, n) matrix, in a
# reused buffer; the general kernel path holds about five, so it takes blocks a quarter
# that size.
DEFAULT_BLOCK_ELEMENTS = 1 << 25
KERNEL_BLOCK_ELEMENTS = 1 << 23


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
    training loop sorts the data once). With the Gaussian kernel and "f" or "g" each block's
    gradient comes from ``losses.GaussianBlocks`` (its (block, n) matrix kept in
    ``workspace`` between calls), otherwise from
    ``losses.kernel_block_gradients``. Cost per call: O(n_anchors * n * d) plus two passes
    of the encoder over X.

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
    mine = group.my_anchors(anchors)
    if closed_form(kernel, objective):
        grad, grad_dof, value = _gaussian_gradient(
            Z_ref, y, mine, objective, block_elements, len(anchors), workspace or Workspace()
        )
    else:
        kernel = kernel if kernel is not None else GaussianKernel()
        grad, grad_dof, value = _kernel_gradient(
            Z_ref, y, mine, objective, kernel, block_elements, len(anchors)
        )
    if group.world_size > 1:
        grad = group.sum_(grad)
        scalars = group.sum_(
            torch.tensor([float(grad_dof), float(value)], dtype=torch.float64, device=X.device)
        )
        grad_dof, value = scalars.tolist()
    backward(encoder, kernel, Z_mine, grad[group.rows], grad_dof, weight_decay, group.world_size)
    return float(value)


def closed_form(kernel: nn.Module | None, objective: str) -> bool:
    """Whether the Gaussian-only closed form (``losses.GaussianBlocks``) applies."""
    return (kernel is None or isinstance(kernel, GaussianKernel)) and objective in PER_ANCHOR_OBJECTIVES


def _pairs_per_block(kernel, objective: str, block_elements: int) -> int:
    """``block_elements`` for the Gaussian engine; at most ``KERNEL_BLOCK_ELEMENTS`` for the
    general kernel path, which holds several matrices of a block's size."""
    return block_elements if closed_form(kernel, objective) else min(block_elements, KERNEL_BLOCK_ELEMENTS)


def anchor_blocks(anchors: torch.Tensor, n_ref: int, block_elements: int) -> list[torch.Tensor]:
    """``anchors`` cut into blocks of at most ``block_elements`` anchor-reference pairs."""
    size = max(1, block_elements // n_ref)
    return [anchors[start : start + size] for start in range(0, len(anchors), size)]


def class_bounds(y: torch.Tensor) -> list[int]:
    """Row where each class starts in sorted labels, plus n at the end."""
    counts = torch.bincount(y)
    return [0, *torch.cumsum(counts, 0).tolist()]


class Workspace:
    """One buffer for the engine's (block, n) matrix, kept between calls.

    A fresh matrix of that size per block costs page faults for as long as the product that
    fills it takes; one training run (a ``Problem``) keeps one workspace.
    """

    def __init__(self):
        self._buffer: torch.Tensor | None = None

    def buffer(self, size: int, like: torch.Tensor) -> torch.Tensor:
        """A flat tensor of at least ``size`` elements of ``like``'s dtype and device."""
        b = self._buffer
        if b is None or b.numel() < size or b.dtype != like.dtype or b.device != like.device:
            self._buffer = b = torch.empty(size, dtype=like.dtype, device=like.device)
        return b


def _gaussian_blocks(Z, y, blocks, objective, workspace, ref_grad=True) -> GaussianBlocks:
    rows = max(len(a) for a in blocks) if blocks else 0
    return GaussianBlocks(Z, class_bounds(y), objective, workspace.buffer(rows * len(Z), Z), ref_grad)


@torch.no_grad()
def _gaussian_gradient(Z, y, anchors, objective, block_elements, count, workspace):
    """d(-mean objective)/dZ for "f" or "g" with the Gaussian kernel, and the mean objective."""
    blocks = anchor_blocks(anchors, len(Z), block_elements)
    engine = _gaussian_blocks(Z, y, blocks, objective, workspace)
    total = torch.zeros((), dtype=torch.float64, device=Z.device)
    grad = torch.zeros_like(Z)
    for a in blocks:
        terms, grad_a = engine.block(Z[a], y[a], a)
        total += terms.sum()
        grad.index_add_(0, a, grad_a)
    grad.add_(engine.reference_gradient())
    return grad.div_(-count), 0.0, total / count


def _kernel_gradient(Z, y, anchors, objective, kernel, block_elements, count):
    """d(-objective)/dZ for anchors against all rows of Z, d(-objective)/d(dof), and the objective.

    Per-anchor objectives are averaged over ``count`` anchors (all processes' anchors
    when data-parallel). MCML couples all pairs through its normaliser log sum k, so with
    several blocks that is computed in a first pass.
    """
    bounds = class_bounds(y)
    blocks = anchor_blocks(anchors, len(Z), _pairs_per_block(kernel, objective, block_elements))
    log_norm = n_same = None
    if objective == "mcml" and len(blocks) > 1:
        log_norm, n_same, _ = mcml_totals(Z, y, blocks, kernel)
    grad = torch.zeros_like(Z)
    total, dof_total = 0.0, 0.0
    for a in blocks:
        value, grad_a, grad_r, grad_dof = kernel_block_gradients(
            Z[a], y[a], Z, bounds, a, objective, kernel, log_norm, n_same
        )
        grad.index_add_(0, a, grad_a).add_(grad_r)
        total += value
        dof_total += grad_dof or 0.0
    if objective == "mcml":
        if log_norm is not None:
            total = total - log_norm + math.log(n_same) if n_same else 0.0
        scale = -1.0
    else:
        total /= count
        scale = -1.0 / count
    return grad.mul_(scale), dof_total * scale, total


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


def mcml_totals(Z, y, blocks, kernel) -> tuple[float, int, float]:
    """log of the sum of k over all pairs, the number of same-class pairs, the sum of their log k."""
    log_norms, n_same, sum_same = [], 0, 0.0
    for a in blocks:
        logits = pair_log_kernel(Z[a], Z, a, kernel)
        same = (y[a, None] == y[None, :]) & torch.isfinite(logits)
        log_norms.append(torch.logsumexp(logits.flatten(), 0))
        n_same += int(same.sum())
        sum_same += torch.where(same, logits, 0.0).sum().item()
    return torch.logsumexp(torch.stack(log_norms), 0).item(), n_same, sum_same


# Anchor-reference pairs beyond which the start's objective is estimated on sampled anchors,
# each against all points (about 1,700 anchors on MNIST; benchmarks/start_objective.py).
START_MAX_PAIRS = 1e8


@torch.no_grad()
def evaluate_objective(
    encoder, kernel, X, y, objective, block_elements=DEFAULT_BLOCK_ELEMENTS, generator=None,
    max_pairs=START_MAX_PAIRS, workspace: Workspace | None = None,
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
    blocks = anchor_blocks(anchors, n, _pairs_per_block(kernel, objective, block_elements))
    if objective == "mcml":
        log_norm, n_same, sum_same = mcml_totals(Z, y, blocks, kernel)
        return sum_same / n_same - log_norm + math.log(n_same) if n_same else 0.0
    total = 0.0
    if closed_form(kernel, objective):
        engine = _gaussian_blocks(Z, y, blocks, objective, workspace or Workspace(), ref_grad=False)
        for a in blocks:
            total += engine.block(Z[a], y[a], a)[0].sum().item()
    else:
        for a in blocks:
            total += objective_terms(log_class_mass(Z[a], y[a], Z, y, a, kernel), objective).sum().item()
    return total / len(anchors)
