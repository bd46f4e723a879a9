"""One block of the engine: anchors against their neighbours, the objective's terms and
their gradients in the embedding, in closed form.

A block supplies squared distances s_ij = ||z_i - z_j||^2 and log-similarities
log k(s_ij); ``weights`` turns those into the objective and G_ij = d(objective)/d(log k_ij),
and with c_ij = G_ij * (d log k / d s) the gradients are
2 (rowsum(c) z_i - c Z_ref) in the anchors and 2 (colsum(c) z_j - c^T Z_anchor) in the
references. The schedules differ only in where the neighbours come from:

- ``kernel_block_gradients``: a block of anchors against one shared reference set, any
  kernel and objective (the exact engine's general path, and the whole matrix of a small
  problem);
- ``gaussian.GaussianBlocks``: the same for the Gaussian kernel and f or g, fused into a
  few products over one reused (block, n) matrix: the exact engine's fast path;
- ``candidate_terms_and_gradients``: each anchor against its own candidates plus a shared
  sample (the approximate path);
- ``all_pairs_value_and_gradient``: every point of a small set against every other, its
  two roles (anchor and neighbour) summed in one product (``dense``'s whole matrix).

``engine`` walks the blocks; ``function.nca_objective`` is the whole as one autograd op.
"""

from __future__ import annotations

import math

import torch

from .weights import (
    McmlTotals,
    mcml_value_and_weights,
    per_anchor_terms_and_weights,
)

__all__ = [
    "all_pairs_value_and_gradient",
    "candidate_terms_and_gradients",
    "kernel_block_gradients",
    "kernel_pairs",
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


def _centred(Z_anchor: torch.Tensor, Z_ref: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Both sets moved so the references' mean is 0: distances and gradients are unchanged,
    and |a|^2 + |b|^2 - 2ab keeps its digits in float32 for data far from the origin."""
    centre = Z_ref.mean(0)
    return Z_anchor - centre, Z_ref - centre


def _with_ones(Z: torch.Tensor) -> torch.Tensor:
    """[Z, 1]: one product then gives both the weighted sum of rows and the sum of weights."""
    return torch.cat([Z, torch.ones(len(Z), 1, dtype=Z.dtype, device=Z.device)], 1)


@torch.no_grad()
def kernel_pairs(Z_anchor, y_anchor, Z_ref, y_ref, anchor_index, kernel, with_dof_slope: bool = False):
    """The pairs of a block: squared distances, log k (-inf where the anchor meets itself),
    the class-mate mask (the anchor itself left out) and, if asked and the kernel learns
    its dof, d log k / d dof (else None). ``anchor_index`` gives each anchor's row among
    the references, None when the two are disjoint."""
    sq = _squared_distances_of_centred(Z_anchor, Z_ref)
    log_k = kernel(sq)
    dof_slope = kernel.dof_slope(sq, log_k) if with_dof_slope and kernel.learnable else None
    mates = y_anchor[:, None] == y_ref[None, :]
    if anchor_index is not None:
        rows = torch.arange(len(sq), device=sq.device)
        log_k[rows, anchor_index] = -math.inf
        mates[rows, anchor_index] = False
    return sq, log_k, mates, dof_slope


@torch.no_grad()
def kernel_block_gradients(
    Z_anchor: torch.Tensor,
    y_anchor: torch.Tensor,
    Z_ref: torch.Tensor,
    y_ref: torch.Tensor,
    anchor_index: torch.Tensor | None,
    objective: str,
    kernel,
    totals: McmlTotals | None = None,
    ref_grad: bool = True,
) -> tuple[float, torch.Tensor, torch.Tensor | None, float | None]:
    """A block's objective and its gradients in closed form, for any kernel and objective.

    ``kernel`` is a ``kernels`` module (``slope``, and ``dof_slope`` when ``learnable``).
    For "mcml", ``totals`` couples the block to the others (``weights.McmlTotals``); with
    None the block is all the pairs and the value is the whole -KL.

    Returns
    -------
    value : float, the sum of the block's terms ("f", "g"), or MCML's as described
    grad_anchor : Tensor of shape (b, d)
    grad_ref : Tensor of shape (n, d), or None when not ``ref_grad``
    grad_dof : float or None, d(value)/d(dof) for a kernel with a learnable dof
    """
    Z_anchor, Z_ref = _centred(Z_anchor, Z_ref)  # the gradients below use the centred rows too
    sq, log_k, mates, dof_slope = kernel_pairs(Z_anchor, y_anchor, Z_ref, y_ref, anchor_index, kernel, True)
    if objective == "mcml":
        value, G = mcml_value_and_weights(log_k, mates, totals)
    else:
        terms, G = per_anchor_terms_and_weights(log_k, mates, objective)
        value = float(terms.sum())
    grad_dof = None if dof_slope is None else float((G * dof_slope).sum())
    grad_anchor, grad_ref = _slope_gradients(G.mul_(kernel.slope(sq)), Z_anchor, Z_ref, ref_grad)
    return value, grad_anchor, grad_ref, grad_dof


def _slope_gradients(c, Z_anchor, Z_ref, ref_grad: bool = True):
    """Gradients in the anchors and references from c_ij = d(value)/d(s_ij)."""
    row = c @ _with_ones(Z_ref)
    grad_anchor = 2.0 * (row[:, -1:] * Z_anchor - row[:, :-1])
    if not ref_grad:
        return grad_anchor, None
    col = c.T @ _with_ones(Z_anchor)
    return grad_anchor, 2.0 * (col[:, -1:] * Z_ref - col[:, :-1])


@torch.no_grad()
def all_pairs_value_and_gradient(
    Z: torch.Tensor, mates: torch.Tensor, objective: str, kernel
) -> tuple[float, torch.Tensor]:
    """f or g over every point of a set against every other, and its gradient in ``Z``.

    What ``kernel_block_gradients`` gives for the set against itself, in about half the
    calls, for a set small enough that calls, not arithmetic, set the pace: ``Z`` comes
    centred and ``mates`` (the class-mate mask, its diagonal False) comes from the caller,
    once per problem rather than once per evaluation. Each point is an anchor and a
    neighbour, so with C = c + c^T its gradient is 2 (rowsum(C) z_i - (C Z)_i).
    """
    sq = _squared_distances_of_centred(Z, Z)
    log_k = kernel(sq).fill_diagonal_(-math.inf)
    terms, G = per_anchor_terms_and_weights(log_k, mates, objective)
    c = G.mul_(kernel.slope(sq))
    C = c + c.T
    return float(terms.sum()), (C.sum(1, keepdim=True) * Z).sub_(C @ Z).mul_(2.0)


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
    d(sum of terms)/d(dof) for a learnable kernel (else None); the candidates' gradients
    pair by pair, the sample's as in ``kernel_block_gradients``.
    """
    k = Z_near.shape[1]
    offsets = Z_anchor[:, None] - Z_near
    Z_anchor_c, Z_sample_c = _centred(Z_anchor, Z_sample)
    sq = torch.cat([(offsets * offsets).sum(-1), _squared_distances_of_centred(Z_anchor_c, Z_sample_c)], 1)
    log_k = kernel(sq)
    logits = log_k.clone() if kernel.learnable else log_k  # the dof's slope needs log k as it was
    logits[:, k:] += math.log(sample_weight)
    terms, G = per_anchor_terms_and_weights(
        logits.masked_fill_(excluded, -math.inf), same & ~excluded, objective
    )
    grad_dof = float((G * kernel.dof_slope(sq, log_k)).sum()) if kernel.learnable else None
    c = G.mul_(kernel.slope(sq))
    grad_anchor, grad_sample = _slope_gradients(c[:, k:], Z_anchor_c, Z_sample_c)
    pulls = 2.0 * c[:, :k, None] * offsets
    return terms, grad_anchor + pulls.sum(1), -pulls, grad_sample, grad_dof
