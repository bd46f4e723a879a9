"""The objectives by autograd, written the plain way: the reference the engine is tested
against (the library computes them only in closed form, ``nca_core.objective``).

Each holds an (n_anchor, n_ref) matrix and works in log space, so huge distances give
neither NaN nor inf.
"""

from __future__ import annotations

import math

import torch

from nca_core.objective.blocks import squared_distances


def pair_log_kernel(Z_anchor, Z_ref, anchor_index=None, kernel=None):
    """log k(||z_i - z_j||^2) for anchors i against references j, -inf where j is i.
    ``kernel`` None is the Gaussian, -d^2; ``anchor_index`` each anchor's row among the
    references (None when disjoint)."""
    sq = squared_distances(Z_anchor, Z_ref)
    logits = -sq if kernel is None else kernel(sq)
    if anchor_index is not None:
        is_self = anchor_index[:, None] == torch.arange(len(Z_ref), device=logits.device)
        logits = logits.masked_fill(is_self, -math.inf)
    return logits


def log_class_mass(Z_anchor, y_anchor, Z_ref, y_ref, anchor_index=None, kernel=None):
    """log p_i of each anchor against the references; -inf without a class mate."""
    logits = pair_log_kernel(Z_anchor, Z_ref, anchor_index, kernel)
    same = y_anchor[:, None] == y_ref[None, :]
    log_all = torch.logsumexp(logits, dim=1)
    log_same = torch.logsumexp(logits.masked_fill(~same, -math.inf), dim=1)
    return log_same - log_all


def objective_terms(log_p, objective):
    """p_i for f, log p_i for g; an anchor with p_i = 0 (no class mate) adds 0 to g."""
    if objective == "f":
        return log_p.exp()
    return torch.where(torch.isfinite(log_p), log_p, torch.zeros_like(log_p))


def mcml_objective(Z_anchor, y_anchor, Z_ref, y_ref, anchor_index=None, kernel=None):
    """-KL(P || Q) over the pairs (anchor i, reference j), j not i: the mean over same-class
    pairs of log q_ij, plus log N; 0 when no pair shares a class."""
    logits = pair_log_kernel(Z_anchor, Z_ref, anchor_index, kernel)
    same = (y_anchor[:, None] == y_ref[None, :]) & torch.isfinite(logits)
    n_same = int(same.sum())
    if n_same == 0:
        return logits.new_zeros(())
    mean_same = torch.where(same, logits, 0.0).sum() / n_same
    return mean_same - torch.logsumexp(logits.flatten(), 0) + math.log(n_same)


def reference_objective(Z, y, objective="f", kernel=None):
    """f, g or MCML of a whole embedding, each point an anchor against all others."""
    y = torch.as_tensor(y, device=Z.device)
    index = torch.arange(len(Z), device=Z.device)
    if objective == "mcml":
        return mcml_objective(Z, y, Z, y, index, kernel)
    return objective_terms(log_class_mass(Z, y, Z, y, index, kernel), objective).sum()


def make_problem(seed=0, n=40, D=5, d=2, n_classes=3):
    """A small random problem in float64 numpy: X (n, D), labels y, a map A (d, D)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    y = rng.integers(0, n_classes, n)
    A = rng.normal(size=(d, D)) * 0.7
    return X, y, A
