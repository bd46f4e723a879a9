"""Exact search is the float64 answer on every backend; HNSW; the "auto" choice."""

import numpy as np
import pytest
import torch

from nca_core.search import backends
from nca_core.search.index import KNNIndex, choose_index
from nca_core.search.knn import knn_accuracy
from tests.search.neighbours import BACKENDS, float64_neighbours, needs_faiss


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("split", ["digits_split", "usps_split"])
def test_exact_search_is_the_float64_answer_with_ties_to_the_lower_index(request, split, backend, dtype):
    """Digits' pixels are multiples of 1/16, so many distances tie exactly: a backend's own
    ordering (FAISS's or torch.topk's) would differ from the reference on those rows."""
    X_train, y_train, X_test, _ = request.getfixturevalue(split)
    R, Q = X_train.astype(dtype), X_test.astype(dtype)
    found = KNNIndex(R, y_train, "exact", backend=backend, device="cpu").search(Q, 5)
    np.testing.assert_array_equal(found, float64_neighbours(R, Q, 5))


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
    np.testing.assert_array_equal(found, float64_neighbours(R, Q, 5))


@pytest.mark.parametrize("backend", BACKENDS)
def test_leave_one_out_skips_only_the_query_itself_not_its_duplicates(digits_split, backend):
    X_train, y_train, _, _ = digits_split
    R = np.concatenate([X_train[:300], X_train[:20]])  # rows 300..319 duplicate rows 0..19
    y = np.concatenate([y_train[:300], (y_train[:20] + 1) % 10])  # with other labels
    own = np.arange(len(R))
    index = KNNIndex(R, y, "exact", backend=backend, device="cpu")
    found = index.search(R, 3, self_index=own)
    np.testing.assert_array_equal(found, float64_neighbours(R, R, 3, own))
    assert (found[:20, 0] == np.arange(300, 320)).all()  # each duplicate is the nearest, at 0
    assert (found[300:, 0] == np.arange(20)).all()


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
    exact = float64_neighbours(X_train, X_test, 5)
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
    np.testing.assert_array_equal(index.search(Q, 5, self_index=mine), float64_neighbours(R, Q, 5, mine))


def test_without_faiss_exact_search_runs_in_torch(digits_split, monkeypatch):
    X_train, y_train, X_test, _ = digits_split
    monkeypatch.setattr(backends, "faiss_module", lambda: None)
    index = KNNIndex(X_train, y_train, device="cpu")
    assert (index.backend, index.kind) == ("torch", "exact")
    np.testing.assert_array_equal(index.search(X_test[:50], 5), float64_neighbours(X_train, X_test[:50], 5))
    with pytest.raises(
        ValueError, match=r"index='hnsw' with backend='auto' needs FAISS: pip install faiss-cpu"
    ):
        KNNIndex(X_train, y_train, "hnsw", device="cpu")


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
    np.testing.assert_array_equal(index.search(X_test, 5), float64_neighbours(X_train, X_test, 5))
