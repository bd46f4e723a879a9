"""Timing a k-NN index on a test set: what the kNN page and the benchmarks report."""

from __future__ import annotations

import time

import numpy as np

from .backends import faiss_available
from .costs import SearchCost
from .index import KNNIndex

__all__ = ["knn_search_cost"]


def knn_search_cost(
    name: str,
    Z_train: np.ndarray,
    y_train: np.ndarray,
    Z_test: np.ndarray,
    y_test: np.ndarray,
    k: int = 5,
    repeats: int = 3,
    *,
    index: str = "exact",
    budget_seconds: float | None = None,
    min_repeats: int = 1,
    **options,
) -> SearchCost:
    """Build a float32 k-NN index of ``Z_train`` on the CPU and time all test queries.

    Parameters
    ----------
    index : {"exact", "hnsw", "auto"}
        See ``index.KNNIndex``; "auto" is the choice for an index kept for many queries.
    repeats : int
        Timed searches of every test point; the median is reported.
    budget_seconds : float, optional
        After ``min_repeats``, search again only while the timed total, with one more search
        as long as the last, stays within this many seconds.
    **options
        ``backend``, ``deterministic``, ``ef_search`` of ``index.KNNIndex``. The backend
        defaults to a flat float32 search (FAISS, else torch) in every space, so that the
        spaces' times and sizes compare like with like (auto would search a 2-D space in a
        float64 k-d tree).
    """
    options.setdefault("backend", "faiss" if faiss_available() else "torch")
    Z_train = np.ascontiguousarray(Z_train, dtype=np.float32)
    Z_test = np.ascontiguousarray(Z_test, dtype=np.float32)
    knn_index = KNNIndex(Z_train, y_train, index, device="cpu", **options)
    knn_index.predict(Z_test[:50], k)  # warm-up
    times: list[float] = []
    least = max(1, min(min_repeats, repeats))
    while len(times) < least or (
        len(times) < repeats and (budget_seconds is None or sum(times) + times[-1] <= budget_seconds)
    ):
        start = time.perf_counter()
        predicted = knn_index.predict(Z_test, k)
        times.append(time.perf_counter() - start)
    return SearchCost(
        name,
        Z_train.shape[1],
        float(np.mean(predicted != np.asarray(y_test))),
        float(np.median(times)),
        knn_index.nbytes,
        knn_index.kind,
        knn_index.build_seconds,
        len(times),
    )
