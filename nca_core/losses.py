"""The NCA objectives of Goldberger et al. (2004), exact and memory-bounded.

Each anchor i picks a neighbour j with probability

    p_ij = exp(-||z_i - z_j||^2) / sum_{k != i} exp(-||z_i - z_k||^2),   p_ii = 0,

and p_i = sum_{j in C_i} p_ij is the mass on its own class. The paper maximises
f = sum_i p_i (eq. 3) or g = sum_i log p_i (eq. 6). Everything here works in log space
(log-sum-exp), so huge distances or a large map give neither NaN nor inf.
"""

from __future__ import annotations

import math

import torch

__all__ = [
    "OBJECTIVES",
    "block_terms_and_gradients",
    "log_class_mass",
    "nca_objective",
    "objective_terms",
    "selection_probabilities",
]

OBJECTIVES = ("f", "g")


def _squared_distances(Z_anchor: torch.Tensor, Z_ref: torch.Tensor) -> torch.Tensor:
    """Squared Euclidean distances, shape (n_anchor, n_ref), clamped at zero."""
    sq = (Z_anchor * Z_anchor).sum(1, keepdim=True) + (Z_ref * Z_ref).sum(1) - 2.0 * Z_anchor @ Z_ref.T
    return sq.clamp_min(0.0)


def log_class_mass(
    Z_anchor: torch.Tensor,
    y_anchor: torch.Tensor,
    Z_ref: torch.Tensor,
    y_ref: torch.Tensor,
    anchor_index: torch.Tensor | None = None,
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

    Returns
    -------
    Tensor of shape (n_anchor,)
        log p_i; -inf for an anchor with no other member of its class among the references.
    """
    logits = -_squared_distances(Z_anchor, Z_ref)
    if anchor_index is not None:
        is_self = anchor_index[:, None] == torch.arange(len(Z_ref), device=logits.device)
        logits = logits.masked_fill(is_self, float("-inf"))
    same = y_anchor[:, None] == y_ref[None, :]
    log_all = torch.logsumexp(logits, dim=1)
    log_same = torch.logsumexp(logits.masked_fill(~same, float("-inf")), dim=1)
    return log_same - log_all


def objective_terms(log_p: torch.Tensor, objective: str) -> torch.Tensor:
    """Per-anchor terms of f (p_i) or g (log p_i); anchors with p_i = 0 add nothing to g.

    A member of a singleton class can never pick its own class: its p_i is 0 whatever the
    map, so it is a constant 0 in f and is left out of g (where it would be -inf).
    """
    if objective == "f":
        return log_p.exp()
    if objective == "g":
        return torch.where(torch.isfinite(log_p), log_p, torch.zeros_like(log_p))
    raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")


def nca_objective(Z: torch.Tensor, y: torch.Tensor, objective: str = "f") -> torch.Tensor:
    """The paper's objective on an embedding, to be maximised.

    Parameters
    ----------
    Z : Tensor of shape (n_samples, d)
        The embedding A x_i of every point.
    y : Tensor of shape (n_samples,)
        Class labels.
    objective : {"f", "g"}
        "f": sum_i p_i, the expected number of points classified correctly (eq. 3);
        "g": sum_i log p_i (eq. 6).

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
    return objective_terms(log_class_mass(Z, y, Z, y, index), objective).sum()


@torch.no_grad()
def block_terms_and_gradients(
    Z_anchor: torch.Tensor,
    y_anchor: torch.Tensor,
    Z_ref: torch.Tensor,
    ref_bounds: list[int],
    anchor_index: torch.Tensor | None,
    objective: str,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Objective terms of a block of anchors and their gradients, in closed form.

    The fast path of the training loop; ``nca_objective`` is its autograd reference.
    References must be sorted by class, class c occupying rows
    ``ref_bounds[c]:ref_bounds[c + 1]``, and anchors sorted by class too. Then every
    same-class sum is a small matrix product on a sub-block, and the gradients need two
    passes over the (b, n) matrix of neighbour weights, never a same-class mask.

    With logits l_ij = -||z_i - z_j||^2 and softmax P, d(term_i)/d(l_ij) is
    W_ij = P_ij (alpha_i S_ij - beta_i): for f, alpha = 1 and beta = p_i; for g,
    alpha = 1 / p_i and beta = 1 (the paper's eqs. 5 and 7 before the chain rule). Rows of
    W sum to zero, so the anchor gradient is 2 (W Z_ref)_i and the reference gradient is
    2 (W^T Z_anchor - colsum(W) z_j).

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
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    b, d = Z_anchor.shape
    rows = torch.arange(b, device=Z_anchor.device)
    E = torch.addmm((Z_ref * Z_ref).sum(1).neg_(), Z_anchor, Z_ref.T, alpha=2.0)
    E.sub_((Z_anchor * Z_anchor).sum(1, keepdim=True))
    if anchor_index is not None:
        E[rows, anchor_index] = float("-inf")
    row_max = E.amax(1, keepdim=True)
    # exp() of very negative numbers yields subnormal floats, many times slower on CPUs;
    # flooring at e^floor (< 1e-34 of the largest term) changes no sum that matters.
    floor = math.log(torch.finfo(E.dtype).tiny) + 8.0
    E.sub_(row_max).clamp_(min=floor).exp_()
    if anchor_index is not None:
        E[rows, anchor_index] = 0.0

    ones_ref = torch.ones(len(Z_ref), 1, dtype=Z_ref.dtype, device=Z_ref.device)
    R = torch.cat([Z_ref, ones_ref], 1)
    every = E @ R  # (b, d + 1): sum_j e_ij z_j and sum_j e_ij
    same = torch.zeros_like(every)  # the same sums over the anchor's class only
    anchor_bounds = torch.searchsorted(
        y_anchor, torch.arange(len(ref_bounds), device=y_anchor.device)
    ).tolist()
    for c in range(len(ref_bounds) - 1):
        a0, a1, r0, r1 = anchor_bounds[c], anchor_bounds[c + 1], ref_bounds[c], ref_bounds[c + 1]
        if a1 > a0 and r1 > r0:
            same[a0:a1] = E[a0:a1, r0:r1] @ R[r0:r1]
    total = every[:, d]
    p = same[:, d] / total
    has_mate = same[:, d] > 0
    if objective == "f":
        terms, alpha, beta = p, torch.ones_like(p), p
    else:
        safe_p = torch.where(has_mate, p, 1.0)
        terms = torch.where(has_mate, torch.log(safe_p), 0.0)
        alpha, beta = torch.where(has_mate, 1.0 / safe_p, 0.0), has_mate.to(p.dtype)
    # W = E (alpha S - beta) / total: scale per anchor, then the chain rule.
    scale_same, scale_all = (alpha / total)[:, None], (beta / total)[:, None]
    grad_anchor = 2.0 * (scale_same * same[:, :d] - scale_all * every[:, :d])

    A = torch.cat([Z_anchor, torch.ones(b, 1, dtype=Z_anchor.dtype, device=Z_anchor.device)], 1)
    back = -(E.T @ (scale_all * A))  # (n, d + 1): sum_i W_ij [z_i, 1], the -beta part
    for c in range(len(ref_bounds) - 1):
        a0, a1, r0, r1 = anchor_bounds[c], anchor_bounds[c + 1], ref_bounds[c], ref_bounds[c + 1]
        if a1 > a0 and r1 > r0:
            back[r0:r1] += E[a0:a1, r0:r1].T @ (scale_same[a0:a1] * A[a0:a1])
    grad_ref = 2.0 * (back[:, :d] - back[:, d : d + 1] * Z_ref)
    return terms, grad_anchor, grad_ref


def selection_probabilities(Z, anchor: int):
    """p_ij of one anchor i to every point j (p_ii = 0), as a float64 numpy array.

    Z : array of shape (n, d), the embedding A x.
    """
    import numpy as np

    Z = torch.as_tensor(np.asarray(Z, dtype=np.float64))
    logits = -((Z - Z[anchor]) ** 2).sum(1)
    logits[anchor] = float("-inf")
    return torch.softmax(logits, 0).numpy()
