"""The objective and its gradients against an independent float64 transcription of the paper."""

import numpy as np
import pytest
import torch

from nca_core.losses import (
    block_terms_and_gradients,
    log_class_mass,
    nca_objective,
    objective_terms,
)


def paper_objective_and_gradient(X, y, A, objective):
    """Goldberger et al. (2004), eqs. 1-7, written out with explicit loops over i."""
    n = len(X)
    Z = X @ A.T
    value, grad = 0.0, np.zeros_like(A)
    for i in range(n):
        logits = -np.sum((Z[i] - Z) ** 2, axis=1)
        logits[i] = -np.inf
        p_ij = np.exp(logits - logits.max())
        p_ij /= p_ij.sum()
        same = (y == y[i]) & (np.arange(n) != i)
        p_i = p_ij[same].sum()
        diff = X[i] - X  # x_ij = x_i - x_j
        outer_all = (p_ij[:, None, None] * diff[:, :, None] * diff[:, None, :]).sum(0)
        outer_same = (p_ij[same, None, None] * diff[same, :, None] * diff[same, None, :]).sum(0)
        if objective == "f":
            value += p_i
            grad += 2 * A @ (p_i * outer_all - outer_same)  # eq. 5
        elif same.any():
            value += np.log(p_i)
            grad += 2 * A @ (outer_all - outer_same / p_i)  # eq. 7
    return value, grad


def make_problem(seed=0, n=40, D=5, d=2, n_classes=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    y = rng.integers(0, n_classes, n)
    A = rng.normal(size=(d, D)) * 0.7
    return X, y, A


@pytest.mark.parametrize("objective", ["f", "g"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_autograd_gives_the_papers_gradient(objective, seed):
    X, y, A = make_problem(seed)
    expected_value, expected_grad = paper_objective_and_gradient(X, y, A, objective)
    A_t = torch.tensor(A, requires_grad=True)
    value = nca_objective(torch.tensor(X) @ A_t.T, torch.tensor(y), objective)
    value.backward()
    assert value.item() == pytest.approx(expected_value, rel=1e-6)
    np.testing.assert_allclose(A_t.grad.numpy(), expected_grad, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("objective", ["f", "g"])
def test_closed_form_block_matches_autograd(objective):
    """The training loop's fast path: terms and gradients for anchors in any grouping."""
    X, y, A = make_problem(3, n=60, n_classes=4)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    Z = torch.tensor(X @ A.T, requires_grad=True)
    y_t = torch.tensor(y)
    anchors = torch.tensor([3, 7, 8, 20, 21, 40, 59])  # sorted by class since y is sorted
    log_p = log_class_mass(Z[anchors], y_t[anchors], Z, y_t, anchors)
    terms_ref = objective_terms(log_p, objective)
    terms_ref.sum().backward()
    bounds = [0, *np.cumsum(np.bincount(y)).tolist()]
    terms, grad_a, grad_r = block_terms_and_gradients(
        Z.detach()[anchors], y_t[anchors], Z.detach(), bounds, anchors, objective
    )
    grad = grad_r.clone().index_add_(0, anchors, grad_a)
    np.testing.assert_allclose(terms.numpy(), terms_ref.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(grad.numpy(), Z.grad.numpy(), rtol=1e-8, atol=1e-12)


def test_two_far_clusters_are_classified_with_certainty():
    Z = torch.tensor([[0.0, 0.0], [0.1, 0.0], [50.0, 0.0], [50.1, 0.0]], dtype=torch.float64)
    y = torch.tensor([0, 0, 1, 1])
    assert nca_objective(Z, y, "f").item() == pytest.approx(4.0)
    assert nca_objective(Z, y, "g").item() == pytest.approx(0.0, abs=1e-12)


def test_equidistant_neighbours_split_their_probability():
    """Three points on an equilateral triangle: each picks either other with p = 1/2."""
    Z = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]], dtype=torch.float64)
    y = torch.tensor([0, 0, 1])
    # points 0 and 1 have p_i = 1/2; point 2 has no class mate (p = 0)
    assert nca_objective(Z, y, "f").item() == pytest.approx(1.0)
    assert nca_objective(Z, y, "g").item() == pytest.approx(2 * np.log(0.5))


def test_single_class_gives_certainty_and_zero_gradient():
    Z = torch.randn(10, 2, dtype=torch.float64, requires_grad=True)
    value = nca_objective(Z, torch.zeros(10, dtype=torch.long), "f")
    value.backward()
    assert value.item() == pytest.approx(10.0)
    assert torch.allclose(Z.grad, torch.zeros_like(Z.grad), atol=1e-12)


def test_singleton_class_adds_nothing_and_stays_finite():
    X, y, A = make_problem(4)
    y[0] = 99
    for objective in ("f", "g"):
        A_t = torch.tensor(A, requires_grad=True)
        value = nca_objective(torch.tensor(X) @ A_t.T, torch.tensor(y), objective)
        value.backward()
        expected_value, expected_grad = paper_objective_and_gradient(X, y, A, objective)
        assert value.item() == pytest.approx(expected_value, rel=1e-6)
        np.testing.assert_allclose(A_t.grad.numpy(), expected_grad, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("objective", ["f", "g"])
def test_huge_distances_give_no_nan_or_inf(dtype, objective):
    X, y, A = make_problem(5)
    Z = (torch.tensor(X @ A.T) * 1e4).to(dtype).requires_grad_(True)
    value = nca_objective(Z, torch.tensor(y), objective)
    value.backward()
    assert torch.isfinite(value)
    assert torch.isfinite(Z.grad).all()
    bounds = [0, *np.cumsum(np.bincount(np.sort(y))).tolist()]
    order = torch.tensor(np.argsort(y, kind="stable"))
    Zs, ys = Z.detach()[order], torch.tensor(y)[order]
    terms, grad_a, grad_r = block_terms_and_gradients(Zs, ys, Zs, bounds, torch.arange(len(y)), objective)
    assert torch.isfinite(terms).all() and torch.isfinite(grad_a).all() and torch.isfinite(grad_r).all()


def test_unknown_objective_is_refused():
    with pytest.raises(ValueError, match="objective must be one of"):
        nca_objective(torch.zeros(3, 2), torch.tensor([0, 0, 1]), "h")


def test_selection_probabilities_of_one_anchor():
    from nca_core.losses import selection_probabilities

    Z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    p = selection_probabilities(Z, 0)
    assert p[0] == 0.0 and p.sum() == pytest.approx(1.0)
    assert p[1] / p[2] == pytest.approx(np.exp(-1.0) / np.exp(-4.0))
