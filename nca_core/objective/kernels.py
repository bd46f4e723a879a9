"""Similarity kernels on squared embedding distances, as log-similarities.

NCA's p_ij is a softmax of log k(||z_i - z_j||^2). Goldberger et al. use the Gaussian,
log k = -s. Min et al. (2010) use a heavy-tailed Student-t, k = (1 + s / a)^(-(a + 1) / 2)
with a degrees of freedom: far points keep some pull, so classes can sit close in 2-D
without crushing each other. The kernel's normalising constant cancels in every softmax,
so only the log-similarity matters. A kernel is a small module because ``dof="learn"``
makes a its one trainable parameter.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..config.rules import KERNELS

__all__ = ["KERNELS", "GaussianKernel", "StudentTKernel", "make_kernel"]


class GaussianKernel(nn.Module):
    """log k(s) = -s: the paper's kernel."""

    name = "gaussian"
    learnable = False

    def forward(self, sq_distances: torch.Tensor) -> torch.Tensor:
        return -sq_distances

    def slope(self, sq_distances: torch.Tensor) -> float:
        """d log k / d s: the constant -1, as a number (it multiplies a block of pairs as a
        tensor of -1s would, without making one)."""
        return -1.0

    def extra_repr(self) -> str:
        return "gaussian"


class StudentTKernel(nn.Module):
    """log k(s) = -(a + 1) / 2 * log(1 + s / a), a > 0 degrees of freedom.

    With ``learn=True`` a is trained by gradient through a = MIN_DOF + softplus(raw), which
    keeps it positive without clipping (a floor, because softplus underflows to 0 after a
    large step and a = 0 divides by zero).
    """

    name = "student-t"
    MIN_DOF = 1e-3

    def __init__(self, dof: float, learn: bool = False):
        super().__init__()
        if not (dof > 0 and math.isfinite(dof)):
            raise ValueError(f"dof must be a positive number, got {dof!r}")
        excess = max(dof - self.MIN_DOF, 1e-12)
        raw = torch.tensor(excess + math.log(-math.expm1(-excess)), dtype=torch.float64)  # softplus^-1
        if learn:
            self.raw_dof = nn.Parameter(raw)
        else:
            self.register_buffer("raw_dof", raw)

    @property
    def dof(self) -> torch.Tensor:
        return self.MIN_DOF + nn.functional.softplus(self.raw_dof)

    @property
    def learnable(self) -> bool:
        return isinstance(self.raw_dof, nn.Parameter)

    def forward(self, sq_distances: torch.Tensor) -> torch.Tensor:
        a = self.dof.to(sq_distances.dtype)
        return -0.5 * (a + 1.0) * torch.log1p(sq_distances / a)

    @torch.no_grad()
    def slope(self, sq_distances: torch.Tensor) -> torch.Tensor:
        """d log k / d s = -(a + 1) / (2 (a + s)), the shape of ``sq_distances``."""
        a = float(self.dof)
        return (sq_distances + a).reciprocal_().mul_(-0.5 * (a + 1.0))

    @torch.no_grad()
    def dof_slope(self, sq_distances: torch.Tensor, log_k: torch.Tensor) -> torch.Tensor:
        """d log k / d a = log k / (a + 1) + (a + 1) s / (2 a (a + s))."""
        a = float(self.dof)
        ratio = sq_distances / (sq_distances + a)
        return log_k / (a + 1.0) + ratio.mul_((a + 1.0) / (2.0 * a))

    def extra_repr(self) -> str:
        return f"dof={float(self.dof):.4g}, learn={self.learnable}"


def make_kernel(kind: str, dof: float | str | None = None, n_components: int = 2) -> nn.Module:
    """Build a kernel; Student-t ``dof`` None means the paper's choice, d - 1 (at least 1)."""
    if kind == "gaussian":
        return GaussianKernel()
    if kind == "student-t":
        start = float(max(1, n_components - 1))
        if dof is None or dof == "learn":
            return StudentTKernel(start, learn=dof == "learn")
        return StudentTKernel(float(dof))
    raise ValueError(f"kernel must be one of {KERNELS}, got {kind!r}")
