"""Encoders: forward maps, components, penalties and construction, against explicit maths."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from nca_core.training.encoders import (
    DEFAULT_HIDDEN_SIZES,
    ENCODERS,
    DiagonalEncoder,
    LinearEncoder,
    MLPEncoder,
    make_encoder,
)

DTYPES = [torch.float32, torch.float64]
DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")),
]


def _tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == torch.float32 else {"rtol": 1e-12, "atol": 1e-12}


@pytest.fixture
def X_wine(wine):
    """Standardised wine, (178, 13), as a float64 numpy array."""
    return np.asarray(wine[0], dtype=np.float64)


def _random(shape, seed, dtype=torch.float64):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def _linears(encoder: MLPEncoder) -> list[nn.Linear]:
    return [m for m in encoder.layers if isinstance(m, nn.Linear)]


# Linear -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_forward_is_x_times_a_transposed(X_wine, dtype):
    A = _random((3, 13), 0, dtype)
    encoder = LinearEncoder(A)
    Z = encoder(torch.as_tensor(X_wine, dtype=dtype))
    assert Z.shape == (178, 3) and Z.dtype == dtype
    np.testing.assert_allclose(Z.detach().numpy(), X_wine @ A.double().numpy().T, **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows", [100, 1024, 1300])  # under one block, whole blocks, blocks and a rest
def test_linear_gradients_sum_over_blocks_of_rows_to_the_float64_products(rows, dtype):
    """d(sum Z * G)/dA = G^T X and d/dX = G A, in the dtype given, against float64 maths,
    also for a non-contiguous X (the plain product)."""
    X64, G64, A64 = _random((rows, 30), 1), _random((rows, 3), 2), _random((3, 30), 3)
    for X_in in (X64.to(dtype), X64.T.contiguous().to(dtype).T):
        X = X_in.clone().requires_grad_(True) if X_in.is_contiguous() else X_in.requires_grad_(True)
        encoder = LinearEncoder(A64.to(dtype))
        (encoder(X) * G64.to(dtype)).sum().backward()
        want = G64.T @ X64  # float32 sums of ~1000 terms keep about 1e-6 of their largest
        scale = 1e-6 * float(want.abs().max()) if dtype == torch.float32 else 1e-12
        torch.testing.assert_close(encoder.weight.grad.double(), want, rtol=0, atol=scale)
        torch.testing.assert_close(X.grad.double(), G64 @ A64, **_tol(dtype))


def test_linear_components_are_a_and_penalty_is_its_squared_frobenius_norm():
    A = torch.tensor([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]], dtype=torch.float64)
    encoder = LinearEncoder(A)
    assert encoder.components is encoder.weight
    torch.testing.assert_close(encoder.components, A, rtol=0, atol=0)
    assert encoder.penalty().item() == 1 + 4 + 0.25 + 9 + 0 + 1
    encoder.penalty().backward()
    torch.testing.assert_close(encoder.weight.grad, 2 * A)


def test_linear_copies_its_init():
    A = torch.ones(2, 4)
    encoder = LinearEncoder(A)
    A.mul_(7)
    assert torch.equal(encoder.weight.detach(), torch.ones(2, 4))
    assert encoder.weight.is_contiguous() and encoder.weight.requires_grad


# Diagonal -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_diagonal_forward_rescales_each_feature(X_wine, dtype):
    w = _random((13,), 1, dtype)
    encoder = DiagonalEncoder(w)
    Z = encoder(torch.as_tensor(X_wine, dtype=dtype))
    assert Z.shape == (178, 13) and Z.dtype == dtype
    np.testing.assert_allclose(Z.detach().numpy(), X_wine * w.double().numpy(), **_tol(dtype))
    # The same map as the linear encoder with A = diag(w).
    torch.testing.assert_close(Z, LinearEncoder(torch.diag(w))(torch.as_tensor(X_wine, dtype=dtype)))


def test_diagonal_components_are_diag_w_and_penalty_is_sum_of_squares():
    w = torch.tensor([2.0, -1.0, 0.5])
    encoder = DiagonalEncoder(w)
    torch.testing.assert_close(encoder.components, torch.diag(w), rtol=0, atol=0)
    assert encoder.penalty().item() == 4 + 1 + 0.25


# MLP ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_mlp_forward_matches_an_explicit_relu_network(X_wine, dtype):
    encoder = MLPEncoder(13, 2, (8, 5), torch.Generator().manual_seed(0), dtype=dtype)
    Z = encoder(torch.as_tensor(X_wine, dtype=dtype))
    assert Z.shape == (178, 2) and Z.dtype == dtype
    h = X_wine
    layers = _linears(encoder)
    assert [(m.in_features, m.out_features) for m in layers] == [(13, 8), (8, 5), (5, 2)]
    for i, m in enumerate(layers):
        h = h @ m.weight.detach().double().numpy().T + m.bias.detach().double().numpy()
        if i < len(layers) - 1:  # ReLU on hidden layers only; the output layer is linear
            h = np.maximum(h, 0.0)
    np.testing.assert_allclose(Z.detach().numpy(), h, **_tol(dtype))
    assert (Z < 0).any()  # a linear output, not a ReLU


def test_mlp_has_no_components_and_penalises_weights_not_biases():
    encoder = MLPEncoder(4, 2, (3,), torch.Generator().manual_seed(1), dtype=torch.float64)
    assert encoder.components is None
    expected = sum(float((m.weight.detach() ** 2).sum()) for m in _linears(encoder))
    with_biases = expected + sum(float((m.bias.detach() ** 2).sum()) for m in _linears(encoder))
    assert encoder.penalty().item() == pytest.approx(expected, rel=1e-12)
    assert encoder.penalty().item() != pytest.approx(with_biases)


def test_mlp_is_reproducible_from_a_seeded_generator():
    first = MLPEncoder(13, 2, (16, 16), torch.Generator().manual_seed(42))
    again = MLPEncoder(13, 2, (16, 16), torch.Generator().manual_seed(42))
    other = MLPEncoder(13, 2, (16, 16), torch.Generator().manual_seed(43))
    for a, b, c in zip(first.parameters(), again.parameters(), other.parameters()):
        assert torch.equal(a, b)
        assert not torch.equal(a, c)


def test_mlp_draws_from_the_generator_not_the_global_seed():
    torch.manual_seed(0)
    first = MLPEncoder(5, 2, (4,), torch.Generator().manual_seed(7))
    torch.manual_seed(1)
    again = MLPEncoder(5, 2, (4,), torch.Generator().manual_seed(7))
    assert all(torch.equal(a, b) for a, b in zip(first.parameters(), again.parameters()))


def test_mlp_weights_fill_pytorchs_default_uniform_range():
    encoder = MLPEncoder(64, 10, DEFAULT_HIDDEN_SIZES, torch.Generator().manual_seed(0))
    assert encoder.hidden_sizes == (500, 500)
    for m in _linears(encoder):
        bound = 1.0 / m.in_features**0.5
        for p in (m.weight, m.bias):
            assert p.abs().max().item() <= bound
        # Uniform on [-bound, bound]: extremes near the bound, mean near 0, variance bound^2 / 3.
        w = m.weight.detach().double()
        assert w.abs().max().item() > 0.99 * bound
        assert abs(w.mean().item()) < 0.05 * bound
        assert w.var().item() == pytest.approx(bound**2 / 3, rel=0.05)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_mlp_honours_dtype_and_device(dtype, device):
    encoder = MLPEncoder(6, 3, (4,), torch.Generator().manual_seed(0), dtype=dtype, device=device)
    for p in encoder.parameters():
        assert p.dtype == dtype and p.device.type == device
    Z = encoder(torch.zeros(2, 6, dtype=dtype, device=device))
    assert Z.dtype == dtype and Z.device.type == device and Z.shape == (2, 3)


# make_encoder -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_make_linear_starts_at_init_in_the_asked_dtype_and_device(dtype, device):
    init = _random((2, 5), 3)
    encoder = make_encoder("linear", 5, 2, init=init, dtype=dtype, device=device)
    assert isinstance(encoder, LinearEncoder)
    assert encoder.weight.dtype == dtype and encoder.weight.device.type == device
    torch.testing.assert_close(encoder.components.cpu(), init.to(dtype), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_make_diagonal_keeps_the_diagonal_of_init(dtype, device):
    init = _random((4, 4), 4)
    encoder = make_encoder("diagonal", 4, 4, init=init, dtype=dtype, device=device)
    assert isinstance(encoder, DiagonalEncoder)
    assert encoder.scale.dtype == dtype and encoder.scale.device.type == device
    torch.testing.assert_close(encoder.scale.detach().cpu(), torch.diagonal(init).to(dtype), rtol=0, atol=0)
    torch.testing.assert_close(encoder.components.cpu(), torch.diag(torch.diagonal(init)).to(dtype))


def test_make_diagonal_does_not_share_memory_with_init():
    init = torch.eye(3)
    encoder = make_encoder("diagonal", 3, 3, init=init)
    init.mul_(5)
    assert torch.equal(encoder.scale.detach(), torch.ones(3))


@pytest.mark.parametrize("dtype", DTYPES)
def test_make_mlp_is_the_seeded_mlp(dtype):
    made = make_encoder(
        "mlp", 13, 2, hidden_sizes=(7,), generator=torch.Generator().manual_seed(5), dtype=dtype
    )
    direct = MLPEncoder(13, 2, (7,), torch.Generator().manual_seed(5), dtype=dtype)
    assert isinstance(made, MLPEncoder) and made.hidden_sizes == (7,)
    for a, b in zip(made.parameters(), direct.parameters()):
        assert a.dtype == dtype and torch.equal(a, b)


def test_make_mlp_defaults_to_two_hidden_layers_of_500():
    encoder = make_encoder("mlp", 13, 2, generator=torch.Generator().manual_seed(0))
    shapes = [(m.in_features, m.out_features) for m in _linears(encoder)]
    assert shapes == [(13, 500), (500, 500), (500, 2)]
    assert next(encoder.parameters()).dtype == torch.float32


@pytest.mark.parametrize("kind", ["linear", "diagonal"])
def test_make_linear_or_diagonal_needs_init(kind):
    with pytest.raises(ValueError, match=rf"a {kind} map needs init of shape \(2, 5\), got None"):
        make_encoder(kind, 5, 2)


@pytest.mark.parametrize("kind", ["linear", "diagonal"])
def test_make_linear_or_diagonal_checks_the_shape_of_init(kind):
    with pytest.raises(ValueError, match=rf"a {kind} map needs init of shape \(2, 5\), got \(5, 2\)"):
        make_encoder(kind, 5, 2, init=torch.zeros(5, 2))


def test_make_encoder_refuses_an_unknown_kind():
    assert ENCODERS == ("linear", "diagonal", "mlp")
    with pytest.raises(
        ValueError, match=r"encoder must be one of \('linear', 'diagonal', 'mlp'\), got 'conv'"
    ):
        make_encoder("conv", 5, 2, init=torch.zeros(2, 5))
