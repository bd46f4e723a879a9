"""Kernels: the Student-t formula, its limits, and a learnt dof that stays positive."""

import math

import pytest
import torch

from nca_core.objective.kernels import GaussianKernel, StudentTKernel, make_kernel


def test_gaussian_is_minus_the_squared_distance():
    s = torch.tensor([0.0, 0.5, 4.0], dtype=torch.float64)
    assert torch.equal(GaussianKernel()(s), -s)


@pytest.mark.parametrize("dof", [0.5, 1.0, 29.0])
def test_student_t_matches_its_formula(dof):
    s = torch.tensor([0.0, 0.3, 2.0, 1e6], dtype=torch.float64)
    expected = [-(dof + 1) / 2 * math.log(1 + v / dof) for v in s.tolist()]
    assert StudentTKernel(dof)(s).tolist() == pytest.approx(expected, rel=1e-12)
    assert float(StudentTKernel(dof).dof) == pytest.approx(dof, rel=1e-12)


def test_student_t_tends_to_a_gaussian_of_half_the_exponent_for_large_dof():
    s = torch.linspace(0, 3, 7, dtype=torch.float64)
    assert torch.allclose(StudentTKernel(1e7)(s), -s / 2, atol=1e-6)


def test_heavy_tail_keeps_far_points_more_similar_than_the_gaussian():
    far = torch.tensor([25.0], dtype=torch.float64)
    assert StudentTKernel(1.0)(far) > GaussianKernel()(far)


def test_learnt_dof_is_a_parameter_and_stays_positive_after_a_huge_step():
    kernel = make_kernel("student-t", "learn", n_components=3)
    assert float(kernel.dof.detach()) == pytest.approx(2.0)  # the paper's d - 1
    (param,) = kernel.parameters()
    with torch.no_grad():
        param -= 1e3
    assert float(kernel.dof.detach()) > 0
    assert torch.isfinite(kernel(torch.tensor([0.0, 1.0, 1e3], dtype=torch.float64))).all()


def test_fixed_dof_is_not_trained_and_default_is_d_minus_one():
    kernel = make_kernel("student-t", None, n_components=30)
    assert list(kernel.parameters()) == []
    assert float(kernel.dof) == pytest.approx(29.0)
    assert float(make_kernel("student-t", None, n_components=1).dof) == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("inf"), float("nan")])
def test_bad_dof_is_refused(bad):
    with pytest.raises(ValueError, match="dof must be a positive number"):
        StudentTKernel(bad)


def test_unknown_kernel_is_refused():
    with pytest.raises(ValueError, match="kernel must be one of"):
        make_kernel("cauchy")
