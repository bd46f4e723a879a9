"""Epoch strategies: how one epoch of training moves the encoder.

A ``Problem`` (``problem``) is what is optimised (an encoder and kernel on class-sorted
data); an epoch strategy owns an optimiser and knows how to take one epoch's steps on it. The training
loop (``loop.train``) takes one strategy and does not know which it has:

- ``LBFGSEpochs``: one full-batch L-BFGS iteration, neighbours from all points;
- ``minibatch.MinibatchEpochs``: a pass over the anchors in batches, neighbours from all points;
- ``candidates.CandidateEpochs``: the same, neighbours from each anchor's nearest candidates
  and a uniform sample (approximate, O(n) per epoch);
- ``bank.BankEpochs``: neighbours from a ``MemoryBank`` of all points' embeddings (Wu et al., 2018);
- ``minibatch.BatchEpochs``: neighbours from the batch alone.

Each satisfies ``EpochStrategy`` and takes its settings from a fit's plan (``config.plan``);
``make_epochs`` picks the one the plan calls for.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator

import numpy as np
import torch

from ..config.plan import Plan
from ..config.rules import dense_suits
from ..objective.dense import DenseObjective
from ..objective.weights import PER_ANCHOR_OBJECTIVES, terms_in_value
from ..util.threads import torch_on_one_thread
from .bank import BankEpochs
from .candidates import CandidateEpochs
from .distributed import DataParallelGroup, active_world_size
from .gradients import penalty_term
from .lbfgs import LBFGS
from .minibatch import BatchEpochs, MinibatchEpochs
from .problem import EpochStrategy, Problem

__all__ = ["FLOAT32_RESTARTS", "LBFGSEpochs", "dense_applies", "make_epochs"]


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
        self.dense = DenseObjective(problem) if dense_applies(problem) else None
        if self.dense is not None:  # float64 as the engine is; its weight decay from a float64 copy
            self.dense_encoder = copy.deepcopy(problem.encoder).double()
            self.lbfgs = LBFGS(self.loss, x0, ftol=tol, gtol=tol, within=torch_on_one_thread)
        else:  # the blockwise engine; a float32 search is confirmed by fresh ones (``lbfgs``)
            restarts = FLOAT32_RESTARTS if problem.X.dtype == torch.float32 else 0
            self.lbfgs = LBFGS(self.loss, x0, ftol=tol, gtol=tol, restarts=restarts)
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
        _set_flat(self.problem.parameters, x)

    def loss(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """n * (-objective + weight decay) and its gradient at ``x``: the objective's part from
        the whole-matrix engine (in the map's parameters, already times n) or from the
        problem's step (``Problem.gradient``, which adds the weight decay's gradient)."""
        self._set(x)
        if self.dense is not None:
            loss, grad = self.dense(x)
            penalty, penalty_grad = _penalty_at(self.dense_encoder, x, self.problem.weight_decay)
            return loss + self.scale * penalty, grad + self.scale * penalty_grad
        for p in self.problem.parameters:
            p.grad = None
        value = self.problem.gradient()
        return self.scale * (self.problem.penalty() - value), self.scale * _flat_grad(self.problem.parameters)

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



def _set_flat(parameters, x: np.ndarray) -> None:
    """Parameters from one flat float64 vector, in order."""
    with torch.no_grad():
        start = 0
        for p in parameters:
            p.copy_(torch.as_tensor(x[start : start + p.numel()]).view_as(p))
            start += p.numel()


def _flat_grad(parameters) -> np.ndarray:
    """The parameters' ``.grad`` as one flat float64 vector (zeros where there is none)."""
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in parameters]
    return np.concatenate([g.detach().cpu().double().numpy().ravel() for g in grads])


def _penalty_at(encoder, x: np.ndarray, weight_decay: float) -> tuple[float, np.ndarray | float]:
    """The weight decay (``gradients.penalty_term``) and its gradient with ``encoder``'s
    parameters at ``x``."""
    parameters = list(encoder.parameters())
    _set_flat(parameters, x)
    for p in parameters:
        p.grad = None
    term = penalty_term(encoder, weight_decay)
    if term is None:
        return 0.0, 0.0
    term.backward()
    return float(term.detach()), _flat_grad(parameters)


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
