"""nca_objective, the engine as one autograd op, against an independent float64
transcription of the paper, finite differences and the autograd reference."""

import numpy as np
import pytest
import torch

from nca_core.objective.function import nca_objective, selection_probabilities
from nca_core.objective.kernels import StudentTKernel
from tests.objective.reference import make_problem, reference_objective


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


@pytest.mark.parametrize("objective", ["f", "g"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("function", [nca_objective, reference_objective], ids=["engine", "reference"])
def test_the_objective_and_its_gradient_are_the_papers(objective, seed, function):
    X, y, A = make_problem(seed)
    expected_value, expected_grad = paper_objective_and_gradient(X, y, A, objective)
    A_t = torch.tensor(A, requires_grad=True)
    value = function(torch.tensor(X) @ A_t.T, torch.tensor(y), objective)
    value.backward()
    assert value.item() == pytest.approx(expected_value, rel=1e-6)
    np.testing.assert_allclose(A_t.grad.numpy(), expected_grad, rtol=1e-6, atol=1e-9)


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


def test_unknown_objective_is_refused():
    with pytest.raises(ValueError, match="objective must be one of"):
        nca_objective(torch.zeros(3, 2), torch.tensor([0, 0, 1]), "h")


def test_selection_probabilities_of_one_anchor():
    Z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    p = selection_probabilities(Z, 0)
    assert p[0] == 0.0 and p.sum() == pytest.approx(1.0)
    assert p[1] / p[2] == pytest.approx(np.exp(-1.0) / np.exp(-4.0))


def test_selection_probabilities_follow_a_student_t_kernel_when_given_its_dof():
    """The live picture's p_ij lines use the run's own kernel: heavy tails keep far points."""
    Z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 3.0]], dtype=np.float32)
    p = selection_probabilities(Z, 0, dof=1.0)
    assert p[0] == 0.0 and p.sum() == pytest.approx(1.0)
    expected = np.exp(student_t_log_kernel(1.0, 1.0) - student_t_log_kernel(9.0, 1.0))
    assert p[1] / p[2] == pytest.approx(expected)  # (1 + 9) / (1 + 1) = 5; the Gaussian's e^8


# -- Student-t kernels and MCML (Min et al., 2010) ---------------------------------------


def student_t_log_kernel(sq, dof):
    return -(dof + 1) / 2 * np.log1p(sq / dof)


def numpy_objective(X, y, A, objective, dof):
    """f, g or -KL(P || Q) with the Student-t kernel, written out directly in float64."""
    Z = X @ A.T
    n = len(X)
    sq = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    K = np.exp(student_t_log_kernel(sq, dof))
    np.fill_diagonal(K, 0.0)
    same = (y[:, None] == y[None, :]) & ~np.eye(n, dtype=bool)
    if objective == "mcml":
        Q = K / K.sum()
        P = same / same.sum()
        return -(P[same] * np.log(P[same] / Q[same])).sum()
    p = (K * same).sum(1) / K.sum(1)
    return p.sum() if objective == "f" else np.log(p[p > 0]).sum()


def finite_difference(fun, A, eps=1e-6):
    grad = np.zeros_like(A)
    for index in np.ndindex(A.shape):
        step = np.zeros_like(A)
        step[index] = eps
        grad[index] = (fun(A + step) - fun(A - step)) / (2 * eps)
    return grad


@pytest.mark.parametrize("objective", ["f", "g", "mcml"])
@pytest.mark.parametrize("dof", [1.0, 3.5])
def test_student_t_objectives_value_and_gradient_match_finite_differences(objective, dof):
    X, y, A = make_problem(6, n=30, D=4, d=2)
    y[0] = 7  # a singleton class
    A_t = torch.tensor(A, requires_grad=True)
    value = nca_objective(torch.tensor(X) @ A_t.T, torch.tensor(y), objective, StudentTKernel(dof))
    value.backward()
    assert value.item() == pytest.approx(numpy_objective(X, y, A, objective, dof), rel=1e-10)
    numeric = finite_difference(lambda B: numpy_objective(X, y, B, objective, dof), A)
    np.testing.assert_allclose(A_t.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("objective", ["f", "g", "mcml"])
def test_learnt_dof_gradient_matches_finite_differences(objective):
    X, y, A = make_problem(7, n=25, D=3, d=2)
    Z = torch.tensor(X @ A.T)
    kernel = StudentTKernel(2.0, learn=True)
    value = nca_objective(Z, torch.tensor(y), objective, kernel)
    value.backward()
    (raw,) = kernel.parameters()
    eps = 1e-6

    def at(raw_value):
        dof = StudentTKernel.MIN_DOF + float(
            torch.nn.functional.softplus(torch.tensor(raw_value, dtype=torch.float64))
        )
        return numpy_objective(X, y, A, objective, dof)

    numeric = (at(raw.item() + eps) - at(raw.item() - eps)) / (2 * eps)
    assert raw.grad.item() == pytest.approx(numeric, rel=1e-6)


def test_mcml_is_zero_exactly_when_q_is_the_label_distribution():
    """Two classes collapsed to two far points: Q puts all mass on same-class pairs, evenly."""
    Z = torch.tensor([[0.0, 0.0]] * 3 + [[1e3, 0.0]] * 3, dtype=torch.float64)
    y = torch.tensor([0, 0, 0, 1, 1, 1])
    assert nca_objective(Z, y, "mcml").item() == pytest.approx(0.0, abs=1e-9)
    spread = torch.randn(6, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    assert nca_objective(spread, y, "mcml").item() < -0.1


def test_mcml_without_same_class_pairs_is_zero_with_no_gradient():
    Z = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    y = torch.tensor([0, 1, 2])
    value = nca_objective(Z, y, "mcml")
    value.backward()
    assert value.item() == 0.0
    assert float(Z.grad.abs().sum()) == 0.0


@pytest.mark.parametrize("objective", ["f", "g", "mcml"])
@pytest.mark.parametrize("kernel_name", ["gaussian", "student-t"])
def test_float32_objective_matches_the_float64_reference_for_labels_in_any_order(objective, kernel_name):
    """The dtype users run: values and gradients (the map's and a learnt dof's) in float32
    against the float64 autograd reference, labels shuffled and not 0..C-1, one of them a
    singleton, a point far from its class."""
    X, y, A = make_problem(9, n=45, D=4, d=2, n_classes=3)
    y = np.array([10, 30, 20])[y]
    y[5] = 99
    X[7] += 6.0  # anchor 7's class mates are far away: its p_i underflows in float32 unless shifted

    def run(dtype, function):
        kernel = None if kernel_name == "gaussian" else StudentTKernel(2.0, learn=True).to(dtype)
        A_t = torch.tensor(A, dtype=dtype, requires_grad=True)
        value = function(torch.tensor(X, dtype=dtype) @ A_t.T, torch.tensor(y), objective, kernel)
        value.backward()
        dof_grad = None if kernel is None else next(kernel.parameters()).grad.item()
        return value.item(), A_t.grad.double(), dof_grad

    want = run(torch.float64, reference_objective)
    got64, got32 = run(torch.float64, nca_objective), run(torch.float32, nca_objective)
    assert got64[0] == pytest.approx(want[0], rel=1e-10)
    torch.testing.assert_close(got64[1], want[1], rtol=1e-9, atol=1e-11)
    assert got32[0] == pytest.approx(want[0], rel=1e-5)
    torch.testing.assert_close(got32[1], want[1], rtol=0, atol=1e-5 * float(want[1].abs().max()))
    if kernel_name == "student-t":
        assert got64[2] == pytest.approx(want[2], rel=1e-9)
        assert got32[2] == pytest.approx(want[2], rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("objective", ["f", "g", "mcml"])
@pytest.mark.parametrize("kernel_name", ["gaussian", "student-t"])
def test_a_value_nobody_differentiates_is_computed_without_a_gradient(objective, kernel_name, monkeypatch):
    """Under no_grad, or with no input that requires a gradient, the value comes from the
    engine's value-only walk, in float32 the reference's value, labels in any order."""
    from nca_core.objective import function

    X, y, A = make_problem(3, n=40, D=4, d=2, n_classes=3)
    y = np.array([7, 2, 5])[y]

    def kernel(learn=False):
        return None if kernel_name == "gaussian" else StudentTKernel(2.0, learn=learn).float()

    reference_kernel = None if kernel_name == "gaussian" else StudentTKernel(2.0).double()
    want = reference_objective(torch.tensor(X @ A.T), torch.tensor(y), objective, reference_kernel)

    def refuse(*args, **kwargs):
        raise AssertionError("the gradient was computed for a value nobody differentiates")

    monkeypatch.setattr(function, "loss_gradient", refuse)
    Z = torch.tensor(X @ A.T, dtype=torch.float32)
    assert nca_objective(Z, torch.tensor(y), objective, kernel()).item() == pytest.approx(want.item(), rel=1e-5)
    with torch.no_grad():  # inputs that would want one, a learnt dof among them
        value = nca_objective(Z.requires_grad_(), torch.tensor(y), objective, kernel(learn=True))
    assert value.item() == pytest.approx(want.item(), rel=1e-5) and not value.requires_grad
