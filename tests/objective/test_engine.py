"""The exact engine's walk: many blocks (MCML's normaliser in a first pass), sampled
anchors, the fused Gaussian path beside the general one, against the autograd reference."""

import numpy as np
import pytest
import torch

from nca_core.objective.engine import loss_gradient, objective_value
from nca_core.objective.kernels import GaussianKernel, StudentTKernel
from tests.objective.reference import (
    log_class_mass,
    make_problem,
    mcml_objective,
    objective_terms,
    reference_objective,
)


def _sorted_problem(dtype=torch.float64):
    X, y, A = make_problem(11, n=60, D=4, d=3, n_classes=4)
    order = np.argsort(y, kind="stable")
    Z = torch.tensor(X[order] @ A.T, dtype=dtype)
    return Z, torch.tensor(y[order])


@pytest.mark.parametrize("objective", ["f", "g", "mcml"])
@pytest.mark.parametrize("kernel", [None, GaussianKernel(), StudentTKernel(1.5)], ids=["default", "gaussian", "student-t"])
def test_many_blocks_give_the_whole_objective_and_gradient(objective, kernel):
    """Blocks of 7 anchors (60 points: 9 blocks); the loss is -mean for f and g, -KL for MCML."""
    Z, y = _sorted_problem()
    Z_ref = Z.clone().requires_grad_(True)
    expected = reference_objective(Z_ref, y, objective, kernel)
    expected = expected / len(Z) if objective != "mcml" else expected
    expected.backward()
    anchors = torch.arange(len(Z))
    grad, _, value = loss_gradient(Z, y, anchors, objective, kernel, block_elements=7 * len(Z))
    assert value == pytest.approx(expected.item(), rel=1e-10)
    torch.testing.assert_close(grad, -Z_ref.grad, rtol=1e-9, atol=1e-12)
    assert objective_value(Z, y, anchors, objective, kernel, block_elements=7 * len(Z)) == pytest.approx(
        expected.item(), rel=1e-10
    )


@pytest.mark.parametrize("objective", ["f", "g", "mcml"])
def test_a_sample_of_anchors_is_scored_against_every_point(objective):
    """Anchors 3, 17, 40 and 41 alone, each against all 60 points."""
    Z, y = _sorted_problem()
    anchors = torch.tensor([3, 17, 40, 41])
    if objective == "mcml":
        want = mcml_objective(Z[anchors], y[anchors], Z, y, anchors).item()
    else:
        want = objective_terms(log_class_mass(Z[anchors], y[anchors], Z, y, anchors), objective).mean().item()
    assert objective_value(Z, y, anchors, objective) == pytest.approx(want, rel=1e-10)


def test_the_gaussians_f_and_g_take_the_fused_schedule_and_everything_else_the_general_one():
    from nca_core.objective.engine import GaussianSchedule, KernelSchedule, schedule_for

    Z = torch.zeros(10, 3)
    assert isinstance(schedule_for(Z, None, "f"), GaussianSchedule)
    assert isinstance(schedule_for(Z, GaussianKernel(), "g"), GaussianSchedule)
    for kernel, objective in ((GaussianKernel(), "mcml"), (StudentTKernel(1.0), "f"), (StudentTKernel(1.0), "g")):
        assert isinstance(schedule_for(Z, kernel, objective), KernelSchedule)


@pytest.mark.parametrize("objective", ["f", "g"])
def test_two_schedules_of_the_same_terms_agree_in_float32_far_from_the_origin(objective):
    """Any schedule that walks the same pairs must give the same sums: the fused Gaussian
    one and the general one, in float32, with one class far from the others and every point
    1e3 from the origin, against the float64 reference."""
    from nca_core.objective.engine import GaussianSchedule, KernelSchedule

    Z, y = _sorted_problem()
    Z = Z.clone()
    Z[y == 0] += 25.0
    Z += 1e3
    Z_ref = Z.clone().requires_grad_(True)
    reference_objective(Z_ref, y, objective).backward()
    anchors = torch.arange(len(Z))
    Z32 = Z.float()
    for schedule in (GaussianSchedule(objective, 7 * len(Z)), KernelSchedule(GaussianKernel(), objective, 7 * len(Z))):
        grad, _, total = schedule.sums(Z32, y, anchors, None)
        assert total == pytest.approx(reference_objective(Z, y, objective).item(), rel=1e-4, abs=1e-4)
        scale = float(Z_ref.grad.abs().max())
        torch.testing.assert_close(grad.double(), Z_ref.grad, rtol=0, atol=2e-3 * scale)


def test_only_the_engine_picks_a_schedule():
    """Every walk over all pairs takes its schedule from ``engine.schedule_for``, which sees
    the embedding's device, dtype and width: no other module of the library names a schedule
    in its code (docstrings and comments aside), so none can pick one by itself."""
    import io
    import tokenize
    from pathlib import Path

    import nca_core

    choosers = {"schedule_for", "GaussianSchedule", "KernelSchedule", "FusedSchedule"}
    root = Path(nca_core.__file__).parent
    naming = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).as_posix() in ("objective/engine.py", "objective/fused.py"):
            continue
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
        if choosers & {token.string for token in tokens if token.type == tokenize.NAME}:
            naming.append(path.relative_to(root).as_posix())
    assert naming == []
