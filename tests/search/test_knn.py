import numpy as np
import pytest
import torch
from sklearn.neighbors import KNeighborsClassifier

from nca_core.search import knn
from nca_core.search.knn import KNNIndex, choose_index, knn_accuracy, knn_predict, leave_one_out_accuracy


@pytest.fixture
def blobs(rng):
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int) + 2 * (X[:, 1] > 0)
    return X, y


@pytest.mark.parametrize("k", [1, 3, 5])
def test_matches_scikit_learn_on_continuous_data(blobs, k):
    X, y = blobs
    queries = X[:100] + 0.01
    expected = KNeighborsClassifier(n_neighbors=k).fit(X, y).predict(queries)
    ours = knn_predict(queries, X, y, k, device="cpu")
    # scikit-learn breaks vote ties by the smallest label; count only rows without a tie
    assert np.mean(ours == expected) > 0.97


def test_tie_goes_to_the_class_with_the_nearest_member():
    refs = np.array([[1.0], [2.0], [3.0], [4.0]])
    labels = np.array(["b", "a", "b", "a"])
    assert knn_predict(np.array([[0.0]]), refs, labels, k=4, device="cpu")[0] == "b"
    assert knn_predict(np.array([[5.0]]), refs, labels, k=4, device="cpu")[0] == "a"


def test_blocks_do_not_change_the_answer(blobs):
    X, y = blobs
    whole = knn_predict(X, X, y, 5, device="cpu")
    tiny_blocks = knn_predict(X, X, y, 5, device="cpu", max_block_elements=900)
    np.testing.assert_array_equal(whole, tiny_blocks)


def test_leave_one_out_excludes_self():
    X = np.array([[0.0], [0.1], [10.0], [10.1], [5.0]])
    y = np.array([0, 0, 1, 1, 2])
    # without exclusion every point would vote for itself and score 1.0
    assert leave_one_out_accuracy(X, y, k=1, device="cpu") == pytest.approx(4 / 5)
    assert leave_one_out_accuracy(X, y, k=1, sample=[0, 4], device="cpu") == pytest.approx(0.5)


def test_accuracy_and_tensor_inputs(blobs):
    X, y = blobs
    Z = torch.tensor(X, dtype=torch.float32)
    acc = knn_accuracy(Z[:200], y[:200], Z[200:], y[200:], k=5, device="cpu")
    sk = KNeighborsClassifier(5).fit(X[:200], y[:200]).score(X[200:], y[200:])
    assert acc == pytest.approx(sk, abs=0.03)


def test_bounded_block_at_mnist_scale():
    """10,000 queries against 60,000 references, one block of at most 2^22 entries."""
    gen = torch.Generator().manual_seed(0)
    refs = torch.randn(60000, 8, generator=gen)
    labels = np.arange(60000) % 10
    queries = refs[:10000] + 1e-4
    predicted = knn_predict(queries, refs, labels, k=1, device="cpu", max_block_elements=1 << 22)
    np.testing.assert_array_equal(predicted, labels[:10000])


def test_bad_inputs_are_explained():
    with pytest.raises(ValueError, match="k must be at least 1"):
        knn_predict(np.zeros((2, 2)), np.zeros((3, 2)), [0, 1, 0], k=0, device="cpu")
    with pytest.raises(ValueError, match="equal widths"):
        knn_predict(np.zeros((2, 3)), np.zeros((3, 2)), [0, 1, 0], device="cpu")
    with pytest.raises(ValueError, match="3 references but 2 labels"):
        knn_predict(np.zeros((2, 2)), np.zeros((3, 2)), [0, 1], device="cpu")


# --- exact search is the float64 answer on every backend; HNSW; the "auto" choice ----------

needs_faiss = pytest.mark.skipif(not knn.faiss_available(), reason="faiss-cpu is not installed")
BACKENDS = [pytest.param("faiss", marks=needs_faiss), "kdtree", "torch"]


def _float64_neighbours(R, Q, k, own=None):
    """k nearest by float64 sum((q - r)^2), ties to the lower index: numpy, one query at a time."""
    R, Q = np.asarray(R, np.float64), np.asarray(Q, np.float64)
    found = []
    for i, q in enumerate(Q):
        dist = ((R - q) ** 2).sum(1)
        if own is not None:
            dist[own[i]] = np.inf
        found.append(np.lexsort((np.arange(len(R)), dist))[:k])
    return np.array(found)


@pytest.fixture(scope="module")
def digits_split():
    from nca_core.datasets import load

    data = load("digits")
    return data.X_train, data.y_train, data.X_test, data.y_test


@pytest.fixture(scope="module")
def usps_split(data_dir):
    from nca_core.datasets import load

    data = load("usps", data_dir=data_dir, download=False)
    return data.X_train, data.y_train, data.X_test[:400], data.y_test[:400]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("split", ["digits_split", "usps_split"])
def test_exact_search_is_the_float64_answer_with_ties_to_the_lower_index(request, split, backend, dtype):
    """Digits' pixels are multiples of 1/16, so many distances tie exactly: a backend's own
    ordering (FAISS's or torch.topk's) would differ from the reference on those rows."""
    X_train, y_train, X_test, _ = request.getfixturevalue(split)
    R, Q = X_train.astype(dtype), X_test.astype(dtype)
    found = KNNIndex(R, y_train, "exact", backend=backend, device="cpu").search(Q, 5)
    np.testing.assert_array_equal(found, _float64_neighbours(R, Q, 5))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n_queries", [8, 40])  # FAISS's scan below 16 queries, its products from 16
def test_float32_far_from_the_origin_with_classes_far_apart_is_the_float64_answer(digits_split, backend, n_queries):
    """Matrix products find |q|^2 + |r|^2 - 2 q.r, which cancels for data far from the
    origin; the library re-ranks whatever it cannot trust, so float32 inputs near 10^4,
    in two groups of classes 300 apart, still get the float64 answer."""
    X_train, y_train, X_test, _ = digits_split
    apart = np.where(y_train[:, None] < 5, 0.0, 300.0) * np.eye(1, X_train.shape[1])
    R = (X_train + 1e4 + apart).astype(np.float32)
    Q = (X_test[:n_queries] + 1e4).astype(np.float32)
    Q[n_queries // 2 :, 0] += 300.0  # half the queries among the far group
    found = KNNIndex(R, y_train, "exact", backend=backend, device="cpu").search(Q, 5)
    np.testing.assert_array_equal(found, _float64_neighbours(R, Q, 5))


@pytest.mark.parametrize("backend", BACKENDS)
def test_leave_one_out_skips_only_the_query_itself_not_its_duplicates(digits_split, backend):
    X_train, y_train, _, _ = digits_split
    R = np.concatenate([X_train[:300], X_train[:20]])  # rows 300..319 duplicate rows 0..19
    y = np.concatenate([y_train[:300], (y_train[:20] + 1) % 10])  # with other labels
    own = np.arange(len(R))
    index = KNNIndex(R, y, "exact", backend=backend, device="cpu")
    found = index.search(R, 3, self_index=own)
    np.testing.assert_array_equal(found, _float64_neighbours(R, R, 3, own))
    assert (found[:20, 0] == np.arange(300, 320)).all()  # each duplicate is the nearest, at 0
    assert (found[300:, 0] == np.arange(20)).all()


@needs_faiss
@pytest.mark.parametrize("split", ["digits_split", "usps_split"])
def test_backends_predict_identically_on_real_data(request, split):
    X_train, y_train, X_test, _ = request.getfixturevalue(split)
    answers = [knn_predict(X_test, X_train, y_train, 5, backend=b, device="cpu") for b in ("faiss", "torch")]
    np.testing.assert_array_equal(*answers)
    sample = np.arange(0, len(y_train), 7)
    loo = [
        leave_one_out_accuracy(X_train, y_train, 5, sample=sample, backend=b, device="cpu")
        for b in ("faiss", "torch")
    ]
    assert loo[0] == loo[1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_equidistant_references_go_to_the_lower_index(backend):
    refs = np.array([[2.0], [-1.0], [1.0], [-2.0], [1.0]])
    labels = np.array([0, 1, 2, 3, 4])
    index = KNNIndex(refs, labels, "exact", backend=backend, device="cpu")
    np.testing.assert_array_equal(index.search(np.array([[0.0]]), 4), [[1, 2, 4, 0]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_ties_beyond_the_first_candidates_are_searched_again(backend):
    """40 references at distance 1 (more than k + 4 candidates): the lowest indices win."""
    refs = np.tile(np.array([[1.0, 0.0], [0.0, -1.0], [-1.0, 0.0], [0.0, 1.0]]), (10, 1))
    refs = np.concatenate([np.full((5, 2), 3.0), refs])  # five far ones first
    index = KNNIndex(refs, np.arange(len(refs)) % 3, "exact", backend=backend, device="cpu")
    np.testing.assert_array_equal(index.search(np.zeros((2, 2)), 3), [[5, 6, 7]] * 2)


@needs_faiss
def test_hnsw_is_reproducible_and_as_accurate_as_exact_search(usps_split):
    X_train, y_train, X_test, y_test = usps_split
    graphs = [KNNIndex(X_train, y_train, "hnsw", device="cpu") for _ in range(2)]
    found = [g.search(X_test, 5) for g in graphs]
    np.testing.assert_array_equal(*found)  # one build thread: the same graph every time
    exact = _float64_neighbours(X_train, X_test, 5)
    recall = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(found[0], exact)])
    assert recall > 0.99
    hnsw_error = 1 - graphs[0].accuracy(X_test, y_test, 5)
    exact_error = 1 - knn_accuracy(X_train, y_train, X_test, y_test, 5, index="exact", device="cpu")
    assert hnsw_error <= exact_error + 0.005
    assert graphs[0].kind == "hnsw" and graphs[0].build_seconds > 0


@needs_faiss
def test_index_sizes_count_vectors_and_graph_links(digits_split):
    import faiss

    X_train, y_train, _, _ = digits_split
    flat = KNNIndex(X_train, y_train, "exact", device="cpu")
    assert flat.nbytes == X_train.shape[0] * X_train.shape[1] * 4
    graph = KNNIndex(X_train, y_train, "hnsw", device="cpu")
    serialised = faiss.serialize_index(graph._search.index).nbytes
    assert graph.nbytes > flat.nbytes and abs(serialised - graph.nbytes) < 1024  # header aside
    assert KNNIndex(X_train, y_train, "exact", backend="torch", device="cpu").nbytes == X_train.nbytes


def test_auto_picks_a_graph_only_where_it_pays():
    assert choose_index(60000) == "hnsw"  # an index kept for many queries on MNIST
    assert choose_index(60000, n_queries=10000) == "exact"  # one search: the build would not pay
    assert choose_index(60000, n_queries=1_000_000) == "hnsw"
    assert choose_index(7291) == choose_index(1257) == "exact"  # USPS, digits


@needs_faiss
def test_auto_chooses_by_size_and_keeps_torch_on_request(digits_split):
    X_train, y_train, _, _ = digits_split
    assert KNNIndex(X_train, y_train, device="cpu").kind == "exact"
    assert KNNIndex(X_train, y_train, device="cpu").backend == "faiss"
    big = np.repeat(X_train, 32, axis=0)[:40000] + np.float32(1e-3)
    assert KNNIndex(big, np.zeros(len(big)), device="cpu").kind == "hnsw"
    assert KNNIndex(big, np.zeros(len(big)), device="cpu", backend="torch").kind == "exact"


@pytest.mark.parametrize("own", [False, True])
def test_a_2d_picture_is_searched_in_a_tree_with_the_same_answers(digits_split, own):
    """Two of digits' pixels (values 0..16): a 2-D set where most distances tie exactly."""
    X_train, y_train, X_test, _ = digits_split
    R = X_train[:, [19, 43]].astype(np.float32)
    Q = R if own else X_test[:, [19, 43]].astype(np.float32)
    index = KNNIndex(R, y_train, device="cpu")
    assert (index.backend, index.kind) == ("kdtree", "exact")
    mine = np.arange(len(R)) if own else None
    np.testing.assert_array_equal(index.search(Q, 5, self_index=mine), _float64_neighbours(R, Q, 5, mine))


def test_neighbour_lists_of_a_2d_embedding_are_the_nearest_others(blobs):
    X, _ = blobs
    Z = torch.tensor(X[:, :2], dtype=torch.float32)
    found = knn.neighbour_lists(Z, 6).numpy()
    own = np.arange(len(X))
    np.testing.assert_array_equal(found, _float64_neighbours(Z.numpy(), Z.numpy(), 6, own))


def test_without_faiss_exact_search_runs_in_torch(digits_split, monkeypatch):
    X_train, y_train, X_test, _ = digits_split
    monkeypatch.setattr(knn, "_faiss", lambda: None)
    index = KNNIndex(X_train, y_train, device="cpu")
    assert (index.backend, index.kind) == ("torch", "exact")
    np.testing.assert_array_equal(index.search(X_test[:50], 5), _float64_neighbours(X_train, X_test[:50], 5))
    with pytest.raises(
        ValueError, match=r"index='hnsw' with backend='auto' needs FAISS: pip install faiss-cpu"
    ):
        KNNIndex(X_train, y_train, "hnsw", device="cpu")


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
    far slower than its matrix products on large sets (benchmarks/faiss_flat.py). The
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

    products = knn.BLAS_FROM_QUERIES * X_train.shape[1]
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


def test_bad_index_choices_are_explained():
    with pytest.raises(ValueError, match=r"index must be one of \('auto', 'exact', 'hnsw'\), got 'ivf'"):
        KNNIndex(np.zeros((3, 2)), [0, 1, 0], "ivf")
    with pytest.raises(
        ValueError, match=r"backend must be one of \('auto', 'faiss', 'kdtree', 'torch'\), got 'gpu'"
    ):
        KNNIndex(np.zeros((3, 2)), [0, 1, 0], backend="gpu")
    with pytest.raises(ValueError, match="index='hnsw' needs the faiss backend, not 'torch'"):
        KNNIndex(np.zeros((3, 2)), [0, 1, 0], "hnsw", backend="torch")
    with pytest.raises(ValueError, match="index='hnsw' needs the faiss backend, not 'kdtree'"):
        KNNIndex(np.zeros((3, 2)), [0, 1, 0], "hnsw", backend="kdtree")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_data_on_a_gpu_stay_on_the_torch_path(digits_split):
    X_train, y_train, X_test, _ = digits_split
    index = KNNIndex(torch.tensor(X_train, device="cuda"), y_train, device="cuda")
    assert index.backend == "torch"
    np.testing.assert_array_equal(index.search(X_test, 5), _float64_neighbours(X_train, X_test, 5))
