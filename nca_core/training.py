"""The training loop: an encoder, an objective and an optimiser, yielding snapshots.

It knows nothing about datasets, estimators or user interfaces, nor which encoder it
trains. By default each anchor takes its neighbours from the whole training set; memory
stays bounded by working in blocks of anchors against all references and
back-propagating block by block (see ``objective_and_gradient``). Minibatch training of a
deep encoder can instead take neighbours from a memory bank of all points' embeddings
(Wu et al., 2018) or from the batch alone.
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
from .distributed import LOCAL, DataParallelGroup, active_world_size
from .kernels import GaussianKernel
from .losses import (
    PER_ANCHOR_OBJECTIVES,
    block_terms_and_gradients,
    kernel_block_gradients,
    log_class_mass,
    mcml_objective,
    objective_terms,
    pair_log_kernel,
)

__all__ = [
    "NEIGHBOR_SOURCES",
    "OPTIMIZERS",
    "MemoryBank",
    "Snapshot",
    "TrainingDiverged",
    "objective_and_gradient",
    "train",
]

OPTIMIZERS = ("lbfgs", "adam", "sgd")
NEIGHBOR_SOURCES = ("all", "memory", "batch")
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
    components : ndarray of shape (n_components, n_features) or None
        A copy of the map A; None for a nonlinear encoder.
    embedding : ndarray of shape (n_display, n_components), float32
        The display subset mapped by A.
    train_accuracy, test_accuracy : float or None
        kNN accuracy (leave-one-out on training points, and on the test set) when asked for.
    dof : float or None
        The Student-t kernel's degrees of freedom (learnt or fixed); None for the Gaussian.
    """

    epoch: int
    objective: float
    elapsed: float
    components: np.ndarray | None
    embedding: np.ndarray
    train_accuracy: float | None = None
    test_accuracy: float | None = None
    dof: float | None = None


def objective_and_gradient(
    encoder: nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
    objective: str,
    anchors: torch.Tensor | None = None,
    weight_decay: float = 0.0,
    block_elements: int = DEFAULT_BLOCK_ELEMENTS,
    kernel: nn.Module | None = None,
    group=LOCAL,
) -> float:
    """Mean objective of ``anchors`` (all points if None) against all of X; grads to encoder.

    Accumulates the gradient of ``-(objective) + weight_decay * penalty`` into the
    encoder's (and a learnable kernel's) ``.grad`` and returns the objective: the mean
    per anchor for "f" and "g", -KL for "mcml". ``y`` must be sorted ascending (``train``
    sorts the data once). The embedding Z of all n points is computed once; its gradient
    is summed block by block, so at most one (block, n) matrix is alive; then it flows
    through the encoder in one backward pass. With the Gaussian kernel and "f" or "g"
    each block's gradient comes from the closed form in ``losses.block_terms_and_gradients``;
    otherwise from autograd on the block.
    Cost per call: O(n_anchors * n * d) plus two passes of the encoder over X.

    ``group`` (see ``distributed``) shares the work between processes: each embeds its
    rows and takes its share of the anchors; the sums are all-reduced.
    """
    n = len(X)
    if bool((y[1:] < y[:-1]).any()):
        raise ValueError("objective_and_gradient needs X and y sorted by class")
    if anchors is None:
        anchors = torch.arange(n, device=X.device)
    else:
        anchors = anchors[torch.argsort(y[anchors], stable=True)]
    Z_mine, Z_ref = group.embed(encoder, X)
    mine = group.my_anchors(anchors)
    if not _closed_form(kernel, objective):
        kernel = kernel if kernel is not None else GaussianKernel()
        grad, grad_dof, value = _kernel_gradient(
            Z_ref, y, mine, objective, kernel, block_elements, len(anchors)
        )
    else:
        bounds = _class_bounds(y)
        block = max(1, block_elements // n)
        total = torch.zeros((), dtype=torch.float64, device=X.device)
        with torch.no_grad():
            grad = torch.zeros_like(Z_ref)
            for start in range(0, len(mine), block):
                a = mine[start : start + block]
                terms, grad_a, grad_r = block_terms_and_gradients(Z_ref[a], y[a], Z_ref, bounds, a, objective)
                total += terms.sum()
                grad.index_add_(0, a, grad_a)
                grad.add_(grad_r)
            grad.div_(-len(anchors))
        grad_dof, value = 0.0, total / len(anchors)
    if group.world_size > 1:
        grad = group.sum_(grad)
        scalars = group.sum_(
            torch.tensor([float(grad_dof), float(value)], dtype=torch.float64, device=X.device)
        )
        grad_dof, value = scalars.tolist()
    _backward(encoder, kernel, Z_mine, grad[group.rows], grad_dof, weight_decay, group.world_size)
    return float(value)


def _closed_form(kernel: nn.Module | None, objective: str) -> bool:
    return (kernel is None or isinstance(kernel, GaussianKernel)) and objective in PER_ANCHOR_OBJECTIVES


def _blocks(anchors: torch.Tensor, n_ref: int, block_elements: int) -> list[torch.Tensor]:
    size = max(1, block_elements // n_ref)
    return [anchors[start : start + size] for start in range(0, len(anchors), size)]


def _kernel_gradient(Z, y, anchors, objective, kernel, block_elements, count):
    """d(-objective)/dZ for anchors against all rows of Z, d(-objective)/d(dof), and the objective.

    Per-anchor objectives are averaged over ``count`` anchors (all processes' anchors
    when data-parallel). Uses ``losses.kernel_block_gradients`` block by block. MCML couples all pairs through
    its normaliser log sum k, so with several blocks that is computed in a first pass.
    """
    bounds = _class_bounds(y)
    blocks = _blocks(anchors, len(Z), block_elements)
    log_norm = n_same = None
    if objective == "mcml" and len(blocks) > 1:
        log_norm, n_same, _ = _mcml_totals(Z, y, blocks, kernel)
    grad = torch.zeros_like(Z)
    total, dof_total = 0.0, 0.0
    for a in blocks:
        value, grad_a, grad_r, grad_dof = kernel_block_gradients(
            Z[a], y[a], Z, bounds, a, objective, kernel, log_norm, n_same
        )
        grad.index_add_(0, a, grad_a).add_(grad_r)
        total += value
        dof_total += grad_dof or 0.0
    if objective == "mcml":
        if log_norm is not None:
            total = total - log_norm + math.log(n_same) if n_same else 0.0
        scale = -1.0
    else:
        total /= count
        scale = -1.0 / count
    return grad.mul_(scale), dof_total * scale, total


def _backward(encoder, kernel, Z, grad_Z, grad_dof, weight_decay, world_size=1) -> None:
    """Push d(loss)/dZ through the encoder, and d(loss)/d(dof) into a learnable kernel.

    Data-parallel, each process pushes its own rows' share and DDP averages over
    ``world_size`` processes, hence the factor that turns the average back into the sum.
    """
    loss = (Z * grad_Z).sum() * world_size
    if kernel is not None and kernel.learnable:
        loss = loss + kernel.dof * grad_dof
    if weight_decay:
        loss = loss + weight_decay * encoder.penalty()
    loss.backward()


def _mcml_totals(Z, y, blocks, kernel) -> tuple[float, int, float]:
    """log of the sum of k over all pairs, the number of same-class pairs, the sum of their log k."""
    log_norms, n_same, sum_same = [], 0, 0.0
    for a in blocks:
        logits = pair_log_kernel(Z[a], Z, a, kernel)
        same = (y[a, None] == y[None, :]) & torch.isfinite(logits)
        log_norms.append(torch.logsumexp(logits.flatten(), 0))
        n_same += int(same.sum())
        sum_same += torch.where(same, logits, 0.0).sum().item()
    return torch.logsumexp(torch.stack(log_norms), 0).item(), n_same, sum_same


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
    kernel: nn.Module | None = None,
    neighbors: str = "all",
    bank_momentum: float = 0.5,
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

    ``kernel`` (a module from ``kernels``; None is the Gaussian) turns log-similarities
    into p_ij; its parameters (a learnt Student-t dof) are trained with the encoder's.
    ``objective`` "mcml" maximises -KL(P || Q) (``losses.mcml_objective``).

    ``neighbors`` (minibatch optimisers): "all" recomputes every point's embedding at each
    step (exact); "memory" keeps a bank of all points' embeddings, each row refreshed as
    ``bank = m * bank + (1 - m) * z`` when its point is an anchor, and anchors take
    neighbours from the bank with gradients through the anchors only (cheap for deep
    encoders); "batch" takes neighbours from the batch alone.
    """
    if neighbors not in NEIGHBOR_SOURCES:
        raise ValueError(f"neighbors must be one of {NEIGHBOR_SOURCES}, got {neighbors!r}")
    if optimizer == "lbfgs" and neighbors != "all":
        raise ValueError(f"neighbors={neighbors!r} needs a minibatch optimizer (adam or sgd), not L-BFGS")
    if n_candidates and not (_closed_form(kernel, objective) and neighbors == "all"):
        raise ValueError("n_candidates works with the Gaussian kernel, objective f or g and neighbors='all'")
    X_display = X if X_display is None else X_display
    kernel = kernel if kernel is not None else GaussianKernel()
    order = torch.argsort(y, stable=True)
    X, y = X[order], y[order]
    group = LOCAL
    if active_world_size() > 1:
        if neighbors != "all" or n_candidates or objective not in PER_ANCHOR_OBJECTIVES:
            raise ValueError(
                "data-parallel training supports objectives f and g with neighbours from all points "
                "(neighbors='all', no n_candidates)"
            )
        group = DataParallelGroup(encoder, len(X))
    params = list(encoder.parameters()) + list(kernel.parameters())
    opt = _make_optimizer(optimizer, params, learning_rate)
    clock = 0.0
    bank = None
    if neighbors == "memory":
        with torch.no_grad():
            bank = MemoryBank(encoder(X), bank_momentum)

    def snapshot(epoch: int, value: float) -> Snapshot:
        train_acc = test_acc = None
        if evaluate is not None and (epoch % eval_every == 0 or epoch == max_iter):
            train_acc, test_acc = evaluate(encoder)
        with torch.no_grad():
            embedding = encoder(X_display).detach().to("cpu", torch.float32).numpy().copy()
            components = encoder.components
            if components is not None:
                components = components.detach().to("cpu", torch.float64).numpy().copy()
        dof = float(kernel.dof.detach()) if hasattr(kernel, "dof") else None
        return Snapshot(epoch, value, clock, components, embedding, train_acc, test_acc, dof)

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
        value = objective_and_gradient(
            encoder, X, y, objective, None, weight_decay, block_elements, kernel, group
        )
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
            return _evaluate_objective(encoder, kernel, X, y, objective, block_elements)

    with torch.no_grad():
        start_value = _evaluate_objective(encoder, kernel, X, y, objective, block_elements, generator)
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
        elif neighbors == "all":
            value = _minibatch_epoch(
                encoder,
                kernel,
                opt,
                X,
                y,
                objective,
                batch_size,
                weight_decay,
                generator,
                block_elements,
                group,
            )
        else:
            value = _local_epoch(
                encoder, kernel, opt, X, y, objective, batch_size, weight_decay, generator, bank
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


def _evaluate_objective(
    encoder, kernel, X, y, objective, block_elements, generator=None, max_pairs=4e8
) -> float:
    """The objective of all points, without gradients, in blocks.

    Beyond ``max_pairs`` anchor-reference pairs it is estimated on a random sample of
    anchors (still against all references), so the first frame of a large run is quick.
    """
    Z = encoder(X)
    n = len(X)
    anchors = torch.arange(n, device=X.device)
    if n * n > max_pairs:
        sample = torch.randperm(n, generator=generator)[: int(max_pairs // n)].to(X.device)
        anchors = torch.sort(sample).values
    blocks = _blocks(anchors, n, block_elements)
    if objective == "mcml":
        log_norm, n_same, sum_same = _mcml_totals(Z, y, blocks, kernel)
        return sum_same / n_same - log_norm + math.log(n_same) if n_same else 0.0
    total = 0.0
    if _closed_form(kernel, objective):
        bounds = _class_bounds(y)
        for a in blocks:
            total += block_terms_and_gradients(Z[a], y[a], Z, bounds, a, objective)[0].sum().item()
    else:
        for a in blocks:
            total += objective_terms(log_class_mass(Z[a], y[a], Z, y, a, kernel), objective).sum().item()
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


def _minibatch_epoch(
    encoder, kernel, opt, X, y, objective, batch_size, weight_decay, generator, block_elements, group=LOCAL
):
    """One pass over all anchors in random batches; neighbours come from all of X."""
    order = torch.randperm(len(X), generator=generator).to(X.device)
    total, seen = 0.0, 0
    for start in range(0, len(X), batch_size):
        anchors = order[start : start + batch_size]
        opt.zero_grad()
        value = objective_and_gradient(
            encoder, X, y, objective, anchors, weight_decay, block_elements, kernel, group
        )
        opt.step()
        total += value * len(anchors)
        seen += len(anchors)
    return total / seen


class MemoryBank:
    """Embeddings of all training points, refreshed with momentum (Wu et al., 2018).

    Row i holds a running average of z_i over the steps where i was an anchor:
    ``bank[i] = momentum * bank[i] + (1 - momentum) * z_i``. Rows carry no gradient.
    """

    def __init__(self, initial: torch.Tensor, momentum: float = 0.5):
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"bank momentum must be in [0, 1), got {momentum!r}")
        self.embeddings = initial.detach().clone()
        self.momentum = momentum

    @torch.no_grad()
    def update(self, index: torch.Tensor, Z: torch.Tensor) -> None:
        rows = self.embeddings[index]
        self.embeddings[index] = rows.mul_(self.momentum).add_(Z.detach(), alpha=1.0 - self.momentum)


def _local_epoch(encoder, kernel, opt, X, y, objective, batch_size, weight_decay, generator, bank):
    """One pass in random batches; neighbours from the memory bank, or the batch when bank is None.

    With the bank, gradients flow through the anchors only, so each step's gradient comes
    from the closed form against the (class-sorted) bank without autograd over the
    (batch, n) matrix.
    """
    order = torch.randperm(len(X), generator=generator).to(X.device)
    bounds = _class_bounds(y)
    total, seen = 0.0, 0
    for start in range(0, len(X), batch_size):
        anchors = order[start : start + batch_size]
        if len(anchors) < 2 and bank is None:
            continue
        anchors = anchors[torch.argsort(y[anchors], stable=True)]
        opt.zero_grad()
        Z_a = encoder(X[anchors])
        if bank is None:
            index = torch.arange(len(anchors), device=X.device)
            if objective == "mcml":
                value = mcml_objective(Z_a, y[anchors], Z_a, y[anchors], index, kernel)
            else:
                log_p = log_class_mass(Z_a, y[anchors], Z_a, y[anchors], index, kernel)
                value = objective_terms(log_p, objective).mean()
            loss = -value + (weight_decay * encoder.penalty() if weight_decay else 0.0)
            if loss.requires_grad:
                loss.backward()
            value = value.item()
        else:
            value, grad_a, _, grad_dof = kernel_block_gradients(
                Z_a.detach(), y[anchors], bank.embeddings, bounds, anchors, objective, kernel, ref_grad=False
            )
            scale = -1.0 if objective == "mcml" else -1.0 / len(anchors)
            value = value if objective == "mcml" else value / len(anchors)
            _backward(encoder, kernel, Z_a, grad_a * scale, (grad_dof or 0.0) * scale, weight_decay)
            bank.update(anchors, Z_a)
        opt.step()
        total += value * len(anchors)
        seen += len(anchors)
    return total / seen if seen else 0.0
