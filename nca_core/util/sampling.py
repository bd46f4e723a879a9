"""Seeded stratified subsamples: display subsets and quick training on large sets."""

from __future__ import annotations

import numpy as np

__all__ = ["stratified_subsample"]


def stratified_subsample(y, n: int, seed: int = 0) -> np.ndarray:
    """Indices of ``n`` points whose class proportions follow ``y``'s, sorted ascending.

    Every class keeps at least one point when ``n`` allows it; the same ``seed`` always
    gives the same indices. With ``n >= len(y)`` all indices are returned.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    n : int
        Points to keep, at least 1.
    seed : int, default=0
        Seeds the draw (``numpy.random.default_rng``).

    Returns
    -------
    ndarray of shape (min(n, n_samples),), dtype int64
        Indices into ``y``, ascending.

    Raises
    ------
    ValueError
        ``n`` below 1.

    Examples
    --------
    >>> import numpy as np
    >>> from nca_core import stratified_subsample
    >>> y = np.repeat(["a", "b", "c"], [50, 30, 20])
    >>> index = stratified_subsample(y, 10, seed=0)
    >>> np.unique(y[index], return_counts=True)[1]
    array([5, 3, 2])
    >>> bool(np.array_equal(index, stratified_subsample(y, 10, seed=0)))
    True
    """
    y = np.asarray(y)
    if n < 1:
        raise ValueError(f"subsample size must be at least 1, got {n}")
    if n >= len(y):
        return np.arange(len(y), dtype=np.int64)
    rng = np.random.default_rng(seed)
    classes, y_index, counts = np.unique(y, return_inverse=True, return_counts=True)
    quota = counts * n / len(y)
    take = np.floor(quota).astype(np.int64)
    if n >= len(classes):
        take = np.maximum(take, 1)
    # Hand out what rounding left over to the classes with the largest remainders.
    shortfall = n - take.sum()
    if shortfall > 0:
        order = np.argsort(-(quota - np.floor(quota)), kind="stable")
        room = counts[order] > take[order]
        take[order[room][:shortfall]] += 1
    while take.sum() > n:
        take[np.argmax(take)] -= 1
    chosen = [
        rng.choice(np.flatnonzero(y_index == c), size=t, replace=False) for c, t in enumerate(take) if t > 0
    ]
    return np.sort(np.concatenate(chosen)).astype(np.int64)
