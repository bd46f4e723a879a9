"""The objective and its gradients against an independent float64 transcription of the paper."""

import numpy as np
import pytest
import torch

from nca_core.objective.losses import (
    block_terms_and_gradients,
    kernel_block_gradients,
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
    from nca_core.objective.losses import selection_probabilities

    Z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    p = selection_probabilities(Z, 0)
    assert p[0] == 0.0 and p.sum() == pytest.approx(1.0)
    assert p[1] / p[2] == pytest.approx(np.exp(-1.0) / np.exp(-4.0))


def test_selection_probabilities_follow_a_student_t_kernel_when_given_its_dof():
    """The live picture's p_ij lines use the run's own kernel: heavy tails keep far points."""
    from nca_core.objective.losses import selection_probabilities

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
    from nca_core.objective.kernels import StudentTKernel

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
    from nca_core.objective.kernels import StudentTKernel

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
    from nca_core.objective.losses import mcml_objective

    Z = torch.tensor([[0.0, 0.0]] * 3 + [[1e3, 0.0]] * 3, dtype=torch.float64)
    y = torch.tensor([0, 0, 0, 1, 1, 1])
    index = torch.arange(6)
    assert mcml_objective(Z, y, Z, y, index).item() == pytest.approx(0.0, abs=1e-9)
    spread = torch.randn(6, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    assert mcml_objective(spread, y, spread, y, index).item() < -0.1


def test_mcml_without_same_class_pairs_is_zero_with_no_gradient():
    from nca_core.objective.losses import mcml_objective

    Z = torch.randn(3, 2, dtype=torch.float64)
    y = torch.tensor([0, 1, 2])
    assert mcml_objective(Z, y, Z, y, torch.arange(3)).item() == 0.0


@pytest.mark.parametrize("objective", ["f", "g", "mcml"])
@pytest.mark.parametrize("kernel_name", ["gaussian", "student-t"])
def test_kernel_closed_form_matches_autograd(objective, kernel_name):
    """The general closed form: values, anchor/reference gradients and the dof gradient."""
    from nca_core.objective.kernels import GaussianKernel, StudentTKernel
    from nca_core.objective.losses import kernel_block_gradients, mcml_objective

    def make_kernel():
        return GaussianKernel() if kernel_name == "gaussian" else StudentTKernel(2.5, learn=True)

    X, y, A = make_problem(8, n=50, n_classes=4)
    y[0] = 9  # a singleton class
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    y = np.unique(y, return_inverse=True)[1]
    y_t = torch.tensor(y)
    bounds = [0, *np.cumsum(np.bincount(y)).tolist()]
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
        Zd[anchors], y_t[anchors], Zd, bounds, anchors, objective, kernel
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


# -- float32, the dtype users train in, against a float64 reference ----------------------


def _far_mates_problem():
    """Anchor 0's class mates sit 12 units away while other classes crowd it: log p_0 ~ -143.

    The other anchors are ordinary, so a block mixes both cases.
    """
    gen = np.random.default_rng(0)
    Z = np.concatenate([[[0.0, 0.0]], gen.normal([12.0, 0.0], 0.3, (5, 2)), gen.normal(0.0, 0.5, (20, 2))])
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
    want = _block(block_terms_and_gradients, Z, y, torch.float64, objective=objective)
    got = _block(block_terms_and_gradients, Z, y, torch.float32, objective=objective)
    if objective == "g":
        assert want[0][0] == pytest.approx(-143.0, abs=3.0)  # the case that was clipped at -79
    tolerance = 1e-3 if shift == 0 else 2e-2  # float32 itself holds 1e4 to about 1e-3
    torch.testing.assert_close(got[0], want[0], rtol=tolerance, atol=tolerance * float(want[0].abs().max()))
    for g_got, g_want in zip(got[1:], want[1:]):
        _assert_gradients_close(g_got, g_want, tolerance)


@pytest.mark.parametrize("objective", ["f", "g", "mcml"])
@pytest.mark.parametrize("kernel_name", ["gaussian", "student-t"])
def test_float32_kernel_block_matches_float64(objective, kernel_name):
    """Student-t with many degrees of freedom is nearly Gaussian: its far pairs underflow too."""
    from nca_core.objective.kernels import GaussianKernel, StudentTKernel

    Z, y = _far_mates_problem()
    if kernel_name == "student-t":
        Z = Z * 30.0  # log k of the far mates ~ -15 log(1 + s / 29), far below e^-44
    kernel = GaussianKernel() if kernel_name == "gaussian" else StudentTKernel(29.0, learn=True)
    want = _block(kernel_block_gradients, Z + 1e3, y, torch.float64, objective=objective, kernel=kernel)
    got = _block(kernel_block_gradients, Z + 1e3, y, torch.float32, objective=objective, kernel=kernel)
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
def test_gaussian_blocks_over_several_blocks_and_one_buffer_match_autograd(dtype):
    """The training loop's schedule: blocks of anchors, one reused buffer, the references'
    gradient summed over blocks; a far anchor in one block takes the shifted path."""
    from nca_core.objective.losses import GaussianBlocks

    Z64, y = _far_mates_problem()
    Z_ref = torch.tensor(Z64, requires_grad=True)
    y_t = torch.tensor(y)
    nca_objective(Z_ref, y_t, "g").backward()
    bounds = [0, *np.cumsum(np.bincount(y)).tolist()]
    Z = torch.tensor(Z64, dtype=dtype)
    blocks = GaussianBlocks(Z, bounds, "g", buffer=torch.full((10 * len(Z),), float("nan"), dtype=dtype))
    total, grad = 0.0, torch.zeros_like(Z)
    for a in torch.arange(len(Z)).split(10):
        terms, grad_a = blocks.block(Z[a], y_t[a], a)
        total += float(terms.sum())
        grad.index_add_(0, a, grad_a)
    grad += blocks.reference_gradient()
    want = nca_objective(torch.tensor(Z64), y_t, "g").item()
    assert total == pytest.approx(want, rel=1e-4 if dtype == torch.float32 else 1e-10)
    _assert_gradients_close(grad.double(), Z_ref.grad, 1e-4 if dtype == torch.float32 else 1e-10)


def test_far_anchors_are_recomputed_in_passes_sized_by_the_block_buffer(monkeypatch):
    """A GPU's block buffer is large, and there a pass of the far anchors' recomputation costs
    launches more than arithmetic: the passes take a share of the buffer (at least
    ``_REDO_ELEMENTS`` pairs), with the same results as small passes."""
    from nca_core.objective import losses

    n = 40  # class 0 on even multiples of 7, class 1 between: every anchor is far
    Z = torch.tensor([[14.0 * i, 0.0] for i in range(20)] + [[14.0 * i + 7.0, 0.0] for i in range(20)])
    y, bounds, index = torch.tensor([0] * 20 + [1] * 20), [0, 20, 40], torch.arange(n)
    monkeypatch.setattr(losses, "_REDO_ELEMENTS", 2 * n)  # at least 2 anchors a pass
    passes = []
    recompute = losses._per_anchor_slopes

    def counted(pairs, objective):
        passes.append(len(pairs.log_k))
        return recompute(pairs, objective)

    monkeypatch.setattr(losses, "_per_anchor_slopes", counted)
    results = {}
    for label, buffer in (("no buffer", None), ("large buffer", torch.empty(losses._REDO_SHARE * 10 * n))):
        passes.clear()
        blocks = losses.GaussianBlocks(Z, bounds, "g", buffer=buffer)
        terms, grad_anchor = blocks.block(Z, y, index)
        results[label] = (terms, grad_anchor, blocks.reference_gradient(), list(passes))
    assert results["no buffer"][3] == [2] * 20
    assert results["large buffer"][3] == [10] * 4
    torch.testing.assert_close(results["large buffer"][0], results["no buffer"][0])
    for got, want in zip(results["large buffer"][1:3], results["no buffer"][1:3]):
        _assert_gradients_close(got, want, 1e-5)  # float32 sums in another order
    want = nca_objective(Z.double(), y, "g").item()
    assert float(results["large buffer"][0].sum()) == pytest.approx(want, rel=1e-5)


def _logit_terms_by_autograd(logits: torch.Tensor, same: torch.Tensor, objective: str):
    """The reference: f's or g's terms by masked log-sum-exp, their weights by autograd."""
    logits = logits.detach().clone().requires_grad_(True)
    log_p = torch.logsumexp(logits.masked_fill(~same, -float("inf")), 1) - torch.logsumexp(logits, 1)
    terms = objective_terms(log_p, objective)
    terms.sum().backward()
    return terms.detach(), torch.nan_to_num(logits.grad)


@pytest.mark.parametrize("objective", ["f", "g"])
def test_logit_terms_and_weights_are_exact_in_float32_for_far_class_mates(objective):
    """Closed-form terms and d(term)/d(logit), float32 against a float64 autograd reference:
    a row whose only class mate is 150 units of log-similarity away (its mass underflows
    in float32 unless taken again), a row with an excluded pair, one with no class mate."""
    from nca_core.objective.losses import logit_terms_and_weights

    gen = torch.Generator().manual_seed(0)
    logits64 = -5.0 * torch.rand(6, 40, generator=gen, dtype=torch.float64)
    logits64[0, 7] = -150.0
    logits64[1, 3] = -float("inf")
    same = torch.rand(6, 40, generator=gen) < 0.3
    same[0] = False
    same[0, 7] = True
    same[2] = False
    want_terms, want_weights = _logit_terms_by_autograd(logits64, same, objective)
    for dtype, tolerance in ((torch.float64, 1e-12), (torch.float32, 1e-5)):
        terms, weights = logit_terms_and_weights(logits64.to(dtype), same, objective)
        torch.testing.assert_close(terms.double(), want_terms, rtol=tolerance, atol=tolerance * 1e-3)
        torch.testing.assert_close(weights.double(), want_weights, rtol=tolerance, atol=tolerance * 1e-3)
    assert want_terms[2] == 0.0 and float(weights[2].abs().sum()) == 0.0
    if objective == "g":
        assert want_terms[0] < -140.0  # the far row is really far: its term is about -150
