import math

import numpy as np
import pytest
import torch

from nca_core.config import rules
from nca_core.objective.dense import DenseObjective
from nca_core.objective.kernels import StudentTKernel
from nca_core.training.encoders import DiagonalEncoder, LinearEncoder, MLPEncoder
from nca_core.training.epochs import LBFGSEpochs, dense_applies
from nca_core.training.problem import Problem
from tests.objective.reference import reference_objective
from tests.training.plans import plan_of


def _data(n=40, n_features=5, n_classes=3, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, n_features, generator=g, dtype=torch.float64).to(dtype)
    y = torch.arange(n) % n_classes
    return X, y


def _problem(X, y, encoder, **options):
    return Problem.sorted_by_class(encoder, X, y, **options)


def _reference(problem, params: torch.Tensor, diagonal: bool):
    """n * (-mean objective + weight_decay * |params|^2) and its gradient, by autograd in float64."""
    params = params.detach().double().clone().requires_grad_(True)
    X = problem.X.double()
    Z = X * params if diagonal else X @ params.T
    n = len(X)
    loss = -reference_objective(Z, problem.y, problem.objective) + n * problem.weight_decay * (params**2).sum()
    loss.backward()
    return float(loss.detach()), params.grad.reshape(-1).numpy()


@pytest.mark.parametrize("objective", ["f", "g"])
@pytest.mark.parametrize("diagonal", [False, True])
@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
def test_float32_problem_matches_the_float64_autograd_reference(objective, diagonal, weight_decay):
    X, y = _data()
    g = torch.Generator().manual_seed(1)
    init = torch.rand(5, generator=g) + 0.5 if diagonal else 0.5 * torch.randn(2, 5, generator=g)
    encoder = DiagonalEncoder(init) if diagonal else LinearEncoder(init)
    problem = _problem(X, y, encoder, objective=objective, weight_decay=weight_decay)
    x = init.double().numpy().ravel()
    epochs = LBFGSEpochs(problem, plan_of(problem, optimizer="lbfgs"))  # it adds the weight decay
    try:
        assert epochs.dense is not None
        loss, grad = epochs.loss(x)
    finally:
        epochs.close()
    ref_loss, ref_grad = _reference(problem, init, diagonal)
    assert loss == pytest.approx(ref_loss, rel=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("far", [12.0, 17.0, 20.0, 30.0])
def test_objective_g_is_exact_when_every_class_mate_is_far_away(far):
    """Point 0's class mates lie ``far`` units off while a point of another class sits next
    to it: log p_0 is about -far^2 (-144: below float32's range relative to the row's
    largest term; -289 and -400: either side of float64's e^-354 floor on shifted kernel
    values; -900: p_0 itself underflows in float64)."""
    X = torch.tensor([[0.0], [0.1], [far], [far + 0.1], [0.2], [far + 0.2]], dtype=torch.float32)
    y = torch.tensor([0, 1, 0, 0, 1, 1])
    problem = _problem(X, y, LinearEncoder(torch.ones(1, 1)), objective="g")
    loss, grad = DenseObjective(problem)(np.ones(1))
    a = torch.ones(1, 1, dtype=torch.float64, requires_grad=True)
    Z = problem.X.double() @ a.T
    logits = -(torch.cdist(Z, Z) ** 2)
    logits = logits.masked_fill(torch.eye(6, dtype=torch.bool), -math.inf)
    same = problem.y[:, None] == problem.y[None, :]
    log_p = torch.logsumexp(logits.masked_fill(~same, -math.inf), 1) - torch.logsumexp(logits, 1)
    (-log_p.sum()).backward()
    assert -float(log_p.detach().sum()) > 0.9 * far**2
    assert loss == pytest.approx(-float(log_p.detach().sum()), rel=1e-12)
    np.testing.assert_allclose(grad, a.grad.reshape(-1).numpy(), rtol=1e-9)


@pytest.mark.parametrize("far", [12.0, 17.0, 20.0, 30.0])
def test_objective_f_matches_the_float64_reference_when_class_mates_are_far_away(far):
    """The same float32 points as the test above under f: the e^-300 floor on the kernel must
    not move p_0 (about e^-far^2) or the gradient beyond float64 rounding."""
    X = torch.tensor([[0.0], [0.1], [far], [far + 0.1], [0.2], [far + 0.2]], dtype=torch.float32)
    y = torch.tensor([0, 1, 0, 0, 1, 1])
    A = torch.ones(1, 1)
    problem = _problem(X, y, LinearEncoder(A), objective="f")
    loss, grad = DenseObjective(problem)(np.ones(1))
    ref_loss, ref_grad = _reference(problem, A, diagonal=False)
    assert loss == pytest.approx(ref_loss, rel=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("objective", ["f", "g"])
def test_a_point_without_class_mates_adds_no_term_but_stays_a_neighbour(objective):
    X, y = _data(n=31)
    y = y.clone()
    y[-1] = 3  # a class of one point
    A = 0.5 * torch.randn(2, 5, generator=torch.Generator().manual_seed(2))
    problem = _problem(X, y, LinearEncoder(A), objective=objective)
    loss, grad = DenseObjective(problem)(A.double().numpy().ravel())
    A64 = A.double().clone().requires_grad_(True)
    Z = problem.X.double() @ A64.T
    logits = -(torch.cdist(Z, Z) ** 2)
    logits.fill_diagonal_(-math.inf)
    same = (problem.y[:, None] == problem.y[None, :]).double()
    p = (logits.softmax(1) * same).sum(1)[problem.y != 3]
    terms = p if objective == "f" else p.log()
    (-terms.sum()).backward()
    assert loss == pytest.approx(-float(terms.detach().sum()), rel=1e-12)
    np.testing.assert_allclose(grad, A64.grad.reshape(-1).numpy(), rtol=1e-8, atol=1e-12)


def test_applies_only_to_small_linear_gaussian_f_and_g():
    X, y = _data()
    linear = LinearEncoder(torch.randn(2, 5))
    assert dense_applies(_problem(X, y, linear))
    assert dense_applies(_problem(X, y, DiagonalEncoder(torch.ones(5))))
    assert not dense_applies(_problem(X, y, linear, objective="mcml"))
    assert not dense_applies(_problem(X, y, linear, kernel=StudentTKernel(1.0)))
    mlp = MLPEncoder(5, 2, hidden_sizes=(4,), generator=torch.Generator().manual_seed(0))
    assert not dense_applies(_problem(X, y, mlp))
    big_X, big_y = _data(n=rules.DENSE_MAX_SAMPLES + 1)
    assert not dense_applies(_problem(big_X, big_y, LinearEncoder(torch.randn(2, 5))))


@pytest.mark.parametrize("objective", ["f", "g"])
def test_lbfgs_reaches_the_blockwise_engines_optimum(objective, monkeypatch):
    """Both engines in float64: at tol=1e-9, below float32's resolution, a float32 loss
    shows no fall on f's plateaus and L-BFGS-B stops there. The float32 blockwise path is
    checked against scikit-learn's optimum at the default tol in tests/training/test_lbfgs.py."""
    X, y = _data(n=60, n_features=4, dtype=torch.float64)
    A = 0.3 * torch.randn(2, 4, generator=torch.Generator().manual_seed(3), dtype=torch.float64)

    def optimum():
        problem = _problem(X, y, LinearEncoder(A), objective=objective)
        epochs = LBFGSEpochs(problem, plan_of(problem, optimizer="lbfgs", tol=1e-9))
        for epoch in range(1, 200):
            value = epochs.run(epoch)
            if epochs.lbfgs.converged:
                break
        return value, epochs.dense is not None

    dense_value, dense_loss = optimum()
    monkeypatch.setattr(rules, "DENSE_MAX_SAMPLES", 0)
    block_value, block_loss = optimum()
    assert (dense_loss, block_loss) == (True, False)
    assert dense_value == pytest.approx(block_value, abs=1e-4)


@pytest.mark.parametrize("objective", ["f", "g"])
def test_data_far_from_the_origin_keep_their_digits(objective):
    """Standardised-looking float32 data shifted by 1e4: |a|^2 + |b|^2 - 2ab on the raw
    values would cancel ~8 digits; the engine centres first and matches the float64 reference."""
    X, y = _data()
    X = X + 1e4  # float32, as a user would hand it in
    A = 0.5 * torch.randn(2, 5, generator=torch.Generator().manual_seed(4))
    problem = _problem(X, y, LinearEncoder(A), objective=objective)
    loss, grad = DenseObjective(problem)(A.double().numpy().ravel())
    ref_loss, ref_grad = _reference(problem, A, diagonal=False)
    assert loss == pytest.approx(ref_loss, rel=1e-9)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-6, atol=1e-9)
