"""Buffers for the engine's large matrices, kept from one call to the next."""

from __future__ import annotations

import torch

__all__ = ["Workspace"]


class Workspace:
    """Named flat buffers, each reused across blocks and calls.

    A fresh matrix of a few megabytes or more costs page faults when first written: for the
    engine's (block, n) matrix as long as the product that fills it, and for its per-step
    (n, d) matrices about as long as the passes that fill them. One training run keeps one
    workspace. Each name holds one matrix at a time, so one engine at a time may use a
    workspace: ``holder`` is the one that last took it (``objective.gaussian.GaussianBlocks``
    checks it is still its own).
    """

    def __init__(self):
        self._buffers: dict[str, torch.Tensor] = {}
        self.holder: object | None = None

    def buffer(self, size: int, like: torch.Tensor, name: str) -> torch.Tensor:
        """A flat tensor of at least ``size`` elements of ``like``'s dtype and device, the
        same storage as the last call with this ``name`` where that is large enough."""
        b = self._buffers.get(name)
        if b is None or b.numel() < size or b.dtype != like.dtype or b.device != like.device:
            self._buffers[name] = b = torch.empty(size, dtype=like.dtype, device=like.device)
        return b

    def matrix(self, rows: int, columns: int, like: torch.Tensor, name: str) -> torch.Tensor:
        """A (rows, columns) view of the buffer ``name``, its contents left as they were."""
        return self.buffer(rows * columns, like, name)[: rows * columns].view(rows, columns)

    def clear(self) -> None:
        """Let every buffer go (a strategy that no longer needs them frees the memory)."""
        self._buffers.clear()
        self.holder = None
