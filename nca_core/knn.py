"""Batched k-nearest-neighbour classification in torch, for any embedding.

Queries are processed in blocks so that the distance block never exceeds
``max_block_elements`` entries: 10,000 queries against 60,000 references hold one
block of at most that size (64 MB in float32 by default), never the full matrix.
"""

from __future__ import annotations

import numpy as np
import torch

from .device import resolve_device

__all__ = ["knn_accuracy", "knn_predict", "leave_one_out_accuracy"]

DEFAULT_BLOCK_ELEMENTS = 1 << 24


def _as_tensor(a, device: torch.device) -> torch.Tensor:
    if not isinstance(a, torch.Tensor):
        a = np.asarray(a)
        if not a.flags.writeable:  # shared read-only arrays: torch wants its own copy
            a = a.copy()
    t = torch.as_tensor(a)
    if not t.is_floating_point():
        t = t.double()
    return t.to(device)


def _vote(neighbour_labels: torch.Tensor, n_classes: int) -> torch.Tensor:
    """Majority vote over each row of (n_query, k) class indices ordered nearest first.

    Ties between classes go to the tied class whose member ranks nearest, which is
    deterministic and, for k = 1, the plain nearest neighbour.
    """
    n_query, k = neighbour_labels.shape
    counts = torch.zeros(n_query, n_classes, dtype=torch.long, device=neighbour_labels.device)
    counts.scatter_add_(1, neighbour_labels, torch.ones_like(neighbour_labels))
    ranks = torch.arange(k, device=neighbour_labels.device).expand(n_query, k)
    first_rank = torch.full((n_query, n_classes), k, dtype=torch.long, device=counts.device)
    first_rank.scatter_reduce_(1, neighbour_labels, ranks, reduce="amin")
    return (counts * (k + 1) - first_rank).argmax(1)


def nearest_indices(
    Q: torch.Tensor,
    R: torch.Tensor,
    k: int,
    self_index: torch.Tensor | None,
    max_block_elements: int,
):
    """Yield (start, indices of the k nearest references, nearest first) for blocks of queries.

    ``self_index[i]`` is the position of query i among the references (it may not vote).
    """
    ref_sq = (R * R).sum(1)
    block = max(1, max_block_elements // max(1, len(R)))
    for start in range(0, len(Q), block):
        q = Q[start : start + block]
        # ||q||^2 is constant along a row, so it does not change the ranking.
        dist = ref_sq - 2.0 * q @ R.T
        if self_index is not None:
            rows = torch.arange(len(q), device=Q.device)
            dist[rows, self_index[start : start + block]] = float("inf")
        yield start, dist.topk(k, dim=1, largest=False).indices


def knn_predict(
    Z_query,
    Z_ref,
    y_ref,
    k: int = 5,
    *,
    self_index=None,
    device: str | torch.device | None = "auto",
    max_block_elements: int = DEFAULT_BLOCK_ELEMENTS,
) -> np.ndarray:
    """Predict labels of queries by a majority vote of their k nearest references.

    Parameters
    ----------
    Z_query : array or Tensor of shape (n_query, d)
    Z_ref : array or Tensor of shape (n_ref, d)
    y_ref : array of shape (n_ref,), any label type
    k : int
        Number of neighbours; capped at the number of references available.
    self_index : array of shape (n_query,), optional
        Leave-one-out: query i is reference ``self_index[i]`` and does not vote for itself.

    Returns
    -------
    ndarray of shape (n_query,) with labels drawn from ``y_ref``.
    """
    dev = resolve_device(device)
    classes, y_index = np.unique(np.asarray(y_ref), return_inverse=True)
    Q, R = _as_tensor(Z_query, dev), _as_tensor(Z_ref, dev)
    R = R.to(Q.dtype)
    if Q.ndim != 2 or R.ndim != 2 or Q.shape[1] != R.shape[1]:
        raise ValueError(
            f"queries {tuple(Q.shape)} and references {tuple(R.shape)} must be 2-D with equal widths"
        )
    if len(R) != len(y_index):
        raise ValueError(f"{len(R)} references but {len(y_index)} labels")
    if self_index is not None:
        self_index = torch.as_tensor(np.asarray(self_index), device=dev)
        if self_index.shape != (len(Q),):
            raise ValueError(f"self_index must have one entry per query ({len(Q)})")
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    k = min(k, len(R) - int(self_index is not None))
    if k < 1:
        raise ValueError("need at least one reference other than the query itself")
    labels = torch.as_tensor(y_index, device=dev)
    predicted = np.empty(len(Q), dtype=np.int64)
    for start, idx in nearest_indices(Q, R, k, self_index, max_block_elements):
        predicted[start : start + len(idx)] = _vote(labels[idx], len(classes)).cpu().numpy()
    return classes[predicted]


def knn_accuracy(Z_train, y_train, Z_test, y_test, k: int = 5, **kwargs) -> float:
    """Fraction of test points whose k nearest training points vote for their label."""
    predicted = knn_predict(Z_test, Z_train, y_train, k, **kwargs)
    return float(np.mean(predicted == np.asarray(y_test)))


def leave_one_out_accuracy(Z, y, k: int = 5, *, sample=None, **kwargs) -> float:
    """Training accuracy where each point is classified by all the others.

    ``sample`` (indices) restricts the queries to a subset, still voting among all points.
    """
    y = np.asarray(y)
    sample = np.arange(len(y)) if sample is None else np.asarray(sample)
    predicted = knn_predict(Z[sample], Z, y, k, self_index=sample, **kwargs)
    return float(np.mean(predicted == y[sample]))
