"""The exact engine's fast path: the Gaussian kernel's f or g over blocks of anchors,
fused into a few products over one reused (block, n) matrix (``GaussianBlocks``). The
general schedules, and the shifted path that this one hands its far anchors to, are in
``blocks`` and ``weights``."""

from __future__ import annotations

import functools
import math

import torch

from .blocks import _slope_gradients, _with_ones, kernel_pairs
from .kernels import GaussianKernel
from .weights import PER_ANCHOR_OBJECTIVES, anchor_scales, exp_capped_, far, per_anchor_terms_and_weights
from .workspace import Workspace

__all__ = ["GaussianBlocks", "class_bounds"]


class GaussianBlocks:
    """The Gaussian kernel's f or g, block by block of anchors against one reference set.

    The exact engine's fast path. References must be sorted by class (``y_ref``, each
    class a run of rows), and each block's anchors sorted by class too. Then
    every same-class sum is a small product on a sub-block of one (b, n) matrix E of kernel
    values, and a block costs what the arithmetic needs: one product for the exponents (after
    the class blocks' own, which find the shift below), one exp (``_gaussian_kernel_values``),
    one product for the sums and one that adds the block's share of the references' gradient
    to a (d + 1, n) total. Rows of the neighbour weights W sum to zero, so the anchor
    gradient is 2 (W Z_ref)_i and the reference gradient 2 (W^T Z_anchor - colsum(W) z_j).
    Work on the references alone (centring, the product's right-hand side, the final
    gradient) is done once, not per block.

    The products per class are many small launches, but on a GPU too they beat one product
    over E masked to each anchor's class (a second (b, n) matrix and twice the passes;
    benchmarks/gpu_step_variants.py). What a GPU cannot bear is waiting: ``block`` reads
    from the device only before its work is queued and after it.

    Each row of E follows the shift rule of ``weights`` (the kernel shifted by the anchor's
    nearest class mate, found here from each class's block: ``_gaussian_kernel_values``), so
    p_i keeps its digits in float32 however far apart the map puts points. A far anchor
    (``weights.far``: points of another class far nearer than any class mate, or products
    too inexact to find the shift, as TF32's) is computed again by
    ``weights.per_anchor_terms_and_weights``, which keeps log p_i exact.

    E and the per-call matrices over the references live in ``workspace``
    (``workspace.Workspace``): reused across blocks and calls, they spare the page faults
    of fresh matrices that size, which cost as much as the passes that fill them. An engine
    holds its workspace until another is built on it; it then refuses to go on (RuntimeError)
    rather than read matrices the other has overwritten, so take ``reference_gradient``
    before building the next.
    """

    @torch.no_grad()
    def __init__(
        self,
        Z_ref: torch.Tensor,
        y_ref: torch.Tensor,
        objective: str,
        workspace: Workspace | None = None,
        ref_grad: bool = True,
    ):
        if objective not in PER_ANCHOR_OBJECTIVES:
            raise ValueError(f"objective must be one of {PER_ANCHOR_OBJECTIVES}, got {objective!r}")
        n, d = Z_ref.shape
        self.y_ref, self.objective = y_ref, objective
        self.workspace = Workspace() if workspace is None else workspace
        self.workspace.holder = self
        # centred on the references' mean: distances and gradients are unchanged, and
        # |a|^2 + |b|^2 - 2ab keeps its digits in float32 for data far from the origin.
        # Each matrix is written in place, a column block at a time. R = [z, 1]: one product
        # with it gives the weighted sums of rows and of weights.
        self.centre = Z_ref.mean(0)
        self.R = self.workspace.matrix(n, d + 1, Z_ref, "references")
        self.Z_ref = torch.sub(Z_ref, self.centre, out=self.R[:, :d])
        self.R[:, d] = 1.0
        self.exponent_right = self.workspace.matrix(n, d + 2, Z_ref, "exponent")  # [2 z, -1, -|z|^2]
        torch.mul(self.Z_ref, 2.0, out=self.exponent_right[:, :d])
        self.exponent_right[:, d] = -1.0
        torch.linalg.vecdot(self.Z_ref, self.Z_ref, out=self.exponent_right[:, d + 1]).neg_()
        # sum_i W_ij [z_i, 1], kept as its transpose, (d + 1, n): a product that adds into a
        # wide, short matrix runs up to twice as fast as one into its tall transpose on CPUs
        self.back = self.workspace.matrix(d + 1, n, Z_ref, "reference sums").zero_() if ref_grad else None
        self.far_grad: torch.Tensor | None = None  # the recomputed anchors' share

    @functools.cached_property
    def bounds(self) -> list[int]:
        """Where each class starts among the references (read back at the first block, before
        its work is queued)."""
        return class_bounds(self.y_ref)

    @torch.no_grad()
    def block(self, Z_anchor, y_anchor, anchor_index) -> tuple[torch.Tensor, torch.Tensor]:
        """Terms (b,) and d(sum of terms)/d(Z_anchor) (b, d) of a block of anchors; their
        share of the references' gradient is added to the total.

        The device is waited for only before the block's work is queued (the class bounds)
        and after it (whether any anchor is far), so a GPU is not left idle between its
        products while Python decides what comes next."""
        self._check_holder()
        classes = _same_class_blocks(y_anchor, self.bounds)
        d = Z_anchor.shape[1]
        Z_anchor = Z_anchor - self.centre
        out = self.workspace.matrix(len(Z_anchor), len(self.Z_ref), Z_anchor, "pairs")
        E = _gaussian_kernel_values(Z_anchor, self.exponent_right, anchor_index, classes, out)
        every = E @ self.R  # (b, d + 1): sum_j e_ij z_j and sum_j e_ij
        same = torch.zeros_like(every)  # the same over the anchor's class
        for a, r in classes:
            same[a] = E[a, r] @ self.R[r]
        far_rows = far(same[:, d], len(self.Z_ref)) | far(every[:, d], len(self.Z_ref))
        zero = torch.zeros_like(every[:, 0])
        log_same, log_total = torch.log(same[:, d]), torch.log(every[:, d])
        terms, scale_same, scale_all = anchor_scales(log_same, log_total, zero, zero, self.objective)
        scale_same.masked_fill_(far_rows[:, None], 0.0)  # far anchors: ``_redo`` gives their share
        scale_all.masked_fill_(far_rows[:, None], 0.0)
        grad_anchor = 2.0 * (scale_same * same[:, :d] - scale_all * every[:, :d])
        if self.back is not None:
            A = _with_ones(Z_anchor)
            self.back.addmm_((scale_all * A).T, E, alpha=-1.0)  # the -beta part of W
            for a, r in classes:
                self.back[:, r].addmm_((scale_same[a] * A[a]).T, E[a, r])
        if bool(far_rows.any()):
            self._redo(far_rows, terms, grad_anchor, Z_anchor, y_anchor, anchor_index)
        return terms, grad_anchor

    def reference_gradient(self) -> torch.Tensor:
        """d(sum of every block's terms)/d(Z_ref), shape (n, d)."""
        self._check_holder()
        d, back = self.Z_ref.shape[1], self.back.T
        # into a fresh row-major matrix: left to itself, the result would take the
        # transposed layout of ``back`` and every later pass over it would be strided
        grad = torch.mul(back[:, d:], self.Z_ref, out=self.Z_ref.new_empty(self.Z_ref.shape))
        grad = torch.sub(back[:, :d], grad, out=grad).mul_(2.0)
        return grad if self.far_grad is None else grad.add_(self.far_grad)

    def _check_holder(self) -> None:
        if self.workspace.holder is not self:
            raise RuntimeError("another engine has been built on this workspace since: its matrices are gone")

    def _redo(self, far, terms, grad_anchor, Z_anchor, y_anchor, anchor_index) -> None:
        """The far anchors again, through the shifted path of ``weights``, a few rows at a
        time: that path holds several matrices of their size. A pass takes a share of the
        block (at least ``_REDO_ELEMENTS`` pairs), so on a GPU, given large blocks, it
        recomputes many anchors at once where launches cost most."""
        n = len(self.Z_ref)
        step = max(1, max(_REDO_ELEMENTS, len(Z_anchor) * n // _REDO_SHARE) // n)
        for rows in far.nonzero()[:, 0].split(step):
            index = None if anchor_index is None else anchor_index[rows]
            Z_far = Z_anchor[rows]
            _, log_k, mates, _ = kernel_pairs(Z_far, y_anchor[rows], self.Z_ref, self.y_ref, index, _GAUSSIAN)
            terms[rows], G = per_anchor_terms_and_weights(log_k, mates, self.objective)
            grad_anchor[rows], far_ref = _slope_gradients(G.neg_(), Z_far, self.Z_ref, self.back is not None)
            if far_ref is not None:
                self.far_grad = far_ref if self.far_grad is None else self.far_grad.add_(far_ref)


_GAUSSIAN = GaussianKernel()  # d log k / ds = -1, so c = -G


# Pairs per pass of the recomputation of far anchors: at least this many, and one
# _REDO_SHARE-th of the block where that is more (the recomputation holds about six
# matrices of a pass's size, the block about three of its own).
_REDO_ELEMENTS = 1 << 22
_REDO_SHARE = 8


def _gaussian_kernel_values(Z_anchor, exponent_right, anchor_index, classes, out) -> torch.Tensor:
    """E_ij = exp(m_i - ||z_i - z_j||^2), shape (b, n), with E_ii = 0 and m_i the squared
    distance from anchor i to its nearest class mate (0 without one); floored and capped as
    ``weights.exp_capped_`` says.

    Shifted so, an anchor's class-mate mass is at least 1 however far the map has spread
    its points, and float32 keeps p_i. One product gives the whole exponent,
    [z_i, |z_i|^2 - m_i, 1] . [2 z_j, -1, -|z_j|^2] (the right-hand rows given), after the
    class blocks' own products have found m_i; two in-place passes (clamp, exp) turn it
    into E, written into ``out``.
    """
    d = Z_anchor.shape[1]
    ones = torch.ones(len(Z_anchor), 1, dtype=Z_anchor.dtype, device=Z_anchor.device)
    left = torch.cat([Z_anchor, (Z_anchor * Z_anchor).sum(1, keepdim=True), ones], 1)
    left[:, d] += _nearest_mate_exponents(left, exponent_right, anchor_index, classes, out)
    E = torch.mm(left, exponent_right.T, out=out)
    exp_capped_(E)
    if anchor_index is not None:  # a zero on the device: a Python 0.0 is copied there and waited for
        E.index_put_((torch.arange(len(Z_anchor), device=E.device), anchor_index), E.new_zeros(()))
    return E


def _nearest_mate_exponents(left, exponent_right, anchor_index, classes, scratch) -> torch.Tensor:
    """-m_i of ``_gaussian_kernel_values``, the largest exponent of each anchor's class
    mates, from each class block's product alone (written into ``scratch``); 0 for an anchor
    without class mates, which then keeps the unshifted values."""
    for a, r in classes:
        torch.mm(left[a], exponent_right[r].T, out=scratch[a, r])
    if anchor_index is not None:  # the anchor is no class mate of itself
        rows = torch.arange(len(left), device=left.device)
        scratch.index_put_((rows, anchor_index), scratch.new_full((), -math.inf))
    largest = left.new_full((len(left),), -math.inf)
    for a, r in classes:
        torch.amax(scratch[a, r], 1, out=largest[a])
    return largest.masked_fill_(largest == -math.inf, 0.0)


def class_bounds(y: torch.Tensor) -> list[int]:
    """Row where each class starts in sorted labels, plus n at the end."""
    counts = torch.bincount(y)
    return [0, *torch.cumsum(counts, 0).tolist()]


def _same_class_blocks(y_anchor: torch.Tensor, ref_bounds: list[int]) -> list[tuple[slice, slice]]:
    """(anchor rows, reference rows) of each class present in both, for class-sorted data."""
    bounds = torch.searchsorted(y_anchor, torch.arange(len(ref_bounds), device=y_anchor.device)).tolist()
    return [
        (slice(bounds[c], bounds[c + 1]), slice(ref_bounds[c], ref_bounds[c + 1]))
        for c in range(len(ref_bounds) - 1)
        if bounds[c + 1] > bounds[c] and ref_bounds[c + 1] > ref_bounds[c]
    ]
