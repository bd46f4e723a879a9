"""numpy arrays seen as CPU tensors without a copy, read-only ones included."""

from __future__ import annotations

import warnings

import numpy as np
import torch

__all__ = ["cpu_view"]


def cpu_view(a: np.ndarray) -> torch.Tensor:
    """``a`` as a CPU tensor sharing its memory (copied only where it is not contiguous).

    torch warns on a read-only array, since the tensor could write to it; the app's
    datasets are read-only because every session shares them, and the callers here only
    read, so the warning is silenced rather than paid for with a copy.
    """
    a = np.ascontiguousarray(a)
    if a.flags.writeable:
        return torch.from_numpy(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(a)
