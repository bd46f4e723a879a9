"""Timing a k-NN index: the error, size, build time and repeats a cost reports (digits)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA

from nca_core import knn_accuracy
from nca_core.datasets import load
from nca_core.search import backends
from nca_core.search.costs import SearchCost
from nca_core.search.timing import knn_search_cost

needs_faiss = pytest.mark.skipif(not backends.faiss_available(), reason="faiss-cpu is not installed")


@pytest.fixture(scope="module")
def digits():
    return load("digits")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_components", [None, 2])
def test_knn_search_cost_reports_error_and_float32_index_size(digits, dtype, n_components):
    data = digits
    Z_train, Z_test = data.X_train.astype(dtype), data.X_test.astype(dtype)
    if n_components is not None:
        pca = PCA(n_components).fit(data.X_train)
        Z_train, Z_test = pca.transform(data.X_train).astype(dtype), pca.transform(data.X_test).astype(dtype)
    cost = knn_search_cost("m", Z_train, data.y_train, Z_test, data.y_test, k=5, repeats=2)
    assert isinstance(cost, SearchCost) and cost.name == "m"
    expected = 1.0 - knn_accuracy(
        Z_train.astype(np.float32), data.y_train, Z_test.astype(np.float32), data.y_test, 5, device="cpu"
    )
    assert cost.error == pytest.approx(expected, abs=1e-12)
    d = Z_train.shape[1]
    assert cost.dimensions == d
    assert cost.stored_bytes == len(Z_train) * d * 4 == np.zeros_like(Z_train, dtype=np.float32).nbytes
    assert cost.query_seconds > 0


def test_raw_digits_are_more_accurate_but_larger_than_two_pca_dimensions(digits):
    data = digits
    transform = PCA(2).fit(data.X_train).transform
    raw = knn_search_cost("raw", data.X_train, data.y_train, data.X_test, data.y_test)
    pca = knn_search_cost("pca", transform(data.X_train), data.y_train, transform(data.X_test), data.y_test)
    assert raw.error < 0.05 < pca.error
    assert raw.stored_bytes == 32 * pca.stored_bytes


def test_a_search_is_timed_at_least_min_repeats_times_whatever_the_budget(digits):
    data = digits
    args = ("raw", data.X_train, data.y_train, data.X_test, data.y_test)
    assert knn_search_cost(*args, repeats=7, budget_seconds=0.0, min_repeats=3).repeats == 3
    assert knn_search_cost(*args, repeats=7, budget_seconds=0.0).repeats == 1
    assert knn_search_cost(*args, repeats=4, budget_seconds=None, min_repeats=2).repeats == 4


def test_searches_stop_before_the_next_would_take_the_timed_total_past_the_budget(digits, monkeypatch):
    """Each search is guessed to take as long as the last: with searches of 0.3 s and a
    budget of 1 s, three are timed (0.9 s), not a fourth that ends at 1.2 s."""
    import types

    from nca_core.search import timing

    ticks = iter(range(10_000))
    monkeypatch.setattr(timing, "time", types.SimpleNamespace(perf_counter=lambda: 0.3 * next(ticks)))
    data = digits
    args = ("raw", data.X_train, data.y_train, data.X_test, data.y_test)
    assert knn_search_cost(*args, repeats=7, budget_seconds=1.0).repeats == 3
    assert knn_search_cost(*args, repeats=7, budget_seconds=0.5).repeats == 1  # one, whatever the budget


@needs_faiss
def test_an_hnsw_cost_reports_its_graph_build_and_size(digits):
    data = digits
    exact = knn_search_cost("raw", data.X_train, data.y_train, data.X_test, data.y_test, repeats=1)
    graph = knn_search_cost(
        "raw", data.X_train, data.y_train, data.X_test, data.y_test, repeats=1, index="hnsw"
    )
    assert (exact.index, graph.index) == ("exact", "hnsw")
    assert graph.build_seconds > 0 and graph.stored_bytes > exact.stored_bytes
    assert graph.error <= exact.error + 0.01
