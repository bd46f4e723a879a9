"""One block of the engine in closed form against the autograd reference, in float64 and
in float32 (the dtype users train in)."""

import numpy as np
import pytest
import torch

from nca_core.objective.blocks import all_pairs_value_and_gradient, kernel_block_gradients
from nca_core.objective.gaussian import GaussianBlocks
from nca_core.objective.workspace import Workspace
from tests.objective.reference import (
    log_class_mass,
    make_problem,
    mcml_objective,
    objective_terms,
    reference_objective,
)


def labels(ref_bounds):
    """Sorted labels with class c in rows ``ref_bounds[c]:ref_bounds[c + 1]``."""
    counts = torch.tensor(ref_bounds).diff()
    return torch.repeat_interleave(torch.arange(len(counts)), counts)


def gaussian_block(Z_anchor, y_anchor, Z_ref, ref_bounds, anchor_index, objective):
    """One block through ``GaussianBlocks``: terms and the anchors' and references' gradients."""
    blocks = GaussianBlocks(Z_ref, labels(ref_bounds), objective)
    terms, grad_anchor = blocks.block(Z_anchor, y_anchor, anchor_index)
    return terms, grad_anchor, blocks.reference_gradient()


def kernel_block(Z_anchor, y_anchor, Z_ref, ref_bounds, anchor_index, **options):
    """``kernel_block_gradients`` with the references' labels taken from class bounds."""
    return kernel_block_gradients(Z_anchor, y_anchor, Z_ref, labels(ref_bounds), anchor_index, **options)


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
    terms, grad_a, grad_r = gaussian_block(
        Z.detach()[anchors], y_t[anchors], Z.detach(), bounds, anchors, objective
    )
    grad = grad_r.clone().index_add_(0, anchors, grad_a)
    np.testing.assert_allclose(terms.numpy(), terms_ref.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(grad.numpy(), Z.grad.numpy(), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("objective", ["f", "g"])
def test_huge_distances_give_no_nan_or_inf_in_a_block(dtype, objective):
    X, y, A = make_problem(5)
    Z = (torch.tensor(X @ A.T) * 1e4).to(dtype)
    bounds = [0, *np.cumsum(np.bincount(np.sort(y))).tolist()]
    order = torch.tensor(np.argsort(y, kind="stable"))
    Zs, ys = Z.detach()[order], torch.tensor(y)[order]
    terms, grad_a, grad_r = gaussian_block(Zs, ys, Zs, bounds, torch.arange(len(y)), objective)
    assert torch.isfinite(terms).all() and torch.isfinite(grad_a).all() and torch.isfinite(grad_r).all()


@pytest.mark.parametrize("objective", ["f", "g", "mcml"])
@pytest.mark.parametrize("kernel_name", ["gaussian", "student-t"])
def test_kernel_closed_form_matches_autograd(objective, kernel_name):
    """The general closed form: values, anchor/reference gradients and the dof gradient."""
    from nca_core.objective.kernels import GaussianKernel, StudentTKernel

    def make_kernel():
        return GaussianKernel() if kernel_name == "gaussian" else StudentTKernel(2.5, learn=True)

    X, y, A = make_problem(8, n=50, n_classes=4)
    y[0] = 9  # a singleton class
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    y = np.unique(y, return_inverse=True)[1]
    y_t = torch.tensor(y)
    anchors = torch.tensor([0, 3, 7, 8, 20, 21, 40, 49])

    reference = make_kernel()
    Z = torch.tensor(X @ A.T, requires_grad=True)
    if objective == "mcml":
        expected = mcml_objective(Z[anchors], y_t[anchors], Z, y_t, anchors, reference)
    else:
        expected = objective_terms(
            log_class_mass(Z[anchors], y_t[anchors], Z, y_t, anchors, reference), objective
        ).sum()
    expected.backward()

    kernel = make_kernel()
    Zd = Z.detach()
    value, grad_a, grad_r, grad_dof = kernel_block_gradients(
        Zd[anchors], y_t[anchors], Zd, y_t, anchors, objective, kernel
    )
    assert value == pytest.approx(expected.item(), rel=1e-10)
    grad = grad_r.clone().index_add_(0, anchors, grad_a)
    np.testing.assert_allclose(grad.numpy(), Z.grad.numpy(), rtol=1e-8, atol=1e-12)
    if kernel_name == "student-t":
        (raw,) = reference.parameters()
        dof_grad_through_raw = grad_dof * torch.sigmoid(raw.detach()).item()  # d softplus / d raw
        assert dof_grad_through_raw == pytest.approx(raw.grad.item(), rel=1e-8)
    else:
        assert grad_dof is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("objective", ["f", "g"])
@pytest.mark.parametrize("kernel_name", ["gaussian", "student-t"])
def test_all_pairs_match_the_float64_reference(dtype, objective, kernel_name, monkeypatch):
    """The whole set against itself (each point both anchor and neighbour): a point whose
    class mates sit far beyond another class's points, a singleton class, labels not 0..C-1.
    Under the Gaussian that point's p is below e^-39, so its sum over all neighbours is
    taken again (``weights.far``); the Student-t's heavy tail leaves it within the shift
    rule's range, which alone keeps its digits. The reference's value and gradient, float64 to
    rounding and float32 to its precision."""
    from nca_core.objective import weights
    from nca_core.objective.kernels import GaussianKernel, StudentTKernel

    def kernel():
        return GaussianKernel() if kernel_name == "gaussian" else StudentTKernel(2.5)

    Z, y = _far_mates_problem()
    if kernel_name == "student-t":
        Z = Z * 1e3  # heavy tails: the far mates need far more distance to lose their digits
    Z, y = np.concatenate([Z, [[3.0, 3.0]]]), np.array([5, 2])[np.append(y, 0)]
    y[-1] = 9  # a singleton
    Z_ref = torch.tensor(Z, requires_grad=True)
    expected = reference_objective(Z_ref, torch.tensor(y), objective, kernel())
    expected.backward()
    taken_again, imprecise = [], weights.far

    def counted(*args):
        rows = imprecise(*args)
        taken_again.append(int(rows.sum()))
        return rows

    monkeypatch.setattr(weights, "far", counted)
    y_t = torch.tensor(y)
    mates = (y_t[:, None] == y_t).fill_diagonal_(False)
    Zc = torch.tensor(Z - Z.mean(0), dtype=dtype)  # the caller centres
    value, grad = all_pairs_value_and_gradient(Zc, mates, objective, kernel().to(dtype))
    if dtype == torch.float32:
        assert sum(taken_again) >= 1 if kernel_name == "gaussian" else sum(taken_again) == 0
    rtol = 1e-10 if dtype == torch.float64 else 1e-5
    assert value == pytest.approx(expected.item(), rel=rtol)
    torch.testing.assert_close(grad.double(), Z_ref.grad, rtol=0, atol=rtol * 10 * float(Z_ref.grad.abs().max()))


# -- float32, the dtype users train in, against a float64 reference ----------------------


def _far_mates_problem(distance: float = 12.0):
    """Anchor 0's class mates sit ``distance`` units away while other classes crowd it:
    log p_0 ~ -distance^2 (-143 by default).

    The other anchors are ordinary, so a block mixes both cases.
    """
    gen = np.random.default_rng(0)
    mates = gen.normal([distance, 0.0], 0.3, (5, 2))
    Z = np.concatenate([[[0.0, 0.0]], mates, gen.normal(0.0, 0.5, (20, 2))])
    y = np.array([0] * 6 + [1] * 20)
    return Z, y


def _block(fun, Z, y, dtype, **kwargs):
    Z_t, y_t = torch.tensor(Z, dtype=dtype), torch.tensor(y)
    bounds = [0, *np.cumsum(np.bincount(y)).tolist()]
    index = torch.arange(len(Z))
    out = fun(Z_t, y_t, Z_t, bounds, index, **kwargs)
    return [o.double() if isinstance(o, torch.Tensor) else o for o in out]


def _assert_gradients_close(got, want, rtol):
    scale = want.abs().max()
    torch.testing.assert_close(got, want, rtol=0, atol=rtol * float(scale))


@pytest.mark.parametrize("objective", ["f", "g"])
@pytest.mark.parametrize("shift", [0.0, 1e4])
def test_float32_gaussian_block_matches_float64_for_far_mates_and_far_from_the_origin(objective, shift):
    Z, y = _far_mates_problem()
    Z = Z + shift
    want = _block(gaussian_block, Z, y, torch.float64, objective=objective)
    got = _block(gaussian_block, Z, y, torch.float32, objective=objective)
    if objective == "g":
        assert want[0][0] == pytest.approx(-143.0, abs=3.0)  # the case that was clipped at -79
    tolerance = 1e-3 if shift == 0 else 2e-2  # float32 itself holds 1e4 to about 1e-3
    torch.testing.assert_close(got[0], want[0], rtol=tolerance, atol=tolerance * float(want[0].abs().max()))
    for g_got, g_want in zip(got[1:], want[1:]):
        _assert_gradients_close(g_got, g_want, tolerance)


@pytest.mark.parametrize(("distance", "recomputed"), [(5.0, []), (6.3, [1]), (9.0, [1])])
def test_float32_gaussian_block_matches_float64_on_either_side_of_the_cap(distance, recomputed, monkeypatch):
    """Anchor 0's mass, shifted by its nearest class mate, comes to about e^26, e^40 and e^80
    at these distances: well under the cap the fused path keeps it; near the cap (many
    values just under it) and past it (a value capped) it is recomputed. log p_0 and the
    gradients are float64's either way."""
    Z, y = _far_mates_problem(distance)
    want = _block(gaussian_block, Z, y, torch.float64, objective="g")
    passes = _recomputations(monkeypatch)
    got = _block(gaussian_block, Z, y, torch.float32, objective="g")
    assert passes == recomputed
    assert float(want[0][0]) == pytest.approx(-(distance**2), rel=0.1)
    assert float(got[0][0]) == pytest.approx(float(want[0][0]), rel=1e-5)
    assert float(got[0].sum()) == pytest.approx(float(want[0].sum()), rel=1e-5)
    for g_got, g_want in zip(got[1:], want[1:]):
        _assert_gradients_close(g_got, g_want, 1e-4)


@pytest.mark.parametrize("objective", ["f", "g"])
@pytest.mark.parametrize("own_rows", [True, False])
def test_an_anchor_without_class_mates_adds_nothing_on_the_fused_path(objective, own_rows):
    """A class of one point: among the references (``anchor_index``) its anchor has no class
    mate to shift by and no term; apart from them (None) its one reference is its class
    mate. Either way the fused path gives what the general path gives."""
    from nca_core.objective.kernels import GaussianKernel

    Z, y = _far_mates_problem(3.0)
    Z, y = np.concatenate([Z, [[1.0, 1.0]]]), np.append(y, 2)  # class 2: one point
    Z_ref, y_ref = torch.tensor(Z), torch.tensor(y)
    index = torch.arange(len(Z)) if own_rows else None
    Z_anchor = Z_ref if own_rows else Z_ref + 0.05
    blocks = GaussianBlocks(Z_ref, y_ref, objective)
    terms, grad_anchor = blocks.block(Z_anchor, y_ref, index)
    value, want_anchor, want_ref, _ = kernel_block_gradients(
        Z_anchor, y_ref, Z_ref, y_ref, index, objective, GaussianKernel()
    )
    if own_rows:
        assert float(terms[-1]) == 0.0 and not grad_anchor[-1].any()
    assert float(terms.sum()) == pytest.approx(value, rel=1e-10)
    _assert_gradients_close(grad_anchor, want_anchor, 1e-10)
    _assert_gradients_close(blocks.reference_gradient(), want_ref, 1e-10)


@pytest.mark.parametrize("objective", ["f", "g", "mcml"])
@pytest.mark.parametrize("kernel_name", ["gaussian", "student-t"])
def test_float32_kernel_block_matches_float64(objective, kernel_name):
    """Student-t with many degrees of freedom is nearly Gaussian: its far pairs underflow too."""
    from nca_core.objective.kernels import GaussianKernel, StudentTKernel

    Z, y = _far_mates_problem()
    if kernel_name == "student-t":
        Z = Z * 30.0  # log k of the far mates ~ -15 log(1 + s / 29), far below e^-44
    kernel = GaussianKernel() if kernel_name == "gaussian" else StudentTKernel(29.0, learn=True)
    want = _block(kernel_block, Z + 1e3, y, torch.float64, objective=objective, kernel=kernel)
    got = _block(kernel_block, Z + 1e3, y, torch.float32, objective=objective, kernel=kernel)
    assert got[0] == pytest.approx(want[0], rel=2e-3, abs=1e-4)
    for g_got, g_want in zip(got[1:3], want[1:3]):
        _assert_gradients_close(g_got, g_want, 2e-3)
    if kernel.learnable:
        assert got[3] == pytest.approx(want[3], rel=2e-2, abs=1e-6)


@pytest.mark.parametrize("objective", ["f", "g"])
@pytest.mark.parametrize("init", ["random", "identity"])
def test_float32_start_objective_matches_float64_on_real_data(digits, objective, init):
    """The start objective the estimator reports, on digits, in both dtypes (was 2-7x off for g)."""
    from nca_core import NCA

    X, y = digits
    values = [
        NCA(init=init, objective=objective, max_iter=1, dtype=dtype, device="cpu", random_state=0)
        .fit(X, y)
        .objective_curve_[0]
        for dtype in ("float32", "float64")
    ]
    assert values[0] == pytest.approx(values[1], rel=1e-3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_gaussian_blocks_over_several_blocks_and_one_workspace_match_autograd(dtype):
    """The training loop's schedule: blocks of anchors, one reused workspace, the
    references' gradient summed over blocks; a far anchor in one block takes the shifted
    path. A second call on the workspace, every buffer of it filled with NaN in between,
    agrees."""
    Z64, y = _far_mates_problem()
    Z_ref = torch.tensor(Z64, requires_grad=True)
    y_t = torch.tensor(y)
    reference_objective(Z_ref, y_t, "g").backward()
    Z = torch.tensor(Z64, dtype=dtype)
    workspace = Workspace()
    want = reference_objective(torch.tensor(Z64), y_t, "g").item()
    for _ in range(2):
        blocks = GaussianBlocks(Z, y_t, "g", workspace)
        total, grad = 0.0, torch.zeros_like(Z)
        for a in torch.arange(len(Z)).split(10):
            terms, grad_a = blocks.block(Z[a], y_t[a], a)
            total += float(terms.sum())
            grad.index_add_(0, a, grad_a)
        grad += blocks.reference_gradient()
        assert total == pytest.approx(want, rel=1e-4 if dtype == torch.float32 else 1e-10)
        _assert_gradients_close(grad.double(), Z_ref.grad, 1e-4 if dtype == torch.float32 else 1e-10)
        for buffer in workspace._buffers.values():  # every matrix the engine keeps: stale for the next call
            buffer.fill_(float("nan"))


def _recomputations(monkeypatch) -> list[int]:
    """The rows of each pass of ``GaussianBlocks``' recomputation of far anchors, as it runs."""
    from nca_core.objective import gaussian as engine_blocks

    passes = []
    recompute = engine_blocks.per_anchor_terms_and_weights

    def counted(log_k, mates, objective):
        passes.append(len(log_k))
        return recompute(log_k, mates, objective)

    monkeypatch.setattr(engine_blocks, "per_anchor_terms_and_weights", counted)
    return passes


def test_far_anchors_are_recomputed_in_passes_sized_by_the_block(monkeypatch):
    """A GPU's blocks are large, and there a pass of the far anchors' recomputation costs
    launches more than arithmetic: the passes take a share of the block (at least
    ``_REDO_ELEMENTS`` pairs), with the same results as small passes."""
    from nca_core.objective import gaussian as engine_blocks

    n = 40  # class 0 on even multiples of 7, class 1 between: every anchor is far
    Z = torch.tensor([[14.0 * i, 0.0] for i in range(20)] + [[14.0 * i + 7.0, 0.0] for i in range(20)])
    y, index = torch.tensor([0] * 20 + [1] * 20), torch.arange(n)
    monkeypatch.setattr(engine_blocks, "_REDO_ELEMENTS", 2 * n)  # at least 2 anchors a pass
    passes = _recomputations(monkeypatch)
    results = {}
    for label, rows in (("small blocks", 8), ("large block", n)):
        passes.clear()
        blocks = GaussianBlocks(Z, y, "g")
        split = index.split(rows)
        terms, grad_anchor = (torch.cat(parts) for parts in zip(*(blocks.block(Z[a], y[a], a) for a in split)))
        results[label] = (terms, grad_anchor, blocks.reference_gradient(), list(passes))
    assert results["small blocks"][3] == [2] * 20  # 8 x 40 pairs a block: passes of the least
    assert results["large block"][3] == [5] * 8  # 40 x 40 pairs: passes of an eighth of it
    torch.testing.assert_close(results["large block"][0], results["small blocks"][0])
    for got, want in zip(results["large block"][1:3], results["small blocks"][1:3]):
        _assert_gradients_close(got, want, 1e-5)  # float32 sums in another order
    want = reference_objective(Z.double(), y, "g").item()
    assert float(results["large block"][0].sum()) == pytest.approx(want, rel=1e-5)


def test_an_engine_refuses_to_go_on_once_another_has_taken_its_workspace():
    """Each name of a workspace holds one matrix: a second engine built on it overwrites the
    first's, which must then fail loudly rather than return the wrong gradient."""
    Z = torch.randn(12, 2, generator=torch.Generator().manual_seed(0))
    y, index = torch.tensor([0] * 6 + [1] * 6), torch.arange(12)
    workspace = Workspace()
    first = GaussianBlocks(Z, y, "f", workspace)
    first.block(Z, y, index)
    GaussianBlocks(3.0 * Z, y, "f", workspace)
    with pytest.raises(RuntimeError, match="another engine"):
        first.reference_gradient()
    with pytest.raises(RuntimeError, match="another engine"):
        first.block(Z, y, index)


@pytest.mark.parametrize("objective", ["f", "g"])
def test_a_map_spread_far_apart_keeps_every_anchor_on_the_fused_path(objective, monkeypatch):
    """A map grown over many steps puts even nearest neighbours tens of squared units apart
    (here 64 on a grid), where the kernel's own values, e^-64, would leave float32 nothing
    to sum. Those anchors' values shifted by their nearest class mate keep them on the fused
    path beside the ordinary anchors of the same block, none recomputed, and float32 matches
    the float64 reference."""
    grid = torch.cartesian_prod(torch.arange(6.0), torch.arange(5.0)) * 8.0
    cluster = torch.tensor([[20.0, -20.0]]) + 0.5 * torch.arange(5.0)[:, None]  # ordinary anchors
    Z = torch.cat([grid, cluster])
    y = torch.cat([(grid[:, 0] >= 24.0).long(), torch.full((5,), 2)])  # three grid columns a class
    recomputed = _recomputations(monkeypatch)
    Z64 = Z.double().requires_grad_()
    want = reference_objective(Z64, y, objective)
    want.backward()
    blocks = GaussianBlocks(Z, y, objective)
    index = torch.arange(len(Z))
    terms, grad_anchor = blocks.block(Z, y, index)
    grad = blocks.reference_gradient().index_add_(0, index, grad_anchor)
    assert recomputed == []
    assert float(terms.sum()) == pytest.approx(want.item(), rel=1e-5)
    _assert_gradients_close(grad.double(), Z64.grad, 1e-4)  # exponents of ~1e3, each to ~1e-4
