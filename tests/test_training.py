"""The training loop's internals: blocks, candidate neighbours, sampled start values."""

import numpy as np
import pytest
import torch

from nca_core.encoders import LinearEncoder
from nca_core.training import (
    _candidate_epoch,
    _evaluate_objective,
    _nearest_candidates,
    objective_and_gradient,
)


@pytest.fixture
def problem():
    gen = torch.Generator().manual_seed(0)
    n = 120
    X = torch.randn(n, 5, generator=gen, dtype=torch.float64)
    y = torch.sort(torch.randint(0, 3, (n,), generator=gen)).values
    A = torch.randn(2, 5, generator=gen, dtype=torch.float64)
    return X, y, A


class _NoStep:
    """An optimiser stand-in that keeps the gradient for inspection."""

    def __init__(self, encoder):
        self.encoder = encoder

    def zero_grad(self):
        self.encoder.weight.grad = None

    def step(self):
        pass


@pytest.mark.parametrize("objective", ["f", "g"])
def test_candidates_covering_everyone_give_the_exact_objective(problem, objective):
    X, y, A = problem
    encoder = LinearEncoder(A)
    candidates = _nearest_candidates(encoder, X, y, len(X) - 1, 1 << 20)
    value = _candidate_epoch(
        encoder, _NoStep(encoder), X, y, candidates, objective, len(X), 0.0, torch.Generator().manual_seed(0)
    )
    exact_encoder = LinearEncoder(A)
    exact = objective_and_gradient(exact_encoder, X, y, objective)
    assert value == pytest.approx(exact, rel=1e-10)
    torch.testing.assert_close(encoder.weight.grad, exact_encoder.weight.grad)


def test_candidates_are_the_nearest_others_and_class_mates(problem):
    X, y, A = problem
    encoder = LinearEncoder(A)
    candidates = _nearest_candidates(encoder, X, y, 8, 1 << 20)
    assert candidates.shape == (len(X), 8 + 2)
    Z = (X @ A.T).numpy()
    for i in (0, 57, 119):
        distances = ((Z - Z[i]) ** 2).sum(1)
        distances[i] = np.inf
        np.testing.assert_array_equal(np.sort(candidates[i, :8].numpy()), np.sort(np.argsort(distances)[:8]))
        mates = candidates[i, 8:].numpy()
        assert np.all(y.numpy()[mates] == y.numpy()[i]) and i not in mates


def test_requires_data_sorted_by_class(problem):
    X, y, A = problem
    with pytest.raises(ValueError, match="sorted by class"):
        objective_and_gradient(LinearEncoder(A), X, y.flip(0), "f")


def test_large_sets_estimate_the_start_value_on_a_sample(problem):
    X, y, A = problem
    exact = _evaluate_objective(LinearEncoder(A), X, y, "f", 1 << 20)
    sampled = _evaluate_objective(
        LinearEncoder(A), X, y, "f", 1 << 20, torch.Generator().manual_seed(0), max_pairs=60 * 120
    )
    assert sampled != exact
    assert sampled == pytest.approx(exact, abs=0.1)
