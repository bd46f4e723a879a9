"""The objective of an embedding as one autograd operation, and one anchor's p_ij.

``nca_objective`` runs the training engine (``engine``) forward and, when a gradient is
wanted, hands its closed-form gradient to autograd, so the function users call and the loop
that trains are one code path, in blocks (never an (n, n) matrix). The autograd
transcription it replaces lives in the tests as their reference.
"""

from __future__ import annotations

import torch

from .engine import loss_gradient, objective_value
from .kernels import GaussianKernel
from .weights import OBJECTIVES, terms_in_value

__all__ = ["nca_objective", "selection_probabilities"]


def nca_objective(
    Z: torch.Tensor, y, objective: str = "f", kernel: torch.nn.Module | None = None
) -> torch.Tensor:
    """The paper's objective on an embedding, to be maximised.

    Parameters
    ----------
    Z : Tensor of shape (n_samples, d)
        The embedding A x_i (or f(x_i)) of every point.
    y : array-like of shape (n_samples,)
        Integer class labels.
    objective : {"f", "g", "mcml"}, default="f"
        "f": sum_i p_i, the expected number of points classified correctly (eq. 3);
        "g": sum_i log p_i (eq. 6), anchors without a class mate left out;
        "mcml": -KL(P || Q) of Min et al. (2010), P uniform over same-class pairs.
    kernel : torch.nn.Module or None, default=None
        A kernel of ``objective.kernels`` (``GaussianKernel``, ``StudentTKernel``); None
        is the paper's Gaussian; a Student-t kernel with a learnable dof receives
        d(objective)/d(dof) too.

    Returns
    -------
    Tensor of shape ()
        Backward gives the paper's gradients, eqs. (5) and (7) (once differentiable).
        Where nothing asks for a gradient (no input requires one, or under
        ``torch.no_grad``), only the value is computed.

    References
    ----------
    - Goldberger, Roweis, Hinton and Salakhutdinov (2004), Neighbourhood Components
      Analysis, NIPS 17: f, g and their gradients, eqs. (3) to (7).
    - Min, van der Maaten, Yuan, Bonner and Zhang (2010), Deep Supervised t-Distributed
      Embedding, ICML: the Student-t kernel and MCML.

    Examples
    --------
    >>> import torch
    >>> from nca_core import nca_objective
    >>> Z = torch.tensor([[0.0, 0.0], [0.5, 0.0], [1.0, 1.0], [1.5, 1.0]],
    ...                  dtype=torch.float64, requires_grad=True)
    >>> f = nca_objective(Z, y := [0, 0, 1, 1], "f")
    >>> round(f.item(), 3)
    2.932
    >>> f.backward()
    >>> bool(nca_objective(Z.detach() + 0.1 * Z.grad, y, "f") > f)  # a step up the gradient
    True
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    kernel = GaussianKernel() if kernel is None else kernel
    y = torch.as_tensor(y, device=Z.device)
    dof = kernel.dof if getattr(kernel, "learnable", False) else None
    needs_grad = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (Z, dof))
    if needs_grad:
        return _Objective.apply(Z, dof, y, objective, kernel)
    order, labels = _class_sorted(y)
    anchors = torch.arange(len(Z), device=Z.device)
    value = objective_value(Z.detach()[order], labels, anchors, objective, kernel)
    return Z.new_tensor(value * terms_in_value(objective, len(Z)))  # the paper's sums


def _class_sorted(y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The order that sorts rows by class, and the sorted labels as 0..C-1 (what the
    engine's class bounds need), for labels in any order and of any values."""
    order = torch.argsort(y, stable=True)
    return order, torch.unique(y, return_inverse=True)[1][order]


class _Objective(torch.autograd.Function):
    """Forward: the engine's value and gradient on class-sorted rows; backward: that
    gradient, put back in the caller's order and scaled by the incoming one."""

    @staticmethod
    def forward(ctx, Z, dof, y, objective, kernel):
        n = len(Z)
        order, labels = _class_sorted(y)
        grad, grad_dof, value = loss_gradient(
            Z.detach()[order], labels, torch.arange(n, device=Z.device), objective, kernel
        )
        terms = terms_in_value(objective, n)
        ctx.grad_Z = torch.empty_like(grad).index_copy_(0, order, grad).mul_(-terms)  # its loss: -objective
        ctx.grad_dof = -grad_dof * terms
        return Z.new_tensor(value * terms)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_output):
        grad_dof = None
        if ctx.needs_input_grad[1]:
            grad_dof = grad_output * ctx.grad_dof
        return grad_output * ctx.grad_Z, grad_dof, None, None, None


def selection_probabilities(Z, anchor: int, dof: float | None = None):
    """p_ij of one anchor i to every point j (p_ii = 0), as a float64 numpy array.

    Z : array of shape (n, d), the embedding A x.
    dof : the Student-t kernel's degrees of freedom (``Snapshot.dof``); None for the Gaussian.
    """
    import numpy as np

    from .kernels import StudentTKernel

    Z = torch.as_tensor(np.asarray(Z, dtype=np.float64))
    kernel = GaussianKernel() if dof is None else StudentTKernel(float(dof)).double()
    logits = kernel(((Z - Z[anchor]) ** 2).sum(1))
    logits[anchor] = float("-inf")
    return torch.softmax(logits, 0).numpy()
