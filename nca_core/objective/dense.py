"""The whole matrix of a small linear problem as one schedule of the engine, in float64,
with the gradient taken straight in the map's parameters.

For a few hundred points the blockwise walk (``engine``) spends its time on the fixed cost
of many small torch calls and an autograd pass through the encoder, not on arithmetic.
Here an evaluation is all points against all (``blocks.all_pairs_value_and_gradient``),
what stays the same between evaluations (the centred inputs, the class-mate mask) is
made once, and the gradient in A is G_Z^T X, so full-batch L-BFGS on iris or wine takes a few
milliseconds (benchmarks/sklearn_parity.py). Float64 throughout also makes the objective
exact for anchors whose class mates are far away.
"""

from __future__ import annotations

import numpy as np
import torch

from .blocks import all_pairs_value_and_gradient
from .kernels import GaussianKernel

__all__ = ["DenseObjective"]



class DenseObjective:
    """n * -objective and its gradient, for a flat vector of the map's parameters: A (d, D)
    raveled, or a diagonal map's D scales (a one-dimensional parameter). Gaussian kernel,
    objective f or g.

    The training side decides when it applies (``training.epochs.dense_applies``) and adds
    the weight decay, as it does to every loss.
    """

    def __init__(self, problem):
        X = problem.X.detach().cpu().double()
        # centred once: every embedding is then centred too, so |a|^2 + |b|^2 - 2ab keeps
        # its digits for data far from the origin (distances and gradients are unchanged)
        self.X = X - X.mean(0)
        y = problem.y.cpu()
        self.mates = (y[:, None] == y).fill_diagonal_(False)
        self.objective = problem.objective
        self.shape = tuple(problem.parameters[0].shape)
        self.diagonal = len(self.shape) == 1

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(loss, gradient) at the flat float64 vector ``x`` (``lbfgs.LBFGS``'s interface).
        Fastest on one thread: threads cost more than they share on matrices this small."""
        params = torch.from_numpy(x).view(self.shape)
        Z = self.X * params if self.diagonal else self.X @ params.T
        value, grad_Z = all_pairs_value_and_gradient(Z, self.mates, self.objective, _GAUSSIAN)
        grad = (grad_Z * self.X).sum(0) if self.diagonal else grad_Z.T @ self.X
        return -value, -grad.reshape(-1).numpy()


_GAUSSIAN = GaussianKernel()
