"""Maps from input space to the embedding. All share ``forward(X) -> Z``.

The training loop only calls ``forward`` and ``parameters()``; a linear or diagonal map
also exposes ``components`` (the d x D matrix A) so the estimator can report it.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["ENCODERS", "DiagonalEncoder", "LinearEncoder", "make_encoder"]

ENCODERS = ("linear", "diagonal")


class LinearEncoder(nn.Module):
    """Z = X A^T with A of shape (n_components, n_features)."""

    def __init__(self, init: torch.Tensor):
        super().__init__()
        self.weight = nn.Parameter(init.clone(memory_format=torch.contiguous_format))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(X, self.weight)

    @property
    def components(self) -> torch.Tensor:
        return self.weight

    def penalty(self) -> torch.Tensor:
        """Squared Frobenius norm of A, for L2 weight decay."""
        return (self.weight * self.weight).sum()


class DiagonalEncoder(nn.Module):
    """Z = X diag(w): an axis-aligned rescaling of each feature (the paper's diagonal A)."""

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


def make_encoder(kind: str, components: torch.Tensor) -> nn.Module:
    """Build an encoder whose map starts at ``components`` (shape (d, D))."""
    if kind == "linear":
        return LinearEncoder(components)
    if kind == "diagonal":
        return DiagonalEncoder(torch.diagonal(components).clone())
    raise ValueError(f"encoder must be one of {ENCODERS}, got {kind!r}")
