"""The exact engine: the objective of an embedding and its gradient, every anchor against
all points, walked by a ``Schedule`` so that at most one (block, n) matrix is ever alive.

``anchor_sums`` gives the sums of the anchors' terms and their gradient, as a training
step takes them; ``loss_gradient`` d(loss)/dZ for loss = -objective (the mean over anchors
for f and g, -KL for MCML: ``weights.terms_in_value``); ``objective_value`` the objective
alone.
``schedule_for`` picks how the pairs are walked, from the embedding itself (its device,
dtype and width) and the kernel and objective: the Gaussian kernel with f or g takes
``GaussianSchedule`` (the fused ``gaussian.GaussianBlocks``, which needs Z and y sorted by
class) or ``fused.FusedSchedule`` (two Triton kernels that never write the (block, n) matrix,
where ``fused.fused_available`` says so); every other kernel and objective
``KernelSchedule`` (``blocks.kernel_block_gradients``). Every step that walks all pairs of
an embedding, in training or not, goes through these three functions, which take their
schedule from ``schedule_for``: a schedule that finds the same terms another way is one
more class with the two methods of ``Schedule``, chosen there and nowhere else.

Every schedule hands its pairs to the terms and weights of ``weights`` (one shift rule, one
set of formulas; the fused kernels keep the same two log-masses online), and every training
step ends the same way: the sums of its anchors' terms and their gradient go to
``training.gradients.descend``, which takes the mean or the total
(``weights.terms_in_value``), adds the weight decay and pushes them through the encoder.
The strategies differ only in which pairs they hand over: all points (this engine), the
batch alone (this engine on the batch), a memory bank (``blocks.kernel_block_gradients``),
candidates plus a sample (``blocks.candidate_terms_and_gradients``), or a small set's whole
matrix (``dense``).
"""

from __future__ import annotations

from typing import Protocol

import torch

from .blocks import kernel_block_gradients, kernel_pairs
from .fused import FusedSchedule, fused_available
from .gaussian import GaussianBlocks
from .kernels import GaussianKernel
from .weights import PER_ANCHOR_OBJECTIVES, McmlTotals, mcml_whole, terms_in_value
from .workspace import Workspace

__all__ = [
    "DEFAULT_BLOCK_ELEMENTS",
    "KERNEL_BLOCK_ELEMENTS",
    "FusedSchedule",
    "GaussianSchedule",
    "KernelSchedule",
    "Schedule",
    "anchor_blocks",
    "anchor_sums",
    "loss_gradient",
    "mcml_totals",
    "objective_value",
    "schedule_for",
]

# Anchor-reference pairs per block: the Gaussian engine holds one (block, n) matrix, in a
# reused buffer; the general kernel path holds about five, so it takes blocks a quarter
# that size.
DEFAULT_BLOCK_ELEMENTS = 1 << 25
KERNEL_BLOCK_ELEMENTS = 1 << 23


class Schedule(Protocol):
    """How the exact engine walks ``anchors`` against every row of Z (both sorted by class)
    for one kernel and objective. Sums are per anchor; the caller divides by the terms the
    value is a mean of (``count`` anchors, all processes' when data-parallel)."""

    def sums(
        self, Z: torch.Tensor, y: torch.Tensor, anchors: torch.Tensor, workspace: Workspace | None
    ) -> tuple[torch.Tensor, float, float]:
        """d(sum of terms)/dZ (n, d), d(sum of terms)/d(dof) and the sum of the terms (MCML:
        its whole -KL)."""

    def value_sum(self, Z: torch.Tensor, y: torch.Tensor, anchors: torch.Tensor, workspace: Workspace | None) -> float:
        """The sum of the anchors' terms (MCML: its whole -KL), no gradient."""


def schedule_for(
    Z: torch.Tensor, kernel, objective: str, block_elements: int = DEFAULT_BLOCK_ELEMENTS
) -> Schedule:
    """The schedule that walks the pairs of the embedding ``Z`` (n, d) for this kernel
    (None: the Gaussian) and objective: Z's device, dtype and width pick the fused kernels
    where they apply (``fused.fused_available``)."""
    if (kernel is None or isinstance(kernel, GaussianKernel)) and objective in PER_ANCHOR_OBJECTIVES:
        if fused_available(Z):
            return FusedSchedule(objective)
        return GaussianSchedule(objective, block_elements)
    return KernelSchedule(GaussianKernel() if kernel is None else kernel, objective, block_elements)


def anchor_blocks(anchors: torch.Tensor, n_ref: int, block_elements: int) -> list[torch.Tensor]:
    """``anchors`` cut into blocks of at most ``block_elements`` anchor-reference pairs."""
    size = max(1, block_elements // n_ref)
    return [anchors[start : start + size] for start in range(0, len(anchors), size)]


@torch.no_grad()
def anchor_sums(
    Z: torch.Tensor,
    y: torch.Tensor,
    anchors: torch.Tensor,
    objective: str,
    kernel=None,
    block_elements: int = DEFAULT_BLOCK_ELEMENTS,
    workspace: Workspace | None = None,
) -> tuple[torch.Tensor, float, float]:
    """d(sum of terms)/dZ of shape (n, d), d(sum of terms)/d(dof) and the sum of the terms
    (MCML: its whole -KL) of ``anchors`` against all rows of Z, through the schedule that
    ``schedule_for`` picks for Z. Z and y must be sorted by class, and the anchors too."""
    return schedule_for(Z, kernel, objective, block_elements).sums(Z, y, anchors, workspace)


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
    class, and the anchors too.
    """
    grad, grad_dof, total = anchor_sums(Z, y, anchors, objective, kernel, block_elements, workspace)
    terms = terms_in_value(objective, len(anchors) if count is None else count)
    return grad.div_(-terms), -grad_dof / terms, total / terms


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
    ``loss_gradient``): the mean term for f and g, -KL for MCML."""
    total = schedule_for(Z, kernel, objective, block_elements).value_sum(Z, y, anchors, workspace)
    return total / terms_in_value(objective, len(anchors))


class GaussianSchedule:
    """The Gaussian kernel's f or g through the fused ``gaussian.GaussianBlocks``: one
    (block, n) matrix in the workspace, the references' gradient summed across blocks."""

    def __init__(self, objective: str, block_elements: int):
        self.objective, self.block_elements = objective, block_elements

    def sums(self, Z, y, anchors, workspace):
        engine = GaussianBlocks(Z, y, self.objective, workspace)
        total = torch.zeros((), dtype=torch.float64, device=Z.device)
        grad_anchors = Z.new_empty(len(anchors), Z.shape[1])
        start = 0
        for a in anchor_blocks(anchors, len(Z), self.block_elements):
            terms, grad_anchors[start : start + len(a)] = engine.block(Z[a], y[a], a)
            total += terms.sum()
            start += len(a)
        grad = engine.reference_gradient()  # a fresh (n, d) matrix: the anchors' shares go into it
        return grad.index_add_(0, anchors, grad_anchors), 0.0, float(total)

    def value_sum(self, Z, y, anchors, workspace):
        engine = GaussianBlocks(Z, y, self.objective, workspace, ref_grad=False)
        blocks = anchor_blocks(anchors, len(Z), self.block_elements)
        return sum(engine.block(Z[a], y[a], a)[0].sum().item() for a in blocks)


class KernelSchedule:
    """Any kernel and objective through ``blocks.kernel_block_gradients``, in blocks a
    quarter of the Gaussian's (it holds about five matrices of a block's size). MCML couples
    all pairs through its normaliser, so with several blocks that is found in a first pass
    (``mcml_totals``). The general path for f and g forms the anchors' gradient even for a
    value alone: a small part of its cost."""

    def __init__(self, kernel, objective: str, block_elements: int):
        self.kernel, self.objective = kernel, objective
        self.block_elements = min(block_elements, KERNEL_BLOCK_ELEMENTS)

    def sums(self, Z, y, anchors, workspace):
        blocks = anchor_blocks(anchors, len(Z), self.block_elements)
        mcml = self.objective == "mcml"
        totals = mcml_totals(Z, y, blocks, self.kernel) if mcml and len(blocks) > 1 else None
        grad = torch.zeros_like(Z)
        total, dof_total = 0.0, 0.0
        for a in blocks:
            value, grad_a, grad_r, grad_dof = kernel_block_gradients(
                Z[a], y[a], Z, y, a, self.objective, self.kernel, totals
            )
            grad.index_add_(0, a, grad_a).add_(grad_r)
            total += value
            dof_total += grad_dof or 0.0
        return grad, dof_total, (total if totals is None else mcml_whole(total, totals))

    def value_sum(self, Z, y, anchors, workspace):
        blocks = anchor_blocks(anchors, len(Z), self.block_elements)
        if self.objective == "mcml":
            totals, sum_same = _mcml_pass(Z, y, blocks, self.kernel)
            return mcml_whole(sum_same / totals.n_same if totals.n_same else 0.0, totals)
        pieces = (kernel_block_gradients(Z[a], y[a], Z, y, a, self.objective, self.kernel, ref_grad=False)[0] for a in blocks)
        return sum(pieces)


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
