"""Data-parallel NCA across processes with ``torch.distributed`` (gloo on CPU, NCCL on GPU).

Every process holds the whole training set, sorted the same way. Process r embeds only
its share of the rows (through a ``DistributedDataParallel`` copy of the encoder) and the
shares are all-gathered into the embedding of every point, so each anchor still takes
neighbours from the whole set. Anchors are dealt round-robin across processes; each
computes the gradient of its anchors' terms with respect to all embeddings, the
gradients are summed with all-reduce, and each process back-propagates the rows it
embedded; DDP then averages the encoder's gradients. The result is the single-process
gradient, so every process takes the same step.

``LOCAL`` is the one-process version of the same interface, used when nothing is
distributed.
"""

from __future__ import annotations

import os

import torch
from torch import distributed as dist
from torch import nn

__all__ = [
    "LOCAL",
    "DataParallelGroup",
    "LocalGroup",
    "active_world_size",
    "barrier",
    "init_from_environment",
    "process_device",
    "shutdown",
]


class LocalGroup:
    """One process: embeds every row itself and owns every anchor."""

    rank = 0
    world_size = 1
    rows = slice(None)

    def embed(self, encoder: nn.Module, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(embedding of this process's rows, with gradient; embedding of all rows, detached)."""
        Z = encoder(X)
        return Z, Z.detach()

    def my_anchors(self, anchors: torch.Tensor) -> torch.Tensor:
        return anchors

    def sum_(self, tensor: torch.Tensor) -> torch.Tensor:
        return tensor


LOCAL = LocalGroup()


class DataParallelGroup:
    """This process's part in data-parallel training over the default process group."""

    def __init__(self, encoder: nn.Module, n_samples: int):
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        sizes = [len(part) for part in torch.arange(n_samples).tensor_split(self.world_size)]
        starts = [sum(sizes[:r]) for r in range(self.world_size)]
        self.sizes, self.chunk = sizes, max(sizes)
        self.rows = slice(starts[self.rank], starts[self.rank] + sizes[self.rank])
        device = next(encoder.parameters()).device
        self.module = nn.parallel.DistributedDataParallel(
            encoder, device_ids=[device.index] if device.type == "cuda" else None
        )

    def embed(self, encoder: nn.Module, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        Z_mine = self.module(X[self.rows])
        padded = Z_mine.new_zeros(self.chunk, Z_mine.shape[1])
        padded[: len(Z_mine)] = Z_mine.detach()
        parts = [torch.empty_like(padded) for _ in range(self.world_size)]
        dist.all_gather(parts, padded)
        Z_all = torch.cat([part[:size] for part, size in zip(parts, self.sizes)])
        return Z_mine, Z_all

    def my_anchors(self, anchors: torch.Tensor) -> torch.Tensor:
        """Every world_size-th anchor: class-sorted anchors stay class-sorted."""
        return anchors[self.rank :: self.world_size]

    def sum_(self, tensor: torch.Tensor) -> torch.Tensor:
        dist.all_reduce(tensor)
        return tensor


def active_world_size() -> int:
    """Processes in the default group (1 when torch.distributed is not in use)."""
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def init_from_environment(requested_device: str = "auto") -> tuple[int, int, str]:
    """Join the group that ``torchrun`` describes in the environment, once.

    Returns (rank, world_size, this process's device: ``process_device``); (0, 1,
    ``requested_device``) when not launched by torchrun. The backend is NCCL for processes
    on a GPU each, else gloo, which all-reduces CPU tensors.
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size <= 1:
        return 0, 1, requested_device
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    local_processes = int(os.environ.get("LOCAL_WORLD_SIZE", str(world_size)))
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    device = process_device(requested_device, local_rank, local_processes, gpus)
    if not dist.is_initialized():
        on_gpu = torch.device(device).type == "cuda"
        if on_gpu:
            torch.cuda.set_device(torch.device(device))
        dist.init_process_group("nccl" if on_gpu else "gloo")
    return dist.get_rank(), dist.get_world_size(), device


def process_device(requested: str, local_rank: int, local_processes: int, gpus: int) -> str:
    """The device of one of ``local_processes`` data-parallel processes on a machine with
    ``gpus`` GPUs. "auto" means its own GPU when every process there can have one (NCCL
    refuses two on one GPU), else the CPU; "cuda" means its own GPU, and is refused where
    there are too few; a numbered device or "cpu" is kept."""
    if requested == "auto":
        return f"cuda:{local_rank}" if local_processes <= gpus else "cpu"
    if requested == "cuda":
        if local_processes > gpus:
            raise ValueError(
                f"device 'cuda' gives each of the {local_processes} processes on this machine a GPU of "
                f"its own, but it has {gpus}: start at most {gpus} per machine, or use device 'auto' or 'cpu'"
            )
        return f"cuda:{local_rank}"
    return requested


def barrier() -> None:
    """Wait for every process of the group (nothing to wait for without one)."""
    if active_world_size() > 1:
        dist.barrier()


def shutdown() -> None:
    """Leave the process group, if this process joined one."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
