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

Every schedule takes kernel values by one shift rule (``shifted_values``, ``far``): each
anchor's shifted by its nearest class mate, so neither huge distances nor float32 lose the
terms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..config.rules import OBJECTIVES, PER_ANCHOR_OBJECTIVES

__all__ = [
    "LARGEST_EXPONENT",
    "OBJECTIVES",
    "PER_ANCHOR_OBJECTIVES",
    "McmlTotals",
    "anchor_scales",
    "exp_capped_",
    "far",
    "floor_exponent",
    "mcml_value_and_weights",
    "per_anchor_terms_and_weights",
    "shifted_values",
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

    ``mates`` (bool, the shape of ``log_k``) marks each anchor's class mates. The kernel
    values follow the shift rule (``shifted_values``): each row shifted by its nearest class
    mate, so p_i keeps its digits in float32 however far apart the map puts points; a row
    that rule leaves ``far`` has its sum over all neighbours taken again, shifted by the
    row's largest. A row without a class mate: term 0, weights 0. ``log_k`` is left as it was.
    """
    if objective not in PER_ANCHOR_OBJECTIVES:
        raise ValueError(f"per-anchor objective must be one of {PER_ANCHOR_OBJECTIVES}, got {objective!r}")
    E = log_k.masked_fill(~mates, -math.inf)
    same_shift = _row_shift(E)  # the nearest class mate's log k
    E = shifted_values(log_k, same_shift, out=E)
    E_same = E * mates  # at most 1 each: never capped
    mass = E_same.sum(1)
    total_shift = same_shift.clone()
    total = E.sum(1)
    again = (far(total, log_k.shape[1]) | far(mass, log_k.shape[1])).nonzero()[:, 0]
    if len(again):  # a neighbour of another class far nearer than any class mate
        total_shift[again] = _row_shift(log_k[again])
        E[again] = shifted_values(log_k[again], total_shift[again])
        total[again] = E[again].sum(1)
    log_same, log_total = _log_mass(mass, same_shift), _log_mass(total, total_shift)
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
    whole = totals is None
    if whole:  # the normaliser from the same exp pass that gives q
        shift = float(log_k.max())
        G = shifted_values(log_k, shift)
        total = float(G.sum())
        totals = McmlTotals(shift + math.log(total), int(torch.count_nonzero(mates)))
        G.div_(-total)
    else:
        G = shifted_values(log_k, totals.log_norm).neg_()
    if not totals.n_same:
        return 0.0, G.zero_()
    G.add_(mates, alpha=1.0 / totals.n_same)
    share = float(torch.where(mates, log_k, 0.0).sum()) / totals.n_same
    return (mcml_whole(share, totals) if whole else share), G


def mcml_whole(shares: float, totals: McmlTotals) -> float:
    """-KL from the sum of every block's share (``mcml_value_and_weights``)."""
    return shares - totals.log_norm + math.log(totals.n_same) if totals.n_same else 0.0


# The shift rule, shared by every schedule (``gaussian.GaussianBlocks`` finds the same shift
# with products over each class's block): an anchor's kernel values are shifted so that its
# nearest class mate's is 1, floored at e^``floor_exponent`` and capped at
# e^LARGEST_EXPONENT. Its class-mate mass is then at least 1 however far apart the map puts
# points, and sums over any n that fits in memory stay finite. A row is ``far`` where a
# mass falls outside what that keeps exact: below, the floored values could change it by
# more than the dtype keeps (an inexact product, as TF32's, may miss the shift); above, a
# value may have been capped (a point of another class far nearer than any class mate),
# with a margin of one below the cap for an exp that rounds e^40 down. A far row's sum over
# all neighbours is taken again, shifted by the row's largest.
LARGEST_EXPONENT = 40.0


def floor_exponent(dtype: torch.dtype) -> float:
    """Shifted log-similarities are raised to at least this: e^floor is about 1e-19 in
    float32, far below any sum that matters, and its products with the gradients' factors
    stay normal floats (subnormal arithmetic is many times slower on CPUs)."""
    return math.log(torch.finfo(dtype).tiny) / 2.0


def exp_capped_(exponents: torch.Tensor) -> torch.Tensor:
    """exp of shifted log-similarities, floored and capped as the shift rule says, in place."""
    return exponents.clamp_(min=floor_exponent(exponents.dtype), max=LARGEST_EXPONENT).exp_()


def far(mass: torch.Tensor, n_columns: int) -> torch.Tensor:
    """Rows whose shifted mass, a sum of at most ``n_columns`` values, is positive but not
    kept exact by the shift rule: small enough that floored values could change it by more
    than float32 keeps (2^-24), or large enough to hold a capped value."""
    smallest = n_columns * math.exp(floor_exponent(mass.dtype)) * 2.0**24
    return (mass > 0) & ((mass < smallest) | (mass >= math.exp(LARGEST_EXPONENT - 1.0)))


def shifted_values(logits: torch.Tensor, shift, out: torch.Tensor | None = None) -> torch.Tensor:
    """exp(logits - shift) as the shift rule takes it, 0 where a logit is -inf (no
    neighbour). ``out`` may be ``logits`` itself, or another matrix of its shape."""
    excluded = logits == -math.inf
    E = logits.sub(shift) if out is None else torch.sub(logits, shift, out=out)
    return exp_capped_(E).masked_fill_(excluded, 0.0)


def _row_shift(logits: torch.Tensor) -> torch.Tensor:
    """Each row's largest logit, as a column; 0 for a row with no finite logit."""
    return logits.amax(1, keepdim=True).nan_to_num_(nan=0.0, posinf=0.0, neginf=0.0)


def _log_mass(E_sums: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """log of the unshifted sums, -inf where a sum is 0."""
    return shift[:, 0] + torch.log(E_sums)
