"""Minibatches whose anchors take neighbours from their nearest candidates and a uniform
sample of the rest (``CandidateEpochs``): the approximate path, O(n) per epoch."""

from __future__ import annotations

import torch
from torch import nn

from ..config.plan import Plan
from ..objective.blocks import candidate_terms_and_gradients
from ..search import knn
from .minibatch import MinibatchEpochs
from .problem import Problem

__all__ = ['CandidateEpochs', 'embed_all']


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
        value = p.descend(Z, (grad_Z, grad_dof or 0.0, float(terms.sum())), b)
        self.optimizer.step()
        return value

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
