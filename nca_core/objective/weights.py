"""The objectives, written once: their value and gradient through the log-similarities.

Every schedule of the engine (``blocks``) reduces a matrix of log-similarities
log k_ij, anchors i against their neighbours j (-inf where j is no neighbour), and a mask
of class mates to the objective and G_ij = d(objective)/d(log k_ij). Nothing here knows
where the neighbours came from or what the kernel is; the schedules turn G into
gradients of the embedding.

- f = sum_i p_i and g = sum_i log p_i (Goldberger et al., 2004), with
  p_i = sum_{j in C_i} k_ij / sum_j k_ij: ``per_anchor_terms_and_weights``;
- MCML (Min et al., 2010), -KL(P || Q) with P uniform over same-class pairs and
  q_ij = k_ij / sum over all pairs of k: ``mcml_value_and_weights``.

Everything works on kernel values shifted by a row's (or class's) largest, so neither
huge distances nor float32 lose the terms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..config.rules import OBJECTIVES, PER_ANCHOR_OBJECTIVES

__all__ = [
    "OBJECTIVES",
    "PER_ANCHOR_OBJECTIVES",
    "McmlTotals",
    "anchor_scales",
    "mcml_value_and_weights",
    "per_anchor_terms_and_weights",
    "terms_in_value",
]


def terms_in_value(objective: str, count: int) -> int:
    """How many terms an objective's value is the mean of, for ``count`` anchors: f and g are
    means over their anchors (the paper's sums, divided so that a step's size does not grow
    with the batch); MCML's -KL is one whole over all pairs (1)."""
    return count if objective in PER_ANCHOR_OBJECTIVES else 1


@torch.no_grad()
def per_anchor_terms_and_weights(
    log_k: torch.Tensor, mates: torch.Tensor, objective: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """f's or g's term per row of log-similarities, and G_ij = d(term_i)/d(log k_ij).

    ``mates`` (bool, the shape of ``log_k``) marks each anchor's class mates. Kernel values
    are shifted by the row's largest; a row whose class mates then hold too little mass to
    keep their digits (``_imprecise``) takes them again, shifted by their own largest, so
    its term and weights stay exact in float32. A row without a class mate: term 0,
    weights 0. ``log_k`` is left as it was.
    """
    if objective not in PER_ANCHOR_OBJECTIVES:
        raise ValueError(f"per-anchor objective must be one of {PER_ANCHOR_OBJECTIVES}, got {objective!r}")
    floor = _floor(log_k.dtype)
    total_shift = _row_shift(log_k)
    E = _exp_shifted(log_k, total_shift, floor)
    E_same = E * mates
    mass = E_same.sum(1)
    same_shift = total_shift.clone()
    far = _imprecise(mass, floor, log_k.shape[1]).nonzero()[:, 0]
    if len(far):
        of_mates = log_k[far].masked_fill(~mates[far], -math.inf)
        same_shift[far] = _row_shift(of_mates)
        E_same[far] = _exp_shifted(of_mates, same_shift[far], floor, out=of_mates)
        mass[far] = E_same[far].sum(1)
    log_same, log_total = _log_mass(mass, same_shift), _log_mass(E.sum(1), total_shift)
    terms, scale_same, scale_all = anchor_scales(
        log_same, log_total, same_shift[:, 0], total_shift[:, 0], objective
    )
    return terms, E.mul_(scale_all.neg_()).addcmul_(E_same, scale_same)


def anchor_scales(log_same, log_total, same_shift, total_shift, objective: str):
    """Terms of f or g per anchor, and the factors of their gradient through log k.

    With S the class-mate mask and P_ij = k_ij / sum_k k_ik,
    d(term_i)/d(log k_ij) = P_ij (alpha_i S_ij - beta_i): for f, alpha = 1 and beta = p_i;
    for g, alpha = 1 / p_i and beta = 1 (the paper's eqs. 5 and 7 before the chain rule).
    The kernel values come in two arrays, each shifted so that neither underflows:
    E_ij = k_ij / exp(total_shift_i) over all neighbours and E'_ij = k_ij / exp(same_shift_i)
    over the class mates. ``log_same`` and ``log_total`` are log sum_{j in C_i} k_ij and
    log sum_j k_ij (-inf without a class mate). Returns the terms and the columns (b, 1)
    that multiply E' (the alpha part) and E (the beta part). An anchor without a class
    mate adds nothing.
    """
    has_mate = log_same > -math.inf  # finite: a positive mass, shifted by a finite logit
    log_p = torch.where(has_mate, log_same - log_total, -math.inf)
    if objective == "f":  # alpha = 1
        terms = beta = log_p.exp()
        log_scale_same = same_shift - log_total
    else:  # log alpha = -log p_i, so log alpha + same_shift - log_total = same_shift - log_same
        terms, beta = torch.where(has_mate, log_p, 0.0), 1.0
        log_scale_same = same_shift - log_same
    # an anchor without a class mate (or without any neighbour: log_total = -inf) adds nothing
    scale_same = torch.where(has_mate, log_scale_same.exp(), 0.0)
    scale_all = torch.where(has_mate, beta * (total_shift - log_total).exp(), 0.0)
    return terms, scale_same[:, None], scale_all[:, None]


@dataclass(frozen=True)
class McmlTotals:
    """What couples MCML's pairs across blocks: log of the sum of k over all pairs, and the
    number of same-class pairs."""

    log_norm: float
    n_same: int


@torch.no_grad()
def mcml_value_and_weights(
    log_k: torch.Tensor, mates: torch.Tensor, totals: McmlTotals | None = None
) -> tuple[float, torch.Tensor]:
    """MCML's value and G_ij = d(value)/d(log k_ij) = S_ij / N - q_ij over a block of pairs.

    -KL(P || Q) = mean over same-class pairs of log q_ij + log N, for N same-class pairs
    (``mates``, which must leave out pairs that are no neighbour). With ``totals`` None the
    block is all the pairs and the value is the whole -KL; given the totals of all blocks,
    the value is this block's share sum_same(log k) / N, and the whole is the sum of the
    shares - log_norm + log N (``mcml_whole``). 0 with no gradient when no pair shares a
    class (nothing to learn).
    """
    floor = _floor(log_k.dtype)
    whole = totals is None
    if whole:  # the normaliser from the same exp pass that gives q
        shift = float(log_k.max())
        G = _exp_shifted(log_k, shift, floor)
        total = float(G.sum())
        totals = McmlTotals(shift + math.log(total), int(torch.count_nonzero(mates)))
        G.div_(-total)
    else:
        G = _exp_shifted(log_k, totals.log_norm, floor).neg_()
    if not totals.n_same:
        return 0.0, G.zero_()
    G.add_(mates, alpha=1.0 / totals.n_same)
    share = float(torch.where(mates, log_k, 0.0).sum()) / totals.n_same
    return (mcml_whole(share, totals) if whole else share), G


def mcml_whole(shares: float, totals: McmlTotals) -> float:
    """-KL from the sum of every block's share (``mcml_value_and_weights``)."""
    return shares - totals.log_norm + math.log(totals.n_same) if totals.n_same else 0.0


def _imprecise(mass: torch.Tensor, floor: float, n_columns: int) -> torch.Tensor:
    """Rows whose class-mate mass is positive but so small that the floored values of a row
    (at most ``n_columns`` of e^floor) could change it by more than float32 keeps (2^-24)."""
    return (mass > 0) & (mass < n_columns * math.exp(floor) * 2.0**24)


def _floor(dtype: torch.dtype) -> float:
    """Shifted log-similarities are raised to at least this: e^floor is about 1e-19 in
    float32, far below any sum that matters, and its products with the gradients' factors
    stay normal floats (subnormal arithmetic is many times slower on CPUs)."""
    return math.log(torch.finfo(dtype).tiny) / 2.0


def _exp_shifted(logits: torch.Tensor, shift, floor: float, out: torch.Tensor | None = None) -> torch.Tensor:
    """exp(logits - shift), 0 where a logit is -inf; values below e^floor are floored.
    ``out=logits`` works in place."""
    excluded = logits == -math.inf
    E = logits.sub(shift) if out is None else torch.sub(logits, shift, out=out)
    return E.clamp_(min=floor).exp_().masked_fill_(excluded, 0.0)


def _row_shift(logits: torch.Tensor) -> torch.Tensor:
    """Each row's largest logit, as a column; 0 for a row with no finite logit."""
    return logits.amax(1, keepdim=True).nan_to_num_(nan=0.0, posinf=0.0, neginf=0.0)


def _log_mass(E_sums: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """log of the unshifted sums, -inf where a sum is 0."""
    return shift[:, 0] + torch.log(E_sums)
