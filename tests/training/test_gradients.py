"""The gradient engine: class-sorted blocks, sampled start values, any kernel."""

import pytest
import torch

from nca_core.training.encoders import LinearEncoder
from nca_core.training.gradients import evaluate_objective, objective_and_gradient
from tests.objective.reference import reference_objective


def test_requires_data_sorted_by_class(problem):
    X, y, A = problem
    with pytest.raises(ValueError, match="sorted by class"):
        objective_and_gradient(LinearEncoder(A), X, y.flip(0), "f")


def test_large_sets_estimate_the_start_value_on_a_sample(problem):
    X, y, A = problem
    exact = evaluate_objective(LinearEncoder(A), None, X, y, "f", 1 << 20)
    sampled = evaluate_objective(
        LinearEncoder(A), None, X, y, "f", 1 << 20, torch.Generator().manual_seed(0), max_pairs=60 * 120
    )
    assert sampled != exact
    assert sampled == pytest.approx(exact, abs=0.1)


@pytest.mark.parametrize("objective", ["f", "g", "mcml"])
@pytest.mark.parametrize("learn", [False, True])
def test_blockwise_engine_equals_the_whole_matrix_autograd_reference(problem, objective, learn):
    """Many small blocks (and MCML's two-pass normaliser) give the exact objective and gradient."""
    from nca_core.objective.kernels import StudentTKernel

    X, y, A = problem
    reference_kernel = StudentTKernel(1.5, learn=learn)
    A_ref = A.clone().requires_grad_(True)
    expected = reference_objective(X @ A_ref.T, y, objective, reference_kernel)
    expected = expected / len(X) if objective != "mcml" else expected
    expected.backward()

    kernel = StudentTKernel(1.5, learn=learn)
    encoder = LinearEncoder(A)
    value = objective_and_gradient(encoder, X, y, objective, block_elements=7 * len(X), kernel=kernel)
    assert value == pytest.approx(expected.item(), rel=1e-10)
    torch.testing.assert_close(encoder.weight.grad, -A_ref.grad, rtol=1e-9, atol=1e-12)
    if learn:
        (raw,), (raw_ref,) = kernel.parameters(), reference_kernel.parameters()
        assert raw.grad.item() == pytest.approx(-raw_ref.grad.item(), rel=1e-9)
    start = evaluate_objective(encoder, kernel, X, y, objective, block_elements=7 * len(X))
    assert start == pytest.approx(expected.item(), rel=1e-10)
