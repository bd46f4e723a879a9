"""FAISS's settings while the library searches: torch's thread count, products for flat
searches, and FAISS's own settings put back after."""

import torch

from nca_core.search import backends, knn
from nca_core.search.index import KNNIndex
from tests.search.neighbours import needs_faiss


@needs_faiss
def test_searches_use_torchs_thread_count_and_restore_faiss(digits_split):
    import faiss

    X_train, y_train, X_test, _ = digits_split
    index = KNNIndex(X_train, y_train, "exact", device="cpu")
    before, seen = faiss.omp_get_max_threads(), []
    original = index._search.index.search

    def spy(*args, **kwargs):
        seen.append(faiss.omp_get_max_threads())
        return original(*args, **kwargs)

    index._search.index.search = spy
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        index.search(X_test, 5)
    finally:
        torch.set_num_threads(threads)
    assert seen and set(seen) == {1} and faiss.omp_get_max_threads() == before


@needs_faiss
def test_flat_searches_ask_faiss_for_products_from_a_few_queries_and_restore_it(digits_split, monkeypatch):
    """FAISS scans the references once per query below a threshold of queries x dimensions,
    far slower than its matrix products on large sets (measured in commit f464d40). The
    library's flat searches (a ``KNNIndex`` and the training lists' flat index) lower it,
    and leave FAISS's setting, one for the process, as they found it; a graph's search
    leaves it alone."""
    import faiss

    X_train, y_train, X_test, _ = digits_split
    settings, seen = faiss.cvar, []
    before = settings.distance_compute_blas_threshold

    def spied(index):
        original = index.search

        def spy(*args, **kwargs):
            seen.append(settings.distance_compute_blas_threshold)
            return original(*args, **kwargs)

        index.search = spy
        return index

    products = backends.BLAS_FROM_QUERIES * X_train.shape[1]
    index = KNNIndex(X_train, y_train, "exact", device="cpu")
    spied(index._search.index)
    index.search(X_test, 5)
    assert seen and set(seen) == {products} and settings.distance_compute_blas_threshold == before
    seen.clear()
    training_index = knn._training_index
    monkeypatch.setattr(knn, "_training_index", lambda *args: spied(training_index(*args)))
    knn.neighbour_lists(torch.as_tensor(X_train, dtype=torch.float32), 3)  # below IVF_MIN_SAMPLES: flat
    assert seen and set(seen) == {products} and settings.distance_compute_blas_threshold == before
    seen.clear()
    graph = KNNIndex(X_train, y_train, "hnsw", device="cpu")
    spied(graph._search.index)
    graph.search(X_test, 5)
    assert seen and set(seen) == {before}
