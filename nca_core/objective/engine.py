"""The exact engine: the objective of an embedding and its gradient, walked in blocks of
anchors against all points, so at most one (block, n) matrix is ever alive.

``loss_gradient`` gives d(loss)/dZ for loss = -objective (the mean over anchors for f and
g, -KL for MCML); ``objective_value`` the objective alone. Each block comes from
``blocks``: the Gaussian kernel with f or g takes the fused ``GaussianBlocks`` (which
needs Z and y sorted by class), everything else ``kernel_block_gradients``. The training
loop (``training.gradients``) pushes the result through the encoder;
``function.nca_objective`` wraps it as one autograd op.
"""

from __future__ import annotations

import torch

from .blocks import kernel_block_gradients, kernel_pairs
from .gaussian import GaussianBlocks
from .kernels import GaussianKernel
from .weights import PER_ANCHOR_OBJECTIVES, McmlTotals, mcml_whole, terms_in_value
from .workspace import Workspace

__all__ = [
    "DEFAULT_BLOCK_ELEMENTS",
    "KERNEL_BLOCK_ELEMENTS",
    "anchor_blocks",
    "fused",
    "loss_gradient",
    "mcml_totals",
    "objective_value",
]

# Anchor-reference pairs per block: the Gaussian engine holds one (block, n) matrix, in a
# reused buffer; the general kernel path holds about five, so it takes blocks a quarter
# that size.
DEFAULT_BLOCK_ELEMENTS = 1 << 25
KERNEL_BLOCK_ELEMENTS = 1 << 23


def fused(kernel, objective: str) -> bool:
    """Whether the Gaussian-only fused path (``gaussian.GaussianBlocks``) applies."""
    return (kernel is None or isinstance(kernel, GaussianKernel)) and objective in PER_ANCHOR_OBJECTIVES


def anchor_blocks(anchors: torch.Tensor, n_ref: int, block_elements: int) -> list[torch.Tensor]:
    """``anchors`` cut into blocks of at most ``block_elements`` anchor-reference pairs."""
    size = max(1, block_elements // n_ref)
    return [anchors[start : start + size] for start in range(0, len(anchors), size)]


@torch.no_grad()
def loss_gradient(
    Z: torch.Tensor,
    y: torch.Tensor,
    anchors: torch.Tensor,
    objective: str,
    kernel=None,
    block_elements: int = DEFAULT_BLOCK_ELEMENTS,
    count: int | None = None,
    workspace: Workspace | None = None,
) -> tuple[torch.Tensor, float, float]:
    """d(loss)/dZ, d(loss)/d(dof) and the objective, for ``anchors`` against all rows of Z.

    The loss is -objective: for f and g the mean over ``count`` anchors (default: these;
    all processes' anchors when data-parallel), for MCML -KL. Z and y must be sorted by
    class, and the anchors too. MCML couples all pairs through its normaliser, so with
    several blocks that is found in a first pass (``mcml_totals``).
    """
    count = len(anchors) if count is None else count
    if fused(kernel, objective):
        return _fused_gradient(Z, y, anchors, objective, block_elements, count, workspace)
    kernel = GaussianKernel() if kernel is None else kernel
    blocks = anchor_blocks(anchors, len(Z), min(block_elements, KERNEL_BLOCK_ELEMENTS))
    totals = mcml_totals(Z, y, blocks, kernel) if objective == "mcml" and len(blocks) > 1 else None
    grad = torch.zeros_like(Z)
    total, dof_total = 0.0, 0.0
    for a in blocks:
        value, grad_a, grad_r, grad_dof = kernel_block_gradients(
            Z[a], y[a], Z, y, a, objective, kernel, totals
        )
        grad.index_add_(0, a, grad_a).add_(grad_r)
        total += value
        dof_total += grad_dof or 0.0
    if totals is not None:
        total = mcml_whole(total, totals)
    terms = terms_in_value(objective, count)
    return grad.mul_(-1.0 / terms), -dof_total / terms, total / terms


def _fused_gradient(Z, y, anchors, objective, block_elements, count, workspace):
    blocks = anchor_blocks(anchors, len(Z), block_elements)
    engine = _gaussian_blocks(Z, y, objective, workspace)
    total = torch.zeros((), dtype=torch.float64, device=Z.device)
    grad_anchors = Z.new_empty(len(anchors), Z.shape[1])
    start = 0
    for a in blocks:
        terms, grad_anchors[start : start + len(a)] = engine.block(Z[a], y[a], a)
        total += terms.sum()
        start += len(a)
    grad = engine.reference_gradient()  # a fresh (n, d) matrix: the anchors' shares go into it
    return grad.index_add_(0, anchors, grad_anchors).div_(-count), 0.0, float(total / count)


def _gaussian_blocks(Z, y, objective, workspace, ref_grad=True) -> GaussianBlocks:
    """The fused engine over Z; with ``workspace`` None it keeps its matrices to itself."""
    return GaussianBlocks(Z, y, objective, workspace, ref_grad)


@torch.no_grad()
def objective_value(
    Z: torch.Tensor,
    y: torch.Tensor,
    anchors: torch.Tensor,
    objective: str,
    kernel=None,
    block_elements: int = DEFAULT_BLOCK_ELEMENTS,
    workspace: Workspace | None = None,
) -> float:
    """The objective of ``anchors`` against all rows of Z (sorted by class, as in
    ``loss_gradient``): the mean term for f and g, -KL for MCML. The general path for f
    and g forms the anchors' gradient too (not the references'): a small part of its cost."""
    if fused(kernel, objective):
        blocks = anchor_blocks(anchors, len(Z), block_elements)
        engine = _gaussian_blocks(Z, y, objective, workspace, ref_grad=False)
        return sum(engine.block(Z[a], y[a], a)[0].sum().item() for a in blocks) / len(anchors)
    kernel = GaussianKernel() if kernel is None else kernel
    blocks = anchor_blocks(anchors, len(Z), min(block_elements, KERNEL_BLOCK_ELEMENTS))
    if objective == "mcml":
        totals, sum_same = _mcml_pass(Z, y, blocks, kernel)
        return mcml_whole(sum_same / totals.n_same if totals.n_same else 0.0, totals)
    total = sum(
        kernel_block_gradients(Z[a], y[a], Z, y, a, objective, kernel, ref_grad=False)[0] for a in blocks
    )
    return total / len(anchors)


def mcml_totals(Z, y, blocks, kernel) -> McmlTotals:
    """log of the sum of k over all pairs of these anchor blocks, and their same-class pairs."""
    return _mcml_pass(Z, y, blocks, kernel)[0]


def _mcml_pass(Z, y, blocks, kernel) -> tuple[McmlTotals, float]:
    """``mcml_totals``, and the sum of log k over the same-class pairs, in one pass."""
    log_norms, n_same, sum_same = [], 0, 0.0
    Z = Z - Z.mean(0)  # as kernel_block_gradients centres: the same distances, digit for digit
    for a in blocks:
        _, log_k, mates, _ = kernel_pairs(Z[a], y[a], Z, y, a, kernel)
        log_norms.append(torch.logsumexp(log_k.flatten(), 0))
        n_same += int(torch.count_nonzero(mates))
        sum_same += float(torch.where(mates, log_k, 0.0).sum())
    return McmlTotals(torch.logsumexp(torch.stack(log_norms), 0).item(), n_same), sum_same
