"""Maps from input space to the embedding. All share one interface.

``forward(X) -> Z``, ``parameters()``, ``penalty()`` (the L2 term) and ``components``:
the d x D matrix A for a linear or diagonal map, None for a nonlinear one. The training
loop uses nothing else, so it does not care which encoder it trains.
"""

from __future__ import annotations

import itertools

import torch
from torch import nn

from ..config.rules import ENCODERS, NETWORK_HIDDEN_SIZES

__all__ = [
    "DEFAULT_HIDDEN_SIZES",
    "ENCODERS",
    "DiagonalEncoder",
    "LinearEncoder",
    "MLPEncoder",
    "make_encoder",
]

DEFAULT_HIDDEN_SIZES = NETWORK_HIDDEN_SIZES


class LinearEncoder(nn.Module):
    """Z = X A^T with A of shape (n_components, n_features)."""

    name = "linear"

    def __init__(self, init: torch.Tensor):
        super().__init__()
        self.weight = nn.Parameter(init.clone(memory_format=torch.contiguous_format))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return _LinearMap.apply(X, self.weight)

    @property
    def components(self) -> torch.Tensor:
        return self.weight

    def penalty(self) -> torch.Tensor:
        """Squared Frobenius norm of A, for L2 weight decay."""
        return (self.weight * self.weight).sum()


class _LinearMap(torch.autograd.Function):
    """X A^T, whose gradient in A sums G^T X over blocks of rows (``_summed_in_blocks``)."""

    @staticmethod
    def forward(ctx, X: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(X, weight)
        return nn.functional.linear(X, weight)

    @staticmethod
    def backward(ctx, grad_Z: torch.Tensor):
        X, weight = ctx.saved_tensors
        grad_X = grad_Z @ weight if ctx.needs_input_grad[0] else None
        grad_weight = _summed_in_blocks(grad_Z, X) if ctx.needs_input_grad[1] else None
        return grad_X, grad_weight


GRADIENT_BLOCK_ROWS = 512


def _summed_in_blocks(G: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """G^T X as a batch of products over blocks of ``GRADIENT_BLOCK_ROWS`` rows, then summed.

    One product with a few output rows and many thousand summed rows runs on CPUs at a
    fraction of the speed of the same sum split into blocks (measured in commit 368d2c4).
    """
    if X.dim() != 2:
        return G.reshape(-1, G.shape[-1]).T @ X.reshape(-1, X.shape[-1])
    rows = GRADIENT_BLOCK_ROWS
    whole = len(X) // rows * rows
    if whole == 0 or not X.is_contiguous():
        return G.T @ X
    G = G.contiguous()
    blocks = torch.bmm(G[:whole].view(-1, rows, G.shape[1]).transpose(1, 2), X[:whole].view(-1, rows, X.shape[1]))
    total = blocks.sum(0)
    if whole < len(X):
        total += G[whole:].T @ X[whole:]
    return total


class DiagonalEncoder(nn.Module):
    """Z = X diag(w): an axis-aligned rescaling of each feature (the paper's diagonal A)."""

    name = "diagonal"

    def __init__(self, init: torch.Tensor):
        super().__init__()
        self.scale = nn.Parameter(init.clone(memory_format=torch.contiguous_format))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return X * self.scale

    @property
    def components(self) -> torch.Tensor:
        return torch.diag(self.scale)

    def penalty(self) -> torch.Tensor:
        return (self.scale * self.scale).sum()


class MLPEncoder(nn.Module):
    """Z = f(X), a multilayer perceptron with ReLU hidden layers and a linear output layer.

    Nonlinear NCA (Salakhutdinov & Hinton, 2007; Min et al., 2010 used D-500-500-2000-d).
    Layers start from PyTorch's default initialisation, drawn from ``generator``.
    """

    name = "mlp"

    def __init__(
        self,
        n_features: int,
        n_components: int,
        hidden_sizes=DEFAULT_HIDDEN_SIZES,
        generator: torch.Generator | None = None,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str = "cpu",
    ):
        super().__init__()
        sizes = [n_features, *[int(h) for h in hidden_sizes], n_components]
        layers: list[nn.Module] = []
        for fan_in, fan_out in itertools.pairwise(sizes):
            linear = nn.Linear(fan_in, fan_out, dtype=dtype)
            bound = 1.0 / fan_in**0.5
            with torch.no_grad():  # PyTorch's default range, from our own generator
                linear.weight.uniform_(-bound, bound, generator=generator)
                linear.bias.uniform_(-bound, bound, generator=generator)
            layers += [linear, nn.ReLU()]
        self.layers = nn.Sequential(*layers[:-1]).to(device)
        self.hidden_sizes = tuple(int(h) for h in hidden_sizes)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.layers(X)

    @property
    def components(self) -> None:
        return None

    def penalty(self) -> torch.Tensor:
        """Sum of squared weights (biases are not penalised)."""
        return sum((m.weight * m.weight).sum() for m in self.layers if isinstance(m, nn.Linear))


def make_encoder(
    kind: str,
    n_features: int,
    n_components: int,
    *,
    init: torch.Tensor | None = None,
    hidden_sizes=DEFAULT_HIDDEN_SIZES,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str = "cpu",
) -> nn.Module:
    """An encoder from ``n_features`` inputs to ``n_components`` outputs.

    A linear or diagonal map starts at ``init``, the (n_components, n_features) matrix A;
    an MLP draws its weights from ``generator`` and takes no ``init``.
    """
    if kind == "mlp":
        return MLPEncoder(n_features, n_components, hidden_sizes, generator, dtype, device)
    if kind not in ENCODERS:
        raise ValueError(f"encoder must be one of {ENCODERS}, got {kind!r}")
    if init is None or tuple(init.shape) != (n_components, n_features):
        shape = None if init is None else tuple(init.shape)
        raise ValueError(f"a {kind} map needs init of shape {(n_components, n_features)}, got {shape}")
    init = init.to(device=device, dtype=dtype)
    if kind == "linear":
        return LinearEncoder(init)
    return DiagonalEncoder(torch.diagonal(init).clone())
