"""The whole-matrix engine for small linear problems: f or g and its gradient in A, float64.

For a few hundred points the blockwise engine (``gradients``) spends its time on the fixed
cost of many small torch calls and an autograd pass through the encoder, not on
arithmetic. Here one evaluation is about twenty calls on (n, n) float64 matrices, and the
gradient comes straight in A (the paper's eqs. 5 and 7, written with a neighbour-weight
matrix), so full-batch L-BFGS on iris or wine takes a few milliseconds, near scikit-learn's
time (benchmarks/sklearn_parity.py). Float64 throughout also makes the objective exact for
anchors whose class mates are far away.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["DENSE_MAX_SAMPLES", "DenseObjective"]

# Up to this many points the (n, n) float64 matrices stay in cache and one evaluation
# costs less than the blockwise engine's calls; beyond it they do not, and the blockwise
# float32 engine is faster (chosen by timing both on one thread).
DENSE_MAX_SAMPLES = 400


class DenseObjective:
    """n * (-objective + weight_decay * penalty) and its gradient, for a flat vector of the
    map's parameters: A (d, D) raveled, or a diagonal map's D scales (a one-dimensional
    parameter). Gaussian kernel, objective f or g.

    The training side decides when it applies (``training.epochs.dense_applies``). The
    arithmetic is numpy's: on (n, n) matrices this small, a numpy call costs a fraction of
    a torch call, and the call count is what the time is made of.
    """

    def __init__(self, problem):
        X = problem.X.detach().cpu().double().numpy()
        # centred once: every embedding is then centred too, so |a|^2 + |b|^2 - 2ab keeps
        # its digits for data far from the origin (distances and gradients are unchanged)
        self.X = X - X.mean(0)
        y = problem.y.cpu().numpy()
        self.same = y[:, None] == y[None, :]
        np.fill_diagonal(self.same, False)
        self.has_mate = self.same.any(1)
        self.same_weights = self.same.astype(np.float64)
        self.objective, self.weight_decay = problem.objective, problem.weight_decay
        self.shape = tuple(problem.parameters[0].shape)
        self.diagonal = len(self.shape) == 1

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(loss, gradient) at the flat float64 vector ``x`` (``lbfgs.LBFGS``'s interface).
        Fastest inside ``util.threads.numpy_blas_on_one_thread()``: BLAS's threads cost more than they
        share on matrices this small."""
        params = x.reshape(self.shape)
        Z = self.X * params if self.diagonal else self.X @ params.T
        terms, W = self._terms_and_weights(Z)
        # d(sum of terms)/dZ = 2 ((W + W^T) Z - diag(colsum W) Z), rows of W summing to 0
        grad_Z = 2.0 * ((W + W.T) @ Z - W.sum(0)[:, None] * Z)
        grad = (grad_Z * self.X).sum(0) if self.diagonal else grad_Z.T @ self.X
        loss = -float(terms.sum())
        if self.weight_decay:
            n = len(self.X)
            loss += n * self.weight_decay * float((params * params).sum())
            grad = grad - 2.0 * n * self.weight_decay * params
        return loss, -grad.reshape(-1)

    def _terms_and_weights(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per anchor p_i (f) or log p_i (g), and W_ij = d(sum of terms)/d(logit_ij).

        With S the same-class mask and P the neighbour probabilities, W = P S - p_i P for f
        and W = P S / p_i - P for g (eqs. 5 and 7). For g, an anchor whose class mates are
        all so far away that p_i underflows has P S / p_i taken from its class's own
        softmax instead, so log p_i stays exact. Anchors without a class mate add nothing.
        """
        # -|z_i - z_j|^2 less the row's constant -|z_i|^2: every use below (softmax, log p_i)
        # is a difference within a row: two (n, n) passes fewer
        logits = Z @ Z.T
        logits *= 2.0
        logits -= (Z * Z).sum(1)[None, :]
        np.fill_diagonal(logits, -math.inf)
        P = logits - logits.max(1, keepdims=True)
        # floored so that no product below (p_i P_ij, W's sums) turns subnormal: subnormal
        # arithmetic is many times slower, for terms that add nothing
        np.maximum(P, _LOWEST_EXPONENT, out=P)
        np.exp(P, out=P)
        np.fill_diagonal(P, 0.0)
        P /= P.sum(1, keepdims=True)
        same = P * self.same_weights
        p = same.sum(1, keepdims=True)
        if self.objective == "f":
            same -= p * P
            return p, same
        mate = self.has_mate[:, None]
        if bool((p[mate] < _SMALLEST_P).any()):  # class mates far away: their own softmax
            same, log_same = _softmax(np.where(self.same, logits, -math.inf), self.has_mate)
            log_p = log_same - _logsumexp_rows(logits)
        else:
            with np.errstate(divide="ignore"):  # rows without class mates, replaced below
                log_p = np.log(p)
            same /= np.where(mate, p, 1.0)
        same -= P
        same *= mate
        return np.where(mate, log_p, 0.0), same


# Logits under a row's largest by more than this count as that much under: e^-300 is
# about 5e-131, so P_ij >= 5e-131 / n and p_i P_ij stays a normal float64 (over 2.2e-308).
_LOWEST_EXPONENT = -300.0
# Below this p_i, g takes the class's own softmax: the floor above adds at most n e^-300
# (about 1e-128 for n = DENSE_MAX_SAMPLES) to p_i, a relative 1e-28 at 1e-100.
_SMALLEST_P = 1e-100


def _logsumexp_rows(logits: np.ndarray) -> np.ndarray:
    """log sum exp of each row, as a column; every row has a finite entry."""
    shift = logits.max(1, keepdims=True)
    return np.log(np.exp(logits - shift).sum(1, keepdims=True)) + shift


def _softmax(logits: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's softmax and log of its normaliser (as columns); rows not in ``rows`` (no
    finite logit) give zeros and 0."""
    shift = np.where(rows[:, None], logits.max(1, keepdims=True), 0.0)
    E = np.exp(logits - shift)
    total = np.where(rows[:, None], E.sum(1, keepdims=True), 1.0)
    return E / total, np.log(total) + shift
