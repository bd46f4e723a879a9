"""Epoch strategies: how one epoch of training moves the encoder.

A ``Problem`` is what is optimised (an encoder and kernel on class-sorted data); an epoch
strategy owns an optimiser and knows how to take one epoch's steps on it. The training
loop (``loop.train``) takes one strategy and does not know which it has:

- ``LBFGSEpochs``: one full-batch L-BFGS iteration, neighbours from all points;
- ``MinibatchEpochs``: a pass over the anchors in batches, neighbours from all points;
- ``CandidateEpochs``: the same, neighbours from each anchor's nearest candidates and a
  uniform sample (approximate, O(n) per epoch);
- ``BankEpochs``: neighbours from a ``MemoryBank`` of all points' embeddings (Wu et al., 2018);
- ``BatchEpochs``: neighbours from the batch alone.

Each satisfies ``EpochStrategy`` and takes its settings from a fit's plan (``config.plan``);
``make_epochs`` picks the one the plan calls for.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch
from torch import nn

from ..config.plan import Plan
from ..config.rules import dense_suits
from ..objective.blocks import candidate_terms_and_gradients, kernel_block_gradients
from ..objective.dense import DenseObjective
from ..objective.engine import DEFAULT_BLOCK_ELEMENTS
from ..objective.function import nca_objective
from ..objective.kernels import GaussianKernel
from ..objective.weights import PER_ANCHOR_OBJECTIVES, terms_in_value
from ..objective.workspace import Workspace
from ..search import knn
from ..util.device import block_elements
from ..util.threads import torch_on_one_thread
from .distributed import LOCAL, DataParallelGroup, active_world_size
from .gradients import backward, evaluate_objective, objective_and_gradient
from .lbfgs import LBFGS
from .optimizers import SGD, Adam, cosine_factor

__all__ = [
    "BankEpochs",
    "BatchEpochs",
    "CandidateEpochs",
    "EpochStrategy",
    "LBFGSEpochs",
    "MemoryBank",
    "MinibatchEpochs",
    "Problem",
    "make_epochs",
    "make_optimizer",
]


@dataclass
class Problem:
    """An encoder and a kernel to train on X, y sorted by class (``sorted_by_class`` sorts).

    ``augment`` (``augmentation``), if given, alters the anchors of every minibatch step of
    the strategies that encode anchors on their own (memory bank, batch-only neighbours).
    """

    encoder: nn.Module
    X: torch.Tensor
    y: torch.Tensor
    objective: str = "f"
    kernel: nn.Module = field(default_factory=GaussianKernel)
    weight_decay: float = 0.0
    block_elements: int | None = None  # None: the device's (``util.device.block_elements``)
    group: object = LOCAL
    augment: Callable | None = None
    _scratch: threading.local = field(default_factory=threading.local, init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.block_elements is None:
            self.block_elements = block_elements(DEFAULT_BLOCK_ELEMENTS, self.X.device)

    @classmethod
    def sorted_by_class(cls, encoder: nn.Module, X: torch.Tensor, y: torch.Tensor, **options) -> Problem:
        if bool((y[1:] >= y[:-1]).all()):  # sorted already: no copy of X
            return cls(encoder, X, y, **options)
        order = torch.argsort(y, stable=True)
        return cls(encoder, X[order], y[order], **options)

    @property
    def workspace(self) -> Workspace:
        """This thread's reused matrices: two runs on one Problem in two threads (or L-BFGS's
        worker beside its caller) never write into each other's."""
        if not hasattr(self._scratch, "workspace"):
            self._scratch.workspace = Workspace()
        return self._scratch.workspace

    @property
    def parameters(self) -> list[torch.Tensor]:
        return list(self.encoder.parameters()) + list(self.kernel.parameters())

    def value(self, generator: torch.Generator | None = None) -> float:
        """The objective of all points, no gradients (sampled anchors on very large sets)."""
        return evaluate_objective(
            self.encoder, self.kernel, self.X, self.y, self.objective, self.block_elements, generator,
            workspace=self.workspace,
        )  # fmt: skip

    def gradient(self, anchors: torch.Tensor | None = None) -> float:
        """Accumulate the gradient of -objective (+ L2) into .grad; return the objective."""
        return objective_and_gradient(
            self.encoder, self.X, self.y, self.objective, anchors,
            self.weight_decay, self.block_elements, self.kernel, self.group, self.workspace,
        )  # fmt: skip

    def anchor_inputs(self, anchors: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        """The inputs of these anchors for one step: augmented afresh, if augmenting."""
        X = self.X[anchors]
        return X if self.augment is None else self.augment(X, generator)

    def penalty(self) -> float:
        return self.weight_decay * float(self.encoder.penalty().detach()) if self.weight_decay else 0.0


class EpochStrategy(Protocol):
    """What the training loop (``loop.train``) needs of a way to train a ``Problem``."""

    problem: Problem

    @property
    def converged(self) -> bool:
        """Ended by its own convergence test."""

    @property
    def stalled(self) -> bool:
        """Ended because it could not go on (no step lowered the loss)."""

    @property
    def message(self) -> str:
        """Why it ended, in words; "" while it goes on."""

    def start_value(self, generator: torch.Generator | None = None) -> float:
        """The objective before the first step."""

    def describe(self) -> str:
        """The optimiser and its step size, for messages."""

    def steps(self, epoch: int) -> Iterator[tuple[int, int, float]]:
        """Take one epoch's steps, yielding (steps done, steps in the epoch, mean objective so
        far); nothing when the strategy has already ended."""

    def finished(self, value: float, previous: float | None, tol: float) -> bool:
        """Whether training ends after an epoch with objective ``value``."""

    def close(self) -> None:
        """Release what the strategy holds (a worker thread); called once training ends."""


def dense_applies(problem: Problem) -> bool:
    """Whether the whole-matrix engine evaluates this problem: on the CPU, in one process,
    where ``rules.dense_suits`` says it suits."""
    return (
        problem.X.device.type == "cpu"
        and problem.group.world_size == 1
        and dense_suits(
            getattr(problem.encoder, "name", ""), problem.kernel.name, problem.objective, len(problem.X)
        )
    )


def make_optimizer(name: str, params, learning_rate: float):
    """A minibatch optimiser (``optimizers``): Adam, or SGD with Nesterov momentum."""
    if name == "adam":
        return Adam(params, lr=learning_rate)
    if name == "sgd":
        return SGD(params, lr=learning_rate, momentum=0.9)
    raise ValueError(f"minibatch optimizer must be 'adam' or 'sgd', got {name!r}")


# Fresh L-BFGS searches at most, after one on a float32 loss ends (``lbfgs.LBFGS``).
FLOAT32_RESTARTS = 5


class LBFGSEpochs:
    """One full-batch iteration of scipy's L-BFGS-B per epoch (``lbfgs.LBFGS``, float64).

    For f and g it minimises n * (-objective + penalty), the loss of scikit-learn's NCA with
    the same optimiser and tolerances, so both reach the same optimum from the same start;
    MCML's -KL is not a mean over points and is taken as it is. Small linear problems are
    evaluated by the whole-matrix float64 engine (``dense``), the others by the blockwise one.
    """

    def __init__(self, problem: Problem, plan: Plan):
        self.problem = problem
        tol = plan.tol
        self.scale = float(terms_in_value(problem.objective, len(problem.X)))
        x0 = np.concatenate([p.detach().cpu().double().numpy().ravel() for p in problem.parameters])
        if dense_applies(problem):
            self.lbfgs = LBFGS(DenseObjective(problem), x0, ftol=tol, gtol=tol, within=torch_on_one_thread)
        else:  # the blockwise engine; a float32 search is confirmed by fresh ones (``lbfgs``)
            restarts = FLOAT32_RESTARTS if problem.X.dtype == torch.float32 else 0
            self.lbfgs = LBFGS(self._loss, x0, ftol=tol, gtol=tol, restarts=restarts)
        self._set(self.lbfgs.x)

    def describe(self) -> str:
        return "L-BFGS"

    def start_value(self, generator=None) -> float:
        """The objective before the first step (L-BFGS measured it when it started)."""
        return self.problem.penalty() - self.lbfgs.f / self.scale

    @property
    def converged(self) -> bool:
        return self.lbfgs.converged and not self.lbfgs.stalled

    @property
    def stalled(self) -> bool:
        return self.lbfgs.stalled

    @property
    def message(self) -> str:
        return self.lbfgs.message

    def _set(self, x: np.ndarray) -> None:
        with torch.no_grad():
            start = 0
            for p in self.problem.parameters:
                p.copy_(torch.as_tensor(x[start : start + p.numel()]).view_as(p))
                start += p.numel()

    def _loss(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        self._set(x)
        for p in self.problem.parameters:
            p.grad = None
        value = self.problem.gradient()
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in self.problem.parameters]
        g = np.concatenate([g.detach().cpu().double().numpy().ravel() for g in grads])
        loss = -value + self.problem.penalty()
        return self.scale * loss, self.scale * g

    def steps(self, epoch: int) -> Iterator[tuple[int, int, float]]:
        """One iteration is the whole epoch: a single (1, 1, value). Nothing once the search
        has ended: scipy says so when asked for the iterate after its last one."""
        try:
            f = self.lbfgs.step()
        finally:  # the last iterate, not a trial point of the line search
            self._set(self.lbfgs.x)
        if not self.lbfgs.converged:
            yield 1, 1, self.problem.penalty() - f / self.scale

    def run(self, epoch: int) -> float:
        """Take the epoch's iteration; the objective after it (as it is, once ended)."""
        for *_, value in self.steps(epoch):
            return value
        return self.problem.penalty() - self.lbfgs.f / self.scale

    def finished(self, value: float, previous: float | None, tol: float) -> bool:
        return self.lbfgs.converged

    def close(self) -> None:
        """End the search under way (its worker thread waits for the next ask)."""
        self.lbfgs.close()


class MinibatchEpochs:
    """A pass over all anchors in random batches; neighbours come from all of X.

    The value reported is the mean over the epoch's batches, each measured before its step.
    With ``decay_epochs``, the step size falls from ``learning_rate`` to 0 along a half
    cosine over that many epochs (``optimizers.cosine_factor``), step by step.
    """

    converged = stalled = False  # only the tolerance on the epoch means (``finished``) stops it early
    message = ""
    steps_use_engine = True  # the steps evaluate the exact engine, whose matrices the workspace keeps

    def __init__(self, problem: Problem, plan: Plan, generator: torch.Generator | None = None):
        self.problem = problem
        self.optimizer = make_optimizer(plan.optimizer, problem.parameters, plan.learning_rate)
        self.batch_size = plan.batch_size
        self.generator = generator
        self.learning_rate, self.decay_epochs = plan.learning_rate, plan.decay_epochs

    def start_value(self, generator=None) -> float:
        """The objective before the first step (sampled anchors on very large sets). A
        strategy whose steps do not use the exact engine lets its matrices go after it."""
        value = self.problem.value(generator)
        if not self.steps_use_engine:
            self.problem.workspace.clear()
        return value

    def describe(self) -> str:
        schedule = f" falling to 0 over {self.decay_epochs} epochs" if self.decay_epochs else ""
        return f"learning rate {self.learning_rate:g}{schedule}, optimizer {type(self.optimizer).__name__}"

    def finished(self, value: float, previous: float | None, tol: float) -> bool:
        """The epoch's mean changed by less than ``tol`` relative to its size. The first
        epoch's mean, measured while the map moves, is not compared with the start."""
        return (
            tol > 0 and previous is not None and abs(value - previous) <= tol * max(abs(value), abs(previous))
        )

    def batches(self) -> list[torch.Tensor]:
        X = self.problem.X
        order = torch.randperm(len(X), generator=self.generator).to(X.device)
        return [order[start : start + self.batch_size] for start in range(0, len(X), self.batch_size)]

    def step(self, anchors: torch.Tensor) -> float | None:
        """One optimiser step on these anchors; the batch's mean objective (None: skipped)."""
        self.optimizer.zero_grad()
        value = self.problem.gradient(anchors)
        self.optimizer.step()
        return value

    def prepare(self, epoch: int) -> None:
        """Work done once at the start of an epoch (nothing here)."""

    def close(self) -> None:
        """Nothing to release."""

    def run(self, epoch: int) -> float:
        """Take the epoch's steps; the mean value over its batches."""
        ((*_, value),) = collections.deque(self.steps(epoch), maxlen=1)
        return value

    def steps(self, epoch: int) -> Iterator[tuple[int, int, float]]:
        """Take the epoch's steps, yielding (steps done, steps in the epoch, mean value so far)."""
        self.prepare(epoch)
        batches = self.batches()
        total, seen = 0.0, 0
        for done, anchors in enumerate(batches, 1):
            if self.decay_epochs:
                progress = (epoch - 1 + (done - 1) / len(batches)) / self.decay_epochs
                self.optimizer.param_groups[0]["lr"] = self.learning_rate * cosine_factor(progress)
            value = self.step(anchors)
            if value is not None:
                total += value * len(anchors)
                seen += len(anchors)
            yield done, len(batches), (total / seen if seen else 0.0)


class CandidateEpochs(MinibatchEpochs):
    """Minibatches whose anchors take neighbours from their nearest candidates and a sample.

    Every ``refresh`` epochs each point's ``n_candidates`` nearest others in the current
    embedding are found again (``knn.neighbour_lists``: FAISS, an inverted file on large
    sets). A step's anchors take neighbours from their own candidates and from
    ``sample_size`` points drawn uniformly for the batch; each draw that is not the anchor
    or one of its candidates stands for n / sample_size points, so far points still weigh
    in p_ij's normaliser. Only the points a step involves are
    embedded, so it costs O((batch * (n_candidates + 1) + sample_size) * D * d) whatever n,
    where an exact step costs O(n * D * d) and O(batch * n * d).
    """

    steps_use_engine = False

    def __init__(self, problem: Problem, plan: Plan, generator: torch.Generator | None = None):
        super().__init__(problem, plan, generator)
        self.n_candidates, self.refresh, self.sample_size = plan.n_candidates, plan.candidate_refresh, plan.sample_size
        self.candidates: torch.Tensor | None = None

    def prepare(self, epoch: int) -> None:
        if (epoch - 1) % self.refresh == 0:
            p = self.problem
            seed = int(torch.randint(2**31 - 1, (1,), generator=self.generator))
            self.candidates = knn.neighbour_lists(embed_all(p.encoder, p.X), self.n_candidates, seed).to(p.X.device)

    def _gathered(self, rows: torch.Tensor) -> torch.Tensor:
        """X[rows], written into the problem's workspace, sized once for the most rows a
        step can gather (a fresh tensor that size costs page faults several times the copy,
        and the rows a step gathers vary, so a buffer grown to each new largest is made
        afresh several times an epoch)."""
        X = self.problem.X
        most = min(len(X), self.batch_size * (self.n_candidates + 1) + self.sample_size)  # >= len(rows)
        width = X[0].numel()
        out = self.problem.workspace.buffer(most * width, X, "gathered")[: len(rows) * width]
        return torch.index_select(X, 0, rows, out=out.view(len(rows), *X.shape[1:]))

    def step(self, anchors: torch.Tensor) -> float:
        p = self.problem
        n, C = len(p.X), self.candidates[anchors]
        sample = _uniform_sample(n, self.sample_size, self.generator).to(p.X.device)
        rows, where = torch.unique(torch.cat([anchors, C.clamp(min=0).reshape(-1), sample]), return_inverse=True)
        self.optimizer.zero_grad()
        Z = p.encoder(self._gathered(rows))
        b, s = len(anchors), len(sample)
        at_anchor, at_near, at_sample = where[:b], where[b:-s], where[-s:]
        fixed = Z.detach()
        excluded, same = self._pairs(anchors, C, sample)
        terms, grad_a, grad_near, grad_s, grad_dof = candidate_terms_and_gradients(
            fixed[at_anchor], fixed[at_near].view(b, C.shape[1], -1), fixed[at_sample],
            excluded, same, n / s, p.kernel, p.objective,
        )  # fmt: skip
        grad_Z = torch.zeros_like(fixed)
        for at, grad in ((at_anchor, grad_a), (at_near, grad_near.flatten(0, 1)), (at_sample, grad_s)):
            grad_Z.index_add_(0, at, grad)
        scale = -1.0 / b  # the loss is -mean(terms)
        grad_dof = None if grad_dof is None else grad_dof * scale
        backward(p.encoder, p.kernel, Z, grad_Z.mul_(scale), grad_dof, p.weight_decay)
        self.optimizer.step()
        return terms.mean().item()

    def _pairs(self, anchors, C, sample) -> tuple[torch.Tensor, torch.Tensor]:
        """Which (anchor, candidate or draw) pairs are no neighbour (a missing candidate; a
        draw that is the anchor or one of its candidates, counted among those already), and
        which are class mates."""
        y, n = self.problem.y, len(self.problem.X)
        drawn_already = _sampled_candidates(torch.cat([anchors[:, None], C], 1), sample, n)
        y_a = y[anchors][:, None]
        excluded = torch.cat([C < 0, drawn_already], 1)
        return excluded, torch.cat([y[C.clamp(min=0)] == y_a, y[sample][None] == y_a], 1)


def _sampled_candidates(candidates: torch.Tensor, sample: torch.Tensor, n: int) -> torch.Tensor:
    """(b, len(sample)) mask: which draws are already among each row's candidates (indices
    below n, -1 for none), found through a table of sample positions in O(b * k)."""
    position = torch.full((n + 1,), -1, dtype=torch.long, device=sample.device)
    position[sample] = torch.arange(len(sample), device=sample.device)
    found = position[candidates]  # -1 marks the table's last entry: no candidate there
    mask = torch.zeros(len(candidates), len(sample) + 1, dtype=torch.bool, device=sample.device)
    mask.scatter_(1, torch.where(found < 0, len(sample), found), True)
    return mask[:, position[sample]]  # a point drawn twice: every draw masked alike


def _uniform_sample(n: int, size: int, generator) -> torch.Tensor:
    """``size`` indices below n (at most n), uniformly: distinct where the sample is a large
    part of n; with replacement on a large set, where a repeat is rare and a permutation of n
    would cost O(n) per step."""
    if 8 * size < n:
        return torch.randint(n, (size,), generator=generator)
    return torch.randperm(n, generator=generator)[:size]


@torch.no_grad()
def embed_all(encoder: nn.Module, X: torch.Tensor, rows: int = 65536) -> torch.Tensor:
    """encoder(X) without gradients, in chunks of ``rows`` (a network's activations stay small)."""
    return torch.cat([encoder(X[start : start + rows]) for start in range(0, len(X), rows)])


class BatchEpochs(MinibatchEpochs):
    """Minibatches whose anchors take neighbours from the batch alone (gradients through both)."""

    steps_use_engine = False

    def step(self, anchors: torch.Tensor) -> float | None:
        if len(anchors) < 2:
            return None
        p = self.problem
        self.optimizer.zero_grad()
        Z = p.encoder(p.anchor_inputs(anchors, self.generator))
        value = nca_objective(Z, p.y[anchors], p.objective, p.kernel) / terms_in_value(p.objective, len(anchors))
        loss = -value + (p.weight_decay * p.encoder.penalty() if p.weight_decay else 0.0)
        if loss.requires_grad:
            loss.backward()
        self.optimizer.step()
        return value.item()


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


class BankEpochs(MinibatchEpochs):
    """Minibatches whose anchors take neighbours from a memory bank of every point.

    Gradients flow through the anchors only, so each step's gradient comes from the closed
    form against the bank (``blocks.kernel_block_gradients``) without autograd over the
    (batch, n) matrix.
    """

    steps_use_engine = False

    def __init__(self, problem: Problem, plan: Plan, generator: torch.Generator | None = None, bank=None):
        super().__init__(problem, plan, generator)
        if bank is None:
            with torch.no_grad():
                bank = MemoryBank(problem.encoder(problem.X), plan.bank_momentum)
        self.bank = bank

    def step(self, anchors: torch.Tensor) -> float:
        p = self.problem
        self.optimizer.zero_grad()
        Z_a = p.encoder(p.anchor_inputs(anchors, self.generator))
        value, grad_a, _, grad_dof = kernel_block_gradients(
            Z_a.detach(), p.y[anchors], self.bank.embeddings, p.y, anchors, p.objective, p.kernel,
            ref_grad=False,
        )  # fmt: skip
        terms = terms_in_value(p.objective, len(anchors))
        backward(p.encoder, p.kernel, Z_a, grad_a / -terms, (grad_dof or 0.0) / -terms, p.weight_decay)
        self.bank.update(anchors, Z_a)
        self.optimizer.step()
        return value / terms


def make_epochs(problem: Problem, plan: Plan, generator: torch.Generator | None = None) -> EpochStrategy:
    """The epoch strategy the plan calls for, on ``problem`` (whose objective, kernel, weight
    decay and augmentation are the plan's too), drawing batches and samples from ``generator``.

    Under ``torchrun`` the problem's group becomes data-parallel, which supports objectives
    f and g with neighbours from all points.
    """
    if active_world_size() > 1:
        if plan.neighbors != "all" or plan.objective not in PER_ANCHOR_OBJECTIVES:
            raise ValueError(
                "data-parallel training supports objectives f and g with neighbours from all points "
                "(neighbors='all', no n_candidates)"
            )
        problem.group = DataParallelGroup(problem.encoder, len(problem.X))
    if plan.optimizer == "lbfgs":
        return LBFGSEpochs(problem, plan)  # its line search sets the step: no learning rate
    strategy = {"all": MinibatchEpochs, "nearest": CandidateEpochs, "memory": BankEpochs, "batch": BatchEpochs}
    return strategy[plan.neighbors](problem, plan, generator)
