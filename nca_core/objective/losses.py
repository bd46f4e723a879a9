"""The NCA objectives of Goldberger et al. (2004), exact and memory-bounded.

Each anchor i picks a neighbour j with probability

    p_ij = exp(-||z_i - z_j||^2) / sum_{k != i} exp(-||z_i - z_k||^2),   p_ii = 0,

and p_i = sum_{j in C_i} p_ij is the mass on its own class. The paper maximises
f = sum_i p_i (eq. 3) or g = sum_i log p_i (eq. 6). Everything here works in log space
(log-sum-exp), so huge distances or a large map give neither NaN nor inf.

Any kernel from ``kernels`` can replace the Gaussian exp(-d^2) (dt-NCA of Min et al.,
2010). ``mcml_objective`` is their other objective: minus the KL divergence from the
label distribution (uniform over same-class pairs) to the joint q_ij over all pairs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ..config.rules import OBJECTIVES, PER_ANCHOR_OBJECTIVES
from .kernels import GaussianKernel

__all__ = [
    "OBJECTIVES",
    "GaussianBlocks",
    "block_terms_and_gradients",
    "candidate_terms_and_gradients",
    "kernel_block_gradients",
    "log_class_mass",
    "logit_terms_and_weights",
    "mcml_objective",
    "nca_objective",
    "objective_terms",
    "pair_log_kernel",
    "selection_probabilities",
    "squared_distances",
]


def squared_distances(Z_anchor: torch.Tensor, Z_ref: torch.Tensor) -> torch.Tensor:
    """Squared Euclidean distances, shape (n_anchor, n_ref), clamped at zero (centred first,
    see ``_centred``)."""
    return _squared_distances_of_centred(*_centred(Z_anchor, Z_ref))


def _squared_distances_of_centred(Z_anchor: torch.Tensor, Z_ref: torch.Tensor) -> torch.Tensor:
    """|a|^2 + |b|^2 - 2ab for inputs already centred on the references' mean."""
    sq = (Z_anchor * Z_anchor).sum(1, keepdim=True) + (Z_ref * Z_ref).sum(1) - 2.0 * Z_anchor @ Z_ref.T
    return sq.clamp_min(0.0)


def pair_log_kernel(
    Z_anchor: torch.Tensor,
    Z_ref: torch.Tensor,
    anchor_index: torch.Tensor | None = None,
    kernel: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> torch.Tensor:
    """log k(||z_i - z_j||^2) for anchors i against references j, -inf where j is i.

    ``kernel`` maps squared distances to log-similarities (None: the Gaussian, -d^2);
    ``anchor_index`` gives each anchor's row among the references (None when disjoint).
    """
    sq = squared_distances(Z_anchor, Z_ref)
    logits = -sq if kernel is None else kernel(sq)
    if anchor_index is not None:
        is_self = anchor_index[:, None] == torch.arange(len(Z_ref), device=logits.device)
        logits = logits.masked_fill(is_self, float("-inf"))
    return logits


def log_class_mass(
    Z_anchor: torch.Tensor,
    y_anchor: torch.Tensor,
    Z_ref: torch.Tensor,
    y_ref: torch.Tensor,
    anchor_index: torch.Tensor | None = None,
    kernel: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> torch.Tensor:
    """log p_i for each anchor, taking neighbours from a reference set.

    Parameters
    ----------
    Z_anchor : Tensor of shape (n_anchor, d)
    y_anchor : Tensor of shape (n_anchor,), integer labels
    Z_ref : Tensor of shape (n_ref, d)
    y_ref : Tensor of shape (n_ref,)
    anchor_index : Tensor of shape (n_anchor,), optional
        Position of each anchor inside the reference set, so that p_ii = 0. None when
        anchors and references are disjoint.
    kernel : callable, optional
        Squared distances to log-similarities (``kernels.StudentTKernel``); None: Gaussian.

    Returns
    -------
    Tensor of shape (n_anchor,)
        log p_i; -inf for an anchor with no other member of its class among the references.
    """
    logits = pair_log_kernel(Z_anchor, Z_ref, anchor_index, kernel)
    same = y_anchor[:, None] == y_ref[None, :]
    log_all = torch.logsumexp(logits, dim=1)
    log_same = torch.logsumexp(logits.masked_fill(~same, float("-inf")), dim=1)
    return log_same - log_all


@torch.no_grad()
def logit_terms_and_weights(
    logits: torch.Tensor, same: torch.Tensor, objective: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """f's or g's term per row of logits, and d(term_i)/d(logit_ij), in closed form.

    Each row holds one anchor's log-similarities to its neighbours (-inf: not a neighbour)
    and ``same`` marks its class mates. The kernel values are shifted by the row's largest;
    a row whose class mates then hold less than ``_SMALLEST_MASS`` takes its class mates
    again, shifted by their own largest, so its term and weights stay exact in float32
    (``_anchor_weights`` has the formulas). A row without a class mate: term 0, weights 0.
    """
    floor = _floor(logits.dtype)
    total_shift = _row_shift(logits)
    E = _exp_shifted(logits, total_shift, floor)
    E_same = E * same
    mass = E_same.sum(1)
    same_shift = total_shift.clone()
    far = _is_far(mass)
    if bool(far.any()):
        mates = logits[far].masked_fill(~same[far], -math.inf)
        same_shift[far] = _row_shift(mates)
        E_same[far] = _exp_shifted(mates, same_shift[far], floor)
        mass[far] = E_same[far].sum(1)
    log_same, log_total = _log_mass(mass, same_shift), _log_mass(E.sum(1), total_shift)
    terms, scale_same, scale_all = _anchor_weights(
        log_same, log_total, same_shift[:, 0], total_shift[:, 0], objective
    )
    return terms, E_same.mul_(scale_same).sub_(E.mul_(scale_all))


def mcml_objective(
    Z_anchor: torch.Tensor,
    y_anchor: torch.Tensor,
    Z_ref: torch.Tensor,
    y_ref: torch.Tensor,
    anchor_index: torch.Tensor | None = None,
    kernel: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> torch.Tensor:
    """-KL(P || Q) over the pairs (anchor i, reference j), j not i; at most 0.

    P is uniform over same-class pairs; q_ij = k_ij / sum over all pairs of k (the
    symmetric joint of Min et al., 2010, when anchors and references are the same set).
    With N same-class pairs, -KL = mean over same pairs of log q_ij + log N. Returns 0
    when no pair shares a class (nothing to learn).
    """
    logits = pair_log_kernel(Z_anchor, Z_ref, anchor_index, kernel)
    same = (y_anchor[:, None] == y_ref[None, :]) & torch.isfinite(logits)
    n_same = int(same.sum())
    if n_same == 0:
        return logits.new_zeros(())
    log_normaliser = torch.logsumexp(logits.flatten(), 0)
    mean_same = torch.where(same, logits, 0.0).sum() / n_same
    return mean_same - log_normaliser + math.log(n_same)


def objective_terms(log_p: torch.Tensor, objective: str) -> torch.Tensor:
    """Per-anchor terms of f (p_i) or g (log p_i); anchors with p_i = 0 add nothing to g.

    A member of a singleton class can never pick its own class: its p_i is 0 whatever the
    map, so it is a constant 0 in f and is left out of g (where it would be -inf).
    """
    if objective == "f":
        return log_p.exp()
    if objective == "g":
        return torch.where(torch.isfinite(log_p), log_p, torch.zeros_like(log_p))
    raise ValueError(f"per-anchor objective must be one of {PER_ANCHOR_OBJECTIVES}, got {objective!r}")


def nca_objective(
    Z: torch.Tensor,
    y: torch.Tensor,
    objective: str = "f",
    kernel: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> torch.Tensor:
    """The paper's objective on an embedding, to be maximised.

    Parameters
    ----------
    Z : Tensor of shape (n_samples, d)
        The embedding A x_i of every point.
    y : Tensor of shape (n_samples,)
        Class labels.
    objective : {"f", "g", "mcml"}
        "f": sum_i p_i, the expected number of points classified correctly (eq. 3);
        "g": sum_i log p_i (eq. 6); "mcml": -KL(P || Q) (see ``mcml_objective``).
    kernel : callable, optional
        Squared distances to log-similarities; None is the paper's Gaussian.

    Returns
    -------
    Tensor of shape ()
        Autograd through it gives the paper's gradients, eqs. (5) and (7).

    Notes
    -----
    This holds an (n, n) matrix; the training loop uses the same terms in blocks of anchors.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    y = torch.as_tensor(y, device=Z.device)
    index = torch.arange(len(Z), device=Z.device)
    if objective == "mcml":
        return mcml_objective(Z, y, Z, y, index, kernel)
    return objective_terms(log_class_mass(Z, y, Z, y, index, kernel), objective).sum()


def _same_class_blocks(y_anchor: torch.Tensor, ref_bounds: list[int]) -> list[tuple[slice, slice]]:
    """(anchor rows, reference rows) of each class present in both, for class-sorted data."""
    bounds = torch.searchsorted(y_anchor, torch.arange(len(ref_bounds), device=y_anchor.device)).tolist()
    return [
        (slice(bounds[c], bounds[c + 1]), slice(ref_bounds[c], ref_bounds[c + 1]))
        for c in range(len(ref_bounds) - 1)
        if bounds[c + 1] > bounds[c] and ref_bounds[c + 1] > ref_bounds[c]
    ]


def _anchor_weights(log_same, log_total, same_shift, total_shift, objective: str):
    """Terms of f or g per anchor, and the weights of their gradient through the logits.

    With S the same-class mask and P_ij = k_ij / sum_k k_ik,
    d(term_i)/d(log k_ij) = P_ij (alpha_i S_ij - beta_i): for f, alpha = 1 and beta = p_i;
    for g, alpha = 1 / p_i and beta = 1 (the paper's eqs. 5 and 7 before the chain rule).
    The kernel values come in two arrays, each shifted by its own row maximum so that
    neither underflows in float32: E_ij = k_ij / exp(total_shift_i) over all references
    and E'_ij = k_ij / exp(same_shift_i) over the anchor's class. ``log_same`` and
    ``log_total`` are log sum_{j in C_i} k_ij and log sum_j k_ij (-inf without a class mate).
    Returns the terms and the columns (b, 1) that multiply E' (the alpha part) and E (the
    beta part). An anchor without a class mate adds nothing.
    """
    has_mate = torch.isfinite(log_same)
    log_p = torch.where(has_mate, log_same - log_total, -math.inf)
    if objective == "f":
        terms, log_alpha, beta = log_p.exp(), torch.zeros_like(log_p), log_p.exp()
    else:
        terms = torch.where(has_mate, log_p, 0.0)
        log_alpha, beta = torch.where(has_mate, -log_p, 0.0), has_mate.to(log_p.dtype)
    scale_same = torch.where(has_mate, (log_alpha + same_shift - log_total).exp(), 0.0)
    scale_all = beta * (total_shift - log_total).exp()
    return terms, scale_same[:, None], scale_all[:, None]


def _exp_shifted(logits: torch.Tensor, shift, floor: float, out: torch.Tensor | None = None) -> torch.Tensor:
    """exp(logits - shift), 0 where a logit is -inf; values below e^floor are floored.

    exp() of very negative numbers yields subnormal floats, many times slower on CPUs; the
    floor (far below any sum that matters) keeps them normal. ``out=logits`` works in place.
    """
    excluded = logits == -math.inf
    E = logits.sub(shift) if out is None else out.sub_(shift)
    return E.clamp_(min=floor).exp_().masked_fill_(excluded, 0.0)


def _row_shift(logits: torch.Tensor) -> torch.Tensor:
    """Each row's largest logit, as a column; 0 for a row with no finite logit."""
    top = logits.amax(1, keepdim=True)
    return torch.where(torch.isfinite(top), top, 0.0)


def _log_mass(E_sums: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """log of the unshifted sums, -inf where a sum is 0."""
    return shift[:, 0] + torch.log(E_sums)


def _with_ones(Z: torch.Tensor) -> torch.Tensor:
    """[Z, 1]: one product then gives both the weighted sum of rows and the sum of weights."""
    return torch.cat([Z, torch.ones(len(Z), 1, dtype=Z.dtype, device=Z.device)], 1)


@torch.no_grad()
def block_terms_and_gradients(
    Z_anchor: torch.Tensor,
    y_anchor: torch.Tensor,
    Z_ref: torch.Tensor,
    ref_bounds: list[int],
    anchor_index: torch.Tensor | None,
    objective: str,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Objective terms of one block of anchors and their gradients (``GaussianBlocks``).

    Parameters
    ----------
    Z_anchor : Tensor of shape (b, d), anchors sorted by class
    y_anchor : Tensor of shape (b,), their class indices, ascending
    Z_ref : Tensor of shape (n, d), sorted by class
    ref_bounds : list of n_classes + 1 ints
    anchor_index : Tensor of shape (b,) or None
        Each anchor's row among the references (so that p_ii = 0); None if disjoint.
    objective : {"f", "g"}

    Returns
    -------
    terms : Tensor of shape (b,), p_i for "f", log p_i for "g" (0 without a class mate)
    grad_anchor : Tensor of shape (b, d), d(sum of terms)/d(Z_anchor) through l_ij only
    grad_ref : Tensor of shape (n, d), d(sum of terms)/d(Z_ref)
    """
    blocks = GaussianBlocks(Z_ref, ref_bounds, objective)
    terms, grad_anchor = blocks.block(Z_anchor, y_anchor, anchor_index)
    return terms, grad_anchor, blocks.reference_gradient()


class GaussianBlocks:
    """The Gaussian kernel's f or g, block by block of anchors against one reference set.

    The exact engine of the training loop, in closed form; ``nca_objective`` is its
    autograd reference. References must be sorted by class, class c occupying rows
    ``ref_bounds[c]:ref_bounds[c + 1]``, and each block's anchors sorted by class too. Then
    every same-class sum is a small product on a sub-block of one (b, n) matrix E of kernel
    values, and a block costs what the arithmetic needs: one product for the exponents, one
    exp (``_gaussian_kernel_values``), one product for the sums and one that adds the block's
    share of the references' gradient to an (n, d + 1) total. Rows of the neighbour weights
    W sum to zero, so the anchor gradient is 2 (W Z_ref)_i and the reference gradient
    2 (W^T Z_anchor - colsum(W) z_j). Work on the references alone (centring, the product's
    right-hand side, the final gradient) is done once, not per block.

    E is the kernel itself, unshifted. An anchor whose nearest neighbours or class mates
    are so far that their mass falls under ``_SMALLEST_MASS`` (where float32 would lose
    p_i) is computed again by the shifted path of ``kernel_block_gradients``, which keeps
    log p_i exact.

    ``buffer``, a flat tensor of at least b * n elements, holds E: reused across blocks and
    calls, it spares the page faults of a fresh matrix that size, which cost as much as the
    product that fills it.
    """

    def __init__(
        self,
        Z_ref: torch.Tensor,
        ref_bounds: list[int],
        objective: str,
        buffer: torch.Tensor | None = None,
        ref_grad: bool = True,
    ):
        if objective not in PER_ANCHOR_OBJECTIVES:
            raise ValueError(f"objective must be one of {PER_ANCHOR_OBJECTIVES}, got {objective!r}")
        # centred on the references' mean: distances and gradients are unchanged, and
        # |a|^2 + |b|^2 - 2ab keeps its digits in float32 for data far from the origin
        self.centre = Z_ref.mean(0)
        self.Z_ref = Z_ref - self.centre
        self.bounds, self.objective, self.buffer = ref_bounds, objective, buffer
        self.R = _with_ones(self.Z_ref)  # one product gives weighted sums of rows and of weights
        squares = (self.Z_ref * self.Z_ref).sum(1, keepdim=True)
        self.exponent_right = torch.cat([2.0 * self.Z_ref, -torch.ones_like(squares), -squares], 1)
        self.back = torch.zeros_like(self.R) if ref_grad else None  # sum_i W_ij [z_i, 1]
        self.far_grad: torch.Tensor | None = None  # the recomputed anchors' share
        # pairs per pass of the far anchors' recomputation: a share of the block the device
        # was given, so a GPU recomputes many anchors a pass where launches cost most
        self.redo_elements = max(_REDO_ELEMENTS, 0 if buffer is None else buffer.numel() // _REDO_SHARE)

    @torch.no_grad()
    def block(self, Z_anchor, y_anchor, anchor_index) -> tuple[torch.Tensor, torch.Tensor]:
        """Terms (b,) and d(sum of terms)/d(Z_anchor) (b, d) of a block of anchors; their
        share of the references' gradient is added to the total."""
        d = Z_anchor.shape[1]
        Z_anchor = Z_anchor - self.centre
        E = _gaussian_kernel_values(Z_anchor, self.exponent_right, anchor_index, self._out(len(Z_anchor)))
        blocks = _same_class_blocks(y_anchor, self.bounds)
        every = E @ self.R  # (b, d + 1): sum_j e_ij z_j and sum_j e_ij
        same = torch.zeros_like(every)  # the same over the anchor's class
        for a, r in blocks:
            same[a] = E[a, r] @ self.R[r]
        far = _is_far(same[:, d]) | _is_far(every[:, d])
        any_far = bool(far.any())  # one wait for the device per block, not two
        zero = torch.zeros_like(every[:, 0])
        log_same, log_total = torch.log(same[:, d]), torch.log(every[:, d])
        terms, scale_same, scale_all = _anchor_weights(log_same, log_total, zero, zero, self.objective)
        if any_far:
            scale_same[far], scale_all[far] = 0.0, 0.0
        grad_anchor = 2.0 * (scale_same * same[:, :d] - scale_all * every[:, :d])
        if self.back is not None:
            A = _with_ones(Z_anchor)
            self.back.addmm_(E.T, scale_all * A, alpha=-1.0)  # the -beta part of W
            for a, r in blocks:
                self.back[r].addmm_(E[a, r].T, scale_same[a] * A[a])
        if any_far:
            self._redo(far, terms, grad_anchor, Z_anchor, y_anchor, anchor_index)
        return terms, grad_anchor

    def reference_gradient(self) -> torch.Tensor:
        """d(sum of every block's terms)/d(Z_ref), shape (n, d)."""
        d = self.Z_ref.shape[1]
        grad = 2.0 * (self.back[:, :d] - self.back[:, d:] * self.Z_ref)
        return grad if self.far_grad is None else grad.add_(self.far_grad)

    def _out(self, rows: int) -> torch.Tensor | None:
        size = rows * len(self.Z_ref)
        return None if self.buffer is None or self.buffer.numel() < size else self.buffer[:size].view(rows, -1)

    def _redo(self, far, terms, grad_anchor, Z_anchor, y_anchor, anchor_index) -> None:
        """The far anchors again, each kernel value shifted by its row's (and class's) largest,
        a few rows at a time: that path holds several matrices of their size."""
        step = max(1, self.redo_elements // len(self.Z_ref))
        for rows in far.nonzero()[:, 0].split(step):
            index = None if anchor_index is None else anchor_index[rows]
            sq = _squared_distances_of_centred(Z_anchor[rows], self.Z_ref)
            pairs = _KernelPairs(sq, GaussianKernel(), index, _same_class_blocks(y_anchor[rows], self.bounds))
            terms[rows], c, _ = _per_anchor_slopes(pairs, self.objective)
            grad_anchor[rows], far_ref = _slope_gradients(c, Z_anchor[rows], self.Z_ref, self.back is not None)
            if far_ref is not None:
                self.far_grad = far_ref if self.far_grad is None else self.far_grad.add_(far_ref)


# An anchor whose neighbours, or class mates, hold less kernel mass than this is computed
# again with shifted kernel values: below it, float32 would start to lose p_i to the
# floored values (each e^floor, about 3e-35 in float32, so even a million of them stay
# under 1e-11 of this mass).
_SMALLEST_MASS = math.exp(-40.0)


# Pairs per pass of the recomputation of far anchors: at least this many, and one
# _REDO_SHARE-th of the block buffer where that is more (the recomputation holds about six
# matrices of a pass's size, the block about three of its own).
_REDO_ELEMENTS = 1 << 22
_REDO_SHARE = 8


def _is_far(mass: torch.Tensor) -> torch.Tensor:
    """Rows whose kernel mass is positive but too small to keep its digits (``_SMALLEST_MASS``)."""
    return (mass < _SMALLEST_MASS) & (mass > 0)


def _floor(dtype: torch.dtype) -> float:
    """Logits this far below a row's largest add nothing that float arithmetic keeps."""
    return math.log(torch.finfo(dtype).tiny) + 8.0


def _centred(Z_anchor: torch.Tensor, Z_ref: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Both sets moved so the references' mean is 0: distances and gradients are unchanged,
    and |a|^2 + |b|^2 - 2ab keeps its digits in float32 for data far from the origin."""
    centre = Z_ref.mean(0)
    return Z_anchor - centre, Z_ref - centre


def _gaussian_kernel_values(Z_anchor, exponent_right, anchor_index, out=None) -> torch.Tensor:
    """E_ij = exp(-||z_i - z_j||^2), shape (b, n), with E_ii = 0; floored at e^floor as in
    ``_exp_shifted``, so no value is subnormal.

    One product gives the whole exponent, [z_i, |z_i|^2, 1] . [2 z_j, -1, -|z_j|^2] (the
    right-hand rows given), and two in-place passes (floor, exp) turn it into E. Written
    into ``out`` when given.
    """
    ones = torch.ones(len(Z_anchor), 1, dtype=Z_anchor.dtype, device=Z_anchor.device)
    left = torch.cat([Z_anchor, (Z_anchor * Z_anchor).sum(1, keepdim=True), ones], 1)
    E = torch.mm(left, exponent_right.T, out=out)
    E.clamp_(min=_floor(E.dtype), max=0.0).exp_()
    if anchor_index is not None:
        E[torch.arange(len(Z_anchor), device=E.device), anchor_index] = 0.0
    return E


def selection_probabilities(Z, anchor: int, dof: float | None = None):
    """p_ij of one anchor i to every point j (p_ii = 0), as a float64 numpy array.

    Z : array of shape (n, d), the embedding A x.
    dof : the Student-t kernel's degrees of freedom (``Snapshot.dof``); None for the Gaussian.
    """
    import numpy as np

    from .kernels import GaussianKernel, StudentTKernel

    Z = torch.as_tensor(np.asarray(Z, dtype=np.float64))
    kernel = GaussianKernel() if dof is None else StudentTKernel(float(dof)).double()
    logits = kernel(((Z - Z[anchor]) ** 2).sum(1))
    logits[anchor] = float("-inf")
    return torch.softmax(logits, 0).numpy()


@torch.no_grad()
def kernel_block_gradients(
    Z_anchor: torch.Tensor,
    y_anchor: torch.Tensor,
    Z_ref: torch.Tensor,
    ref_bounds: list[int],
    anchor_index: torch.Tensor | None,
    objective: str,
    kernel,
    log_norm: float | None = None,
    n_same: int | None = None,
    ref_grad: bool = True,
) -> tuple[float, torch.Tensor, torch.Tensor | None, float | None]:
    """A block's objective and its gradients in closed form, for any kernel and objective.

    The general sibling of ``block_terms_and_gradients`` (same sorting rules). With
    c_ij = d(value)/d(s_ij) for s_ij = ||z_i - z_j||^2, the anchor gradient is
    2 (rowsum(c) z_i - c Z_ref) and the reference gradient 2 (colsum(c) z_j - c^T Z_anchor),
    where c_ij = G_ij * (d log k / d s) and G_ij = d(value)/d(log k_ij): for "f"/"g" the
    weights of ``_anchor_weights``; for "mcml" S_ij / N - q_ij.

    ``kernel`` must offer ``slope(s)`` (and ``dof_slope(s, log_k)`` when ``learnable``).
    For "mcml", ``log_norm`` and ``n_same`` are log sum k and the count of same-class
    pairs over all blocks, and the value returned is this block's share
    sum_same(log k) / n_same; with ``log_norm`` None the block is all the pairs and the
    value is the whole -KL.

    Returns
    -------
    value : float, the sum of the block's terms ("f", "g") or as described for "mcml"
    grad_anchor : Tensor of shape (b, d)
    grad_ref : Tensor of shape (n, d), or None when not ``ref_grad``
    grad_dof : float or None, d(value)/d(dof) for a kernel with a learnable dof
    """
    Z_anchor, Z_ref = _centred(Z_anchor, Z_ref)  # the gradients below use the centred rows too
    sq = _squared_distances_of_centred(Z_anchor, Z_ref)
    pairs = _KernelPairs(sq, kernel, anchor_index, _same_class_blocks(y_anchor, ref_bounds))
    if objective == "mcml":
        value, c, grad_dof = _mcml_slopes(pairs, log_norm, n_same)
    elif objective in PER_ANCHOR_OBJECTIVES:
        terms, c, grad_dof = _per_anchor_slopes(pairs, objective)
        value = float(terms.sum())
    else:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    grad_anchor, grad_ref = _slope_gradients(c, Z_anchor, Z_ref, ref_grad)
    return value, grad_anchor, grad_ref, grad_dof


@torch.no_grad()
def candidate_terms_and_gradients(
    Z_anchor: torch.Tensor,
    Z_near: torch.Tensor,
    Z_sample: torch.Tensor,
    excluded: torch.Tensor,
    same: torch.Tensor,
    sample_weight: float,
    kernel,
    objective: str,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, float | None]:
    """f's or g's terms for anchors that each take neighbours from their own candidates
    and from one shared sample, and the gradients of the terms' sum, in closed form.

    Parameters
    ----------
    Z_anchor : Tensor of shape (b, d)
    Z_near : Tensor of shape (b, k, d), each anchor's candidates
    Z_sample : Tensor of shape (s, d), the sample every anchor also sees
    excluded : bool Tensor of shape (b, k + s), pairs that are no neighbour (a missing
        candidate, a draw that is the anchor or one of its candidates)
    same : bool Tensor of shape (b, k + s), class mates
    sample_weight : float, how many points each draw stands for (its log is added to the
        draws' log-similarities)
    kernel : a ``kernels`` module (``slope``, and ``dof_slope`` when ``learnable``)

    Returns terms (b,), d(sum of terms)/d of Z_anchor, Z_near and Z_sample, and
    d(sum of terms)/d(dof) for a learnable kernel (else None). With c_ij = d(sum)/d(s_ij)
    for s_ij = ||z_i - z_j||^2 (``logit_terms_and_weights`` times the kernel's slope), the
    gradients are those of ``kernel_block_gradients``, for the candidates pair by pair.
    """
    k = Z_near.shape[1]
    offsets = Z_anchor[:, None] - Z_near
    Z_anchor_c, Z_sample_c = _centred(Z_anchor, Z_sample)
    sq = torch.cat([(offsets * offsets).sum(-1), _squared_distances_of_centred(Z_anchor_c, Z_sample_c)], 1)
    log_k = kernel(sq)
    logits = log_k.clone()
    logits[:, k:] += math.log(sample_weight)
    terms, weights = logit_terms_and_weights(logits.masked_fill_(excluded, -math.inf), same, objective)
    grad_dof = float((weights * kernel.dof_slope(sq, log_k)).sum()) if kernel.learnable else None
    c = weights.mul_(kernel.slope(sq))
    grad_anchor, grad_sample = _slope_gradients(c[:, k:], Z_anchor_c, Z_sample_c)
    pulls = 2.0 * c[:, :k, None] * offsets
    return terms, grad_anchor + pulls.sum(1), -pulls, grad_sample, grad_dof


def _slope_gradients(c, Z_anchor, Z_ref, ref_grad: bool = True):
    """Gradients in the anchors and references from c_ij = d(value)/d(s_ij)."""
    row = c @ _with_ones(Z_ref)
    grad_anchor = 2.0 * (row[:, -1:] * Z_anchor - row[:, :-1])
    if not ref_grad:
        return grad_anchor, None
    col = c.T @ _with_ones(Z_anchor)
    return grad_anchor, 2.0 * (col[:, -1:] * Z_ref - col[:, :-1])


class _KernelPairs:
    """log k, d log k / ds and d log k / d dof of a block's pairs, self-pairs masked."""

    def __init__(self, sq, kernel, anchor_index, same_blocks):
        self.rows = torch.arange(len(sq), device=sq.device)
        self.anchor_index, self.same_blocks = anchor_index, same_blocks
        self.log_k = kernel(sq)
        if anchor_index is not None:
            self.log_k[self.rows, anchor_index] = float("-inf")
        # As in _floor, but higher (1e-19 in float32): here E is further
        # multiplied by kernel slopes and 1/total, and products below the smallest normal
        # float made the Student-t path at d = 30 several times slower on CPUs.
        self.floor = math.log(torch.finfo(self.log_k.dtype).tiny) / 2.0
        self.slope = kernel.slope(sq)
        self.dof_slope = kernel.dof_slope(sq, self.log_k) if kernel.learnable else None
        if anchor_index is not None and self.dof_slope is not None:
            self.dof_slope[self.rows, anchor_index] = 0.0

    def exp_shifted(self, shift, rows=slice(None), columns=slice(None)) -> torch.Tensor:
        """exp(log k - shift) over the given rows and columns, floored; self-pairs at 0."""
        return _exp_shifted(self.log_k[rows, columns], shift, self.floor)


def _mcml_slopes(pairs: _KernelPairs, log_norm, n_same):
    """MCML's value, c_ij and d(value)/d(dof) for a block (``kernel_block_gradients``)."""
    whole = log_norm is None
    if whole:
        shift = float(pairs.log_k.max())
        E = pairs.exp_shifted(shift)
        total = float(E.sum())
        E.div_(total)
        log_norm = shift + math.log(total)
        n_same = sum((r.stop - r.start) * (a.stop - a.start) for a, r in pairs.same_blocks)
        if pairs.anchor_index is not None:
            n_same -= len(pairs.rows)
    else:
        E = pairs.exp_shifted(log_norm)
    log_k = pairs.log_k
    if pairs.anchor_index is not None:
        log_k[pairs.rows, pairs.anchor_index] = 0.0
    if not n_same:
        return 0.0, torch.zeros_like(E), (0.0 if pairs.dof_slope is not None else None)
    sum_same = sum(float(log_k[a, r].sum()) for a, r in pairs.same_blocks)
    grad_dof = None
    if pairs.dof_slope is not None:
        grad_dof = -float((E * pairs.dof_slope).sum())
        grad_dof += sum(float(pairs.dof_slope[a, r].sum()) for a, r in pairs.same_blocks) / n_same
    c = E.mul_(pairs.slope).neg_()  # -q_ij * dlogk/ds
    for a, r in pairs.same_blocks:
        c[a, r] += pairs.slope[a, r] / n_same
    if pairs.anchor_index is not None:
        c[pairs.rows, pairs.anchor_index] = 0.0
    value = sum_same / n_same - log_norm + math.log(n_same) if whole else sum_same / n_same
    return value, c, grad_dof


def _per_anchor_slopes(pairs: _KernelPairs, objective: str):
    """f's or g's terms per anchor, c_ij and d(value)/d(dof) for a block (``kernel_block_gradients``).

    The same-class kernel values get their own shift, so an anchor whose class mates are
    all far away keeps an exact log p_i in float32.
    """
    total_shift = _row_shift(pairs.log_k)
    E = pairs.exp_shifted(total_shift)
    same_shift = torch.zeros_like(total_shift)
    same = torch.zeros(len(E), dtype=E.dtype, device=E.device)
    E_same = []
    for a, r in pairs.same_blocks:
        same_shift[a] = _row_shift(pairs.log_k[a, r])
        E_same.append(pairs.exp_shifted(same_shift[a], a, r))
        same[a] = E_same[-1].sum(1)
    log_same, log_total = _log_mass(same, same_shift), _log_mass(E.sum(1), total_shift)
    terms, scale_same, scale_all = _anchor_weights(
        log_same, log_total, same_shift[:, 0], total_shift[:, 0], objective
    )
    same_parts = [E_c * scale_same[a] for (a, _), E_c in zip(pairs.same_blocks, E_same)]
    grad_dof = None
    if pairs.dof_slope is not None:
        grad_dof = -float((E * pairs.dof_slope * scale_all).sum())
        grad_dof += sum(
            float((part * pairs.dof_slope[a, r]).sum()) for (a, r), part in zip(pairs.same_blocks, same_parts)
        )
    c = E.mul_(scale_all).neg_()  # the -beta part, then the alpha part on the anchor's class
    for (a, r), part in zip(pairs.same_blocks, same_parts):
        c[a, r] += part
    return terms, c.mul_(pairs.slope), grad_dof
