"""The training loop: an encoder, an objective and an optimiser, yielding snapshots.

It knows nothing about datasets, estimators or user interfaces. Each anchor takes its
neighbours from the whole training set; memory stays bounded by working in blocks of
anchors against all references and back-propagating block by block (see
``objective_and_gradient``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from . import knn
from .losses import block_terms_and_gradients, objective_terms

__all__ = ["OPTIMIZERS", "Snapshot", "TrainingDiverged", "objective_and_gradient", "train"]

OPTIMIZERS = ("lbfgs", "adam", "sgd")
DEFAULT_BLOCK_ELEMENTS = 1 << 23


class TrainingDiverged(FloatingPointError):
    """The objective or the map stopped being finite; the last finite state is kept."""


@dataclass(frozen=True)
class Snapshot:
    """The state of a run after one epoch (or one L-BFGS iteration); epoch 0 is the start.

    Attributes
    ----------
    epoch : int
    objective : float
        The objective per anchor: mean p_i for "f" (expected leave-one-out accuracy),
        mean log p_i for "g". For minibatch optimisers, the mean over the epoch's batches.
    elapsed : float
        Seconds of training since the run started (evaluation time excluded).
    components : ndarray of shape (n_components, n_features)
        A copy of the map A.
    embedding : ndarray of shape (n_display, n_components), float32
        The display subset mapped by A.
    train_accuracy, test_accuracy : float or None
        kNN accuracy (leave-one-out on training points, and on the test set) when asked for.
    """

    epoch: int
    objective: float
    elapsed: float
    components: np.ndarray
    embedding: np.ndarray
    train_accuracy: float | None = None
    test_accuracy: float | None = None


def objective_and_gradient(
    encoder: nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
    objective: str,
    anchors: torch.Tensor | None = None,
    weight_decay: float = 0.0,
    block_elements: int = DEFAULT_BLOCK_ELEMENTS,
) -> float:
    """Mean objective of ``anchors`` (all points if None) against all of X; grads to encoder.

    Accumulates the gradient of ``-(mean objective) + weight_decay * penalty`` into the
    encoder's ``.grad`` and returns the mean objective. ``y`` must be sorted ascending
    (``train`` sorts the data once). The embedding Z of all n points is computed once; its
    gradient is summed block by block from the closed form in
    ``losses.block_terms_and_gradients``, so at most one (block, n) matrix is alive; then
    it flows through the encoder in one backward pass.
    Cost per call: O(n_anchors * n * d) plus two passes of the encoder over X.
    """
    n = len(X)
    if bool((y[1:] < y[:-1]).any()):
        raise ValueError("objective_and_gradient needs X and y sorted by class")
    if anchors is None:
        anchors = torch.arange(n, device=X.device)
    else:
        anchors = anchors[torch.argsort(y[anchors], stable=True)]
    bounds = _class_bounds(y)
    Z = encoder(X)
    block = max(1, block_elements // n)
    total = 0.0
    with torch.no_grad():
        Z_ref = Z.detach()
        grad = torch.zeros_like(Z_ref)
        for start in range(0, len(anchors), block):
            a = anchors[start : start + block]
            terms, grad_a, grad_r = block_terms_and_gradients(Z_ref[a], y[a], Z_ref, bounds, a, objective)
            total += terms.sum().item()
            grad.index_add_(0, a, grad_a)
            grad.add_(grad_r)
        grad.div_(-len(anchors))
    loss = (Z * grad).sum()
    if weight_decay:
        loss = loss + weight_decay * encoder.penalty()
    loss.backward()
    return total / len(anchors)


def _class_bounds(y: torch.Tensor) -> list[int]:
    """Row where each class starts in sorted labels, plus n at the end."""
    counts = torch.bincount(y)
    return [0, *torch.cumsum(counts, 0).tolist()]


def _make_optimizer(name: str, params, learning_rate: float) -> torch.optim.Optimizer:
    if name == "lbfgs":
        return torch.optim.LBFGS(
            params, lr=learning_rate, max_iter=1, history_size=20, line_search_fn="strong_wolfe"
        )
    if name == "adam":
        return torch.optim.Adam(params, lr=learning_rate)
    if name == "sgd":
        return torch.optim.SGD(params, lr=learning_rate, momentum=0.9, nesterov=True)
    raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {name!r}")


def _all_finite(encoder: nn.Module) -> bool:
    return all(bool(torch.isfinite(p).all()) for p in encoder.parameters())


def train(
    encoder: nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    objective: str = "f",
    optimizer: str = "lbfgs",
    max_iter: int = 50,
    tol: float = 1e-5,
    learning_rate: float = 1.0,
    batch_size: int = 512,
    weight_decay: float = 0.0,
    X_display: torch.Tensor | None = None,
    evaluate: Callable[[nn.Module], tuple[float | None, float | None]] | None = None,
    eval_every: int = 1,
    generator: torch.Generator | None = None,
    block_elements: int = DEFAULT_BLOCK_ELEMENTS,
    n_candidates: int | None = None,
    candidate_refresh: int = 1,
) -> Iterator[Snapshot]:
    """Train ``encoder`` in place and yield a Snapshot at the start and after each epoch.

    An epoch is one L-BFGS iteration (full batch) or one pass over all anchors in
    minibatches of ``batch_size`` (Adam, SGD). Stops after ``max_iter`` epochs or when the
    objective changes by less than ``tol`` relative to its size (``tol=0``: never). Raises TrainingDiverged,
    with the encoder restored to its last finite state, when the objective or map stops
    being finite. Closing the generator simply stops; the encoder keeps what it learnt.

    With ``n_candidates`` (minibatch optimisers), each anchor's neighbours are its
    ``n_candidates`` nearest points in the current embedding plus its nearest class mates,
    found again every ``candidate_refresh`` epochs: p_ij falls off so fast with distance
    that the rest hardly matter, and each step then costs O(batch * n_candidates * d)
    instead of O(batch * n * d).
    """
    X_display = X if X_display is None else X_display
    order = torch.argsort(y, stable=True)
    X, y = X[order], y[order]
    params = list(encoder.parameters())
    opt = _make_optimizer(optimizer, params, learning_rate)
    clock = 0.0

    def snapshot(epoch: int, value: float) -> Snapshot:
        train_acc = test_acc = None
        if evaluate is not None and (epoch % eval_every == 0 or epoch == max_iter):
            train_acc, test_acc = evaluate(encoder)
        with torch.no_grad():
            embedding = encoder(X_display).detach().to("cpu", torch.float32).numpy().copy()
            components = encoder.components.detach().to("cpu", torch.float64).numpy().copy()
        return Snapshot(epoch, value, clock, components, embedding, train_acc, test_acc)

    # torch's L-BFGS re-evaluates the starting point of every step, which is where the
    # previous line search ended: remember the last evaluation to skip that repeat.
    evaluated: dict = {}

    def same_point() -> bool:
        return bool(evaluated) and all(torch.equal(p, q) for p, q in zip(params, evaluated["at"]))

    def closure() -> torch.Tensor:
        opt.zero_grad()
        if same_point():
            for p, g in zip(params, evaluated["grad"]):
                p.grad = g.clone()
            return evaluated["loss"]
        value = objective_and_gradient(encoder, X, y, objective, None, weight_decay, block_elements)
        penalty = weight_decay * float(encoder.penalty().detach()) if weight_decay else 0.0
        loss = torch.tensor(-value + penalty, dtype=X.dtype)
        evaluated.update(
            value=value,
            loss=loss,
            at=[p.detach().clone() for p in params],
            grad=[p.grad.detach().clone() for p in params],
        )
        return loss

    def value_after_step() -> float:
        """The line search usually ends on a point it evaluated: reuse that value."""
        if same_point():
            return evaluated["value"]
        with torch.no_grad():
            return _evaluate_objective(encoder, X, y, objective, block_elements)

    with torch.no_grad():
        start_value = _evaluate_objective(encoder, X, y, objective, block_elements, generator)
    last_good = [p.detach().clone() for p in params]
    # A minibatch epoch reports the mean over its batches, each measured before its step,
    # so its first value says little about progress: compare from the second epoch on.
    previous = start_value if optimizer == "lbfgs" else None
    yield snapshot(0, start_value)

    for epoch in range(1, max_iter + 1):
        tick = time.perf_counter()
        if optimizer == "lbfgs":
            opt.step(closure)
            value = value_after_step()
        elif n_candidates:
            if (epoch - 1) % candidate_refresh == 0:
                candidates = _nearest_candidates(encoder, X, y, n_candidates, block_elements)
            value = _candidate_epoch(
                encoder, opt, X, y, candidates, objective, batch_size, weight_decay, generator
            )
        else:
            value = _minibatch_epoch(
                encoder, opt, X, y, objective, batch_size, weight_decay, generator, block_elements
            )
        clock += time.perf_counter() - tick

        if not (math.isfinite(value) and _all_finite(encoder)):
            with torch.no_grad():
                for p, good in zip(params, last_good):
                    p.copy_(good)
            raise TrainingDiverged(
                f"training diverged at epoch {epoch}: the objective became {value} "
                f"(learning rate {learning_rate:g}, optimizer {optimizer!r}). The map from "
                f"epoch {epoch - 1} is kept. Lower the learning rate, or standardise the inputs."
            )
        last_good = [p.detach().clone() for p in params]
        yield snapshot(epoch, value)
        if tol > 0 and previous is not None and abs(value - previous) <= tol * max(abs(value), abs(previous)):
            return
        previous = value


def _evaluate_objective(encoder, X, y, objective, block_elements, generator=None, max_pairs=4e8) -> float:
    """Mean objective of all points, without gradients, in blocks.

    Beyond ``max_pairs`` anchor-reference pairs it is estimated on a random sample of
    anchors (still against all references), so the first frame of a large run is quick.
    """
    Z = encoder(X)
    n = len(X)
    bounds = _class_bounds(y)
    anchors = torch.arange(n, device=X.device)
    if n * n > max_pairs:
        sample = torch.randperm(n, generator=generator)[: int(max_pairs // n)].to(X.device)
        anchors = torch.sort(sample).values
    block = max(1, block_elements // n)
    total = 0.0
    for start in range(0, len(anchors), block):
        a = anchors[start : start + block]
        total += block_terms_and_gradients(Z[a], y[a], Z, bounds, a, objective)[0].sum().item()
    return total / len(anchors)


@torch.no_grad()
def _nearest_candidates(encoder, X, y, k, block_elements) -> torch.Tensor:
    """For every point, its k nearest others and its k // 4 nearest class mates (n, k + k//4).

    A class mate already among the k nearest appears twice; ``_candidate_epoch`` masks
    such repeats so no neighbour is counted twice.
    """
    Z = encoder(X)
    n = len(Z)
    k = min(k, n - 1)
    k_same = max(1, k // 4)
    nearest = torch.empty(n, k, dtype=torch.long, device=X.device)
    for start, idx in knn.nearest_indices(Z, Z, k, torch.arange(n, device=X.device), block_elements):
        nearest[start : start + len(idx)] = idx
    mates = torch.empty(n, k_same, dtype=torch.long, device=X.device)
    for lo, hi in zip(_class_bounds(y)[:-1], _class_bounds(y)[1:]):
        members = torch.arange(lo, hi, device=X.device)
        if hi - lo < 2:
            mates[lo:hi] = members[:, None].expand(-1, k_same)  # only itself: masked later
            continue
        take = min(k_same, hi - lo - 1)
        for start, idx in knn.nearest_indices(Z[lo:hi], Z[lo:hi], take, members - lo, block_elements):
            rows = slice(lo + start, lo + start + len(idx))
            mates[rows, :take] = idx + lo
            mates[rows, take:] = (idx[:, :1] + lo).expand(-1, k_same - take)
    return torch.cat([nearest, mates], 1)


def _candidate_epoch(encoder, opt, X, y, candidates, objective, batch_size, weight_decay, generator):
    """One pass over all anchors in random batches; neighbours are each anchor's candidates."""
    order = torch.randperm(len(X), generator=generator).to(X.device)
    positions = torch.arange(candidates.shape[1], device=X.device)
    total, seen = 0.0, 0
    for start in range(0, len(X), batch_size):
        anchors = order[start : start + batch_size]
        C = candidates[anchors]
        # a repeat of an earlier column, or the anchor itself, is not a neighbour
        repeat = ((C[:, :, None] == C[:, None, :]) & (positions[None, :] < positions[:, None])[None]).any(2)
        invalid = repeat | (C == anchors[:, None])
        opt.zero_grad()
        Z = encoder(X)
        Z_a = Z[anchors]
        logits = -((Z[C] - Z_a[:, None, :]) ** 2).sum(-1)
        logits = logits.masked_fill(invalid, float("-inf"))
        same = y[C] == y[anchors][:, None]
        log_p = torch.logsumexp(logits.masked_fill(~same, float("-inf")), 1) - torch.logsumexp(logits, 1)
        terms = objective_terms(log_p, objective)
        loss = -terms.mean()
        if weight_decay:
            loss = loss + weight_decay * encoder.penalty()
        loss.backward()
        opt.step()
        total += terms.sum().item()
        seen += len(anchors)
    return total / seen


def _minibatch_epoch(encoder, opt, X, y, objective, batch_size, weight_decay, generator, block_elements):
    """One pass over all anchors in random batches; neighbours come from all of X."""
    order = torch.randperm(len(X), generator=generator).to(X.device)
    total, seen = 0.0, 0
    for start in range(0, len(X), batch_size):
        anchors = order[start : start + batch_size]
        opt.zero_grad()
        value = objective_and_gradient(encoder, X, y, objective, anchors, weight_decay, block_elements)
        opt.step()
        total += value * len(anchors)
        seen += len(anchors)
    return total / seen
