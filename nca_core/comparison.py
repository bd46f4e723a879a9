"""NCA beside PCA, LDA and raw inputs: one evaluation for every projection.

Every method is scored the same way: k-NN accuracy leave-one-out on the training set (on a
stratified sample of at most ``loo_sample`` points, voting among all of them) and on the
test set, plus the time its fit took.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.preprocessing import StandardScaler

from .baselines import fit_projection
from .datasets import Dataset
from .knn import knn_accuracy, leave_one_out_accuracy
from .sampling import stratified_subsample

__all__ = ["MethodResult", "SearchCost", "evaluate", "fit_baseline", "knn_search_cost"]


@dataclass(frozen=True)
class MethodResult:
    """How one projection did.

    Attributes
    ----------
    name : str
    embedding : ndarray of shape (n_display, d) or None (raw inputs are not drawn)
    train_accuracy : float, leave-one-out k-NN accuracy on training points
    test_accuracy : float or None, k-NN accuracy on the test set (None without one)
    fit_seconds : float
    note : str, e.g. why LDA gave fewer dimensions
    dimensions : int
    """

    name: str
    embedding: np.ndarray | None
    train_accuracy: float
    test_accuracy: float | None
    fit_seconds: float
    note: str = ""
    dimensions: int = 0


def fit_baseline(
    method: str, data: Dataset, n_components: int, standardize: bool
) -> tuple[Callable, float, str]:
    """Fit PCA or LDA on the training set; returns (transform, seconds, note)."""
    start = time.perf_counter()
    scaler = StandardScaler().fit(data.X_train) if standardize else None

    def prepare(X):
        return X if scaler is None else scaler.transform(X)

    projection = fit_projection(method, prepare(data.X_train), data.y_train, n_components)
    seconds = time.perf_counter() - start
    return (lambda X: projection.transform(prepare(X))), seconds, projection.note


def evaluate(
    name: str,
    transform: Callable[[np.ndarray], np.ndarray],
    data: Dataset,
    k: int,
    display_index: np.ndarray | None,
    fit_seconds: float,
    note: str = "",
    loo_sample: int = 5000,
) -> MethodResult:
    """Score ``transform`` (raw input -> embedding) with k-NN on ``data``."""
    Z_train = np.asarray(transform(data.X_train), dtype=np.float32)
    sample = stratified_subsample(data.y_train, loo_sample, seed=0)
    train_accuracy = leave_one_out_accuracy(Z_train, data.y_train, k, sample=sample, device="cpu")
    test_accuracy = None
    if len(data.y_test):
        Z_test = np.asarray(transform(data.X_test), dtype=np.float32)
        test_accuracy = knn_accuracy(Z_train, data.y_train, Z_test, data.y_test, k, device="cpu")
    embedding = None if display_index is None else Z_train[display_index]
    return MethodResult(name, embedding, train_accuracy, test_accuracy, fit_seconds, note, Z_train.shape[1])


@dataclass(frozen=True)
class SearchCost:
    """What one k-NN index costs and gives on the test set."""

    name: str
    dimensions: int
    error: float
    query_seconds: float
    stored_bytes: int


def knn_search_cost(
    name: str,
    Z_train: np.ndarray,
    y_train: np.ndarray,
    Z_test: np.ndarray,
    y_test: np.ndarray,
    k: int = 5,
    repeats: int = 3,
) -> SearchCost:
    """Test error, median query time for all test points, and bytes of a float32 index."""
    from .knn import knn_predict

    Z_train = np.ascontiguousarray(Z_train, dtype=np.float32)
    Z_test = np.ascontiguousarray(Z_test, dtype=np.float32)
    knn_predict(Z_test[:50], Z_train, y_train, k, device="cpu")  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        predicted = knn_predict(Z_test, Z_train, y_train, k, device="cpu")
        times.append(time.perf_counter() - start)
    return SearchCost(
        name, Z_train.shape[1], float(np.mean(predicted != y_test)), float(np.median(times)), Z_train.nbytes
    )
