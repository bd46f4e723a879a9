"""Adam and SGD with Nesterov momentum, as small plain-tensor updates.

They follow ``torch.optim.Adam`` and ``torch.optim.SGD(momentum=0.9, nesterov=True)`` step
for step (a test checks), but a process's first ``torch.optim`` step imports torch's
compiler stack (torch._dynamo, sympy, torch.distributed): well over a second, paid by the
first fit of every program. These import nothing.
"""

from __future__ import annotations

import math

import torch

__all__ = ["SGD", "Adam", "cosine_factor"]


def cosine_factor(progress: float) -> float:
    """The share of the base step size at ``progress`` (0 to 1) through training: a half
    cosine from 1 down to 0 (Loshchilov and Hutter, 2017, without restarts)."""
    return 0.5 * (1.0 + math.cos(math.pi * min(max(progress, 0.0), 1.0)))


class _Optimizer:
    def __init__(self, params, lr: float):
        self.params = [p for p in params if p.requires_grad]
        self.param_groups = [{"lr": lr}]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None


class Adam(_Optimizer):
    """Adam (Kingma and Ba, 2015) with torch's defaults: betas (0.9, 0.999), eps 1e-8."""

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8):
        super().__init__(params, lr)
        self.betas, self.eps, self.t = betas, eps, 0
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        (b1, b2), lr = self.betas, self.param_groups[0]["lr"]
        step_size = lr / (1 - b1**self.t)
        root_correction = math.sqrt(1 - b2**self.t)
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:
                continue
            m.lerp_(p.grad, 1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            p.addcdiv_(m, v.sqrt().div_(root_correction).add_(self.eps), value=-step_size)


class SGD(_Optimizer):
    """Stochastic gradient descent with Nesterov momentum (torch's form, no dampening)."""

    def __init__(self, params, lr: float, momentum: float = 0.9):
        super().__init__(params, lr)
        self.momentum = momentum
        self.buffers: list[torch.Tensor | None] = [None] * len(self.params)

    @torch.no_grad()
    def step(self) -> None:
        lr = self.param_groups[0]["lr"]
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            if self.buffers[i] is None:
                self.buffers[i] = p.grad.clone()
            else:
                self.buffers[i].mul_(self.momentum).add_(p.grad)
            p.add_(p.grad.add(self.buffers[i], alpha=self.momentum), alpha=-lr)
